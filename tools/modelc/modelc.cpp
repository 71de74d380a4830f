//===- modelc.cpp - the modelc compiler driver ----------------------------===//
//
// `modelc model.ir -o model.so` parses, verifies, infers shapes, canonicalizes
// and compiles a model into a shared library; `--emit=graph|cpp` stops early
// and prints that stage. Every failure is a diagnostic with file:line:col
// where the input has one, and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CpuEmitter.h"
#include "compiler/Driver/BuildLibrary.h"
#include "compiler/Driver/Weights.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Target.h"
#include "compiler/Transforms/PlacementSummary.h"
#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <set>

namespace cl = llvm::cl;
using namespace mlir;

namespace {

enum class EmitKind { Library, Graph, Placed, Cpp, Cuda };

cl::OptionCategory modelcCategory("modelc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.ir>"),
                               cl::Required, cl::cat(modelcCategory));

cl::opt<std::string>
    outputPath("o",
               cl::desc("Output file (default: <model>.so; stdout for "
                        "--emit=graph and --emit=cpp)"),
               cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::Library),
    cl::values(clEnumValN(EmitKind::Library, "so",
                          "a shared library model.so (the default)"),
               clEnumValN(EmitKind::Graph, "graph",
                          "the verified graph IR: shapes inferred, "
                          "canonicalized"),
               clEnumValN(EmitKind::Placed, "placed",
                          "the graph placed on the devices of --target, with "
                          "its transfers"),
               clEnumValN(EmitKind::Cpp, "cpp",
                          "the generated host C++ of every plan"),
               clEnumValN(EmitKind::Cuda, "cuda",
                          "the generated CUDA kernels of the GPU plans")),
    cl::cat(modelcCategory));

cl::list<std::string> targets(
    "target",
    cl::desc("A machine to build a plan for: a preset (cpu, h200, h200x2, "
             "h200x4, h200x8, cpu+sim2, cpu+sim4) or a JSON file "
             "(docs/placement.md); repeat for several plans (default: cpu)"),
    cl::value_desc("name|file.json"), cl::cat(modelcCategory));

