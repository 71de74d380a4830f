//===- Driver.cpp - the stages of one modelc compilation ------------------===//
//
// One function per stage: parse and graph passes, the targets and their
// placement, the plans' devices, the weights, the temporary folder, code
// generation and the build. Every failure is a diagnostic with
// file:line:col where the input has one, or "modelc: error: ...".
//
//===----------------------------------------------------------------------===//

#include "tools/modelc/Driver.h"
#include "compiler/Analysis/CostModel.h"
#include "compiler/Codegen/HostPrinter.h"
#include "compiler/Driver/BuildLibrary.h"
#include "compiler/Driver/Weights.h"
#include "compiler/Import/Onnx/OnnxImport.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Target.h"
#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacementSummary.h"
#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "mlir/IR/Verifier.h"
#include "runtime/src/integrity.hpp"
#include "tools/modelc/ParseModel.h"
#include "tools/modelc/StageTimer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace modelc::driver;

namespace {

/// Reports `message` as modelc's error; always fails.
LogicalResult fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "modelc") << message << "\n";
  return failure();
}

/// A 1-D float32 or float64 little-endian .npy as numbers (--loss-weight).
/// Not the runtime's modelc::read_npy: it reports errors by throwing, and
/// modelc is built without exceptions (LLVM's flags).
FailureOr<std::vector<double>> readVector(const std::string &path) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return fail("cannot read '" + path + "': " + file.getError().message());
  StringRef data = (*file)->getBuffer();
  auto bad = [&](const llvm::Twine &why) {
    return fail("'" + path + "' is not a 1-D float32/float64 .npy: " + why);
  };
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return bad("no .npy magic");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerStart = major == 1 ? 10 : 12;
  if (data.size() < headerStart)
    return bad("truncated header");
  size_t headerLength =
      major == 1
          ? static_cast<unsigned char>(data[8]) |
                static_cast<unsigned char>(data[9]) << 8
          : static_cast<size_t>(static_cast<unsigned char>(data[8])) |
                static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8 |
                static_cast<size_t>(static_cast<unsigned char>(data[10]))
                    << 16 |
                static_cast<size_t>(static_cast<unsigned char>(data[11])) << 24;
  if (data.size() < headerStart + headerLength)
    return bad("truncated header");
  StringRef header = data.substr(headerStart, headerLength);
  StringRef payload = data.substr(headerStart + headerLength);
  size_t width = header.contains("'<f4'")   ? 4
                 : header.contains("'<f8'") ? 8
                                            : 0;
  if (!width)
    return bad("the dtype is not '<f4' or '<f8'");
  if (header.contains("'fortran_order': True"))
    return bad("Fortran order");
  size_t open = header.find("'shape': (");
  if (open == StringRef::npos)
    return bad("no shape");
  StringRef shape = header.substr(open + 10).split(')').first;
  SmallVector<StringRef> dims;
  shape.split(dims, ',', -1, /*KeepEmpty=*/false);
  uint64_t count = 0;
  if (dims.size() != 1 || dims[0].trim().getAsInteger(10, count))
    return bad("the shape is (" + shape + ")");
  if (payload.size() != count * width)
    return bad(llvm::Twine(payload.size()) + " data bytes for " +
               llvm::Twine(count) + " elements");
  std::vector<double> values(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (width == 4) {
      float v;
      std::memcpy(&v, payload.data() + i * 4, 4);
      values[i] = v;
    } else {
      std::memcpy(&values[i], payload.data() + i * 8, 8);
    }
  }
  return values;
}

