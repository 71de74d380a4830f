//===- modelc.cpp - the modelc compiler driver ----------------------------===//
//
// `modelc model.ir -o model.so` parses, verifies, infers shapes, canonicalizes
// and compiles a model into a shared library; `--emit=graph|cpp` stops early
// and prints that stage. Every failure is a diagnostic with file:line:col
// where the input has one, and exit status 1. This file is the command line;
// Driver.cpp runs the compilation.
//
//===----------------------------------------------------------------------===//

#include "tools/modelc/Driver.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;
using namespace mlir;
using modelc::driver::EmitKind;

namespace {

cl::OptionCategory modelcCategory("modelc options");

cl::opt<std::string> inputPath(cl::Positional,
                               cl::desc("<model.ir|model.onnx>"), cl::Required,
                               cl::cat(modelcCategory));

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
               clEnumValN(EmitKind::Scheduled, "scheduled",
                          "the placed graph with the back end's decisions "
                          "written down (sched dialect): fusion groups, GEMM "
                          "folds, arena offsets"),
               clEnumValN(EmitKind::Cpp, "cpp",
                          "the generated host C++ of every plan"),
               clEnumValN(EmitKind::Cuda, "cuda",
                          "the generated CUDA kernels of the GPU plans")),
    cl::cat(modelcCategory));

cl::list<std::string> targets(
    "target",
    cl::desc("A machine to build a plan for: a preset (cpu, h200, h200x2, "
             "h200x4, h200x8, cpu+sim2, cpu+sim4) or a JSON file "
             "(docs/placement.md); repeat for several plans (default: cpu, and "
             "h200 too where nvcc is found; MODELC_DEFAULT_TARGETS overrides)"),
    cl::value_desc("name|file.json"), cl::cat(modelcCategory));

cl::opt<std::string> placementReport(
    "placement-report",
    cl::desc("Write the placement report (JSON) of each target to FILE"),
    cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<std::string> placementDot(
    "placement-dot",
    cl::desc("Write the placed graph (Graphviz DOT) of each target to FILE"),
    cl::value_desc("file"), cl::cat(modelcCategory));

cl::opt<std::string> placementSvg(
    "placement-svg",
    cl::desc("Draw the placed graph of each target as an SVG picture in FILE "
             "(devices as coloured clusters, transfers as bold red edges with "
             "their bytes, each op with its estimated time); needs "
             "Graphviz's dot"),
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
             "(without it, modelc does so when the cost model prefers it; "
             "--data-parallel=false never splits); "
             "a dynamic batch splits at run time into balanced parts, sizes "
             "below the number of accelerators running whole in a size "
             "regime of their own; "
             "with --train, one training replica per accelerator of the "
             "target with the most, gradients summed over the replicas "
             "(docs/training.md)"),
    cl::cat(modelcCategory));

cl::opt<bool> checked(
    "checked",
    cl::desc("Multi-device plans verify before each task that it touches "
             "only memory of its own device (slower; for testing)"),
    cl::cat(modelcCategory));

enum class Precision { F32, F16, BF16 };
cl::opt<Precision> precision(
    "precision",
    cl::desc("Store an f32 model's weights and activations in f16 or bf16, "
             "as model.half() does: model.so and the arenas halve; "
             "reductions, norms, softmax and matrix products accumulate in "
             "f32; inputs and outputs keep their types"),
    cl::values(clEnumValN(Precision::F32, "f32", "as the model is (default)"),
               clEnumValN(Precision::F16, "f16", "IEEE half precision"),
               clEnumValN(Precision::BF16, "bf16", "bfloat16")),
    cl::init(Precision::F32), cl::cat(modelcCategory));

cl::opt<bool> noWinograd(
    "no-winograd",
    cl::desc("Compute every CPU convolution directly (by default 3x3 "
             "convolutions of 16k channels use Winograd's algorithm where "
             "the CPU has it: faster, rounded slightly differently)"),
    cl::cat(modelcCategory));

cl::opt<bool> noOverlapAllReduce(
    "no-overlap-all-reduce",
    cl::desc("In a --distributed build on the CPU plan, wait for each "
             "all-reduce where it is issued (by default a gradient bucket's "
             "sum runs on the runtime's communication thread while the "
             "backward goes on, and the step waits for it only where the "
             "sum is read)"),
    cl::cat(modelcCategory));