cl::opt<std::string> placementReport(
    "placement-report",
    cl::desc("Write the placement report (JSON) of each target to FILE"),
    cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<std::string> placementDot(
    "placement-dot",
    cl::desc("Write the placed graph (Graphviz DOT) of each target to FILE"),
    cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<std::string>
    weightsPath("weights",
                cl::desc("Safetensors file with the model's weights (keys are "
                         "the graph.weight names)"),
                cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<std::string> randomWeights(
    "random-weights",
    cl::desc("Fill every weight deterministically from SEED (default 0) "
             "instead of reading --weights"),
    cl::value_desc("seed"), cl::ValueOptional, cl::cat(modelcCategory));

cl::opt<bool> externalWeights(
    "external-weights",
    cl::desc("Do not embed the weights: model.so records the --weights path "
             "and maps that file when loaded"),
    cl::cat(modelcCategory));

cl::opt<std::string> saveWeights(
    "save-weights",
    cl::desc("Also write the weights the model is built with (e.g. those of "
             "--random-weights) to a safetensors file"),
    cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<std::string>
    saveTemps("save-temps",
              cl::desc("Keep the generated sources and the weight blob in DIR"),
              cl::value_desc("dir"), cl::cat(modelcCategory));

cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("Split the batch (dimension 0 of every input) over the "
             "accelerators of each target, one replica per accelerator "
             "(without it, modelc does so when the cost model prefers it)"),
    cl::cat(modelcCategory));

cl::opt<bool> checked(
    "checked",
    cl::desc("Multi-device plans verify before each task that it touches "
             "only memory of its own device (slower; for testing)"),
    cl::cat(modelcCategory));

cl::opt<std::string> placeAll(
    "place-all",
    cl::desc("Put every op that has a kernel there on DEVICE of each target "
             "(like model.to(DEVICE)), instead of letting the cost model "
             "choose; pins in the IR still win"),
    cl::value_desc("device"), cl::cat(modelcCategory));

cl::opt<bool> cudaEmulation(
    "cuda-emulation",
    cl::desc("Testing: build the GPU plans' kernels as host code inside "
             "model.so instead of a fatbin (no nvcc needed); they run only "
             "with the test suite's stand-in CUDA driver"),
    cl::cat(modelcCategory));

cl::opt<bool> allowTf32(
    "allow-tf32",
    cl::desc("GPU plans: let cuBLASLt compute f32 matrix products with TF32 "
             "tensor cores (faster, about 10 bits of mantissa)"),
    cl::cat(modelcCategory));

cl::opt<int> debugDropTransfer(
    "debug-drop-transfer",
    cl::desc("Debugging only: leave out the N-th transfer (to show that "
             "--checked catches a missing transfer)"),
    cl::init(-1), cl::Hidden, cl::cat(modelcCategory));

cl::opt<bool> timeStages(
    "time-stages",
    cl::desc("Print the wall time of each stage (parse, graph passes, "
             "placement, code generation, C++ compiler) to stderr"),
    cl::cat(modelcCategory));

cl::opt<bool> verbose("v",
                      cl::desc("Print what was built: per entry point "
                               "its arena size and fused loops"),
                      cl::cat(modelcCategory));

constexpr const char *overview = R"(modelc: ahead-of-time graph compiler

Compiles a model written in the graph dialect (see docs/ir.md) into a shared
library that the modelc runtime loads and runs (docs/runtime.md).

  modelc model.ir --weights w.safetensors -o model.so
  modelc model.ir --random-weights=7 -o model.so
  modelc model.ir --emit=graph        print the verified, canonicalized graph
  modelc model.ir --target=h200x2 --emit=placed --placement-report=r.json
  modelc model.ir --emit=cpp          print the generated C++

Errors in the model are reported as file:line:col: error: ... and modelc
exits with status 1.
)";

void printVersion(llvm::raw_ostream &os) {
  os << "modelc " << MODELC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING
     << ")\n";
}

/// Wall time per stage for --time-stages.
class StageTimer {
public:
  ~StageTimer() {
    if (!timeStages)
      return;
    llvm::errs() << "modelc: stage times\n";
    double total = 0;
    for (auto &[name, seconds] : stages) {
      llvm::errs() << llvm::format("  %-22s %10.3f ms\n", name.c_str(),
                                   seconds * 1e3);
      total += seconds;
    }
    llvm::errs() << llvm::format("  %-22s %10.3f ms\n", "total", total * 1e3);
  }
  void stop(const std::string &name) {
    auto now = std::chrono::steady_clock::now();
    stages.push_back({name, std::chrono::duration<double>(now - last).count()});
    last = now;
  }

private:
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> stages;
};

/// Reports `message` as modelc's error; always fails.
LogicalResult fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "modelc") << message << "\n";
  return failure();
}
/// Parses the model, keeping the names of entry-point arguments from the
/// source text (MLIR itself drops SSA names).
OwningOpRef<ModuleOp>
parseModel(llvm::SourceMgr &sourceMgr, MLIRContext &context,
           llvm::StringMap<std::vector<std::string>> &argumentNames) {
  AsmParserState asmState;
  Block block;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &asmState)))
    return nullptr;
  OwningOpRef<ModuleOp> module;
  if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
    module = cast<ModuleOp>(block.front());
    module.get()->remove();
  } else {
    StringRef file = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                         ->getBufferIdentifier();
    module = ModuleOp::create(FileLineColLoc::get(&context, file, 0, 0));
    module->getBody()->getOperations().splice(module->getBody()->begin(),
                                              block.getOperations());
  }
  if (failed(verify(*module)))
    return nullptr;
  for (auto function : module->getOps<func::FuncOp>()) {
    if (function.isExternal())
      continue;
    const AsmParserState::BlockDefinition *def =
        asmState.getBlockDef(&function.getBody().front());
    std::vector<std::string> names;
    if (def)
      for (const AsmParserState::SMDefinition &arg : def->arguments) {
        StringRef text(arg.loc.Start.getPointer(),
                       arg.loc.End.getPointer() - arg.loc.Start.getPointer());
        names.push_back(text.drop_front(text.starts_with("%") ? 1 : 0).str());
      }
    argumentNames[function.getSymName()] = std::move(names);
  }
  return module;
}

std::string commandLine(int argc, char **argv) {
  std::string text;
  for (int i = 0; i < argc; ++i)
    text += (i ? " " : "") + std::string(argv[i]);
  return text;
}