/// Writes what `write` prints to -o, or to stdout without it.
LogicalResult writeText(const std::string &outputPath,
                        llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string path = outputPath.empty() ? "-" : outputPath;
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

/// The targets to build plans for: those of --target, or else the default
/// set: the CPU, and one GPU when nvcc can build kernels;
/// MODELC_DEFAULT_TARGETS (comma-separated) replaces it.
std::vector<std::string> chooseTargets(const DriverOptions &options,
                                       bool dynamic) {
  std::vector<std::string> targetNames(options.targets.begin(),
                                       options.targets.end());
  if (!targetNames.empty())
    return targetNames;
  // A dynamic model's default is the CPU plan: GPU plans take some ops
  // with a dynamic dimension only (docs/dynamic.md); --target asks for them.
  if (dynamic)
    return {"cpu"};
  // A training model's weights are saved and loaded from host-readable
  // devices only so far: the CPU plan unless GPU targets are asked for.
  if (!options.training.entry.empty())
    return {"cpu"};
  const char *env = std::getenv("MODELC_DEFAULT_TARGETS");
  std::string why;
  if (env && *env) {
    SmallVector<StringRef> names;
    StringRef(env).split(names, ',', -1, false);
    for (StringRef n : names)
      targetNames.push_back(n.trim().str());
  } else if (std::optional<std::string> nvcc = modelc::findNvcc(why)) {
    targetNames = {"cpu", "h200"};
    if (options.emitKind == EmitKind::Library || options.verbose)
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
  explicit Driver(const DriverOptions &options)
      : options(options), context(makeRegistry()) {
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
  LogicalResult importOnnx();
  LogicalResult parseIR();
  LogicalResult applyDims();
  LogicalResult checkDynamicBuild();
  FailureOr<modelc::TrainingOptions> trainingOptions();
  LogicalResult chooseDataParallelTraining(ModuleOp beforeTraining,
                                           modelc::TrainingOptions training);
  LogicalResult findPlaceAllTargets();
  LogicalResult place();
  LogicalResult lower();
  LogicalResult annotateEstimates();
  OwningOpRef<ModuleOp> placeOnce(const std::string &target, bool split,
                                  bool quiet, const std::string &report,
                                  const std::string &dot,
                                  ModuleOp from = nullptr);
  LogicalResult placeAndKeep(const std::string &target, bool split,
                             const std::string &suffix, ModuleOp from,
                             int32_t regimeDim, int64_t min, int64_t max);
  FailureOr<ArrayAttr> sizeRegimes(const std::string &target);
  modelc::graph::DimOp regimeDim(ArrayAttr regimes);
  void printPlaced(llvm::raw_ostream &os);
  LogicalResult checkRegimeWeights(const std::string &target, size_t first);
  LogicalResult collectPlans();
  LogicalResult loadWeights();
  LogicalResult checkWeightsFit();
  FailureOr<uint64_t> randomSeed();
  LogicalResult makeTempDir();
  LogicalResult prepareWeights();
  LogicalResult emitSource();
  LogicalResult build();
  void printSummary(const std::string &output);
  LogicalResult keepTempsForTheLog();
  std::string tempFile(StringRef name) const;

  const DriverOptions &options;
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::optional<SourceMgrDiagnosticHandler> diagnostics;
  /// Errors in an imported ONNX model: located at its nodes by name.
  std::optional<ScopedDiagnosticHandler> onnxDiagnostics;
  /// The initializers of an imported ONNX model: its weights by default.
  std::vector<modelc::onnx_import::InitializerData> onnxWeights;
  std::optional<StageTimer> timer;
  OwningOpRef<ModuleOp> module;
  ArgumentNames argumentNames;
  std::vector<std::string> targetNames;
  /// --train --data-parallel: the replicas each plan runs (0: none).
  int64_t replicas = 0;
  /// The targets --place-all applies to: those that have that device.
  std::set<std::string> placeAllTargets;
  std::vector<OwningOpRef<ModuleOp>> placed;
  /// Per placed module: its target and, for a size regime, the range of
  /// the dimension it runs (docs/dynamic.md).
  struct PlacedPlan {
    std::string target;
    int32_t regimeDim = -1;
    int64_t min = 0, max = 0;
  };
  std::vector<PlacedPlan> placedPlans;
  std::vector<modelc::PlanModule> plans;
  std::optional<std::string> nvcc;
  /// --placement-svg: Graphviz's dot.
  std::optional<std::string> svgTool;
  bool hasWeights = false;
  /// Some entry point's arguments name a graph.dim (a dynamic dimension).
  bool dynamic = false;
  modelc::WeightSet weights;
  /// The safetensors file the weights are read from: --weights, or the
  /// --save-weights file random ones were written to (--external-weights).
  std::string weightsFile;
  llvm::SmallString<256> tempDir;
  bool keepTemps = false;
  bool embed = false;
  modelc::CpuEmitOptions emitOptions;
  modelc::CpuEmitReport report;
  modelc::GpuCode gpu;
};

LogicalResult Driver::run() {
  if (failed(parse()))
    return failure();
  if (options.emitKind == EmitKind::Graph)
    return writeText(options.outputPath,
                     [&](llvm::raw_ostream &os) { module->print(os); });

  nameArguments(*module, argumentNames);
  targetNames = chooseTargets(options, dynamic);
  if (options.emitKind == EmitKind::Placed && targetNames.size() != 1)
    return fail("--emit=placed shows one plan; give one --target");
  if (options.emitKind == EmitKind::Scheduled && targetNames.size() != 1)
    return fail("--emit=scheduled shows one plan; give one --target");
  if (failed(findPlaceAllTargets()) || failed(place()))
    return failure();
  timer->stop("placement");
  if (options.emitKind == EmitKind::Placed)
    return writeText(options.outputPath,
                     [&](llvm::raw_ostream &os) { printPlaced(os); });
  if (failed(lower()))
    return failure();
  timer->stop("lowering");
  if (options.emitKind == EmitKind::Scheduled)
    return writeText(options.outputPath,
                     [&](llvm::raw_ostream &os) { printPlaced(os); });
  if (failed(annotateEstimates()))
    return failure();

  if (failed(collectPlans()) || failed(loadWeights()) || failed(makeTempDir()))
    return failure();
  llvm::scope_exit cleanup([&] {
    if (!keepTemps)
      llvm::sys::fs::remove_directories(tempDir);
  });
  if (failed(prepareWeights()))
    return failure();
  timer->stop("weights");
  if (options.emitKind == EmitKind::Cpp || options.emitKind == EmitKind::Cuda)
    return emitSource();
  return build();
}

/// --emit=placed/scheduled: the one plan, or each size regime's, in order.
void Driver::printPlaced(llvm::raw_ostream &os) {
  for (auto [i, plan] : llvm::enumerate(placedPlans)) {
    if (plan.regimeDim >= 0)
      os << "// size regime " << plan.min << ".." << plan.max << " of target '"
         << plan.target << "'\n";
    placed[i]->print(os);
  }
}

/// The targets a training build makes plans for: each name as given and
/// its description.
using NamedTargets =
    std::vector<std::pair<std::string, modelc::TargetDescription>>;
static FailureOr<NamedTargets> trainingTargets(const DriverOptions &options) {
  NamedTargets targets;
  for (const std::string &name : chooseTargets(options, false)) {
    std::string error;
    std::optional<modelc::TargetDescription> t =
        modelc::loadTarget(name, error);
    if (!t)
      return fail(error);
    targets.push_back({name, std::move(*t)});
  }
  return targets;
}

/// The target with the most accelerators among those built, and how many
/// it has (0 and "" when none has one): training's replicas come from it.
static FailureOr<std::pair<std::string, int64_t>>
mostAccelerators(const DriverOptions &options) {
  FailureOr<NamedTargets> targets = trainingTargets(options);
  if (failed(targets))
    return failure();
  std::pair<std::string, int64_t> most{"", 0};
  for (const auto &[name, t] : *targets) {
    int64_t count = llvm::count_if(
        t.devices, [](const modelc::DeviceDesc &d) { return !d.isHost(); });
    if (count > most.second)
      most = {name, count};
  }
  return most;
}

/// The training pipeline's options: the command line's, checked, with
/// --betas parsed.
FailureOr<modelc::TrainingOptions> Driver::trainingOptions() {
  modelc::TrainingOptions training = options.training;
  if (options.dataParallel) {
    // One replica per accelerator of the target with the most; a target
    // with fewer runs several replicas on one device (the CPU where it has
    // none), so that every plan computes the same sums.
    FailureOr<std::pair<std::string, int64_t>> most = mostAccelerators(options);
    if (failed(most))
      return failure();
    training.replicas = std::max(training.replicas, most->second);
    if (training.replicas == 0)
      return fail("--train --data-parallel makes one replica per "
                  "accelerator, and the targets have none: add a --target "
                  "with several (cpu+sim2, h200x2, ...)");
    if (training.loss.empty())
      return fail("--train=" + training.entry +
                  " --data-parallel is not supported yet: the model's own "
                  "loss entry point mixes the samples of the batch, so it "
                  "cannot be split into replicas; build the loss with "
                  "--loss=KIND on the 'forward' entry point");
  }
  if (training.shardOptimizerState && !training.replicas &&
      !training.distributed)
    return fail("--shard-optimizer-state splits the optimizer state over the "
                "replicas of a data-parallel build or the ranks of a "
                "distributed one: add --data-parallel or --distributed");
  if (training.shardOptimizerState && !training.replicas) {
    FailureOr<NamedTargets> targets = trainingTargets(options);
    if (failed(targets))
      return failure();
    for (const auto &[name, t] : *targets)
      if (t.devices.size() != 1 || !t.devices.front().isHost())
        return fail("--distributed --shard-optimizer-state on target '" + name +
                    "' is not supported yet: the state is sharded over the "
                    "ranks on the CPU plan alone (--target=cpu)");
  }
  if (options.precision != "f32")
    return fail("--train with --precision=" + options.precision +
                " is not supported yet: training keeps f32 parameters");
  if (!training.loss.empty() && options.trainEntryGiven)
    return fail("--loss builds the loss entry point 'loss' from 'forward'; "
                "--train=" +
                training.entry +
                " names a loss entry of the model's own: give one of them");
  if (training.loss.empty() &&
      modelc::onnx_import::isOnnxPath(options.inputPath))
    return fail("--train on an ONNX model needs --loss=cross_entropy, nll, "
                "mse or bce_with_logits: the loss of its output against a "
                "new input 'target'");
  if (!options.lossWeightPath.empty()) {
    if (training.loss != "cross_entropy" && training.loss != "nll")
      return fail("--loss-weight applies to --loss=cross_entropy and nll");
    FailureOr<std::vector<double>> weights = readVector(options.lossWeightPath);
    if (failed(weights))
      return failure();
    training.classWeights = std::move(*weights);
  }
  if (training.optimizer != "sgd" && training.optimizer != "adam" &&
      training.optimizer != "adamw")
    return fail("--optimizer=" + training.optimizer +
                ": expected sgd, adam or adamw");
  if (training.syncBatchnorm && !training.distributed && !training.replicas)
    return fail("--sync-batchnorm takes BatchNorm's statistics over the "
                "ranks of a distributed run or the replicas of a "
                "data-parallel one: add --distributed or --data-parallel");
  if (training.distributed && !(training.bucketMb > 0.0))
    return fail("--bucket-mb " + std::to_string(training.bucketMb) +
                ": expected a positive number of megabytes");
  if (training.accumulate < 1)
    return fail("--accumulate " + std::to_string(training.accumulate) +
                ": expected a number of micro-batches of at least 1");
  if (training.nesterov &&
      (training.momentum <= 0.0 || training.dampening != 0.0))
    return fail("--nesterov needs --momentum > 0 and --dampening 0 (as "
                "torch.optim.SGD)");
  if (training.lr < 0.0 || training.momentum < 0.0 ||
      training.weightDecay < 0.0 || training.clipGradNorm < 0.0)
    return fail("--lr, --momentum, --weight-decay and --clip-grad-norm must "
                "not be negative");
  auto [first, second] = StringRef(options.betas).split(',');
  if (first.trim().getAsDouble(training.beta1) ||
      second.trim().getAsDouble(training.beta2) || training.beta1 < 0 ||
      training.beta1 >= 1 || training.beta2 < 0 || training.beta2 >= 1)
    return fail("--betas '" + options.betas +
                "': expected two numbers in [0, 1) such as 0.9,0.999");
  return training;
}

LogicalResult Driver::parse() {
  if (modelc::onnx_import::isOnnxPath(options.inputPath)) {
    if (failed(importOnnx()))
      return failure();
  } else if (!options.inputShapes.empty()) {
    return fail("--input-shape applies to ONNX models; the inputs of a "
                "model.ir have static shapes");
  } else if (failed(parseIR())) {
    return failure();
  }
  if (failed(applyDims()) || failed(checkDynamicBuild()))
    return failure();
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  modelc::buildGraphPipeline(pm);
  if (options.training.entry.empty() &&
      (!options.training.loss.empty() || !options.lossWeightPath.empty()))
    return fail("--loss and --loss-weight apply to a training build: add "
                "--train");
  if (options.training.entry.empty() && options.training.distributed)
    return fail("--distributed applies to a training build (it sums the "
                "gradients over the ranks): add --train");
  if (options.training.dropoutSeed < -1 ||
      (options.training.dropoutSeed >= 0 && options.training.entry.empty()))
    return fail(options.training.dropoutSeed < -1
                    ? "--dropout-seed takes a number from 0 to 2^63 - 1"
                    : "--dropout-seed applies to a training build (dropout "
                      "draws masks only in training): add --train");
  if (options.training.entry.empty() && options.training.recompute)
    return fail("--recompute applies to a training build (it recomputes "
                "forward values in the backward): add --train");
  // Without --data-parallel, a training step may still be split into
  // replicas when the cost model prefers it (below): that choice needs the
  // graph before training's passes.
  bool considerReplicas = !options.training.entry.empty() &&
                          !options.dataParallel && options.precision == "f32";
  FailureOr<modelc::TrainingOptions> training;
  if (!options.training.entry.empty()) {
    training = trainingOptions();
    if (failed(training))
      return failure();
    replicas = training->replicas;
    // The entry points training adds take the loss entry's input names.
    nameArguments(*module, argumentNames);
  }
  OwningOpRef<ModuleOp> beforeTraining;
  if (considerReplicas) {
    if (failed(pm.run(*module)))
      return failure();
    beforeTraining = module->clone();
    pm.clear();
  }
  if (!options.training.entry.empty())
    modelc::buildTrainingPipeline(pm, *training);
  if (options.precision != "f32") {
    modelc::LowerPrecisionPassOptions precision;
    precision.precision = options.precision;
    pm.addPass(modelc::createLowerPrecisionPass(precision));
    pm.addPass(mlir::createCanonicalizerPass());
  }
  if (failed(pm.run(*module)))
    return failure();
  if (considerReplicas &&
      failed(chooseDataParallelTraining(*beforeTraining, *training)))
    return failure();
  timer->stop("graph passes");
  return success();
}

/// --train without --data-parallel: the step split into one replica per
/// accelerator (as --data-parallel does) when the cost model estimates it
/// faster on the target with the most accelerators, as inference's split
/// is chosen. Only where the split step equals one device's: not with
/// BatchNorm in training mode (each replica would normalise with its own
/// batch's statistics; --data-parallel asks for that, --sync-batchnorm
/// for the shared ones), not for a --train=ENTRY loss (the replicas' sum
/// needs a loss modelc builds), not across processes, nor for a dynamic
/// batch. `module` holds the one-replica step; `beforeTraining` the graph
/// before training's passes.
LogicalResult
Driver::chooseDataParallelTraining(ModuleOp beforeTraining,
                                   modelc::TrainingOptions training) {
  auto skip = [&](const std::string &why) {
    if (options.verbose)
      llvm::outs() << "data-parallel training not considered: " << why << "\n";
    return success();
  };
  if (training.replicas)
    return success();
  // The target with the most accelerators decides, as --data-parallel's
  // replica count comes from it.
  FailureOr<std::pair<std::string, int64_t>> most = mostAccelerators(options);
  if (failed(most))
    return failure();
  auto [best, accelerators] = *most;
  // Nothing to choose without two accelerators.
  if (accelerators < 2)
    return success();
  if (options.noDataParallel)
    return skip("--data-parallel=false");
  if (training.loss.empty())
    return skip("the loss is the model's own (--train=" + training.entry +
                "); replicas need one modelc builds (--loss)");
  if (training.distributed)
    return skip("--distributed: each rank runs one replica");
  if (!options.placeAll.empty())
    return skip("--place-all places every op itself");
  if (!beforeTraining.getOps<modelc::graph::DimOp>().empty())
    return skip("the model has a dynamic dimension");
  bool batchNorm = false;
  beforeTraining.walk([&](modelc::graph::BatchNormOp bn) {
    batchNorm |= bn->hasAttr("momentum");
  });
  if (batchNorm)
    return skip("BatchNorm in training mode would normalise each replica "
                "with its own part of the batch (--data-parallel asks for "
                "that, with --sync-batchnorm for the whole batch's "
                "statistics)");

  // The split step: the same passes with one replica per accelerator. A
  // batch the replicas cannot share evenly keeps one replica.
  OwningOpRef<ModuleOp> split(beforeTraining.clone());
  training.replicas = accelerators;
  {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    modelc::buildTrainingPipeline(pm, training);
    ScopedDiagnosticHandler silence(&context,
                                    [](Diagnostic &) { return success(); });
    if (failed(pm.run(*split)))
      return skip("the step cannot be split into " +
                  std::to_string(accelerators) +
                  " replicas (a batch they cannot share evenly, or an op "
                  "without a rule for splitting it)");
  }
  int64_t saved = replicas;
  replicas = 0;
  OwningOpRef<ModuleOp> one = placeOnce(best, false, true, "", "", *module);
  replicas = accelerators;
  OwningOpRef<ModuleOp> many = placeOnce(best, false, true, "", "", *split);
  replicas = saved;
  if (!one || !many)
    return success();
  double oneTime = estimatedMakespan(*one), manyTime = estimatedMakespan(*many);
  if (!(manyTime < oneTime)) {
    if (options.verbose)
      llvm::outs() << "one replica for target '" << best << "': estimated "
                   << oneTime * 1e3 << " ms, against " << manyTime * 1e3
                   << " ms as " << accelerators << " replicas\n";
    return success();
  }
  module = std::move(split);
  replicas = accelerators;
  if (options.verbose)
    llvm::outs() << "data-parallel training, " << accelerators
                 << " replicas (one per accelerator of target '" << best
                 << "'): estimated " << manyTime * 1e3 << " ms, against "
                 << oneTime * 1e3 << " ms as one\n";
  return success();
}

/// A --dim NAME=MIN..MAX[@OPT], and how it was written.
struct DimSpec {
  std::string name;
  int64_t min, max, opt;
  std::string spec;
};

/// Parses one --dim NAME=MIN..MAX[@OPT].
static std::optional<DimSpec> parseDim(StringRef spec) {
  auto [name, range] = spec.split('=');
  auto [bounds, optText] = range.split('@');
  auto [minText, maxText] = bounds.split("..");
  int64_t min, max, opt;
  if (name.empty() || minText.getAsInteger(10, min) ||
      maxText.getAsInteger(10, max) || min < 1 || min > max)
    return std::nullopt;
  opt = max;
  if (!optText.empty() &&
      (optText.getAsInteger(10, opt) || opt < min || opt > max))
    return std::nullopt;
  return DimSpec{name.str(), min, max, opt, spec.str()};
}

/// Every --dim, parsed; an error naming the first malformed one.
static FailureOr<std::vector<DimSpec>>
parseDims(const std::vector<std::string> &specs) {
  std::vector<DimSpec> dims;
  for (const std::string &spec : specs) {
    std::optional<DimSpec> dim = parseDim(spec);
    if (!dim)
      return fail("--dim takes NAME=MIN..MAX or NAME=MIN..MAX@OPT with 1 <= "
                  "MIN <= OPT <= MAX, got '" +
                  spec + "'");
    dims.push_back(*dim);
  }
  return dims;
}

/// --dim on a model.ir: the range of a declared graph.dim; a new max
/// rewrites the IR's types (which hold the max); MIN == MAX makes the
/// model static at that size.
LogicalResult Driver::applyDims() {
  if (modelc::onnx_import::isOnnxPath(options.inputPath))
    return success(); // The importer declares them.
  FailureOr<std::vector<DimSpec>> dims = parseDims(options.dims);
  if (failed(dims))
    return failure();
  for (const auto &[name, min, max, opt, spec] : *dims) {
    auto decl = SymbolTable(*module).lookup<modelc::graph::DimOp>(name);
    if (!decl) {
      std::string declared;
      for (auto d : module->getOps<modelc::graph::DimOp>())
        declared += (declared.empty() ? "" : ", ") + d.getSymName().str();
      return fail("--dim " + spec + ": the model declares no dimension '" +
                  name + "' (" +
                  (declared.empty() ? std::string("it has no graph.dim")
                                    : "it declares " + declared) +
                  ")");
    }
    // The IR holds the dimension at its max: a new max rewrites it.
    if (static_cast<int64_t>(decl.getMax()) != max &&
        failed(modelc::specializeDim(*module, name, max)))
      return fail("--dim " + spec +
                  ": the model's shapes cannot be given "
                  "a new max (the error above)");
    if (min == max) {
      // One size: a static model (every plan and flag applies).
      // Its axes become static; other dimensions keep theirs.
      Builder b(&context);
      for (auto function : module->getOps<func::FuncOp>())
        for (unsigned i = 0; i < function.getNumArguments(); ++i)
          if (auto dims = function.getArgAttrOfType<ArrayAttr>(
                  i, modelc::graph::kDimsAttrName)) {
            SmallVector<Attribute> kept;
            bool any = false;
            for (Attribute d : dims) {
              bool it = cast<StringAttr>(d).getValue() == name;
              kept.push_back(it ? b.getStringAttr("") : d);
              any |= !it && !cast<StringAttr>(d).getValue().empty();
            }
            if (any)
              function.setArgAttr(i, modelc::graph::kDimsAttrName,
                                  b.getArrayAttr(kept));
            else
              function.removeArgAttr(i, modelc::graph::kDimsAttrName);
          }
      // A reshape's grouping names it too (the importer or specializeDims
      // wrote it): its size there.
      module->walk([&](modelc::graph::ReshapeOp reshape) {
        auto dims =
            reshape->getAttrOfType<ArrayAttr>(modelc::graph::kDimsAttrName);
        if (!dims)
          return;
        SmallVector<Attribute> sizes;
        for (Attribute d : dims) {
          auto text = dyn_cast<StringAttr>(d);
          std::optional<modelc::graph::SymDim> sym =
              text && !text.empty()
                  ? modelc::graph::SymDim::parse(&context, text.getValue())
                  : std::nullopt;
          if (!sym) {
            sizes.push_back(d);
            continue;
          }
          modelc::graph::SymDim left = modelc::graph::SymDim::of(sym->coef);
          for (StringAttr n : sym->dims)
            left = n.getValue() == name
                       ? left * modelc::graph::SymDim::of(max)
                       : left * modelc::graph::SymDim::named(n);
          sizes.push_back(b.getStringAttr(left.isStatic() ? "" : left.str()));
        }
        reshape->setAttr(modelc::graph::kDimsAttrName, b.getArrayAttr(sizes));
      });
      decl.erase();
      continue;
    }
    Builder b(&context);
    decl.setMaxAttr(b.getI64IntegerAttr(max));
    decl.setMinAttr(b.getI64IntegerAttr(min));
    decl.setOptAttr(b.getI64IntegerAttr(opt));
  }
  return success();
}

/// What a model with dynamic dimensions cannot be built with yet.
LogicalResult Driver::checkDynamicBuild() {
  for (auto function : module->getOps<func::FuncOp>())
    for (unsigned i = 0; i < function.getNumArguments(); ++i)
      if (auto dims = function.getArgAttrOfType<ArrayAttr>(
              i, modelc::graph::kDimsAttrName))
        for (Attribute d : dims)
          if (auto name = dyn_cast<StringAttr>(d); name && !name.empty())
            dynamic = true;
  if (!dynamic)
    return success();
  if (!options.training.entry.empty())
    return fail("--train with a dynamic dimension is not supported yet: "
                "training builds have static shapes (give the inputs' sizes "
                "with --input-shape, or fix the graph.dims)");
  return success();
}

/// Prints `diag` as "where: error: message" with the location's name (an
/// ONNX node) or file:line:col, and its notes.
static void printLocated(Diagnostic &diag) {
  auto where = [](Location loc) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (auto name = dyn_cast<NameLoc>(loc))
      os << name.getName().getValue();
    else if (auto file = dyn_cast<FileLineColLoc>(loc))
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn();
    else
      os << loc;
    return text;
  };
  const char *kind = diag.getSeverity() == DiagnosticSeverity::Error ? "error"
                     : diag.getSeverity() == DiagnosticSeverity::Warning
                         ? "warning"
                         : "note";
  llvm::errs() << where(diag.getLocation()) << ": " << kind << ": " << diag
               << "\n";
  for (Diagnostic &note : diag.getNotes())
    llvm::errs() << where(note.getLocation()) << ": note: " << note << "\n";
}

/// Imports an ONNX model: its weights become the default weights.
LogicalResult Driver::importOnnx() {
  timer.emplace(options.timeStages);
  onnxDiagnostics.emplace(&context, [](Diagnostic &diag) {
    printLocated(diag);
    return success();
  });
  modelc::onnx_import::ImportOptions importOptions;
  importOptions.training = !options.training.entry.empty();
  FailureOr<std::vector<DimSpec>> dims = parseDims(options.dims);
  if (failed(dims))
    return failure();
  for (const DimSpec &d : *dims)
    importOptions.dims[d.name] = {d.min, d.max, d.opt};
  for (const std::string &spec : options.inputShapes) {
    auto [name, text] = StringRef(spec).rsplit('=');
    SmallVector<int64_t> shape;
    SmallVector<std::string> named;
    SmallVector<StringRef> parts;
    text.split(parts, 'x');
    bool valid = !name.empty() && !text.empty();
    for (StringRef part : parts) {
      int64_t d;
      if (!part.empty() &&
          (llvm::isAlpha(part.front()) || part.front() == '_')) {
        // A dynamic dimension's name: it must have a range (--dim).
        auto range = importOptions.dims.find(part);
        if (range == importOptions.dims.end())
          return fail("--input-shape " + spec + ": '" + part.str() +
                      "' is not a dimension given by --dim (give "
                      "--dim " +
                      part.str() + "=MIN..MAX)");
        named.resize(parts.size());
        named[shape.size()] = part.str();
        shape.push_back(range->second.max);
        continue;
      }
      valid = valid && !part.getAsInteger(10, d) && d > 0;
      shape.push_back(valid ? d : 0);
    }
    if (!valid)
      return fail("--input-shape takes NAME=D0xD1x... with positive sizes "
                  "or names of --dim dimensions, got '" +
                  spec + "'");
    importOptions.inputShapes[name] = shape;
    if (!named.empty())
      importOptions.inputShapeDims[name] = named;
  }
  FailureOr<modelc::onnx_import::ImportedModel> imported =
      modelc::onnx_import::importOnnxFile(options.inputPath, context,
                                          importOptions);
  if (failed(imported))
    return failure();
  module = std::move(imported->module);
  onnxWeights = std::move(imported->weights);
  if (failed(verify(*module)))
    return failure();
  timer->stop("import and verify");
  return success();
}

/// Parses and verifies a model.ir.
LogicalResult Driver::parseIR() {
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(options.inputPath, &errorMessage);
  if (!input)
    return fail(errorMessage);

  timer.emplace(options.timeStages);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  diagnostics.emplace(sourceMgr, &context);

  module = parseModel(sourceMgr, context, argumentNames);
  if (!module)
    return failure();
  timer->stop("parse and verify");
  return success();
}

LogicalResult Driver::findPlaceAllTargets() {
  if (options.placeAll.empty())
    return success();
  for (const std::string &target : targetNames) {
    std::string error;
    std::optional<modelc::TargetDescription> t =
        modelc::loadTarget(target, error);
    if (t && t->find(options.placeAll))
      placeAllTargets.insert(target);
  }
  if (placeAllTargets.empty())
    return fail("--place-all=" + options.placeAll +
                ": no target has that device (give a --target with it, "
                "e.g. h200 for cuda:0)");
  return success();
}

/// A copy of the graph placed on `target`, or null after an error (none
/// when `quiet`: a trial placement fails quietly, the batch may not split).
OwningOpRef<ModuleOp> Driver::placeOnce(const std::string &target, bool split,
                                        bool quiet, const std::string &report,
                                        const std::string &dot, ModuleOp from) {
  OwningOpRef<ModuleOp> copy((from ? from : *module).clone());
  PassManager placement(&context);
  if (failed(applyPassManagerCLOptions(placement)))
    return nullptr;
  modelc::buildPlacementPipeline(
      placement, target, report, dot, options.debugDropTransfer, split,
      placeAllTargets.count(target) ? options.placeAll : "", replicas,
      options.training.distributed, options.training.shardOptimizerState);
  std::optional<ScopedDiagnosticHandler> silence;
  if (quiet)
    silence.emplace(&context, [](Diagnostic &) { return success(); });
  if (failed(placement.run(*copy)))
    return nullptr;
  return copy;
}

/// Graphviz's dot: MODELC_DOT, else `dot` on PATH.
static std::optional<std::string> findDot() {
  const char *env = std::getenv("MODELC_DOT");
  if (env && *env)
    return llvm::sys::fs::can_execute(env) ? std::optional<std::string>(env)
                                           : std::nullopt;
  llvm::ErrorOr<std::string> dot = llvm::sys::findProgramByName("dot");
  return dot ? std::optional<std::string>(*dot) : std::nullopt;
}

/// --placement-svg: draws the DOT file `dotPath` as the SVG `svgPath`.
static LogicalResult drawPlacement(const std::string &dot,
                                   const std::string &dotPath,
                                   const std::string &svgPath) {
  std::string message;
  llvm::StringRef args[] = {dot, "-Tsvg", dotPath, "-o", svgPath};
  int status =
      llvm::sys::ExecuteAndWait(dot, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0)
    return fail("Graphviz's dot (" + dot + ") could not draw " + svgPath +
                (message.empty() ? "" : ": " + message) + " (exit status " +
                std::to_string(status) + ")");
  return success();
}

/// The dimension size regimes cut (each regime's `dim`), or null.
modelc::graph::DimOp Driver::regimeDim(ArrayAttr regimes) {
  auto name = regimes.empty()
                  ? StringAttr()
                  : cast<DictionaryAttr>(regimes[0]).getAs<StringAttr>("dim");
  for (auto d : module->getOps<modelc::graph::DimOp>())
    if (d.getSymNameAttr() == name)
      return d;
  return nullptr;
}

/// Places the graph once per target, data parallel when asked for or when
/// the cost model prefers it (a target with several accelerators and a
/// batch that splits).
LogicalResult Driver::place() {
  std::optional<std::string> dot;
  if (!options.placementSvg.empty()) {
    dot = findDot();
    const char *env = std::getenv("MODELC_DOT");
    if (!dot && env && *env)
      return fail(std::string("--placement-svg: MODELC_DOT names '") + env +
                  "', which is not an executable program");
    if (!dot)
      return fail("--placement-svg needs Graphviz's dot to draw the picture "
                  "(Debian: apt-get install graphviz; or set MODELC_DOT to "
                  "it); --placement-dot=FILE writes the DOT text without it");
  }
  svgTool = dot;
  for (const std::string &target : targetNames) {
    bool split = options.dataParallel && target != "cpu";
    // (A dynamic batch splits where every run has a sample per
    // accelerator; size regimes choose per size below.)
    if (!options.dataParallel && !options.noDataParallel && target != "cpu") {
      OwningOpRef<ModuleOp> normal = placeOnce(target, false, true, "", "");
      OwningOpRef<ModuleOp> parallel = placeOnce(target, true, true, "", "");
      if (normal && parallel &&
          estimatedMakespan(*parallel) < estimatedMakespan(*normal)) {
        split = true;
        if (options.verbose)
          llvm::outs() << "data parallel for target '" << target
                       << "': estimated " << estimatedMakespan(*parallel) * 1e3
                       << " ms, against " << estimatedMakespan(*normal) * 1e3
                       << " ms without\n";
      }
    }
    FailureOr<ArrayAttr> regimes = sizeRegimes(target);
    if (failed(regimes))
      return failure();
    if (!*regimes) {
      if (failed(placeAndKeep(target, split, "", nullptr, -1, 0, 0)))
        return failure();
      continue;
    }
    // One plan per regime: the module placed at the regime's size.
    modelc::graph::DimOp dim = regimeDim(*regimes);
    if (!dim)
      return fail("internal error: the size regimes name no dimension of "
                  "the model");
    int32_t dimIndex = 0;
    for (auto d : module->getOps<modelc::graph::DimOp>()) {
      if (d == dim)
        break;
      ++dimIndex;
    }
    size_t firstRegime = placed.size();
    for (auto r : regimes->getAsRange<DictionaryAttr>()) {
      int64_t min = r.getAs<IntegerAttr>("min").getInt(),
              max = r.getAs<IntegerAttr>("max").getInt(),
              at = r.getAs<IntegerAttr>("at").getInt();
      OwningOpRef<ModuleOp> base(module->clone());
      // Its types hold its own max: memory planned for the regime (the
      // graph.dim keeps the whole range, for the descriptor).
      if (max < static_cast<int64_t>(dim.getMax()) &&
          failed(modelc::specializeDim(*base, dim.getSymName(), max)))
        return failure();
      OpBuilder b(&context);
      (*base)->setAttr("device.regime_at",
                       b.getDictionaryAttr(b.getNamedAttr(
                           dim.getSymName(), b.getI64IntegerAttr(at))));
      // A split regime's smallest run (modelc-data-parallel checks that it
      // gives every accelerator a sample).
      (*base)->setAttr("device.regime_min",
                       b.getDictionaryAttr(b.getNamedAttr(
                           dim.getSymName(), b.getI64IntegerAttr(min))));
      auto dataParallel = r.getAs<BoolAttr>("data_parallel");
      if (failed(placeAndKeep(target, dataParallel && dataParallel.getValue(),
                              dim.getSymName().str() + std::to_string(min) +
                                  "-" + std::to_string(max),
                              *base, dimIndex, min, max)))
        return failure();
    }
    if (failed(checkRegimeWeights(target, firstRegime)))
      return failure();
  }
  return success();
}

/// A device keeps the weights any of a target's regimes reads there (the
/// runtime uploads them once): their union must fit its memory, which each
/// regime's placement checked for its own weights only.
LogicalResult Driver::checkRegimeWeights(const std::string &target,
                                         size_t first) {
  llvm::StringMap<llvm::StringMap<uint64_t>> perDevice; // device -> weights
  for (size_t i = first; i < placed.size(); ++i)
    placed[i]->walk([&](modelc::graph::WeightRefOp ref) {
      if (auto d = ref->getAttrOfType<modelc::device::DeviceAttr>(
              modelc::graph::kDeviceAttrName))
        perDevice[d.str()][ref.getName()] =
            modelc::graph::valueBytes(ref.getResult());
    });
  auto t = (*placed[first])
               ->getAttrOfType<modelc::device::TargetAttr>("device.target");
  for (Attribute a : t.getDevices()) {
    auto spec = cast<modelc::device::DeviceSpecAttr>(a);
    std::string name = spec.getDevice().str();
    uint64_t bytes = 0;
    for (auto &weight : perDevice[name])
      bytes += weight.getValue();
    if (bytes > spec.getMemory())
      return fail("the size regimes of target '" + target + "' keep " +
                  modelc::formatBytes(bytes) + " of weights on " + name +
                  " (each regime's on its devices, together), which holds " +
                  modelc::formatBytes(spec.getMemory()) +
                  "; --regimes=1 builds one plan for the whole range");
  }
  return success();
}

/// The size regimes of `target` (modelc-size-regimes): null for one plan
/// over the whole range (no dynamic dimension, --regimes=1, one device,
/// or a placement that never changes).
FailureOr<ArrayAttr> Driver::sizeRegimes(const std::string &target) {
  if (!dynamic || options.regimes <= 1 || target == "cpu")
    return ArrayAttr();
  std::string error;
  std::optional<modelc::TargetDescription> t =
      modelc::loadTarget(target, error);
  if (!t) {
    (void)fail(error);
    return failure();
  }
  if (t->devices.size() < 2)
    return ArrayAttr();
  OwningOpRef<ModuleOp> copy(module->clone());
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  modelc::SizeRegimesPassOptions regimeOptions;
  regimeOptions.target = target;
  regimeOptions.regimes = options.regimes;
  regimeOptions.placeAll =
      placeAllTargets.count(target) ? options.placeAll : "";
  regimeOptions.dataParallel = options.dataParallel     ? "always"
                               : options.noDataParallel ? "never"
                                                        : "consider";
  regimeOptions.report =
      options.placementReport.empty()
          ? std::string()
          : perTargetPath(perTargetPath(options.placementReport, target,
                                        targetNames.size()),
                          "regimes", 2);
  pm.addPass(modelc::createSizeRegimesPass(regimeOptions));
  if (failed(pm.run(*copy)))
    return failure();
  auto regimes = (*copy)->getAttrOfType<ArrayAttr>("device.regimes");
  if (regimes && options.verbose) {
    modelc::graph::DimOp dim = regimeDim(regimes);
    if (!dim)
      return fail("internal error: the size regimes name no dimension of "
                  "the model");
    llvm::outs() << "size regimes for target '" << target << "' (dimension '"
                 << dim.getSymName() << "' " << dim.getMin() << ".."
                 << dim.getMax() << ", at most " << options.regimes << "):\n";
    for (auto r : regimes.getAsRange<DictionaryAttr>()) {
      llvm::outs() << "  " << r.getAs<IntegerAttr>("min").getInt() << ".."
                   << r.getAs<IntegerAttr>("max").getInt() << ": placed at "
                   << r.getAs<IntegerAttr>("at").getInt() << " ("
                   << r.getAs<StringAttr>("placement").getValue()
                   << "), estimated "
                   << llvm::formatv(
                          "{0:F2}",
                          r.getAs<FloatAttr>("estimated_s").getValueAsDouble() *
                              1e6)
                   << " us there\n";
      if (auto why = r.getAs<StringAttr>("why"))
        llvm::outs() << "    cut: " << why.getValue() << "\n";
    }
  }
  return regimes;
}

/// Places `from` (else the model) on `target` with its report and picture
/// (their paths get `suffix`), and keeps it as a plan.
LogicalResult Driver::placeAndKeep(const std::string &target, bool split,
                                   const std::string &suffix, ModuleOp from,
                                   int32_t regimeDim, int64_t min,
                                   int64_t max) {
  auto path = [&](const std::string &option) {
    std::string p = perTargetPath(option, target, targetNames.size());
    return suffix.empty() ? p : perTargetPath(p, suffix, 2);
  };
  std::string dotPath = path(options.placementDot);
  llvm::SmallString<128> tempDot;
  if (svgTool && dotPath.empty()) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "modelc-placement", "dot", tempDot))
      return fail("cannot create a temporary file for --placement-svg: " +
                  ec.message());
    dotPath = std::string(tempDot);
  }
  OwningOpRef<ModuleOp> copy = placeOnce(
      target, split, false, path(options.placementReport), dotPath, from);
  LogicalResult drawn =
      copy && svgTool
          ? drawPlacement(*svgTool, dotPath, path(options.placementSvg))
          : success();
  if (!tempDot.empty())
    llvm::sys::fs::remove(tempDot);
  if (!copy || failed(drawn))
    return failure();
  if (options.verbose) {
    if (regimeDim >= 0)
      llvm::outs() << "regime " << min << ".." << max << " of target '"
                   << target << "':\n";
    modelc::printPlacementSummary(*copy, llvm::outs());
  }
  placed.push_back(std::move(copy));
  placedPlans.push_back({target, regimeDim, min, max});
  return success();
}