cl::opt<bool> gpuReluEpilogue(
    "gpu-relu-epilogue",
    cl::desc("Compute a ReLU that follows a matrix product on a GPU in the "
             "product's cuBLASLt epilogue (one kernel fewer). Off by "
             "default: the epilogue may turn NaN into 0 where PyTorch keeps "
             "NaN; tests/gpu/check.sh reports what a GPU does "
             "(docs/cuda.md)"),
    cl::cat(modelcCategory));

cl::opt<std::string> placeAll(
    "place-all",
    cl::desc("Put every op that has a kernel there on DEVICE of each target "
             "(like model.to(DEVICE)), instead of letting the cost model "
             "choose; pins in the IR still win"),
    cl::value_desc("device"), cl::cat(modelcCategory));

cl::opt<unsigned> regimes(
    "regimes",
    cl::desc("For a model with a dynamic dimension, the most size regimes "
             "per target: the cost model places the model at sizes across "
             "the range (split over the accelerators, too) and cuts it "
             "where the best placement changes; with several dimensions it "
             "cuts the batch; each "
             "regime is a plan of its own in model.so, chosen per run from "
             "the size (1: one plan for the whole range; docs/dynamic.md)"),
    cl::value_desc("N"), cl::init(4), cl::cat(modelcCategory));

cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Shape of an ONNX model's input with dynamic dimensions, e.g. "
             "x=1x3x224x224 (repeat per input)"),
    cl::value_desc("name=shape"), cl::cat(modelcCategory));

cl::list<std::string>
    dims("dim",
         cl::desc("A dynamic dimension's range, NAME=MIN..MAX or "
                  "NAME=MIN..MAX@OPT (OPT: the size placement aims at; default "
                  "MAX): one model.so runs every size in the range; memory is "
                  "planned for MAX (repeat per dimension; docs/dynamic.md)"),
         cl::value_desc("name=min..max[@opt]"), cl::cat(modelcCategory));

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

cl::opt<unsigned>
    jobs("jobs",
         cl::desc("Run up to N C++ compiler processes at once on the generated "
                  "code (default: one per hardware thread); long entry points "
                  "are split across that many files"),
         cl::value_desc("N"), cl::init(0), cl::cat(modelcCategory));

cl::OptionCategory trainingCategory(
    "Training (docs/training.md)",
    "Compile a training step: the gradients of a loss and an optimizer's "
    "update, as the entry points gradients and train_step");

cl::opt<std::string> train(
    "train",
    cl::desc("Train: ENTRY (default 'loss') is the entry point that returns "
             "the scalar loss; its float weights that are not --frozen are "
             "the parameters. Adds the entry points 'gradients' (the loss "
             "and each parameter's gradient) and 'train_step' (one "
             "optimizer step; returns the loss)"),
    cl::value_desc("entry"), cl::ValueOptional, cl::cat(trainingCategory));

cl::opt<std::string>
    optimizer("optimizer",
              cl::desc("sgd (default), adam or adamw: torch.optim's formulas"),
              cl::init("sgd"), cl::cat(trainingCategory));
cl::opt<double> lr("lr", cl::desc("Learning rate (default 0.001)"),
                   cl::init(0.001), cl::cat(trainingCategory));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"),
                         cl::init(0.0), cl::cat(trainingCategory));
cl::opt<double> dampening("dampening", cl::desc("SGD dampening (default 0)"),
                          cl::init(0.0), cl::cat(trainingCategory));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD with Nesterov momentum"),
                       cl::cat(trainingCategory));
cl::opt<double> weightDecay(
    "weight-decay",
    cl::desc("Weight decay (default 0): L2 added to the gradient for sgd and "
             "adam, decoupled for adamw"),
    cl::init(0.0), cl::cat(trainingCategory));
cl::opt<std::string> betas("betas",
                           cl::desc("Adam's betas (default 0.9,0.999)"),
                           cl::init("0.9,0.999"), cl::cat(trainingCategory));
cl::opt<double> eps("eps", cl::desc("Adam's epsilon (default 1e-8)"),
                    cl::init(1e-8), cl::cat(trainingCategory));
cl::opt<double> clipGradNorm(
    "clip-grad-norm",
    cl::desc("Scale the gradients so that their total L2 norm is at most X "
             "before the update (torch.nn.utils.clip_grad_norm_)"),
    cl::value_desc("X"), cl::init(0.0), cl::cat(trainingCategory));