/// Writes what `write` prints to -o, or to stdout without it.
LogicalResult writeText(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string path = outputPath.empty() ? "-" : outputPath.getValue();
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(path, &errorMessage);
  if (!output)
    return fail(errorMessage);
  write(output->os());
  output->os().flush();
  if (output->os().has_error()) {
    output->os().clear_error();
    return fail("cannot write '" + path + "'");
  }
  output->keep();
  return success();
}

/// Inputs keep the names they have in the source (as `graph.name`).
void nameArguments(
    ModuleOp module,
    const llvm::StringMap<std::vector<std::string>> &argumentNames) {
  Builder builder(module.getContext());
  for (auto function : module.getOps<func::FuncOp>()) {
    auto names = argumentNames.find(function.getSymName());
    if (names == argumentNames.end())
      continue;
    for (unsigned i = 0;
         i < function.getNumArguments() && i < names->second.size(); ++i)
      if (!function.getArgAttr(i, "graph.name"))
        function.setArgAttr(i, "graph.name",
                            builder.getStringAttr(names->second[i]));
  }
}

/// The targets to build plans for: those of --target, or else the default
/// set: the CPU, and one GPU when nvcc can build kernels;
/// MODELC_DEFAULT_TARGETS (comma-separated) replaces it.
std::vector<std::string> chooseTargets() {
  std::vector<std::string> targetNames(targets.begin(), targets.end());
  if (!targetNames.empty())
    return targetNames;
  const char *env = std::getenv("MODELC_DEFAULT_TARGETS");
  std::string why;
  if (env && *env) {
    SmallVector<StringRef> names;
    StringRef(env).split(names, ',', -1, false);
    for (StringRef n : names)
      targetNames.push_back(n.trim().str());
  } else if (std::optional<std::string> nvcc = modelc::findNvcc(why)) {
    targetNames = {"cpu", "h200"};
    if (emitKind == EmitKind::Library || verbose)
      llvm::errs() << "modelc: note: nvcc found (" << *nvcc
                   << "): building plans 'cpu' and 'h200' (one GPU); "
                      "--target=cpu builds the CPU plan alone\n";
  } else {
    targetNames.push_back("cpu");
  }
  return targetNames;
}

/// `path` for one of `targetCount` targets: with several, the target's name
/// goes before the extension (report.json -> report-h200x2.json).
std::string perTargetPath(const std::string &path, const std::string &target,
                          size_t targetCount) {
  if (path.empty() || targetCount == 1)
    return path;
  llvm::SmallString<256> out(path);
  std::string ext = llvm::sys::path::extension(path).str();
  llvm::sys::path::replace_extension(out, "");
  std::string safe = target;
  for (char &c : safe)
    if (!llvm::isAlnum(c) && c != '.')
      c = '_';
  return std::string(out) + "-" + safe + ext;
}

/// The estimated makespan the placement recorded on `module`.
double estimatedMakespan(ModuleOp module) {
  auto attr = module->getAttrOfType<FloatAttr>("device.estimated_makespan");
  return attr ? attr.getValueAsDouble() : 0.0;
}

/// One compilation, stage by stage. Each stage reports its own errors; a
/// stage that prints what --emit asked for ends the run.
class Driver {
public:
  explicit Driver(std::string flags)
      : flags(std::move(flags)), context(makeRegistry()) {
    // Ops of unknown dialects parse, so that modelc-verify-model can reject
    // them with a message about models rather than about MLIR's flags.
    context.allowUnregisteredDialects(true);
    // A diagnostic names the op and its location; a dump of the op is noise.
    context.printOpOnDiagnostic(false);
  }

  LogicalResult run();

private:
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    modelc::registerModelcDialects(registry);
    return registry;
  }

  LogicalResult parse();
  LogicalResult findPlaceAllTargets();
  LogicalResult place();
  OwningOpRef<ModuleOp> placeOnce(const std::string &target, bool split,
                                  bool quiet, const std::string &report,
                                  const std::string &dot);
  LogicalResult collectPlans();
  LogicalResult loadWeights();
  LogicalResult makeTempDir();
  LogicalResult prepareWeights();
  LogicalResult emitSource();
  LogicalResult build();
  void printSummary(const std::string &output);
  std::string tempFile(StringRef name) const;

  std::string flags;
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::optional<SourceMgrDiagnosticHandler> diagnostics;
  std::optional<StageTimer> timer;
  OwningOpRef<ModuleOp> module;
  llvm::StringMap<std::vector<std::string>> argumentNames;
  std::vector<std::string> targetNames;
  /// The targets --place-all applies to: those that have that device.
  std::set<std::string> placeAllTargets;
  std::vector<OwningOpRef<ModuleOp>> placed;
  std::vector<modelc::PlanModule> plans;
  std::optional<std::string> nvcc;
  bool hasWeights = false;
  modelc::WeightSet weights;
  llvm::SmallString<256> tempDir;
  bool keepTemps = false;
  bool embed = false;
  modelc::CpuEmitOptions options;
  modelc::CpuEmitReport report;
  modelc::GpuCode gpu;
};