/// The lowering passes on every placed module: the decisions the printers
/// follow, written into the sched dialect.
LogicalResult Driver::lower() {
  for (OwningOpRef<ModuleOp> &module : placed) {
    PassManager lowering(&context);
    if (failed(applyPassManagerCLOptions(lowering)))
      return failure();
    modelc::ScheduleOptions schedule;
    schedule.checked = options.checked;
    schedule.winograd = options.winograd;
    schedule.overlapAllReduce = options.overlapAllReduce;
    schedule.reluEpilogue = options.reluEpilogue;
    modelc::buildSchedulePipeline(lowering, schedule);
    if (failed(lowering.run(*module)))
      return failure();
  }
  return success();
}

/// The cost model's estimate of each op (modelc-annotate-estimates), for
/// the trace points of the generated code: after --emit=scheduled, which
/// shows what the lowering decided.
LogicalResult Driver::annotateEstimates() {
  for (OwningOpRef<ModuleOp> &module : placed) {
    PassManager pm(&context);
    pm.addPass(modelc::createAnnotateEstimatesPass());
    if (failed(pm.run(*module)))
      return failure();
  }
  return success();
}

/// The plans' devices, from the targets the placement recorded; finds nvcc
/// when a plan has GPUs whose kernels it must build.
LogicalResult Driver::collectPlans() {
  std::string nvccMissing;
  for (auto [i, placedPlan] : llvm::enumerate(placedPlans)) {
    const std::string &target = placedPlan.target;
    ModuleOp placedModule = *placed[i];
    auto attr = placedModule->getAttrOfType<modelc::device::TargetAttr>(
        "device.target");
    modelc::PlanModule plan{target, placedModule, {}};
    plan.regimeDim = placedPlan.regimeDim;
    plan.regimeMin = placedPlan.min;
    plan.regimeMax = placedPlan.max;
    for (Attribute d : attr.getDevices()) {
      auto spec = cast<modelc::device::DeviceSpecAttr>(d);
      if (spec.getDevice().getKind() == modelc::device::DeviceKind::cuda &&
          !options.cudaEmulation && !nvcc &&
          options.emitKind == EmitKind::Library) {
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

/// Bytes of memory modelc may use (0 when unknown): the machine's physical
/// memory, or less where a cgroup (a container) limits it;
/// MODELC_MEMORY_LIMIT (bytes) overrides both, for tests.
static uint64_t availableMemoryBytes() {
  if (const char *env = std::getenv("MODELC_MEMORY_LIMIT")) {
    uint64_t limit = 0;
    if (!llvm::StringRef(env).getAsInteger(10, limit))
      return limit;
  }
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  uint64_t memory =
      pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
  // cgroup v2, then v1; "max" or an absurd v1 value means no limit.
  for (const char *file : {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
        llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
    uint64_t limit = 0;
    if (text && !(*text)->getBuffer().trim().getAsInteger(10, limit) &&
        limit > 0 && (memory == 0 || limit < memory))
      memory = limit;
  }
  return memory;
}

/// Weights modelc would hold in memory (random ones) or pass through the
/// assembler (embedded ones, which `.incbin` reads whole) must fit in this
/// machine's memory: larger ones are an error before any is made.
LogicalResult Driver::checkWeightsFit() {
  uint64_t total = 0;
  for (auto weight : module->getOps<modelc::graph::WeightOp>()) {
    RankedTensorType type = weight.getTensorType();
    total += uint64_t(type.getNumElements()) *
             std::max<uint64_t>(1, type.getElementTypeBitWidth() / 8);
  }
  uint64_t memory = availableMemoryBytes();
  if (!memory || total <= memory)
    return success();
  std::string sizes = "the model's weights take " + modelc::formatBytes(total) +
                      ", more than the " + modelc::formatBytes(memory) +
                      " of memory this machine has for modelc";
  if (options.randomWeights.has_value() && !options.externalWeights)
    return fail(sizes + "; --random-weights makes them in memory unless "
                        "they go to a file: add --external-weights "
                        "--save-weights FILE (they are written there, 64 MB "
                        "at a time, and the model maps that file)");
  if (!options.externalWeights && options.emitKind == EmitKind::Library)
    return fail(sizes + ", and embedding them in model.so passes them "
                        "through the assembler whole; keep them in their "
                        "file with --external-weights");
  return success();
}

/// The seed of --random-weights[=SEED] (0 without one).
FailureOr<uint64_t> Driver::randomSeed() {
  uint64_t seed = 0;
  if (!options.randomWeights->empty() &&
      llvm::StringRef(*options.randomWeights).getAsInteger(10, seed)) {
    (void)fail("--random-weights takes an integer seed, got '" +
               *options.randomWeights + "'");
    return failure();
  }
  return seed;
}

/// The weights: read (--weights), random (--random-weights) or, when the
/// model declares none or only code is printed, their declarations alone.
LogicalResult Driver::loadWeights() {
  hasWeights = !module->getOps<modelc::graph::WeightOp>().empty();
  if (!options.weightsPath.empty() && options.randomWeights.has_value())
    return fail("--weights and --random-weights exclude each other");
  if (options.externalWeights && options.precision != "f32")
    return fail("--precision=" + options.precision +
                " with --external-weights is not supported yet: the model "
                "would map the f32 file as it is; embed the weights (drop "
                "--external-weights)");
  if (options.externalWeights && options.randomWeights.has_value() &&
      options.saveWeights.empty())
    return fail("--external-weights with --random-weights needs "
                "--save-weights FILE: the weights are written there and the "
                "model maps that file when loaded");
  if (options.externalWeights && options.weightsPath.empty() &&
      !options.randomWeights.has_value())
    return fail("--external-weights needs --weights FILE: the model records "
                "that file and maps it when loaded");
  if (failed(checkWeightsFit()))
    return failure();
  if (options.externalWeights && options.randomWeights.has_value()) {
    // Written to the file as they are made, then read from it as
    // --weights FILE would: never all in memory.
    FailureOr<uint64_t> seed = randomSeed();
    if (failed(seed) || failed(modelc::writeRandomSafetensors(
                            *module, *seed, options.saveWeights)))
      return failure();
    weightsFile = options.saveWeights;
  } else {
    weightsFile = options.weightsPath;
  }
  if (!weightsFile.empty()) {
    FailureOr<modelc::WeightSet> read =
        modelc::readSafetensorsWeights(*module, weightsFile);
    if (failed(read))
      return failure();
    weights = std::move(*read);
  } else if (options.randomWeights.has_value()) {
    FailureOr<uint64_t> seed = randomSeed();
    if (failed(seed))
      return failure();
    weights = modelc::randomWeights(*module, *seed);
  } else if (modelc::onnx_import::isOnnxPath(options.inputPath)) {
    // An ONNX model's initializers, in declaration order, as the file has
    // them (f32 where --precision declares f16 or bf16).
    weights = modelc::declaredWeights(*module, /*sourceTypes=*/true);
    for (auto [weight, data] : llvm::zip(weights.weights, onnxWeights)) {
      weights.storage.push_back(std::move(data.bytes));
      weight.data = weights.storage.back().data();
      weight.nbytes = weights.storage.back().size();
    }
    // Weights the ONNX file does not have (--train's optimizer state,
    // declared after the initializers) start as zeros.
    for (size_t i = onnxWeights.size(); i < weights.weights.size(); ++i) {
      weights.storage.emplace_back(weights.weights[i].nbytes, 0);
      weights.weights[i].data = weights.storage.back().data();
    }
    modelc::roundToDeclared(weights, *module);
  } else if (hasWeights && options.emitKind == EmitKind::Library) {
    return fail("the model declares weights; give --weights FILE or "
                "--random-weights[=SEED]");
  } else {
    weights = modelc::declaredWeights(*module);
  }

  if (!options.saveWeights.empty() && weightsFile != options.saveWeights) {
    if (!options.randomWeights.has_value() && options.weightsPath.empty() &&
        !modelc::onnx_import::isOnnxPath(options.inputPath))
      return fail("--save-weights needs --weights or --random-weights");
    if (failed(modelc::writeSafetensors(weights, options.saveWeights)))
      return failure(); // the error names the file and the reason
  }
  return success();
}

/// Where the generated files go: --save-temps, or a temporary folder.
LogicalResult Driver::makeTempDir() {
  keepTemps = !options.saveTemps.empty();
  if (keepTemps) {
    tempDir = options.saveTemps;
    if (std::error_code ec = llvm::sys::fs::create_directories(tempDir))
      return fail("cannot create '" + options.saveTemps + "': " + ec.message());
  } else if (std::error_code ec =
                 llvm::sys::fs::createUniqueDirectory("modelc", tempDir)) {
    return fail("cannot create a temporary folder: " + ec.message());
  }
  llvm::sys::fs::make_absolute(tempDir);
  return success();
}

/// After a failed nvcc or C++ compiler run: the error names a log in the
/// temporary folder, so the folder stays (and the note says so).
LogicalResult Driver::keepTempsForTheLog() {
  if (!keepTemps)
    llvm::WithColor::note(llvm::errs(), "modelc")
        << "kept the generated sources and the compilers' logs in " << tempDir
        << " (remove it when done; --save-temps DIR chooses the folder)\n";
  keepTemps = true;
  return failure();
}

std::string Driver::tempFile(StringRef name) const {
  llvm::SmallString<256> path(tempDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// The emitter's options, with the weights embedded as a blob or recorded
/// as external.
LogicalResult Driver::prepareWeights() {
  emitOptions.compilerVersion = MODELC_VERSION;
  emitOptions.compilerFlags = options.flags;
  emitOptions.checked = options.checked;
  embed = !options.externalWeights && options.emitKind == EmitKind::Library;
  if (embed && hasWeights) {
    emitOptions.weightBlobPath = tempFile("weights.bin");
    llvm::StringSet<> writable;
    for (auto weight : module->getOps<modelc::graph::WeightOp>())
      if (weight.getWritable())
        writable.insert(weight.getSymName());
    FailureOr<std::vector<modelc::WeightSlot>> slots =
        modelc::writeWeightBlob(weights, emitOptions.weightBlobPath,
                                emitOptions.weightBlobBytes, writable);
    if (failed(slots))
      return failure();
    emitOptions.weights = std::move(*slots);
  } else {
    for (const modelc::WeightSet::Weight &w : weights.weights)
      emitOptions.weights.push_back({w.name, w.type, 0, w.nbytes});
    if (options.externalWeights) {
      llvm::SmallString<256> absolute(weightsFile);
      llvm::sys::fs::make_absolute(absolute);
      emitOptions.externalWeightsPath = std::string(absolute);
    }
  }
  emitOptions.allowTf32 = options.allowTf32;
  if (!options.cudaEmulation)
    gpu.imagePath = tempFile("kernels.fatbin");
  return success();
}

/// --emit=cpp and --emit=cuda: prints the generated host C++ or CUDA.
LogicalResult Driver::emitSource() {
  std::string code;
  llvm::raw_string_ostream os(code);
  if (failed(modelc::emitModel(plans, emitOptions, os, &report, &gpu)))
    return failure();
  timer->stop("code generation");
  if (options.emitKind == EmitKind::Cuda && gpu.source.empty())
    return fail("--emit=cuda: the plans have no GPU kernels (no op is "
                "placed on a GPU, or only matrix products, which run in "
                "cuBLASLt; give a GPU --target, e.g. h200)");
  return writeText(options.outputPath, [&](llvm::raw_ostream &out) {
    out << (options.emitKind == EmitKind::Cpp ? code : gpu.source);
  });
}

/// Generates the sources, builds the GPU kernels with nvcc (or as host code
/// under --cuda-emulation) and links model.so.
LogicalResult Driver::build() {
  // As many files for the parts of long entry points as the C++ compiler
  // runs at once.
  unsigned jobs = options.jobs
                      ? options.jobs
                      : std::max(1u, std::thread::hardware_concurrency());
  modelc::HostSources host;
  if (failed(modelc::emitModelSources(plans, emitOptions, jobs, host, &report,
                                      &gpu)))
    return failure();
  std::vector<std::string> sources;
  auto write = [&](const std::string &path, const std::string &text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    os << text;
    sources.push_back(path);
    return success();
  };
  if (failed(write(tempFile("model.cpp"), host.main)))
    return failure();
  for (auto [i, part] : llvm::enumerate(host.parts))
    if (failed(
            write(tempFile("model_part" + std::to_string(i) + ".cpp"), part)))
      return failure();
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
    if (!options.cudaEmulation) {
      if (failed(modelc::buildFatbin(*nvcc, kernels, gpu.imagePath,
                                     tempFile("nvcc.log"))))
        return keepTempsForTheLog();
      timer->stop("nvcc");
    }
  }
  std::string output = options.outputPath;
  if (output.empty()) {
    llvm::SmallString<256> path(llvm::sys::path::filename(options.inputPath));
    llvm::sys::path::replace_extension(path, ".so");
    output = std::string(path);
  }
  if (failed(modelc::buildSharedLibrary(sources, output, tempFile("build.log"),
                                        options.cudaEmulation ? kernels : "",
                                        jobs)))
    return keepTempsForTheLog();
  // The seal the runtime checks at load: a checksum of model.so and of its
  // external weights file.
  std::string sealError;
  if (!modelc::integrity::sealModel(
          output,
          options.externalWeights ? emitOptions.externalWeightsPath : "",
          sealError))
    return fail(sealError);
  timer->stop("C++ compiler");
  if (options.verbose)
    printSummary(output);
  return success();
}

/// -v: what was built.
void Driver::printSummary(const std::string &output) {
  // A target's size regimes are one plan to the runtime's choice.
  size_t regimes = llvm::count_if(
      plans, [](const modelc::PlanModule &p) { return p.regimeDim >= 0; });
  std::set<std::string> targets;
  for (const modelc::PlanModule &p : plans)
    targets.insert(p.name);
  llvm::outs() << "modelc: wrote " << output << " (" << targets.size()
               << (targets.size() == 1 ? " plan, " : " plans, ");
  if (regimes)
    llvm::outs() << regimes << " size regimes among them, ";
  llvm::outs() << weights.weights.size() << " weights, "
               << (embed ? "embedded" : "external") << ")\n";
  if (!gpu.kernelNames.empty())
    llvm::outs() << "  GPU code: " << gpu.kernelNames.size() << " kernels"
                 << (options.cudaEmulation ? " (host emulation)"
                                           : ", fatbin by nvcc")
                 << "\n";
  for (const auto &entry : report.entries) {
    llvm::outs() << "  plan '" << entry.plan << "', entry '" << entry.name
                 << "': arena " << entry.arenaBytes << " bytes";
    if (entry.deviceArenas.size() > 1) {
      // Each device's arena: with the weights the placement summary lists
      // there, what the entry needs on it at once.
      llvm::outs() << " (";
      for (auto [index, device] : llvm::enumerate(entry.deviceArenas))
        llvm::outs() << (index ? ", " : "") << device.first << " "
                     << modelc::formatBytes(device.second);
      llvm::outs() << ")";
    }
    llvm::outs() << ", " << entry.kernelCalls << " kernel calls, "
                 << entry.fusedLoops << " elementwise loops covering "
                 << entry.fusedOps << " ops\n";
  }
}
} // namespace

LogicalResult modelc::driver::runDriver(const DriverOptions &options) {
  return Driver(options).run();
}