cl::opt<int64_t> accumulate(
    "accumulate",
    cl::desc("Sum the gradients of K train_step calls (micro-batches) and "
             "update on every K-th call (default 1)"),
    cl::value_desc("K"), cl::init(1), cl::cat(trainingCategory));
cl::opt<bool> distributed(
    "distributed",
    cl::desc("Data-parallel training across processes: the step can run "
             "under mpirun (modelc-run --distributed --shard-inputs), each "
             "rank on its part of the batch, with the gradients summed over "
             "the ranks in buckets and the loss's means taken over the whole "
             "batch; with one process the step is unchanged"),
    cl::init(false), cl::cat(trainingCategory));
cl::opt<double> bucketMb(
    "bucket-mb",
    cl::desc("With --distributed: megabytes of gradients per all-reduce "
             "(default 25; the first bucket 1)"),
    cl::value_desc("MB"), cl::init(25.0), cl::cat(trainingCategory));
cl::opt<long long> dropoutSeed(
    "dropout-seed",
    cl::desc("With --train: the seed of dropout's random masks (default: "
             "the model's, ONNX Dropout's seed attribute, else 0); steps "
             "of another seed draw other masks, the same seed the same ones "
             "on every plan and device"),
    cl::value_desc("N"), cl::init(-1), cl::cat(trainingCategory));
cl::opt<bool> syncBatchnorm(
    "sync-batchnorm",
    cl::desc("With --distributed or --data-parallel: BatchNorm normalises "
             "with the statistics of the whole batch over the ranks and "
             "replicas (torch.nn.SyncBatchNorm) instead of each one's own"),
    cl::init(false), cl::cat(trainingCategory));
cl::opt<bool> shardOptimizerState(
    "shard-optimizer-state",
    cl::desc("ZeRO stage 1, each parameter's optimizer state and update "
             "in one place, the new value copied to the others (less "
             "memory each): with --data-parallel on one replica's device; "
             "with --distributed alone on one rank (the CPU plan)"),
    cl::init(false), cl::cat(trainingCategory));
cl::opt<bool> recompute(
    "recompute",
    cl::desc("Recompute cheap forward ops (elementwise, dropout) in the "
             "backward instead of keeping their results, where that keeps "
             "nothing else alive longer; the placement report gives the "
             "memory it saved"),
    cl::init(false), cl::cat(trainingCategory));
cl::opt<std::string>
    frozen("frozen",
           cl::desc("Weights whose whole name matches REGEX (POSIX extended) "
                    "are not trained"),
           cl::value_desc("regex"), cl::cat(trainingCategory));

cl::opt<std::string>
    loss("loss",
         cl::desc("Train the model's one output against a new input 'target' "
                  "with torch.nn's loss: cross_entropy (logits [N, C], target "
                  "[N] class indices), nll (log-probabilities), mse or "
                  "bce_with_logits (target shaped as the output). Builds the "
                  "entry point 'loss' from 'forward' (an ONNX model's)"),
         cl::value_desc("kind"), cl::cat(trainingCategory));
cl::opt<std::string>
    lossWeight("loss-weight",
               cl::desc("cross_entropy, nll: class weights, a 1-D .npy "
                        "(float32 or float64) of C numbers"),
               cl::value_desc("w.npy"), cl::cat(trainingCategory));
cl::opt<int64_t>
    ignoreIndex("ignore-index",
                cl::desc("cross_entropy, nll: samples whose target is N "
                         "count for nothing (default -100)"),
                cl::value_desc("N"), cl::init(-100), cl::cat(trainingCategory));
cl::opt<double> labelSmoothing(
    "label-smoothing",
    cl::desc("cross_entropy: PyTorch's label_smoothing (default 0)"),
    cl::init(0.0), cl::cat(trainingCategory));
cl::opt<std::string>
    reduction("reduction",
              cl::desc("The loss over the batch: mean (default) or sum"),
              cl::init("mean"), cl::cat(trainingCategory));

cl::opt<bool> verbose("v",
                      cl::desc("Print what was built: per entry point "
                               "its arena size and fused loops"),
                      cl::cat(modelcCategory));

constexpr const char *overview = R"(modelc: ahead-of-time graph compiler

