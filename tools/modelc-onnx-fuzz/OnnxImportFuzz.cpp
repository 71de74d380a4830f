//===- OnnxImportFuzz.cpp - fuzz target of the ONNX importer --------------===//
//
// LLVMFuzzerTestOneInput feeds arbitrary bytes to the ONNX importer as a
// .onnx file, then verifies and prints what it built: it must report an
// error or build a valid module, never crash, hang or leak.
//
// Built with libFuzzer (clang, -DMODELC_ONNX_FUZZER=ON: see docs/onnx.md)
// it is a coverage-guided fuzzer. Built as usual, its main() runs each file
// given on the command line once: the regression mode CI runs over the
// test models and their mutations (tests/onnx/fuzz.test).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImport.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context;
  // Errors are the expected outcome for most inputs: counted, not printed.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::FailureOr<modelc::onnx_import::ImportedModel> imported =
      modelc::onnx_import::importOnnxBuffer(bytes, "fuzz.onnx", context, {});
  if (succeeded(imported) && succeeded(mlir::verify(*imported->module))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    imported->module->print(os);
  }
  return 0;
}

#ifndef MODELC_ONNX_LIBFUZZER
int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    auto buffer = llvm::MemoryBuffer::getFile(argv[i], /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "modelc-onnx-fuzz: cannot read " << argv[i] << "\n";
      return 1;
    }
    LLVMFuzzerTestOneInput(
        reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
        (*buffer)->getBufferSize());
    ++ran;
  }
  llvm::outs() << "modelc-onnx-fuzz: " << ran << " inputs, no crash\n";
  return 0;
}
#endif
