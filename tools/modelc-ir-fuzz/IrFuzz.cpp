//===- IrFuzz.cpp - fuzz target of the IR front end and pipeline ----------===//
//
// LLVMFuzzerTestOneInput feeds arbitrary bytes to modelc as a model.ir, in
// process and without a C++ compiler: the parse (with modelc's nesting
// check), the graph pipeline, then placement and the lowering passes up to
// the scheduled IR for the cpu target, cpu+sim2 and cpu+sim2 data parallel,
// each result verified. Every input must end in an error or a valid module,
// never a crash, a hang or a leak.
//
// Built with libFuzzer (clang, -DMODELC_IR_FUZZER=ON: tests/fuzz/README.md)
// it is a coverage-guided fuzzer. Built as usual, its main() runs each file
// given on the command line once: the regression mode CI runs over the
// examples, the test models and their mutations (tests/Driver/ir-fuzz.test).
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "tools/modelc/ParseModel.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

using namespace mlir;

/// How far the inputs got (printed by the regression mode's main()).
static int parsedInputs = 0, scheduledPlans = 0;

/// Places and lowers a copy of `module` for `target`; errors are expected.
static void lowerFor(ModuleOp module, llvm::StringRef target,
                     bool dataParallel) {
  OwningOpRef<ModuleOp> copy(module.clone());
  PassManager pm(module.getContext());
  modelc::buildPlacementPipeline(pm, target, "", "", -1, dataParallel);
  modelc::ScheduleOptions options;
  options.checked = true;
  modelc::buildSchedulePipeline(pm, options);
  if (succeeded(pm.run(*copy)) && succeeded(verify(*copy)))
    ++scheduledPlans;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Errors are the expected outcome for most inputs: counted, not printed.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.ir"),
      llvm::SMLoc());
  modelc::driver::ArgumentNames names;
  OwningOpRef<ModuleOp> module =
      modelc::driver::parseModel(sourceMgr, context, names);
  if (!module)
    return 0;
  PassManager graph(&context);
  modelc::buildGraphPipeline(graph);
  if (failed(graph.run(*module)))
    return 0;
  ++parsedInputs;
  modelc::driver::nameArguments(*module, names);
  lowerFor(*module, "cpu", false);
  lowerFor(*module, "cpu+sim2", false);
  lowerFor(*module, "cpu+sim2", true);
  return 0;
}

#ifndef MODELC_IR_LIBFUZZER
int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    auto buffer = llvm::MemoryBuffer::getFile(argv[i], /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "modelc-ir-fuzz: cannot read " << argv[i] << "\n";
      return 1;
    }
    LLVMFuzzerTestOneInput(
        reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
        (*buffer)->getBufferSize());
    ++ran;
  }
  llvm::outs() << "modelc-ir-fuzz: " << ran << " inputs, no crash; "
               << parsedInputs << " valid models, " << scheduledPlans
               << " plans lowered to the scheduled IR\n";
  return 0;
}
#endif