LogicalResult Driver::run() {
  if (failed(parse()))
    return failure();
  if (emitKind == EmitKind::Graph)
    return writeText([&](llvm::raw_ostream &os) { module->print(os); });

  nameArguments(*module, argumentNames);
  targetNames = chooseTargets();
  if (emitKind == EmitKind::Placed && targetNames.size() != 1)
    return fail("--emit=placed shows one plan; give one --target");
  if (failed(findPlaceAllTargets()) || failed(place()))
    return failure();
  timer->stop("placement");
  if (emitKind == EmitKind::Placed)
    return writeText([&](llvm::raw_ostream &os) { placed.front()->print(os); });

  if (failed(collectPlans()) || failed(loadWeights()) || failed(makeTempDir()))
    return failure();
  llvm::scope_exit cleanup([&] {
    if (!keepTemps)
      llvm::sys::fs::remove_directories(tempDir);
  });
  if (failed(prepareWeights()))
    return failure();
  timer->stop("weights");
  if (emitKind == EmitKind::Cpp || emitKind == EmitKind::Cuda)
    return emitSource();
  return build();
}

/// Parses and verifies the input, then runs the graph passes on it.
LogicalResult Driver::parse() {
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputPath, &errorMessage);
  if (!input)
    return fail(errorMessage);

  timer.emplace();
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  diagnostics.emplace(sourceMgr, &context);

  module = parseModel(sourceMgr, context, argumentNames);
  if (!module)
    return failure();
  timer->stop("parse and verify");

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  modelc::buildGraphPipeline(pm);
  if (failed(pm.run(*module)))
    return failure();
  timer->stop("graph passes");
  return success();
}

LogicalResult Driver::findPlaceAllTargets() {
  if (placeAll.empty())
    return success();
  for (const std::string &target : targetNames) {
    std::string error;
    std::optional<modelc::TargetDescription> t =
        modelc::loadTarget(target, error);
    if (t && t->find(placeAll))
      placeAllTargets.insert(target);
  }
  if (placeAllTargets.empty())
    return fail("--place-all=" + placeAll +
                ": no target has that device (give a --target with it, "
                "e.g. h200 for cuda:0)");
  return success();
}

/// A copy of the graph placed on `target`, or null after an error (none
/// when `quiet`: a trial placement fails quietly, the batch may not split).
OwningOpRef<ModuleOp> Driver::placeOnce(const std::string &target, bool split,
                                        bool quiet, const std::string &report,
                                        const std::string &dot) {
  OwningOpRef<ModuleOp> copy(module->clone());
  PassManager placement(&context);
  if (failed(applyPassManagerCLOptions(placement)))
    return nullptr;
  modelc::buildPlacementPipeline(
      placement, target, report, dot, debugDropTransfer, split,
      placeAllTargets.count(target) ? placeAll.getValue() : "");
  std::optional<ScopedDiagnosticHandler> silence;
  if (quiet)
    silence.emplace(&context, [](Diagnostic &) { return success(); });
  if (failed(placement.run(*copy)))
    return nullptr;
  return copy;
}

/// Places the graph once per target, data parallel when asked for or when
/// the cost model prefers it (a target with several accelerators and a
/// batch that splits).
LogicalResult Driver::place() {
  for (const std::string &target : targetNames) {
    bool split = dataParallel && target != "cpu";
    if (!dataParallel && target != "cpu") {
      OwningOpRef<ModuleOp> normal = placeOnce(target, false, true, "", "");
      OwningOpRef<ModuleOp> parallel = placeOnce(target, true, true, "", "");
      if (normal && parallel &&
          estimatedMakespan(*parallel) < estimatedMakespan(*normal)) {
        split = true;
        if (verbose)
          llvm::outs() << "data parallel for target '" << target
                       << "': estimated " << estimatedMakespan(*parallel) * 1e3
                       << " ms, against " << estimatedMakespan(*normal) * 1e3
                       << " ms without\n";
      }
    }
    OwningOpRef<ModuleOp> copy =
        placeOnce(target, split, false,
                  perTargetPath(placementReport, target, targetNames.size()),
                  perTargetPath(placementDot, target, targetNames.size()));
    if (!copy)
      return failure();
    if (verbose)
      modelc::printPlacementSummary(*copy, llvm::outs());
    placed.push_back(std::move(copy));
  }
  return success();
}