Compiles a model written in the graph dialect (see docs/ir.md), or an ONNX
model (docs/onnx.md), into a shared library that the modelc runtime loads
and runs (docs/runtime.md).

  modelc model.ir --weights w.safetensors -o model.so
  modelc model.ir --random-weights=7 -o model.so
  modelc model.ir --emit=graph        print the verified, canonicalized graph
  modelc model.ir --target=h200x2 --emit=placed --placement-report=r.json
  modelc model.ir --target=cpu+sim2 --emit=scheduled   the back end's decisions
  modelc model.ir --emit=cpp          print the generated C++
  modelc model.onnx -o model.so       weights from the ONNX initializers
  modelc model.onnx --input-shape x=1x3x224x224 --emit=graph > model.ir
  modelc model.ir --train=loss --optimizer=sgd --lr 0.1 --momentum 0.9 \
      --weights w.safetensors -o train.so    a training step (docs/training.md)
  modelc model.onnx --train --loss=cross_entropy --optimizer=adamw \
      --lr 0.001 -o train.so                 the same from a TRAINING export

Errors in the model are reported as file:line:col: error: ... (for ONNX,
model.onnx:node 'NAME': error: ...) and modelc exits with status 1.
)";

void printVersion(llvm::raw_ostream &os) {
  os << "modelc " << MODELC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING
     << ")\n";
}

std::string commandLine(int argc, char **argv) {
  std::string text;
  for (int i = 0; i < argc; ++i)
    text += (i ? " " : "") + std::string(argv[i]);
  return text;
}

/// The parsed command line as the driver's options.
modelc::driver::DriverOptions driverOptions(const std::string &flags) {
  modelc::driver::DriverOptions options;
  options.inputPath = inputPath;
  options.outputPath = outputPath;
  options.emitKind = emitKind;
  options.targets.assign(targets.begin(), targets.end());
  options.placementReport = placementReport;
  options.placementDot = placementDot;
  options.placementSvg = placementSvg;
  options.weightsPath = weightsPath;
  if (randomWeights.getNumOccurrences())
    options.randomWeights = randomWeights.getValue();
  options.externalWeights = externalWeights;
  options.saveWeights = saveWeights;
  options.saveTemps = saveTemps;
  options.dataParallel = dataParallel;
  options.noDataParallel = dataParallel.getNumOccurrences() && !dataParallel;
  options.checked = checked;
  options.winograd = !noWinograd;
  options.overlapAllReduce = !noOverlapAllReduce;
  options.reluEpilogue = gpuReluEpilogue;
  options.precision = precision == Precision::F16    ? "f16"
                      : precision == Precision::BF16 ? "bf16"
                                                     : "f32";
  options.placeAll = placeAll;
  options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  options.dims.assign(dims.begin(), dims.end());
  options.regimes = regimes;
  options.cudaEmulation = cudaEmulation;
  options.allowTf32 = allowTf32;
  options.debugDropTransfer = debugDropTransfer;
  options.timeStages = timeStages;
  options.jobs = jobs;
  options.verbose = verbose;
  if (train.getNumOccurrences()) {
    options.training.entry = train.empty() ? "loss" : train.getValue();
    options.trainEntryGiven = !train.empty();
  }
  options.training.loss = loss;
  options.lossWeightPath = lossWeight;
  options.training.ignoreIndex = ignoreIndex;
  options.training.labelSmoothing = labelSmoothing;
  options.training.reduction = reduction;
  options.training.optimizer = optimizer;
  options.training.lr = lr;
  options.training.momentum = momentum;
  options.training.dampening = dampening;
  options.training.nesterov = nesterov;
  options.training.weightDecay = weightDecay;
  options.training.eps = eps;
  options.training.clipGradNorm = clipGradNorm;
  options.training.accumulate = accumulate;
  options.training.frozen = frozen;
  options.training.recompute = recompute;
  options.training.distributed = distributed;
  options.training.syncBatchnorm = syncBatchnorm;
  options.training.dropoutSeed = dropoutSeed;
  options.training.shardOptimizerState = shardOptimizerState;
  options.training.bucketMb = bucketMb;
  options.training.firstBucketMb = std::min(1.0, bucketMb.getValue());
  options.betas = betas;
  options.flags = flags;
  return options;
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
  cl::HideUnrelatedOptions({&modelcCategory, &trainingCategory});
  if (!cl::ParseCommandLineOptions(argc, argv, overview))
    return 1;
  return failed(modelc::driver::runDriver(driverOptions(flags))) ? 1 : 0;
}
