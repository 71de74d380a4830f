//===- modelc-opt.cpp - mlir-opt with modelc's dialects and passes --------===//
//
// mlir-opt's driver, with modelc's nesting check (tools/modelc/ParseModel.h)
// on the input first: MLIR's recursive parser would overflow its stack on
// input nested thousands of levels deep.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "tools/modelc/ParseModel.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  modelc::registerModelcPassesAndPipelines();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "modelc optimizer driver: modelc's dialects and passes\n",
      registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  {
    // The check reports through a context of its own; the file's buffer is
    // copied, as MlirOptMain takes the original.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getBuffer(),
                                         input->getBufferIdentifier(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    mlir::MLIRContext context;
    mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    if (mlir::failed(modelc::driver::checkNesting(sourceMgr, context)))
      return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry,
                            mlir::MlirOptMainConfig::createFromCLOptions())))
    return 1;
  output->keep();
  return 0;
}