/// The plans' devices, from the targets the placement recorded; finds nvcc
/// when a plan has GPUs whose kernels it must build.
LogicalResult Driver::collectPlans() {
  std::string nvccMissing;
  for (auto [i, target] : llvm::enumerate(targetNames)) {
    ModuleOp placedModule = *placed[i];
    auto attr = placedModule->getAttrOfType<modelc::device::TargetAttr>(
        "device.target");
    modelc::PlanModule plan{target, placedModule, {}};
    for (Attribute d : attr.getDevices()) {
      auto spec = cast<modelc::device::DeviceSpecAttr>(d);
      if (spec.getDevice().getKind() == modelc::device::DeviceKind::cuda &&
          !cudaEmulation && !nvcc && emitKind == EmitKind::Library) {
        // GPU kernels are built with nvcc: say first when it is missing.
        if (!(nvcc = modelc::findNvcc(nvccMissing)))
          return fail("target '" + target +
                      "' has GPUs, and building their kernels needs nvcc "
                      "(the CUDA toolkit): " +
                      nvccMissing +
                      "; install it or set MODELC_NVCC (--emit=placed "
                      "shows the placement without it)");
      }
      plan.devices.push_back(spec.getDevice().str());
    }
    plans.push_back(std::move(plan));
  }
  return success();
}

/// The weights: read (--weights), random (--random-weights) or, when the
/// model declares none or only code is printed, their declarations alone.
LogicalResult Driver::loadWeights() {
  hasWeights = !module->getOps<modelc::graph::WeightOp>().empty();
  if (!weightsPath.empty() && randomWeights.getNumOccurrences())
    return fail("--weights and --random-weights exclude each other");
  if (externalWeights && weightsPath.empty())
    return fail("--external-weights needs --weights FILE: the model records "
                "that file and maps it when loaded");
  if (!weightsPath.empty()) {
    FailureOr<modelc::WeightSet> read =
        modelc::readSafetensorsWeights(*module, weightsPath);
    if (failed(read))
      return failure();
    weights = std::move(*read);
  } else if (randomWeights.getNumOccurrences()) {
    uint64_t seed = 0;
    if (!randomWeights.empty() &&
        llvm::StringRef(randomWeights).getAsInteger(10, seed))
      return fail("--random-weights takes an integer seed, got '" +
                  randomWeights + "'");
    weights = modelc::randomWeights(*module, seed);
  } else if (hasWeights && emitKind == EmitKind::Library) {
    return fail("the model declares weights; give --weights FILE or "
                "--random-weights[=SEED]");
  } else {
    weights = modelc::declaredWeights(*module);
  }

  if (!saveWeights.empty()) {
    if (!randomWeights.getNumOccurrences() && weightsPath.empty())
      return fail("--save-weights needs --weights or --random-weights");
    if (failed(modelc::writeSafetensors(weights, saveWeights)))
      return failure(); // the error names the file and the reason
  }
  return success();
}

/// Where the generated files go: --save-temps, or a temporary folder.
LogicalResult Driver::makeTempDir() {
  keepTemps = !saveTemps.empty();
  if (keepTemps) {
    tempDir = saveTemps.getValue();
    if (std::error_code ec = llvm::sys::fs::create_directories(tempDir))
      return fail("cannot create '" + saveTemps + "': " + ec.message());
  } else if (std::error_code ec =
                 llvm::sys::fs::createUniqueDirectory("modelc", tempDir)) {
    return fail("cannot create a temporary folder: " + ec.message());
  }
  llvm::sys::fs::make_absolute(tempDir);
  return success();
}

