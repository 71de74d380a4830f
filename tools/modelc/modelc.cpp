//===- modelc.cpp - the modelc compiler driver ----------------------------===//
//
// `modelc model.ir --emit=graph` parses, verifies, infers shapes and
// canonicalizes a model and prints it. Every failure is a diagnostic with
// file:line:col where the input has one, and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace {

enum class EmitKind { Library, Graph };

cl::OptionCategory modelcCategory("modelc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.ir>"),
                               cl::Required, cl::cat(modelcCategory));

cl::opt<std::string> outputPath("o",
                                cl::desc("Output file (default: stdout "
                                         "for --emit=graph)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(modelcCategory));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::Library),
    cl::values(clEnumValN(EmitKind::Library, "so",
                          "a shared library model.so (the default; not "
                          "supported yet)"),
               clEnumValN(EmitKind::Graph, "graph",
                          "the verified graph IR: shapes inferred, "
                          "canonicalized")),
    cl::cat(modelcCategory));

constexpr const char *overview = R"(modelc: ahead-of-time graph compiler

Compiles a model written in the graph dialect (see docs/ir.md) into a shared
library that the modelc runtime loads and runs on the CPU or on GPUs.

  modelc model.ir --emit=graph        print the verified, canonicalized graph
  modelc model.ir --emit=graph -o g.ir

Errors in the model are reported as file:line:col: error: ... and modelc
exits with status 1.
)";

void printVersion(llvm::raw_ostream &os) {
  os << "modelc " << MODELC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING
     << ")\n";
}

/// Runs the driver; returns the process exit status.
int runDriver() {
  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  mlir::MLIRContext context(registry);
  // Ops of unknown dialects parse, so that modelc-verify-model can reject
  // them with a message about models rather than about MLIR's flags.
  context.allowUnregisteredDialects(true);
  // A diagnostic names the op and its location; a dump of the op is noise.
  context.printOpOnDiagnostic(false);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputPath, &errorMessage);
  if (!input) {
    llvm::WithColor::error(llvm::errs(), "modelc") << errorMessage << "\n";
    return 1;
  }

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  modelc::buildGraphPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return 1;

  if (emitKind == EmitKind::Library) {
    llvm::WithColor::error(llvm::errs(), "modelc")
        << "building model.so is not supported yet (the CPU backend is "
           "under construction); use --emit=graph\n";
    return 1;
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputPath, &errorMessage);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "modelc") << errorMessage << "\n";
    return 1;
  }
  module->print(output->os());
  output->os().flush();
  if (output->os().has_error()) {
    llvm::WithColor::error(llvm::errs(), "modelc")
        << "cannot write '" << outputPath
        << "': " << output->os().error().message() << "\n";
    output->os().clear_error();
    return 1;
  }
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(modelcCategory);
  if (!cl::ParseCommandLineOptions(argc, argv, overview))
    return 1;
  return runDriver();
}