std::string Driver::tempFile(StringRef name) const {
  llvm::SmallString<256> path(tempDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// The emitter's options, with the weights embedded as a blob or recorded
/// as external.
LogicalResult Driver::prepareWeights() {
  options.compilerVersion = MODELC_VERSION;
  options.compilerFlags = flags;
  options.checked = checked;
  embed = !externalWeights && emitKind == EmitKind::Library;
  if (embed && hasWeights) {
    options.weightBlobPath = tempFile("weights.bin");
    FailureOr<std::vector<modelc::WeightSlot>> slots = modelc::writeWeightBlob(
        weights, options.weightBlobPath, options.weightBlobBytes);
    if (failed(slots))
      return failure();
    options.weights = std::move(*slots);
  } else {
    for (const modelc::WeightSet::Weight &w : weights.weights)
      options.weights.push_back({w.name, w.type, 0, w.nbytes});
    if (externalWeights) {
      llvm::SmallString<256> absolute(weightsPath.getValue());
      llvm::sys::fs::make_absolute(absolute);
      options.externalWeightsPath = std::string(absolute);
    }
  }
  options.allowTf32 = allowTf32;
  if (!cudaEmulation)
    gpu.imagePath = tempFile("kernels.fatbin");
  return success();
}

/// --emit=cpp and --emit=cuda: prints the generated host C++ or CUDA.
LogicalResult Driver::emitSource() {
  std::string code;
  llvm::raw_string_ostream os(code);
  if (failed(modelc::emitModel(plans, options, os, &report, &gpu)))
    return failure();
  timer->stop("code generation");
  if (emitKind == EmitKind::Cuda && gpu.source.empty())
    return fail("--emit=cuda: the plans have no GPU kernels (no op is "
                "placed on a GPU, or only matrix products, which run in "
                "cuBLASLt; give a GPU --target, e.g. h200)");
  return writeText([&](llvm::raw_ostream &out) {
    out << (emitKind == EmitKind::Cpp ? code : gpu.source);
  });
}

/// Generates the sources, builds the GPU kernels with nvcc (or as host code
/// under --cuda-emulation) and links model.so.
LogicalResult Driver::build() {
  std::string source = tempFile("model.cpp");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(source, ec);
    if (ec)
      return fail("cannot write '" + source + "': " + ec.message());
    if (failed(modelc::emitModel(plans, options, os, &report, &gpu)))
      return failure();
  }
  timer->stop("code generation");
  std::string kernels;
  if (!gpu.source.empty()) {
    kernels = tempFile("kernels.cu");
    std::error_code ec;
    llvm::raw_fd_ostream os(kernels, ec);
    if (ec)
      return fail("cannot write '" + kernels + "': " + ec.message());
    os << gpu.source;
    os.close();
    if (!cudaEmulation) {
      if (failed(modelc::buildFatbin(*nvcc, kernels, gpu.imagePath,
                                     tempFile("nvcc.log"))))
        return failure();
      timer->stop("nvcc");
    }
  }
  std::string output = outputPath;
  if (output.empty()) {
    llvm::SmallString<256> path(llvm::sys::path::filename(inputPath));
    llvm::sys::path::replace_extension(path, ".so");
    output = std::string(path);
  }
  if (failed(modelc::buildSharedLibrary(source, output, tempFile("build.log"),
                                        cudaEmulation ? kernels : "")))
    return failure();
  timer->stop("C++ compiler");
  if (verbose)
    printSummary(output);
  return success();
}

/// -v: what was built.
void Driver::printSummary(const std::string &output) {
  llvm::outs() << "modelc: wrote " << output << " (" << plans.size()
               << (plans.size() == 1 ? " plan, " : " plans, ")
               << weights.weights.size() << " weights, "
               << (embed ? "embedded" : "external") << ")\n";
  if (!gpu.kernelNames.empty())
    llvm::outs() << "  GPU code: " << gpu.kernelNames.size() << " kernels"
                 << (cudaEmulation ? " (host emulation)" : ", fatbin by nvcc")
                 << "\n";
  for (const auto &entry : report.entries)
    llvm::outs() << "  plan '" << entry.plan << "', entry '" << entry.name
                 << "': arena " << entry.arenaBytes << " bytes, "
                 << entry.kernelCalls << " kernel calls, " << entry.fusedLoops
                 << " elementwise loops covering " << entry.fusedOps
                 << " ops\n";
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  std::string flags = commandLine(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(modelcCategory);
  if (!cl::ParseCommandLineOptions(argc, argv, overview))
    return 1;
  return failed(Driver(flags).run()) ? 1 : 0;
}
