//===- HostPrinter.cpp - the host C++ of a model's plans ------------------===//
//
// The only place that names symbols of the model.so ABI
// (runtime/include/modelc/abi.h) and of the CPU kernels
// (compiler/kernels/cpu/kernels.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/HostPrinter.h"
#include "compiler/Codegen/Backends.h"
#include "compiler/Codegen/CudaPrinter.h"
#include "compiler/Codegen/EmitHelpers.h"
#include "compiler/Codegen/HostParts.h"
#include "compiler/Codegen/StridedView.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/CpuPostOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>
#include <cmath>
#include <functional>
#include <set>

using namespace mlir;

llvm::StringRef modelc::generatedCodeIncludes() {
  return "#include \"modelc/abi.h\"\n"
         "#include \"cpu/kernels.h\"\n\n"
         "#include <cmath>\n#include <cstdint>\n#include <cstring>\n"
         "#include <limits>\n";
}

using namespace modelc;
using namespace modelc::graph;
using namespace modelc::codegen;

unsigned modelc::abiDTypeCode(Type type) {
  // Keep in sync with MODELC_DTYPE_* in runtime/include/modelc/abi.h.
  if (type.isF32())
    return 0;
  if (type.isF16())
    return 1;
  if (type.isBF16())
    return 2;
  if (type.isF64())
    return 12;
  auto integer = cast<IntegerType>(type);
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return 5;
  case 8:
    return isUnsigned ? 8 : 6;
  case 16:
    return isUnsigned ? 9 : 7;
  case 32:
    return isUnsigned ? 10 : 3;
  default: // 64
    return isUnsigned ? 11 : 4;
  }
}

std::string modelc::boundaryName(Operation *op, bool isResult, unsigned index) {
  auto function = cast<func::FuncOp>(op);
  StringAttr name =
      isResult ? function.getResultAttrOfType<StringAttr>(index, "graph.name")
               : function.getArgAttrOfType<StringAttr>(index, "graph.name");
  if (name)
    return name.str();
  return (isResult ? "output" : "input") + std::to_string(index);
}

namespace {

/// A view of its operand's memory (graph::isView): no code, no buffer.
bool isAlias(Operation *op) { return graph::isView(op); }

/// A view whose offset is 0 at any size.
bool isLeadingView(Operation *op) {
  std::optional<int64_t> offset = getViewOffset(op);
  return offset && *offset == 0;
}

/// Whether the op's kernel computes in f32 (its kernel table says so).
bool computesInF32(Operation *op);

/// f16/bf16 operands of an op that computes in f32, and whether its result
/// is f16/bf16: each gets an f32 copy in the arena.
SmallVector<Value> halfOperands(Operation *op) {
  SmallVector<Value> operands;
  if (!computesInF32(op))
    return operands;
  for (Value operand : op->getOperands())
    if (isHalf(tensorType(operand).getElementType()) &&
        !llvm::is_contained(operands, operand))
      operands.push_back(operand);
  return operands;
}

/// An f16 or bf16 graph.matmul: its kernel converts one batch at a time.
bool isHalfMatmul(Operation *op) {
  return isa<MatmulOp>(op) &&
         isHalf(tensorType(op->getOperand(0)).getElementType());
}

/// The modelc_cpu::Storage of `op`'s first operand, for the row kernels'
/// template argument.
const char *storageOf(Operation *op) {
  Type element = tensorType(op->getOperand(0)).getElementType();
  return element.isF16()    ? "modelc_cpu::kF16"
         : element.isBF16() ? "modelc_cpu::kBF16"
                            : "modelc_cpu::kF32";
}

bool hasHalfResult(Operation *op) {
  return computesInF32(op) &&
         isHalf(tensorType(op->getResult(0)).getElementType());
}

/// One plan being emitted.
struct PlanSpec {
  std::string name;                 ///< "cpu", "cpu+sim2"
  std::string symbol;               ///< C identifier for its symbols
  std::vector<std::string> devices; ///< devices[0] is the host
  bool multiDevice = false;
  bool checked = false;
  /// Per device: a GPU (its ops become CUDA kernels).
  std::vector<bool> gpu;
  /// The trace points of every entry point of the plan: what each times
  /// and its device (modelc_trace_point).
  struct TracePoint {
    std::string what;
    unsigned device;
    double estimateUs; ///< device.estimated_us, or -1
  };
  std::vector<TracePoint> *tracePoints = nullptr;
};

/// "graph.linear (line 12)": how errors, tasks and traces name `op`.
std::string describeOp(Operation *op) {
  return namedOp(op)->getName().getStringRef().str() +
         graph::describeLocation(op->getLoc());
}

/// Emits one entry point of one plan.
class FunctionEmitter {
public:
  FunctionEmitter(func::FuncOp function, unsigned index, const PlanSpec &plan,
                  const CpuEmitOptions &options, llvm::raw_ostream &os,
                  llvm::raw_ostream &globals, unsigned &globalCounter,
                  GpuModule &gpuModule)
      : function(function), index(index), plan(plan), options(options), os(os),
        globals(globals), globalCounter(globalCounter), gpuModule(gpuModule) {}

  LogicalResult emit(CpuEmitReport::Entry &report);

  /// Where the parts of a long entry point go (HostParts.h); null: print
  /// every entry point as one function.
  std::vector<HostPart> *parts = nullptr;

  /// Per device of the plan, the arena bytes this entry point needs.
  std::vector<uint64_t> deviceArenaBytes;
  /// (device, weight index) pairs the entry point reads.
  std::set<std::pair<unsigned, unsigned>> residency;
  unsigned numEvents = 0;
  /// Every op runs on a GPU: the host launches only the outputs task.
  bool graphCapturable = false;

private:
  void analyze();
  std::string name(Value v) { return names.lookup(v); }
  std::string newGlobal(StringRef prefix) {
    return (prefix + llvm::Twine(globalCounter++)).str();
  }
  std::string staticArray(ArrayRef<int64_t> values);
  LogicalResult emitOp(Operation *op);
  friend bool modelc::hostPrinterPrints(Operation *op);
  friend bool computesInF32(Operation *op);
  /// The kernel call of each op kind this printer prints, and the operand
  /// types it takes; emitOp dispatches through it, hasKernel reads it.
  static const KernelTable<FunctionEmitter> &kernels();
  /// One kernel call per op.
  LogicalResult emitLinear(LinearOp linear);
  LogicalResult emitMatmul(MatmulOp matmul);
  LogicalResult emitGemm(GemmOp gemm);
  template <typename OpTy> LogicalResult emitSoftmax(OpTy softmax);
  LogicalResult emitLayerNorm(LayerNormOp norm);
  LogicalResult emitBatchNorm(BatchNormOp norm);
  LogicalResult emitConv2d(Conv2dOp conv);
  LogicalResult emitConvTranspose2d(ConvTranspose2dOp conv);
  template <typename OpTy> LogicalResult emitPool(OpTy pool);
  LogicalResult emitGlobalAvgPool(GlobalAvgPoolOp pool);
  LogicalResult emitMaxPoolGrad(MaxPool2dGradOp op);
  LogicalResult emitConvWeightGrad(Conv2dWeightGradOp op);
  /// A convolution with sched.dnnl_conv: modelc_runtime_api::conv of a
  /// static modelc_conv (`kind` MODELC_CONV_*).
  LogicalResult emitDnnlConv(Operation *op, const char *kind, Value a, Value b,
                             Value bias);
  LogicalResult emitTranspose(TransposeOp transpose);
  LogicalResult emitConcat(ConcatOp concat);
  LogicalResult emitSlice(SliceOp slice);
  LogicalResult emitGather(GatherOp gather);
  LogicalResult emitGatherGrad(GatherGradOp grad);
  LogicalResult emitScatterNd(ScatterNdOp scatter);
  LogicalResult emitDropout(DropoutOp dropout);
  LogicalResult emitAllReduce(AllReduceOp reduce);
  LogicalResult emitOwnerBroadcast(OwnerBroadcastOp broadcast);
  /// That every op touching optimizer state one rank holds (graph.weight
  /// `shard`) runs on that rank alone (graph.shard): elsewhere the state's
  /// memory does not exist. A single-device plan only.
  LogicalResult checkShardGuards();
  LogicalResult emitAllReduceStart(sched::AllReduceStartOp start);
  LogicalResult emitAllReduceWait(sched::AllReduceWaitOp wait);
  template <typename OpTy> LogicalResult emitReduce(OpTy reduce);
  LogicalResult emitCumsum(CumsumOp cumsum);
  LogicalResult emitCrossEntropy(CrossEntropyOp loss);
  LogicalResult emitAssign(AssignOp assign);
  /// The copy of `assign`'s weight on device `d` of a multi-device plan
  /// (const void *), which becomes resident there.
  std::string weightOnDevice(AssignOp assign, unsigned d);
  std::string out(Operation *op, unsigned i = 0) {
    return name(op->getResult(i));
  }
  std::string in(Operation *op, unsigned i) { return name(op->getOperand(i)); }
  static ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }
  static std::string typeName(Value v) {
    return cType(tensorType(v).getElementType());
  }
  std::string nullable(Value v) { return v ? name(v) : std::string("nullptr"); }
  /// emitOp, with f16/bf16 operands and results converted from and to f32
  /// around kernels that compute in f32.
  LogicalResult emitWithConversions(Operation *op);
  void emitFused(sched::FusedOp fused);
  void emitFusedReduce(sched::FusedReduceOp fused);
  /// A loop body's ops, one `const T tN = ...;` line each at `indent`,
  /// reading `element`'s names of their operands and adding theirs.
  void emitElementOps(ArrayRef<Operation *> ops,
                      llvm::DenseMap<Value, std::string> &element,
                      const std::string &indent);
  /// Element i of a fused loop's input `operand` (read broadcast with
  /// `strides` when static), element by element: `outDims` is the
  /// output's dims array, declared on first use.
  std::string fusedIndex(sched::FusedOp fused, Value operand,
                         ArrayRef<int64_t> strides, std::string &outDims);
  /// The offset of an input read broadcast (`strides`) at element
  /// `position` of an output of shape `outShape` (its dims array
  /// `outDims`, declared on first use).
  std::string staticOffset(const std::string &position,
                           ArrayRef<int64_t> outShape,
                           ArrayRef<int64_t> strides, std::string &outDims);
  /// Opens a fused loop of `count` elements (`run` > 0: runs of that many,
  /// each input's run pointer from `bases`); whether it is a parallel_for.
  bool openFusedLoop(sched::FusedOp fused, int64_t count, int64_t run,
                     ArrayRef<std::string> bases);
  LogicalResult emitPackedProduct(sched::PackedProductOp packed);
  /// A host sched.gemm (modelc-fold-gemm): an f32 matmul whose operands
  /// sgemm reads in place as strided views.
  LogicalResult emitStridedMatmul(sched::GemmOp gemm);
  void emitConstant(ConstantOp op);

  /// The CPU plan: one op's declaration (a pointer to its result) and code.
  LogicalResult emitStatement(Operation *op);
  /// Prints `text`, the declaration of `v`'s pointer, and keeps it for the
  /// parts after this one; `from`: the value it is a view of.
  void declare(Value v, std::string text, Value from = Value());
  /// Where each part of the entry point begins (indices into `ops`): one
  /// part unless it has more than options.opsPerFunction ops printing code.
  SmallVector<size_t> partStarts();
  /// The entry point as functions of ops [starts[i], starts[i + 1]) and a
  /// function calling them in turn.
  LogicalResult emitParts(ArrayRef<size_t> starts);
  /// The values that ops [begin, end) read from before `begin`, each after
  /// the value it is a view of.
  llvm::SetVector<Value> liveIns(size_t begin, size_t end);

  /// A new trace point for `op` on device `d`, and the lines that call
  /// the trace callback at its begin or end (`phase`).
  unsigned tracePoint(Operation *op, unsigned d) {
    auto estimate = op->getAttrOfType<FloatAttr>("device.estimated_us");
    plan.tracePoints->push_back(
        {describeOp(op), d, estimate ? estimate.getValueAsDouble() : -1.0});
    return static_cast<unsigned>(plan.tracePoints->size() - 1);
  }
  static std::string traceCall(unsigned point, const char *phase) {
    return "  if (ctx->trace)\n    ctx->trace(ctx, " + std::to_string(point) +
           ", " + phase + ");\n";
  }

  /// Index into plan.devices of the device `op` runs on.
  unsigned deviceOf(Operation *op);
  unsigned deviceIndex(device::DeviceAttr device);
  /// Multi-device plans: every op a task, the entry function enqueues them.
  LogicalResult emitMultiDevice();
  /// The value whose memory a view (reshape) shares, and the event
  /// recorded when it is made (sched.record).
  Value viewRoot(Value v);
  std::optional<unsigned> eventOf(Value v);
  /// The waits of `op`'s stream on device `d` before it runs (sched.waits).
  void emitWaits(Operation *op, unsigned d, bool copyStream);
  /// Checked plans: the runtime checks that `v` is memory of device `d`.
  void check(unsigned d, Value v, StringRef what);
  void emitErrorWordClears();
  void emitOutputsTask(func::ReturnOp ret);
  void emitCopy(device::TransferOp transfer);
  void emitReplicaSum(ReplicaAllReduceOp member);
  LogicalResult emitRankSum(AllReduceOp reduce);
  /// The waits and checks of a sum on device `d`'s copy stream.
  void beginSum(Operation *op, unsigned d, Value input, Value result);
  LogicalResult emitTask(Operation *op);
  LogicalResult emitGpuTask(Operation *op, unsigned d, const std::string &what);
  /// A C++ expression for `v`'s data in a multi-device plan.
  std::string pointerExpression(Value v,
                                const llvm::StringMap<unsigned> &weightIndex);

  func::FuncOp function;
  unsigned index;
  const PlanSpec &plan;
  const CpuEmitOptions &options;
  llvm::raw_ostream &os;
  llvm::raw_ostream &globals;
  unsigned &globalCounter;
  GpuModule &gpuModule;

  bool onGpu(Operation *op) {
    return plan.gpu.size() && plan.gpu[deviceOf(op)];
  }
  /// A view of its operand's memory: no code, no buffer of its own.
  bool isView(Operation *op) { return isAlias(op); }
  /// What a GPU GEMM call computes besides its product, from sched.gemm.
  void describeGemm(sched::GemmOp gemm, GpuOpContext &context);
  /// Per GPU device with ops that check indices: its error word (an int in
  /// its arena) and the host copy read after the run (in the host arena).
  llvm::DenseMap<unsigned, std::pair<uint64_t, uint64_t>> errorWords;
  /// Messages of the error codes, code i + 1 at [i].
  std::vector<std::string> errorMessages;

  // The multi-device schedule being written: the host function enqueuing
  // every task and copy, its events and the waits already issued.
  std::string hostText;
  llvm::raw_string_ostream host{hostText};
  std::string taskPrefix;
  llvm::StringMap<unsigned> weightIndex;
  unsigned taskCounter = 0;

  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> position;
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<Value, uint64_t> offsets; // arena buffers (on their device)
  llvm::DenseMap<Value, unsigned> bufferDevice;
  llvm::DenseMap<Operation *, SmallVector<uint64_t>> scratchOffsets;
  llvm::DenseMap<Operation *, uint64_t> im2colOffsets;
  /// An f16/bf16 matmul's f32 scratch for one batch (cpuScratchBytes).
  llvm::DenseMap<Operation *, uint64_t> matmulScratch;
  /// The runtime call site of each sched.packed_product printed.
  llvm::DenseMap<Operation *, unsigned> productSites;
  uint64_t arenaBytes = 0;
  unsigned kernelCalls = 0, fusedLoops = 0, fusedOps = 0;

  /// The CPU plan's pointer declarations, for parts that read them; and
  /// the range of the globals text holding a constant's data.
  struct Declaration {
    std::string text;
    Value from;
  };
  llvm::DenseMap<Value, Declaration> declarations;
  llvm::DenseMap<Value, TextRange> constantData;
  unsigned valueCounter = 0;

  /// Dynamic dimensions (docs/dynamic.md): the symbolic shape of each
  /// value that has one (inferSymbolicShapes), and each dimension's index
  /// in the model's table (ctx->dims). The IR holds them at their max; code
  /// for such a value takes its sizes at run time.
  graph::SymbolicShapes symbolic;
  llvm::DenseMap<StringAttr, unsigned> dimIndex;
  /// Whether inferSymbolicShapes failed (it said why at the op).
  bool brokenDynamic = false;
  /// Whether `v` has a dynamic dimension; beyond axis 0.
  bool isDynamic(Value v) const { return symbolic.lookup(v) != nullptr; }
  bool hasInnerDynamic(Value v) const {
    const graph::SymShape *shape = symbolic.lookup(v);
    return shape && !graph::onlyLeading(*shape);
  }
  /// `dim` at the run's sizes, a C++ expression.
  std::string runDim(const graph::SymDim &dim);
  /// The product of axes [from, to) of `v` at the run's sizes.
  std::string runExtent(Value v, size_t from, size_t to);
  /// `count`, a quantity of the max-sized `v` proportional to its
  /// dimension 0 (elements, rows) or, where axes beyond 0 are dynamic, to
  /// all of it (elements, bytes): a literal, or the run's count.
  std::string sized(int64_t count, Value v);
  /// Axes [from, to) of `v` at the run's sizes as an int64_t array: a
  /// static one, or a local written to `os` (call it before the
  /// statement that uses it).
  std::string runArray(Value v, size_t from, size_t to);
  /// `values` (C++ int64_t expressions) as a local array written to `os`
  /// ("nullptr"-safe: an empty list is one 0).
  std::string localArray(ArrayRef<std::string> values) {
    std::string local = newGlobal("run_dims");
    os << "  const int64_t " << local << "[] = {"
       << (values.empty() ? std::string("0") : llvm::join(values, ", "))
       << "};\n";
    return local;
  }
  /// `v`'s symbolic shape (its static one when it has no dimension).
  graph::SymShape symShape(Value v) const {
    if (const graph::SymShape *shape = symbolic.lookup(v))
      return *shape;
    return graph::staticShape(shapeOf(v));
  }
  /// broadcastStrides at the run's sizes: `in` read broadcast to rank
  /// `outRank` (right-aligned; 0 on broadcast axes), as an int64_t array
  /// (a local written to `os` when a size is dynamic).
  std::string runBroadcastStrides(ArrayRef<graph::SymDim> in, size_t outRank);
  /// `v`'s shape as a C++ list, dimension 0 sized().
  std::string shapeList(Value v);
  /// The bytes of `v` in this run, a uint64_t expression.
  std::string runBytes(Value v) {
    std::string bytes = sized(static_cast<int64_t>(valueBytes(v)), v);
    return isDynamic(v) ? "uint64_t" + bytes : bytes + "ULL";
  }
  /// staticArray(values), or where `v`'s dimension 0 is dynamic a local
  /// array whose first entry (`v`'s dimension 0) is the run's size.
  std::string leadingArray(ArrayRef<int64_t> values, Value v);
  /// `base` advanced by the view offset of `op` (a batch part's from the
  /// run's batch).
  std::string viewOf(Operation *op, const std::string &base);
  /// Whether `op` reads or writes a value with a dynamic dimension.
  bool touchesDynamic(Operation *op);
  /// An error unless `op`, touching a dynamic dimension, is an op whose
  /// code takes its sizes at run time.
  LogicalResult checkDynamicSupported(Operation *op, bool onGpu = false);
};

/// Whether conv2d_weight_grad needs im2col columns: all but a pointwise
/// convolution (1x1, stride 1, no padding), whose input is its columns.
static bool weightGradNeedsColumns(Conv2dWeightGradOp grad) {
  ArrayRef<int64_t> k = grad.getKernel(), s = grad.getStrides(),
                    p = grad.getPadding();
  ArrayRef<int64_t> x = tensorType(grad.getInput()).getShape();
  ArrayRef<int64_t> g = tensorType(grad.getGrad()).getShape();
  bool pointwise = k[0] == 1 && k[1] == 1 && s[0] == 1 && s[1] == 1 &&
                   llvm::all_of(p, [](int64_t v) { return v == 0; }) &&
                   x[2] == g[2] && x[3] == g[3];
  return !pointwise;
}

/// modelc-select-conv-algorithms' choice: `op` (a training step's
/// convolution) runs through oneDNN's primitives (modelc_runtime_api::conv).
static bool usesDnnlConv(Operation *op) {
  return op->hasAttr(sched::kDnnlConvAttrName);
}

/// modelc-select-conv-algorithms' choice: `conv` runs as a GEMM and col2im.
static bool transposedConvUsesGemm(ConvTranspose2dOp conv) {
  return conv->hasAttr(sched::kCol2imAttrName) && !usesDnnlConv(conv);
}

unsigned FunctionEmitter::deviceOf(Operation *op) {
  if (auto transfer = dyn_cast<device::TransferOp>(op))
    return deviceIndex(transfer.getTarget());
  return deviceIndex(op->getAttrOfType<device::DeviceAttr>(kDeviceAttrName));
}

unsigned FunctionEmitter::deviceIndex(device::DeviceAttr device) {
  if (!device)
    return 0;
  for (auto [i, name] : llvm::enumerate(plan.devices))
    if (name == device.str())
      return i;
  return 0;
}

void FunctionEmitter::analyze() {
  for (Operation &op : function.getBody().front()) {
    position[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }
  // The memory plan (modelc-plan-memory): arenas per device, buffers and
  // scratch per op, the GPUs' error words.
  auto arenas = function->getAttrOfType<DictionaryAttr>("sched.arenas");
  deviceArenaBytes.assign(std::max<size_t>(1, plan.devices.size()), 0);
  for (auto [d, device] : llvm::enumerate(plan.devices))
    if (auto bytes = arenas ? arenas.getAs<IntegerAttr>(device) : nullptr)
      deviceArenaBytes[d] = bytes.getValue().getZExtValue();
  for (Operation *op : ops) {
    if (auto buffer = op->getAttrOfType<sched::BufferAttr>("sched.buffer")) {
      offsets[op->getResult(0)] = buffer.getOffset();
      bufferDevice[op->getResult(0)] = deviceOf(op);
    }
    if (auto scratch = op->getAttrOfType<ArrayAttr>("sched.scratch"))
      for (auto buffer : scratch.getAsRange<sched::BufferAttr>())
        scratchOffsets[op].push_back(buffer.getOffset());
  }
  // Dynamic dimensions: from the arguments' graph.dims through every op
  // that reads them (modelc-check-dynamic-dims checked the graph; a pass
  // after it that broke a shape is reported at its op).
  for (DimOp dim : function->getParentOfType<ModuleOp>().getOps<DimOp>())
    dimIndex.try_emplace(dim.getSymNameAttr(), dimIndex.size());
  FailureOr<graph::SymbolicShapes> shapes = inferSymbolicShapes(function);
  if (failed(shapes))
    brokenDynamic = true;
  else
    symbolic = std::move(*shapes);
  if (auto words = function->getAttrOfType<ArrayAttr>("sched.error_words"))
    for (auto word : words.getAsRange<sched::ErrorWordAttr>())
      errorWords[deviceIndex(word.getDevice())] = {word.getOffset(),
                                                   word.getHostOffset()};
  arenaBytes = 0;
  for (uint64_t bytes : deviceArenaBytes)
    arenaBytes += bytes;
}

std::string FunctionEmitter::runDim(const graph::SymDim &dim) {
  if (dim.isStatic())
    return std::to_string(dim.coef);
  std::string text;
  for (StringAttr d : dim.dims) {
    std::string size;
    if (std::optional<graph::DimPart> part = graph::parseDimPart(d)) {
      // A replica's part of the batch (modelc-data-parallel): balanced.
      std::string whole = "ctx->dims[" +
                          std::to_string(dimIndex.lookup(
                              StringAttr::get(d.getContext(), part->base))) +
                          "]";
      std::string parts = std::to_string(part->parts);
      size = "(" + whole + " / " + parts + " + (" + whole + " % " + parts +
             " > " + std::to_string(part->index) + " ? 1 : 0))";
    } else {
      size = "ctx->dims[" + std::to_string(dimIndex.lookup(d)) + "]";
    }
    text += (text.empty() ? "" : " * ") + size;
  }
  if (dim.coef != 1)
    text += " * " + std::to_string(dim.coef);
  return "(" + text + ")";
}

std::string FunctionEmitter::runExtent(Value v, size_t from, size_t to) {
  const graph::SymShape *shape = symbolic.lookup(v);
  ArrayRef<int64_t> sizes = shapeOf(v);
  graph::SymDim extent = graph::SymDim::of(1);
  for (size_t axis = from; axis < to; ++axis)
    extent = extent * (shape ? (*shape)[axis] : graph::SymDim::of(sizes[axis]));
  return runDim(extent);
}

std::string FunctionEmitter::sized(int64_t count, Value v) {
  const graph::SymShape *shape = symbolic.lookup(v);
  if (!shape)
    return std::to_string(count);
  ArrayRef<int64_t> sizes = shapeOf(v);
  if (graph::onlyLeading(*shape)) {
    int64_t max = sizes[0];
    assert(max > 0 && count % max == 0 && "not proportional to dimension 0");
    graph::SymDim run = (*shape)[0];
    run.coef *= count / max;
    return runDim(run);
  }
  // Beyond axis 0 only whole counts scale (checkDynamicSupported lets only
  // the ops whose code asks runExtent for their sizes through).
  int64_t elements = product(sizes);
  if (elements <= 0 || count % elements != 0)
    llvm::report_fatal_error("internal error: a size of a value with a "
                             "dynamic dimension beyond axis 0 that is not "
                             "proportional to its elements");
  std::string all = runExtent(v, 0, sizes.size());
  return count == elements
             ? all
             : "(" + all + " * " + std::to_string(count / elements) + ")";
}

std::string FunctionEmitter::shapeList(Value v) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (shape.empty())
    return "";
  std::string text = sized(shape[0], v);
  for (int64_t d : shape.drop_front())
    text += ", " + std::to_string(d);
  return text;
}

std::string FunctionEmitter::runArray(Value v, size_t from, size_t to) {
  ArrayRef<int64_t> sizes = shapeOf(v);
  if (!isDynamic(v) || from >= to)
    return staticArray(sizes.slice(from, to - from));
  SmallVector<std::string> extents;
  for (size_t axis = from; axis < to; ++axis)
    extents.push_back(runExtent(v, axis, axis + 1));
  return localArray(extents);
}

std::string FunctionEmitter::runBroadcastStrides(ArrayRef<graph::SymDim> in,
                                                 size_t outRank) {
  SmallVector<std::string> strides(outRank, "0");
  size_t shift = outRank - in.size();
  graph::SymDim stride = graph::SymDim::of(1);
  for (size_t d = in.size(); d-- > 0;) {
    bool broadcast = in[d].isStatic() && in[d].coef == 1;
    if (!broadcast)
      strides[d + shift] = runDim(stride);
    stride = stride * in[d];
  }
  if (!graph::hasSymbols(in)) {
    SmallVector<int64_t> values;
    for (const std::string &text : strides)
      values.push_back(std::stoll(text));
    return staticArray(values);
  }
  return localArray(strides);
}

std::string FunctionEmitter::leadingArray(ArrayRef<int64_t> values, Value v) {
  if (!isDynamic(v) || values.empty())
    return staticArray(values);
  std::string local = newGlobal("run_dims");
  os << "  const int64_t " << local << "[] = {" << sized(values[0], v);
  for (int64_t d : values.drop_front())
    os << ", " << d;
  os << "};\n";
  return local;
}

/// Whether `op` or an op in its regions reads or writes a value for
/// which `pred` holds.
static bool anyValueOf(Operation *op, function_ref<bool(Value)> pred) {
  bool found = false;
  op->walk([&](Operation *inner) {
    found |= llvm::any_of(inner->getOperands(), pred) ||
             llvm::any_of(inner->getResults(), pred);
  });
  return found;
}

bool FunctionEmitter::touchesDynamic(Operation *op) {
  return anyValueOf(op, [&](Value v) { return isDynamic(v); });
}

LogicalResult FunctionEmitter::checkDynamicSupported(Operation *op,
                                                     bool onGpu) {
  if (!touchesDynamic(op))
    return success();
  // A GPU concat joins at static offsets: not along a dynamic axis (the
  // parts of a split batch join on the host).
  if (auto concat = dyn_cast<ConcatOp>(namedOp(op)); concat && onGpu)
    for (Value input : concat.getInputs())
      if (!symShape(input)[concat.getNormalizedAxis()].isStatic())
        return op->emitError("'graph.concat' along a dynamic dimension is "
                             "not supported yet on a GPU (docs/dynamic.md)");
  if (anyValueOf(op, [&](Value v) { return hasInnerDynamic(v); })) {
    // Dimensions beyond axis 0: the ops whose code asks runExtent for
    // every size (on a GPU: GpuOpContext::extent).
    Operation *named = namedOp(op);
    if (onGpu) {
      if (isa<sched::FusedOp>(op) || isLeadingView(op) ||
          isa<LinearOp, MatmulOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
              TransposeOp, SliceOp, GatherOp, ReduceSumOp, ReduceMeanOp,
              ReduceMaxOp, ReduceProdOp, ConcatOp>(named))
        return success();
      return op->emitError("'")
             << named->getName()
             << "' with a dynamic dimension beyond axis 0 is not supported "
                "yet on a GPU (docs/dynamic.md lists the ops that are)";
    }
    bool supported =
        (isa<sched::FusedOp, LinearOp, MatmulOp, SoftmaxOp, LogSoftmaxOp,
             LayerNormOp, TransposeOp, ConcatOp, SliceOp, BatchPartOp, GatherOp,
             ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceProdOp,
             func::ReturnOp>(op) ||
         isLeadingView(op) ||
         (isa<sched::PackedProductOp>(op) && !isa<Conv2dOp>(named)));
    if (supported)
      return success();
    return op->emitError("'")
           << named->getName()
           << "' with a dynamic dimension beyond axis 0 is not supported yet"
           << (onGpu ? " on a GPU" : " by the CPU back end")
           << " (docs/dynamic.md lists the ops that are)";
  }
  if (onGpu) {
    // The CUDA printer's kernels and products that take the run's size
    // (CudaPrinter.cpp: runSize, Gemm::mRun); f16 and bf16 included.
    Operation *named = namedOp(op);
    bool supported =
        isa<sched::FusedOp>(op) ||
        (isa<LinearOp, MatmulOp, GemmOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
             BatchNormOp, MaxPool2dOp, AvgPool2dOp, GlobalAvgPoolOp,
             TransposeOp, ConcatOp, SliceOp, GatherOp, ReduceSumOp,
             ReduceMeanOp, ReduceMaxOp, ReduceProdOp, CumsumOp, Conv2dOp,
             ConvTranspose2dOp>(named));
    if (supported)
      return success();
    return op->emitError("'")
           << named->getName()
           << "' with a dynamic dimension is not supported yet on a GPU "
              "(docs/dynamic.md lists the ops that are)";
  }
  // The code of these takes its sizes from sized(); every other op's
  // still assumes the max.
  bool supported =
      isa<sched::FusedOp, sched::GemmOp, LinearOp, GemmOp, SoftmaxOp,
          LogSoftmaxOp, LayerNormOp, BatchNormOp, MaxPool2dOp, AvgPool2dOp,
          GlobalAvgPoolOp, TransposeOp, ConcatOp, SliceOp, BatchPartOp,
          GatherOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceProdOp,
          CumsumOp, Conv2dOp, ConvTranspose2dOp, func::ReturnOp>(op) ||
      isLeadingView(op);
  // Half precision: conversions to and from f32 scratch, products through
  // f32 or oneDNN's bf16, all sized like the rest.
  if (isa<sched::PackedProductOp, MatmulOp>(op))
    supported = true;
  if (supported)
    return success();
  return op->emitError("'")
         << namedOp(op)->getName()
         << "' with a dynamic dimension is not supported yet by the CPU back "
            "end (docs/dynamic.md lists the ops that are)";
}

void FunctionEmitter::describeGemm(sched::GemmOp gemm, GpuOpContext &context) {
  context.reluEpilogue = gemm.getRelu();
  context.scale = gemm.getAlpha().convertToDouble();
  if (context.reluEpilogue || context.scale != 1.0)
    ++fusedOps;
  if (Value residual = gemm.getResidualValue()) {
    // Written into the group's result, with the residual value as C.
    context.residualOut = name(gemm.getResult());
    context.residualIn = name(residual);
    ++fusedOps;
  }
  std::array<sched::StridedViewAttr, 2> views = {gemm.getLhsViewAttr(),
                                                 gemm.getRhsViewAttr()};
  for (auto [index, view] : llvm::enumerate(views)) {
    if (!view)
      continue;
    StridedOperand &operand = context.stridedOperands[index].emplace();
    operand.base = gemm.getViewBase(index);
    operand.offset = view.getOffset();
    operand.ld = view.getLd();
    operand.batchStride = view.getBatchStride();
    operand.transposed = view.getTransposed();
  }
}

std::string FunctionEmitter::staticArray(ArrayRef<int64_t> values) {
  std::string global = newGlobal("dims");
  globals << "const int64_t " << global << "[] = {"
          << (values.empty() ? "0" : list(values)) << "};\n";
  return global;
}

void FunctionEmitter::emitConstant(ConstantOp op) {
  RankedTensorType type = op.getType();
  Type element = type.getElementType();
  std::string global = newGlobal("constant");
  size_t dataBegin = globals.tell();
  globals << "alignas(64) const " << cType(element) << " " << global << "["
          << std::max<int64_t>(1, type.getNumElements()) << "] = {"
          << constantInitializer(op) << "};\n";
  if (plan.multiDevice) {
    // Constants are part of the code, readable from every device.
    names[op.getResult()] = global;
    return;
  }
  constantData[op.getResult()] = {dataBegin, globals.tell()};
  declare(op.getResult(), "  const " + cType(element) + " *" +
                              name(op.getResult()) + " = " + global + ";\n");
}

/// The first axis of the trailing axes over which every one of `inputs`
/// (their strides as read broadcast to `out`) is read either in the order
/// the result is written (contiguously) or as one element (broadcast): from
/// there on a loop reads each input at its offset plus the position in the
/// run, or at its offset alone. out.size() when not even the last axis is.
static size_t runStart(ArrayRef<int64_t> out,
                       ArrayRef<SmallVector<int64_t>> inputs) {
  enum Read { Unknown, Contiguous, Broadcast };
  SmallVector<Read> reads(inputs.size(), Unknown);
  SmallVector<int64_t> outStrides = stridesOf(out);
  size_t start = out.size();
  for (size_t d = out.size(); d-- > 0;) {
    if (out[d] == 1) {
      start = d;
      continue;
    }
    for (auto [k, strides] : llvm::enumerate(inputs)) {
      Read read = strides[d] == 0               ? Broadcast
                  : strides[d] == outStrides[d] ? Contiguous
                                                : Unknown;
      if (read == Unknown || (reads[k] != Unknown && reads[k] != read))
        return start;
      reads[k] = read;
    }
    start = d;
  }
  return start;
}

/// The first axis of the runs a fused loop reads its inputs in, or 0 for
/// none: only where some input would otherwise need a broadcast offset per
/// element (broadcast along some axes and not others: BatchNorm's
/// per-channel statistics over N, C, H, W), the runs start after axis 0 and
/// are at least 4 long (shorter ones are not worth the outer loop).
static size_t fusedRunStart(ArrayRef<int64_t> outShape,
                            ArrayRef<SmallVector<int64_t>> strides,
                            ValueRange inputs) {
  bool elementwiseOffsets = false;
  for (Value input : inputs) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(input.getType()).getShape();
    ArrayRef<int64_t> trimmed =
        shape.drop_while([](int64_t d) { return d == 1; });
    elementwiseOffsets |= shape != outShape && product(shape) != 1 &&
                          !(trimmed.size() <= outShape.size() &&
                            outShape.take_back(trimmed.size()) == trimmed &&
                            product(trimmed) >= 4);
  }
  size_t start = runStart(outShape, strides);
  return elementwiseOffsets && product(outShape.drop_front(start)) >= 4 ? start
                                                                        : 0;
}

std::string FunctionEmitter::staticOffset(const std::string &position,
                                          ArrayRef<int64_t> outShape,
                                          ArrayRef<int64_t> strides,
                                          std::string &outDims) {
  if (outDims.empty())
    outDims = staticArray(outShape);
  return "modelc_cpu::broadcast_offset(" + position + ", " +
         std::to_string(outShape.size()) + ", " + outDims + ", " +
         staticArray(strides) + ")";
}

std::string FunctionEmitter::fusedIndex(sched::FusedOp fused, Value operand,
                                        ArrayRef<int64_t> strides,
                                        std::string &outDims) {
  ArrayRef<int64_t> shape = shapeOf(operand);
  ArrayRef<int64_t> outShape = shapeOf(fused.getResult());
  if (hasInnerDynamic(fused.getResult())) {
    // Dimensions beyond axis 0: offsets from the run's sizes.
    graph::SymShape in = symShape(operand), out = symShape(fused.getResult());
    auto unit = [](const graph::SymDim &d) {
      return d.isStatic() && d.coef == 1;
    };
    ArrayRef<graph::SymDim> kept = ArrayRef<graph::SymDim>(in).drop_while(unit);
    if (in == out)
      return "i";
    if (product(shape) == 1)
      return "0";
    if (kept.size() <= out.size() &&
        ArrayRef<graph::SymDim>(out).take_back(kept.size()) == kept) {
      graph::SymDim count = graph::SymDim::of(1);
      for (const graph::SymDim &d : kept)
        count = count * d;
      return "i % " + runDim(count);
    }
    if (outDims.empty())
      outDims = runArray(fused.getResult(), 0, out.size());
    return "modelc_cpu::broadcast_offset(i, " + std::to_string(out.size()) +
           ", " + outDims + ", " + runBroadcastStrides(in, out.size()) + ")";
  }
  ArrayRef<int64_t> trimmed =
      shape.drop_while([](int64_t d) { return d == 1; });
  if (shape == outShape)
    return "i";
  if (product(shape) == 1)
    return "0";
  if (trimmed.size() <= outShape.size() &&
      outShape.take_back(trimmed.size()) == trimmed)
    return "i % " + std::to_string(product(trimmed));
  return staticOffset("i", outShape, strides, outDims);
}

bool FunctionEmitter::openFusedLoop(sched::FusedOp fused, int64_t count,
                                    int64_t run, ArrayRef<std::string> bases) {
  // The runtime's parallel_for runs a loop no longer than its grain on the
  // calling thread: such a loop is spelled as a plain loop, which costs the
  // C++ compiler far less than a lambda and its trampoline.
  const int64_t grain = 16384;
  bool dynamic = isDynamic(fused.getResult());
  bool parallel = count > grain || dynamic;
  if (!run) {
    if (parallel)
      os << "  modelc_cpu::parallel_for(ctx, "
         << sized(count, fused.getResult()) << ", " << grain
         << ", [&](int64_t begin, int64_t end) {\n"
         << "      for (int64_t i = begin; i < end; ++i) {\n";
    else
      os << "  {\n"
         << "      for (int64_t i = 0; i < " << count << "; ++i) {\n";
    return parallel;
  }
  // The runs: dimension 0 (the only dynamic one here) is outside them.
  std::string outer = dynamic ? "(" + sized(count, fused.getResult()) + ") / " +
                                    std::to_string(run)
                              : std::to_string(count / run);
  if (parallel)
    os << "  modelc_cpu::parallel_for(ctx, " << outer << ", "
       << std::max<int64_t>(1, grain / run)
       << ", [&](int64_t begin, int64_t end) {\n"
       << "      for (int64_t o = begin; o < end; ++o) {\n";
  else
    os << "  {\n"
       << "      for (int64_t o = 0; o < " << outer << "; ++o) {\n";
  os << "        const int64_t i0 = o * " << run << ";\n";
  for (const std::string &base : bases)
    os << base;
  os << "        for (int64_t j = 0; j < " << run << "; ++j) {\n"
     << "          const int64_t i = i0 + j;\n";
  return parallel;
}

void FunctionEmitter::emitFused(sched::FusedOp fused) {
  RankedTensorType outType = tensorType(fused.getResult());
  ArrayRef<int64_t> outShape = outType.getShape();
  int64_t count = outType.getNumElements();

  // The inputs are loaded per element, then the body's ops run in order.
  SmallVector<Operation *> group = fused.getBodyOps();
  ++fusedLoops;
  fusedOps += group.size();

  // Inputs read in runs (fusedRun): an outer loop over the leading axes
  // computes each input's offset once, an inner loop over the trailing axes
  // reads it contiguously or as one element, and vectorises. Static
  // trailing axes only.
  SmallVector<SmallVector<int64_t>> inputStrides;
  for (Value operand : fused.getInputs())
    inputStrides.push_back(broadcastStrides(shapeOf(operand), outShape));
  size_t start = hasInnerDynamic(fused.getResult())
                     ? 0
                     : fusedRunStart(outShape, inputStrides, fused.getInputs());
  int64_t run = start ? product(outShape.drop_front(start)) : 0;
  std::string indent = run ? "          " : "        ";

  std::string outDims;
  llvm::DenseMap<Value, std::string> element;
  SmallVector<std::string> loads, bases;
  for (auto [argument, operand, strides] : llvm::zip(
           fused.getBody().getArguments(), fused.getInputs(), inputStrides)) {
    Type type = tensorType(operand).getElementType();
    std::string from;
    if (run) {
      // Each input's offset at the run's first element, then + j or not.
      ArrayRef<int64_t> shape = shapeOf(operand);
      std::string base = "r" + std::to_string(bases.size());
      std::string offset = shape == outShape ? "i0"
                           : product(shape) == 1
                               ? "0"
                               : staticOffset("i0", outShape, strides, outDims);
      bases.push_back("        const auto *" + base + " = " + name(operand) +
                      " + " + offset + ";\n");
      bool broadcast = llvm::all_of(
          llvm::seq<size_t>(start, outShape.size()),
          [&](size_t d) { return outShape[d] == 1 || strides[d] == 0; });
      from = base + "[" + (broadcast ? "0" : "j") + "]";
    } else {
      from = name(operand) + "[" +
             fusedIndex(fused, operand, strides, outDims) + "]";
    }
    std::string local = "a" + std::to_string(loads.size());
    loads.push_back(indent + "const " + computeType(type) + " " + local +
                    " = " + loadElement(type, from) + ";\n");
    element[argument] = local;
  }

  os << "  // fused:";
  for (Operation *op : group)
    os << " " << op->getName().getStringRef();
  if (run)
    os << " (in runs of " << run << ")";
  os << "\n";
  bool parallel = openFusedLoop(fused, count, run, bases);
  for (const std::string &load : loads)
    os << load;
  emitElementOps(group, element, indent);
  os << indent << name(fused.getResult()) << "[i] = "
     << storeElement(outType.getElementType(),
                     element[fused.getRoot()->getResult(0)])
     << ";\n";
  if (run)
    os << "        }\n";
  os << "      }\n" << (parallel ? "  });\n" : "  }\n");
}

void FunctionEmitter::emitElementOps(
    ArrayRef<Operation *> ops, llvm::DenseMap<Value, std::string> &element,
    const std::string &indent) {
  for (auto [index, op] : llvm::enumerate(ops)) {
    SmallVector<std::string> args;
    for (Value operand : op->getOperands())
      args.push_back(element[operand]);
    std::string local = "t" + std::to_string(index);
    os << indent << "const "
       << computeType(tensorType(op->getResult(0)).getElementType()) << " "
       << local << " = " << elementExpression(op, args) << ";\n";
    element[op->getResult(0)] = local;
  }
}

void FunctionEmitter::emitFusedReduce(sched::FusedReduceOp fused) {
  Operation *reduce = fused.getReduce();
  Value source = reduce->getOperand(0);
  ArrayRef<int64_t> x = shapeOf(source);
  int rank = static_cast<int>(x.size());
  SmallVector<int64_t> xStrides = stridesOf(x);
  llvm::SmallBitVector reduced =
      isa<ReduceSumOp>(reduce) ? cast<ReduceSumOp>(reduce).getReducedDims()
                               : cast<ReduceMeanOp>(reduce).getReducedDims();
  SmallVector<unsigned> keptAxes, redAxes;
  for (int d = 0; d < rank; ++d)
    (reduced[d] ? redAxes : keptAxes).push_back(d);
  // The trailing reduced axes contiguous in the reduced value are one run
  // (modelc-fuse-elementwise fuses sums over the last axis only): output r
  // adds `outer` runs of `run` consecutive elements, in the order, and
  // into the eight partial sums, of modelc_cpu::reduce.
  size_t lead = redAxes.size();
  int64_t run = 1;
  while (lead > 0 && xStrides[redAxes[lead - 1]] == run) {
    run *= x[redAxes[lead - 1]];
    --lead;
  }
  auto pick = [](ArrayRef<int64_t> values, ArrayRef<unsigned> axes) {
    SmallVector<int64_t> picked;
    for (unsigned a : axes)
      picked.push_back(values[a]);
    return picked;
  };
  ArrayRef<unsigned> leadAxes = ArrayRef<unsigned>(redAxes).take_front(lead),
                     runAxes = ArrayRef<unsigned>(redAxes).drop_front(lead);
  SmallVector<int64_t> keptDims = pick(x, keptAxes),
                       leadDims = pick(x, leadAxes);
  int64_t outputs = product(keptDims), outer = product(leadDims);
  // The offset of (output r, run o) along `strides` of the value's axes.
  auto offset = [&](ArrayRef<int64_t> strides) {
    std::string text;
    auto term = [&](const char *index, ArrayRef<unsigned> axes,
                    ArrayRef<int64_t> dims) {
      SmallVector<int64_t> picked = pick(strides, axes);
      if (llvm::all_of(picked, [](int64_t v) { return v == 0; }))
        return;
      text += std::string(text.empty() ? "" : " + ") +
              "modelc_cpu::broadcast_offset(" + index + ", " +
              std::to_string(axes.size()) + ", " + staticArray(dims) + ", " +
              staticArray(picked) + ")";
    };
    term("r", keptAxes, keptDims);
    term("o", leadAxes, leadDims);
    return text.empty() ? std::string("0") : text;
  };

  ++fusedLoops;
  fusedOps += fused.getElementOps().size() + 1;
  os << "  // fused reduction:";
  for (Operation &op : fused.getBody().front().without_terminator())
    os << " " << op.getName().getStringRef();
  os << " (" << outputs << " outputs, " << outer << " runs of " << run << ")\n";
  os << "  modelc_cpu::parallel_for(ctx, " << outputs
     << ", modelc_cpu::grain_for(" << outer * run
     << "), [&](int64_t begin, int64_t end) {\n"
     << "    for (int64_t r = begin; r < end; ++r) {\n"
     << "      double lanes[8] = {};\n"
     << "      for (int64_t o = 0; o < " << outer << "; ++o) {\n";
  bool general = false;
  SmallVector<std::string> loads;
  llvm::DenseMap<Value, std::string> element;
  for (auto [index, argument, input] :
       llvm::enumerate(fused.getBody().getArguments(), fused.getInputs())) {
    SmallVector<int64_t> strides = broadcastStrides(shapeOf(input), x);
    SmallVector<int64_t> runStrides = pick(strides, runAxes);
    Type type = tensorType(input).getElementType();
    std::string from;
    bool contiguous = runStrides == pick(xStrides, runAxes);
    if (contiguous ||
        llvm::all_of(runStrides, [](int64_t v) { return v == 0; })) {
      // Read in order along the run, or one element for all of it.
      std::string base = "b" + std::to_string(index);
      os << "        const auto *" << base << " = " << name(input) << " + "
         << offset(strides) << ";\n";
      from = base + (contiguous ? "[j]" : "[0]");
    } else {
      // Broadcast within the run: each element's offset from its index.
      general = true;
      from = name(input) + "[modelc_cpu::broadcast_offset(at + j, " +
             std::to_string(rank) + ", " + staticArray(x) + ", " +
             staticArray(strides) + ")]";
    }
    std::string local = "a" + std::to_string(index);
    loads.push_back("          const " + computeType(type) + " " + local +
                    " = " + loadElement(type, from) + ";\n");
    element[argument] = local;
  }
  if (general)
    os << "        const int64_t at = " << offset(xStrides) << ";\n";
  os << "        const auto element = [&](int64_t j) {\n";
  for (const std::string &load : loads)
    os << load;
  emitElementOps(fused.getElementOps(), element, "          ");
  os << "          return " << element[source] << ";\n"
     << "        };\n"
     << "        int64_t k = 0;\n"
     << "        for (; k + 8 <= " << run << "; k += 8)\n"
     << "          for (int l = 0; l < 8; ++l)\n"
     << "            lanes[l] += static_cast<double>(element(k + l));\n"
     << "        for (int l = 0; k < " << run << "; ++k, ++l)\n"
     << "          lanes[l] += static_cast<double>(element(k));\n"
     << "      }\n"
     << "      double sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +\n"
     << "                   ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));\n";
  if (isa<ReduceMeanOp>(reduce))
    os << "      sum /= " << outer * run << ".0;\n";
  os << "      " << name(fused.getResult())
     << "[r] = static_cast<float>(sum);\n"
     << "    }\n"
     << "  });\n";
}

LogicalResult FunctionEmitter::emitLinear(LinearOp linear) {
  Operation *op = linear;
  ArrayRef<int64_t> x = shapeOf(linear.getInput());
  int64_t k = x.back(), n = shapeOf(linear.getWeight())[0];
  // A constant weight is a sched.packed_product (modelc-fold-cpu-products).
  os << "  modelc_cpu::linear(ctx, " << in(op, 0) << ", " << in(op, 1) << ", "
     << nullable(linear.getBias()) << ", " << out(op) << ", "
     << runExtent(linear.getInput(), 0, x.size() - 1) << ", " << n << ", " << k
     << ");\n";
  return success();
}

LogicalResult
FunctionEmitter::emitPackedProduct(sched::PackedProductOp packed) {
  Operation *prod = packed.getProduct();
  Value x = prod->getOperand(0), w = prod->getOperand(1), bias;
  std::string kind = "MODELC_PRODUCT_MATMUL", conv = "{0}";
  int64_t m = 0, n = 0, k = 0, transW = 0;
  if (auto c = dyn_cast<Conv2dOp>(prod)) {
    ArrayRef<int64_t> xs = shapeOf(c.getInput()), ws = shapeOf(c.getWeight()),
                      ys = shapeOf(c.getResult());
    ArrayRef<int64_t> s = c.getStrides(), p = c.getPadding(),
                      d = c.getDilations();
    SmallVector<int64_t> shape = {
        xs[0], xs[1], xs[2], xs[3], ws[0], ws[2],
        ws[3], ys[2], ys[3], s[0],  s[1],  p[0],
        p[1],  p[2],  p[3],  d[0],  d[1],  static_cast<int64_t>(c.getGroups())};
    kind = "MODELC_PRODUCT_CONV2D";
    conv = "{" + list(shape) + "}";
    bias = c.getBias();
  } else {
    // Every product's x is row-major [..., K]: m rows of the result.
    ArrayRef<int64_t> ys = shapeOf(prod->getResult(0));
    n = ys.back();
    m = product(ys) / std::max<int64_t>(n, 1);
    k = shapeOf(x).back();
    if (auto linear = dyn_cast<LinearOp>(prod)) {
      transW = 1;
      bias = linear.getBias();
    } else if (auto gemm = dyn_cast<GemmOp>(prod)) {
      transW = gemm.getTransposeB();
      bias = gemm.getC();
    }
  }
  bool isConv = isa<Conv2dOp>(prod);
  std::string postOps = newGlobal("post_ops_"), desc = newGlobal("product_");
  SmallVector<std::string> operands;
  globals << "const modelc_post_op " << postOps << "[] = {";
  Value chain = prod->getResult(0);
  // A convolution chain in oneDNN's layout (modelc-keep-cpu-layouts): this
  // call keeps its output's layout, or reads the one its producer kept, as
  // its input or its sum's operand.
  auto keptBy = [&](Value v) -> std::optional<unsigned> {
    auto producer = v.getDefiningOp<sched::PackedProductOp>();
    if (!producer || !producer.getKeepLayout())
      return std::nullopt;
    return productSites.lookup(producer);
  };
  SmallVector<std::string> flags;
  std::optional<unsigned> srcSite = keptBy(x), sumSite;
  uint64_t yBytes = 0;
  if (packed.getKeepLayout()) {
    flags.push_back("MODELC_PRODUCT_KEEP_LAYOUT");
    yBytes =
        packed->getAttrOfType<sched::BufferAttr>("sched.buffer").getBytes();
  }
  if (srcSite)
    flags.push_back("MODELC_PRODUCT_SRC_OF_SITE");
  if (packed.getWinograd())
    flags.push_back("MODELC_PRODUCT_WINOGRAD");
  Type element = tensorType(prod->getResult(0)).getElementType();
  if (packed.getOutputCast())
    flags.push_back("MODELC_PRODUCT_Y_F32");
  if (element.isF16())
    flags.push_back("MODELC_PRODUCT_F16");
  else if (element.isBF16())
    flags.push_back("MODELC_PRODUCT_BF16");
  for (Operation *op : packed.getPostOps()) {
    sched::CpuPostOp post = *sched::cpuPostOp(op, chain, isConv);
    if (post.isSum() && (sumSite = keptBy(post.operand)))
      flags.push_back("MODELC_PRODUCT_SUM_OF_SITE");
    globals << "{" << post.kind << ", " << post.alg << ", "
            << floatLiteral(post.alpha) << ", "
            << (post.operand ? post.broadcast : "0") << "}, ";
    operands.push_back(post.operand ? name(post.operand) : "nullptr");
    chain = op->getResult(0);
  }
  if (operands.empty())
    globals << "{0, 0, 0.0f, 0}";
  std::string what = graph::describeOp(prod);
  unsigned site = globalCounter++;
  productSites[packed] = site;
  globals << "};\nconst modelc_product " << desc << " = {" << site << ", "
          << kind << ", " << transW << ", " << m << ", " << n << ", " << k
          << ", " << conv << ", "
          << (flags.empty() ? "0" : llvm::join(flags, " | ")) << ", "
          << srcSite.value_or(0) << ", " << sumSite.value_or(0) << ", "
          << yBytes << "ULL, " << operands.size() << ", " << postOps << ", \""
          << what << "\"};\n";
  std::string operandArray = "nullptr";
  if (!operands.empty()) {
    operandArray = newGlobal("operands_");
    os << "  const void *" << operandArray << "[] = {"
       << llvm::join(operands, ", ") << "};\n";
  }
  if (isDynamic(x)) {
    // The rows of this run (docs/dynamic.md): the runtime keeps a
    // primitive per size and shares the packed weight between them.
    std::string local = newGlobal("product_rows_");
    os << "  modelc_product " << local << " = " << desc << ";\n";
    if (isConv)
      os << "  " << local << ".conv[0] = " << sized(shapeOf(x)[0], x) << ";\n";
    else
      os << "  " << local << ".m = " << runExtent(x, 0, shapeOf(x).size() - 1)
         << ";\n";
    desc = local;
  }
  os << "  ctx->api->product(ctx, &" << desc << ", " << name(x) << ", "
     << name(w) << ", " << nullable(bias) << ", " << name(packed.getResult())
     << ", " << operandArray << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitMatmul(MatmulOp matmul) {
  Operation *op = matmul;
  ArrayRef<int64_t> a = shapeOf(matmul.getLhs()), b = shapeOf(matmul.getRhs());
  ArrayRef<int64_t> y = shapeOf(matmul.getResult());
  ArrayRef<int64_t> batch = y.drop_back(2);
  // Batch strides count whole matrices.
  auto batchStrides = [&](ArrayRef<int64_t> operand) {
    return broadcastStrides(operand.drop_back(2), batch);
  };
  // Integers: a loop that wraps around on overflow (BLAS is for floats);
  // f64 the same loop in double.
  Type element = tensorType(matmul.getLhs()).getElementType();
  bool integers = !isa<FloatType>(element) || element.isF64();
  // A dynamic dimension 0 is the first batch dimension, or the rows.
  std::string rows, batchDims;
  std::string n = std::to_string(b.back()), k = std::to_string(a.back());
  std::string stridesA, stridesB;
  if (hasInnerDynamic(matmul.getResult()) || hasInnerDynamic(matmul.getLhs()) ||
      hasInnerDynamic(matmul.getRhs())) {
    // Every size at the run's (batch strides count whole matrices).
    Value lhs = matmul.getLhs(), rhs = matmul.getRhs(), y = matmul.getResult();
    rows = runExtent(lhs, a.size() - 2, a.size() - 1);
    k = runExtent(lhs, a.size() - 1, a.size());
    n = runExtent(rhs, b.size() - 1, b.size());
    batchDims = runArray(y, 0, batch.size());
    stridesA =
        runBroadcastStrides(ArrayRef(symShape(lhs)).drop_back(2), batch.size());
    stridesB =
        runBroadcastStrides(ArrayRef(symShape(rhs)).drop_back(2), batch.size());
  } else {
    rows = batch.empty() ? sized(a[a.size() - 2], matmul.getResult())
                         : std::to_string(a[a.size() - 2]);
    batchDims = leadingArray(batch, matmul.getResult());
    stridesA = staticArray(batchStrides(a));
    stridesB = staticArray(batchStrides(b));
  }
  if (isHalf(element)) {
    // One batch at a time through f32 scratch (cpuScratchBytes).
    os << "  modelc_cpu::matmul_half<" << storageOf(op) << ">(ctx, "
       << in(op, 0) << ", " << in(op, 1) << ", " << out(op) << ", " << rows
       << ", " << n << ", " << k << ", " << batch.size() << ", " << batchDims
       << ", " << stridesA << ", " << stridesB
       << ", reinterpret_cast<float *>(arena + " << matmulScratch.lookup(op)
       << "));\n";
    return success();
  }
  os << "  modelc_cpu::" << (integers ? "int_matmul" : "matmul") << "(ctx, "
     << in(op, 0) << ", " << in(op, 1) << ", " << out(op) << ", " << rows
     << ", " << n << ", " << k << ", " << batch.size() << ", " << batchDims
     << ", " << stridesA << ", " << stridesB << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitStridedMatmul(sched::GemmOp gemm) {
  auto matmul = dyn_cast<MatmulOp>(gemm.getProduct());
  if (!matmul || gemm.getRelu() || gemm.getAlpha().convertToDouble() != 1.0 ||
      gemm.getBeta().convertToDouble() != 0.0 ||
      !tensorType(matmul.getResult()).getElementType().isF32())
    return gemm.emitError("the CPU backend computes a sched.gemm only as an "
                          "f32 matmul with strided operands");
  ArrayRef<int64_t> a = shapeOf(matmul.getLhs()), b = shapeOf(matmul.getRhs());
  ArrayRef<int64_t> batch = shapeOf(matmul.getResult()).drop_back(2);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  // Each operand is one matrix or one per output matrix (the fold checks).
  std::optional<int64_t> sa = uniformBatchStride(a, batch),
                         sb = uniformBatchStride(b, batch);
  if (!sa || !sb)
    return gemm.emitError("an operand is broadcast over only some batch "
                          "dimensions");
  struct Operand {
    std::string pointer;
    int64_t ld, stride;
    bool transposed;
  };
  auto operand = [&](unsigned index, Value v, int64_t ld,
                     int64_t stride) -> Operand {
    std::optional<sched::StridedViewAttr> view =
        index == 0 ? gemm.getLhsView() : gemm.getRhsView();
    if (!view)
      return {name(v), ld, stride, false};
    return {"(" + name(gemm.getViewBase(index)) + " + " +
                std::to_string(view->getOffset()) + ")",
            view->getLd(), view->getBatchStride(), view->getTransposed()};
  };
  Operand lhs = operand(0, matmul.getLhs(), k, *sa);
  Operand rhs = operand(1, matmul.getRhs(), n, *sb);
  os << "  // sched.gemm: " << graph::describeOp(matmul.getOperation())
     << ", operands read in place\n"
     << "  modelc_cpu::strided_matmul(ctx, " << lhs.pointer << ", "
     << lhs.transposed << ", " << lhs.ld << ", " << lhs.stride << ", "
     << rhs.pointer << ", " << rhs.transposed << ", " << rhs.ld << ", "
     << rhs.stride << ", " << out(gemm) << ", "
     << (batch.empty() ? sized(m, gemm.getResult()) : std::to_string(m)) << ", "
     << n << ", " << k << ", "
     << (batch.empty() ? std::to_string(product(batch))
                       : sized(product(batch), gemm.getResult()))
     << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitGemm(GemmOp gemm) {
  Operation *op = gemm;
  ArrayRef<int64_t> y = shapeOf(gemm.getResult());
  bool ta = gemm.getTransposeA(), tb = gemm.getTransposeB();
  int64_t k = shapeOf(gemm.getA())[ta ? 0 : 1];
  int64_t cols = 1;
  std::string rows = "1";
  if (Value c = gemm.getC()) {
    ArrayRef<int64_t> cs = shapeOf(c);
    if (cs.size() == 2) {
      rows = sized(cs[0], c);
      cols = cs[1];
    } else if (cs.size() == 1) {
      cols = cs[0];
    }
  }
  // A dynamic dimension 0: the rows of A (not transposed) and of C.
  std::string m = sized(y[0], gemm.getResult());
  double alpha = gemm.getAlpha().convertToDouble(),
         beta = gemm.getBeta().convertToDouble();
  Type element = tensorType(gemm.getA()).getElementType();
  if (!isa<FloatType>(element) || element.isF64()) {
    // Integers: whole alpha and beta (the verifier checks); f64 in double.
    auto scalar = [&](double v) {
      return element.isF64() ? literalOf(element, v)
                             : std::to_string(static_cast<int64_t>(v)) + "LL";
    };
    os << "  modelc_cpu::int_gemm<" << typeName(gemm.getA()) << ">(ctx, "
       << in(op, 0) << ", " << in(op, 1) << ", " << nullable(gemm.getC())
       << ", " << out(op) << ", " << m << ", " << y[1] << ", " << k << ", "
       << ta << ", " << tb << ", " << scalar(alpha) << ", " << scalar(beta)
       << ", " << rows << ", " << cols << ");\n";
    return success();
  }
  os << "  modelc_cpu::gemm(ctx, " << in(op, 0) << ", " << in(op, 1) << ", "
     << nullable(gemm.getC()) << ", " << out(op) << ", " << m << ", " << y[1]
     << ", " << k << ", " << ta << ", " << tb << ", " << floatLiteral(alpha)
     << ", " << floatLiteral(beta) << ", " << rows << ", " << cols << ");\n";
  return success();
}

template <typename OpTy>
LogicalResult FunctionEmitter::emitSoftmax(OpTy softmax) {
  Operation *op = softmax;
  ArrayRef<int64_t> x = shapeOf(softmax.getInput());
  int64_t axis = softmax.getNormalizedAxis();
  os << "  modelc_cpu::softmax<" << storageOf(op) << ">(ctx, " << in(op, 0)
     << ", " << out(op) << ", " << runExtent(softmax.getInput(), 0, axis)
     << ", " << runExtent(softmax.getInput(), axis, axis + 1) << ", "
     << runExtent(softmax.getInput(), axis + 1, x.size()) << ", "
     << (isa<LogSoftmaxOp>(op) ? "true" : "false") << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitLayerNorm(LayerNormOp norm) {
  Operation *op = norm;
  ArrayRef<int64_t> x = shapeOf(norm.getInput());
  int64_t axis = norm.getNormalizedAxis();
  os << "  modelc_cpu::layer_norm<" << storageOf(op) << ">(ctx, " << in(op, 0)
     << ", " << nullable(norm.getScale()) << ", " << nullable(norm.getBias())
     << ", " << out(op) << ", " << runExtent(norm.getInput(), 0, axis) << ", "
     << product(x.drop_front(axis)) << ", "
     << floatLiteral(norm.getEpsilon().convertToDouble()) << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitBatchNorm(BatchNormOp norm) {
  Operation *op = norm;
  ArrayRef<int64_t> x = shapeOf(norm.getInput());
  os << "  modelc_cpu::batch_norm<" << storageOf(op) << ">(ctx, " << in(op, 0)
     << ", " << in(op, 1) << ", " << in(op, 2) << ", " << in(op, 3) << ", "
     << in(op, 4) << ", " << out(op) << ", " << sized(x[0], norm.getInput())
     << ", " << x[1] << ", " << product(x.drop_front(2)) << ", "
     << floatLiteral(norm.getEpsilon().convertToDouble()) << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitDnnlConv(Operation *op, const char *kind,
                                            Value a, Value b, Value bias) {
  std::optional<std::array<int64_t, 18>> shape = sched::dnnlConvShape(op);
  if (!shape)
    return op->emitError("internal error: 'sched.dnnl_conv' on a convolution "
                         "oneDNN cannot describe");
  // modelc_conv holds the sizes: not those of a run.
  if (touchesDynamic(op))
    return op->emitError("'sched.dnnl_conv' on a convolution of sizes known "
                         "at run time is not supported yet");
  auto algorithm = op->getAttrOfType<StringAttr>(sched::kDnnlConvAttrName);
  std::string desc = newGlobal("conv_");
  globals << "const modelc_conv " << desc << " = {" << kind << ", "
          << (algorithm.getValue() == "winograd" ? "MODELC_CONV_WINOGRAD" : "0")
          << ", {" << list(*shape) << "}, " << cString(graph::describeOp(op))
          << "};\n";
  os << "  ctx->api->conv(ctx, &" << desc << ", " << name(a) << ", " << name(b)
     << ", " << nullable(bias) << ", " << out(op) << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitConv2d(Conv2dOp conv) {
  Operation *op = conv;
  if (usesDnnlConv(op))
    return emitDnnlConv(op, "MODELC_CONV_FORWARD", conv.getInput(),
                        conv.getWeight(), conv.getBias());
  ArrayRef<int64_t> w = shapeOf(conv.getWeight());
  ArrayRef<int64_t> y = shapeOf(conv.getResult());
  ArrayRef<int64_t> s = conv.getStrides(), p = conv.getPadding(),
                    d = conv.getDilations();
  // A constant weight is a sched.packed_product (modelc-fold-cpu-products).
  std::string scratch = im2colOffsets.count(op)
                            ? "reinterpret_cast<float *>(arena + " +
                                  std::to_string(im2colOffsets.lookup(op)) + ")"
                            : "nullptr";
  os << "  modelc_cpu::conv2d(ctx, " << in(op, 0) << ", " << in(op, 1) << ", "
     << nullable(conv.getBias()) << ", " << out(op)
     << ", modelc_cpu::Conv2dShape{" << shapeList(conv.getInput()) << ", "
     << w[0] << ", " << w[2] << ", " << w[3] << ", " << y[2] << ", " << y[3]
     << ", " << s[0] << ", " << s[1] << ", " << p[0] << ", " << p[1] << ", "
     << d[0] << ", " << d[1] << ", " << conv.getGroups() << "}, " << scratch
     << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitConvTranspose2d(ConvTranspose2dOp conv) {
  Operation *op = conv;
  if (usesDnnlConv(op))
    return emitDnnlConv(op, "MODELC_CONV_BACKWARD_DATA", conv.getInput(),
                        conv.getWeight(), Value());
  ArrayRef<int64_t> w = shapeOf(conv.getWeight());
  ArrayRef<int64_t> y = shapeOf(conv.getResult());
  ArrayRef<int64_t> s = conv.getStrides(), p = conv.getPadding(),
                    d = conv.getDilations();
  bool gemm = transposedConvUsesGemm(conv);
  os << "  modelc_cpu::conv_transpose2d" << (gemm ? "_gemm" : "") << "(ctx, "
     << in(op, 0) << ", " << in(op, 1) << ", " << nullable(conv.getBias())
     << ", " << out(op) << ", modelc_cpu::ConvTranspose2dShape{"
     << shapeList(conv.getInput()) << ", " << y[1] << ", " << w[2] << ", "
     << w[3] << ", " << y[2] << ", " << y[3] << ", " << s[0] << ", " << s[1]
     << ", " << p[0] << ", " << p[1] << ", " << d[0] << ", " << d[1] << ", "
     << conv.getGroups() << "}";
  if (gemm)
    os << ", reinterpret_cast<float *>(arena + " << im2colOffsets.lookup(op)
       << ")";
  os << ");\n";
  return success();
}

template <typename OpTy> LogicalResult FunctionEmitter::emitPool(OpTy pool) {
  Operation *op = pool;
  ArrayRef<int64_t> y = shapeOf(pool.getResult());
  ArrayRef<int64_t> k = pool.getKernel();
  ArrayRef<int64_t> s = pool.getNormalizedStrides();
  ArrayRef<int64_t> p = pool.getPadding();
  std::string shape = "modelc_cpu::Pool2dShape{" + shapeList(pool.getInput()) +
                      ", " + std::to_string(y[2]) + ", " +
                      std::to_string(y[3]) + ", " + list(k) + ", " + list(s) +
                      ", " + list(p) + "}";
  if constexpr (std::is_same_v<decltype(pool), MaxPool2dOp>)
    os << "  modelc_cpu::max_pool2d<" << storageOf(op) << ">(ctx, " << in(op, 0)
       << ", " << out(op) << ", " << shape << ");\n";
  else
    os << "  modelc_cpu::avg_pool2d<" << storageOf(op) << ">(ctx, " << in(op, 0)
       << ", " << out(op) << ", " << shape << ", "
       << (pool.getCountIncludePad() ? "true" : "false") << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitConvWeightGrad(Conv2dWeightGradOp grad) {
  Operation *op = grad;
  if (usesDnnlConv(op))
    return emitDnnlConv(op, "MODELC_CONV_BACKWARD_WEIGHTS", grad.getInput(),
                        grad.getGrad(), Value());
  ArrayRef<int64_t> x = shapeOf(grad.getInput());
  ArrayRef<int64_t> g = shapeOf(grad.getGrad());
  ArrayRef<int64_t> k = grad.getKernel(), s = grad.getStrides(),
                    p = grad.getPadding(), d = grad.getDilations();
  std::string scratch = im2colOffsets.count(op)
                            ? "reinterpret_cast<float *>(arena + " +
                                  std::to_string(im2colOffsets.lookup(op)) + ")"
                            : "nullptr";
  os << "  modelc_cpu::conv2d_weight_grad(ctx, " << in(op, 0) << ", "
     << in(op, 1) << ", " << out(op) << ", modelc_cpu::Conv2dShape{" << list(x)
     << ", " << g[1] << ", " << k[0] << ", " << k[1] << ", " << g[2] << ", "
     << g[3] << ", " << s[0] << ", " << s[1] << ", " << p[0] << ", " << p[1]
     << ", " << d[0] << ", " << d[1] << ", " << grad.getGroups() << "}, "
     << scratch << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitMaxPoolGrad(MaxPool2dGradOp grad) {
  Operation *op = grad;
  ArrayRef<int64_t> x = shapeOf(grad.getInput());
  ArrayRef<int64_t> g = shapeOf(grad.getGrad());
  std::string shape =
      "modelc_cpu::Pool2dShape{" + list(x) + ", " + std::to_string(g[2]) +
      ", " + std::to_string(g[3]) + ", " + list(grad.getKernel()) + ", " +
      list(grad.getStrides()) + ", " + list(grad.getPadding()) + "}";
  os << "  modelc_cpu::max_pool2d_grad<" << storageOf(op) << ">(ctx, "
     << in(op, 0) << ", " << in(op, 1) << ", " << out(op) << ", " << shape
     << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitGlobalAvgPool(GlobalAvgPoolOp pool) {
  Operation *op = pool;
  ArrayRef<int64_t> x = shapeOf(pool.getInput());
  // The output of a convolution that kept oneDNN's layout (the Sched
  // verifier: a static f32 NCHW input on its device): the runtime pools it
  // in that layout.
  auto producer = pool.getInput().getDefiningOp<sched::PackedProductOp>();
  if (producer && producer.getKeepLayout()) {
    std::string desc = newGlobal("kept_pool_");
    unsigned site = globalCounter++;
    globals << "const modelc_kept_pool " << desc << " = {" << site << ", "
            << productSites.lookup(producer) << ", " << list(x) << ", \""
            << graph::describeOp(op) << "\"};\n";
    if (isDynamic(pool.getInput())) {
      // The batch of this run, as the convolution's call has it (a packed
      // convolution's only dynamic dimension).
      std::string local = newGlobal("kept_pool_rows_");
      os << "  modelc_kept_pool " << local << " = " << desc << ";\n";
      os << "  " << local << ".n = " << sized(x[0], pool.getInput()) << ";\n";
      desc = local;
    }
    os << "  ctx->api->kept_pool(ctx, &" << desc << ", " << in(op, 0) << ", "
       << out(op) << ");\n";
    return success();
  }
  os << "  modelc_cpu::global_avg_pool<" << storageOf(op) << ">(ctx, "
     << in(op, 0) << ", " << out(op) << ", "
     << sized(x[0] * x[1], pool.getInput()) << ", " << product(x.drop_front(2))
     << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitTranspose(TransposeOp transpose) {
  Operation *op = transpose;
  ArrayRef<int64_t> x = shapeOf(transpose.getInput());
  ArrayRef<int64_t> y = shapeOf(transpose.getResult());
  SmallVector<int64_t> inStrides = stridesOf(x), strides;
  for (int64_t p : transpose.getPerm())
    strides.push_back(inStrides[p]);
  // (Before the call's text: a dynamic shape is a local array.)
  std::string dims = runArray(transpose.getResult(), 0, y.size());
  std::string stridesArray = staticArray(strides);
  if (hasInnerDynamic(transpose.getInput())) {
    // The input's strides at the run's sizes, permuted.
    SmallVector<std::string> run;
    for (int64_t p : transpose.getPerm())
      run.push_back(runExtent(transpose.getInput(), p + 1, x.size()));
    stridesArray = localArray(run);
  }
  os << "  modelc_cpu::transpose<" << typeName(transpose.getInput())
     << ">(ctx, " << in(op, 0) << ", " << out(op) << ", " << y.size() << ", "
     << dims << ", " << stridesArray << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitConcat(ConcatOp concat) {
  Operation *op = concat;
  ArrayRef<int64_t> y = shapeOf(concat.getResult());
  int64_t axis = concat.getNormalizedAxis();
  std::string outer = runExtent(concat.getResult(), 0, axis);
  std::string yInner = runExtent(concat.getResult(), axis, y.size());
  std::string offset = "0";
  for (Value input : concat.getInputs()) {
    std::string xInner = runExtent(input, axis, y.size());
    os << "  modelc_cpu::copy_columns<" << typeName(input) << ">(ctx, "
       << name(input) << ", " << out(op) << ", " << outer << ", " << xInner
       << ", " << yInner << ", " << offset << ");\n";
    int64_t a, b;
    offset = !StringRef(offset).getAsInteger(10, a) &&
                     !StringRef(xInner).getAsInteger(10, b)
                 ? std::to_string(a + b)
                 : "(" + offset + " + " + xInner + ")";
  }
  return success();
}

LogicalResult FunctionEmitter::emitSlice(SliceOp slice) {
  Operation *op = slice;
  ArrayRef<int64_t> x = shapeOf(slice.getInput());
  ArrayRef<int64_t> y = shapeOf(slice.getResult());
  NormalizedSlice window = slice.getNormalizedSlice();
  ArrayRef<int64_t> starts = window.starts, steps = window.steps;
  std::string dims = runArray(slice.getResult(), 0, y.size());
  std::string strides =
      hasInnerDynamic(slice.getInput())
          ? runBroadcastStrides(symShape(slice.getInput()), x.size())
          : staticArray(stridesOf(x));
  os << "  modelc_cpu::slice<" << typeName(slice.getInput()) << ">(ctx, "
     << in(op, 0) << ", " << out(op) << ", " << y.size() << ", " << dims << ", "
     << strides << ", " << staticArray(starts) << ", " << staticArray(steps)
     << ");\n";
  return success();
}

std::string FunctionEmitter::viewOf(Operation *op, const std::string &base) {
  auto part = dyn_cast<BatchPartOp>(op);
  if (auto slice = dyn_cast<SliceOp>(op);
      slice && hasInnerDynamic(slice.getInput())) {
    // A contiguous window of a value with dimensions beyond axis 0: its
    // start at the run's strides.
    NormalizedSlice window = slice.getNormalizedSlice();
    size_t rank = shapeOf(slice.getInput()).size();
    std::string offset;
    for (size_t d = 0; d < rank; ++d)
      if (window.starts[d])
        offset += (offset.empty() ? "" : " + ") +
                  std::to_string(window.starts[d]) + " * " +
                  runExtent(slice.getInput(), d + 1, rank);
    return offset.empty() ? base : "(" + base + " + " + offset + ")";
  }
  if (!part) {
    int64_t offset = *getViewOffset(op);
    return offset ? "(" + base + " + " + std::to_string(offset) + ")" : base;
  }
  // A replica's rows of the input: from the first of its part of the
  // run's rows (graph::partOffset), row after row.
  Value x = part.getInput();
  int64_t index = part.getPart(), parts = part.getParts();
  if (index == 0)
    return base;
  std::string rows = runExtent(x, 0, 1), first;
  if (int64_t n; !StringRef(rows).getAsInteger(10, n))
    first = std::to_string(graph::partOffset(n, index, parts));
  else
    first = "(" + std::to_string(index) + " * (" + rows + " / " +
            std::to_string(parts) + ") + std::min<int64_t>(" +
            std::to_string(index) + ", " + rows + " % " +
            std::to_string(parts) + "))";
  if (first == "0")
    return base;
  return "(" + base + " + " + first + " * " +
         runExtent(x, 1, shapeOf(x).size()) + ")";
}

LogicalResult FunctionEmitter::emitGather(GatherOp gather) {
  Operation *op = gather;
  ArrayRef<int64_t> data = shapeOf(gather.getData());
  int64_t axis = gather.getNormalizedAxis();
  os << "  if (modelc_cpu::gather<" << typeName(gather.getData()) << ", "
     << typeName(gather.getIndices()) << ">(ctx, " << in(op, 0) << ", "
     << in(op, 1) << ", " << out(op) << ", "
     << runExtent(gather.getData(), 0, axis) << ", " << data[axis] << ", "
     << runExtent(gather.getData(), axis + 1, data.size()) << ", "
     << runExtent(gather.getIndices(), 0, shapeOf(gather.getIndices()).size())
     << ", " << cString(describeOp(op)) << "))\n    return 1;\n";
  return success();
}

LogicalResult FunctionEmitter::emitScatterNd(ScatterNdOp scatter) {
  Operation *op = scatter;
  ArrayRef<int64_t> data = shapeOf(scatter.getData());
  int64_t k = scatter.getIndexLength();
  SmallVector<int64_t> strides = stridesOf(data);
  auto list = [](ArrayRef<int64_t> values) {
    std::string s;
    for (int64_t v : values)
      s += (s.empty() ? "" : ", ") + std::to_string(v) + "LL";
    return s;
  };
  // f16/bf16 arrive converted to f32 (the kernel table's InF32).
  std::string type = isHalf(scatter.getData().getType().getElementType())
                         ? "float"
                         : typeName(scatter.getResult());
  os << "  {\n    const int64_t dims[] = {" << list(data.take_front(k))
     << "};\n    const int64_t strides[] = {"
     << list(ArrayRef<int64_t>(strides).take_front(k))
     << "};\n    if (modelc_cpu::scatter_nd<"
     << static_cast<int>(scatter.getReduction()) << ", " << type << ", "
     << typeName(scatter.getIndices()) << ">(ctx, " << in(op, 0) << ", "
     << in(op, 1) << ", " << in(op, 2) << ", " << out(op) << ", dims, strides, "
     << k << ", " << scatter.getNumRows() << ", " << scatter.getSliceElements()
     << ", " << tensorType(scatter.getResult()).getNumElements() << ", "
     << cString(describeOp(op)) << "))\n      return 1;\n  }\n";
  return success();
}

LogicalResult FunctionEmitter::emitDropout(DropoutOp dropout) {
  Operation *op = dropout;
  if (!dropout.getStep())
    return dropout.emitError("a graph.dropout without its step (eval mode) "
                             "is a view of its input, not a kernel");
  os << "  modelc_cpu::dropout<" << storageOf(op) << ">(ctx, " << in(op, 0)
     << ", " << in(op, 1) << ", " << out(op) << ", "
     << tensorType(dropout.getResult()).getNumElements() << ", "
     << floatLiteral(dropout.getRatio().convertToDouble()) << ", "
     << static_cast<uint64_t>(dropout.getSeed()) << "ULL, " << dropout.getSite()
     << "u, " << static_cast<int64_t>(dropout.getOffset()) << "LL";
  // Rank r of a distributed run draws its rows' masks in the whole batch.
  if (int64_t stride = dropout.getRankStrideAttr().getInt())
    os << " + ctx->rank * " << stride << "LL";
  os << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitAllReduce(AllReduceOp reduce) {
  // The runtime's backend sums over the ranks (a copy with one rank).
  Operation *op = reduce;
  os << "  if (ctx->api->all_reduce(ctx, static_cast<const float *>("
     << in(op, 0) << "), static_cast<float *>(" << out(op) << "), "
     << tensorType(reduce.getResult()).getNumElements() << "LL, "
     << cString(describeOp(op)) << "))\n    return 1;\n";
  return success();
}

LogicalResult FunctionEmitter::checkShardGuards() {
  auto module = function->getParentOfType<ModuleOp>();
  auto shardOfWeight = [&](StringRef name) -> std::optional<int64_t> {
    auto weight = module.lookupSymbol<WeightOp>(name);
    if (IntegerAttr shard = weight ? weight.getShardAttr() : IntegerAttr())
      return shard.getInt();
    return std::nullopt;
  };
  auto guard = [](Operation *op) -> std::optional<int64_t> {
    if (auto s = op->getAttrOfType<IntegerAttr>(GraphDialect::kShardAttrName))
      return s.getInt();
    return std::nullopt;
  };
  for (Operation &op : function.getBody().front()) {
    if (guard(&op) && plan.multiDevice)
      return op.emitError("ops of one rank's shard of the optimizer state "
                          "(graph.shard) in plan '")
             << plan.name
             << "', of several devices: not supported yet (the CPU plan "
                "alone)";
    std::optional<int64_t> touched;
    if (auto ref = dyn_cast<WeightRefOp>(&op))
      touched = shardOfWeight(ref.getName());
    else if (auto assign = dyn_cast<AssignOp>(&op))
      touched = shardOfWeight(assign.getName());
    else if (auto writes = op.getAttrOfType<FlatSymbolRefAttr>(
                 sched::kWritesWeightAttrName))
      touched = shardOfWeight(writes.getValue());
    if (!touched)
      continue;
    // The op itself, and every op of the body that reads the state,
    // through views and inside the ops that wrap others (a fused loop).
    SmallVector<Operation *> mustGuard = {&op};
    SmallVector<Value> reads;
    if (isa<WeightRefOp>(op))
      reads.push_back(op.getResult(0));
    Block &body = function.getBody().front();
    while (!reads.empty()) {
      Value value = reads.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        auto assign = dyn_cast<AssignOp>(use.getOwner());
        if (assign && use.getOperandNumber() != 0)
          continue; // `after` orders the write, reads nothing
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        if (!user)
          continue;
        mustGuard.push_back(user);
        if (user == use.getOwner() && isAlias(user))
          reads.push_back(user->getResult(0));
      }
    }
    for (Operation *user : mustGuard)
      if (guard(user) != touched)
        return user->emitError("internal error: this op touches optimizer "
                               "state that only the owner of shard ")
               << *touched
               << " holds but does not run on that rank alone (graph.shard)";
  }
  return success();
}

LogicalResult FunctionEmitter::emitOwnerBroadcast(OwnerBroadcastOp broadcast) {
  // The owner's value, from the rank that ran the guarded update
  // (modelc-shard-optimizer-state); a copy with one rank.
  Operation *op = broadcast;
  os << "  if (ctx->api->owner_broadcast(ctx, " << in(op, 0) << ", " << out(op)
     << ", " << valueBytes(broadcast.getResult()) << "ULL, "
     << broadcast.getShardAttr().getInt() << "u, " << cString(describeOp(op))
     << "))\n    return 1;\n";
  return success();
}

LogicalResult
FunctionEmitter::emitAllReduceStart(sched::AllReduceStartOp start) {
  // The runtime's communication thread sums while the ops up to the wait
  // run (modelc-overlap-all-reduce). Its own trace point times the sum.
  // Errors name it as the all-reduce it is.
  Operation *op = start;
  std::string what = "graph.all_reduce" + graph::describeLocation(op->getLoc());
  plan.tracePoints->push_back({what, 0, -1.0});
  auto point = static_cast<unsigned>(plan.tracePoints->size() - 1);
  os << "  if (ctx->api->all_reduce_start(ctx, static_cast<const float *>("
     << in(op, 0) << "), static_cast<float *>(" << out(op) << "), "
     << tensorType(start.getResult()).getNumElements() << "LL, "
     << start.getSlot() << "u, " << point << "u, " << cString(what)
     << "))\n    return 1;\n";
  return success();
}

LogicalResult FunctionEmitter::emitAllReduceWait(sched::AllReduceWaitOp wait) {
  // The result is the start's buffer (declared as its alias).
  os << "  if (ctx->api->all_reduce_wait(ctx, " << wait.getStart().getSlot()
     << "u))\n    return 1;\n";
  return success();
}

LogicalResult FunctionEmitter::emitGatherGrad(GatherGradOp grad) {
  Operation *op = grad;
  ArrayRef<int64_t> dx = shapeOf(grad.getResult());
  int64_t axis = grad.getAxis();
  os << "  modelc_cpu::gather_grad<" << storageOf(op) << ">(ctx, " << in(op, 0)
     << ", " << in(op, 1) << ", " << out(op) << ", "
     << product(dx.take_front(axis)) << ", " << dx[axis] << ", "
     << product(dx.drop_front(axis + 1)) << ", "
     << tensorType(grad.getIndices()).getNumElements() << ");\n";
  return success();
}

template <typename OpTy>
LogicalResult FunctionEmitter::emitReduce(OpTy reduce) {
  Operation *op = reduce;
  ArrayRef<int64_t> x = shapeOf(reduce.getInput());
  SmallVector<int64_t> strides = stridesOf(x);
  llvm::SmallBitVector reduced = reduce.getReducedDims();
  SmallVector<int64_t> keptDims, keptStrides, redDims, redStrides;
  for (size_t d = 0; d < x.size(); ++d) {
    (reduced[d] ? redDims : keptDims).push_back(x[d]);
    (reduced[d] ? redStrides : keptStrides).push_back(strides[d]);
  }
  int kind = isa<ReduceSumOp>(op)    ? 0
             : isa<ReduceMeanOp>(op) ? 1
             : isa<ReduceMaxOp>(op)  ? 2
                                     : 3;
  std::string kept;
  std::string keptStridesArray = staticArray(keptStrides),
              redDimsArray = staticArray(redDims),
              redStridesArray = staticArray(redStrides);
  if (hasInnerDynamic(reduce.getInput())) {
    // Sizes and strides at the run's.
    Value input = reduce.getInput();
    SmallVector<std::string> runKept, runKeptStrides, runRed, runRedStrides;
    for (size_t d = 0; d < x.size(); ++d) {
      (reduced[d] ? runRed : runKept).push_back(runExtent(input, d, d + 1));
      (reduced[d] ? runRedStrides : runKeptStrides)
          .push_back(runExtent(input, d + 1, x.size()));
    }
    kept = localArray(runKept);
    keptStridesArray = localArray(runKeptStrides);
    redDimsArray = localArray(runRed);
    redStridesArray = localArray(runRedStrides);
  } else {
    kept = leadingArray(keptDims, reduce.getInput());
  }
  // f16/bf16 inputs arrive converted to f32 (emitWithConversions).
  os << "  modelc_cpu::reduce<"
     << computeType(tensorType(reduce.getInput()).getElementType()) << ">(ctx, "
     << in(op, 0) << ", " << out(op) << ", " << keptDims.size() << ", " << kept
     << ", " << keptStridesArray << ", " << redDims.size() << ", "
     << redDimsArray << ", " << redStridesArray << ", " << kind << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitCumsum(CumsumOp cumsum) {
  Operation *op = cumsum;
  ArrayRef<int64_t> x = shapeOf(cumsum.getInput());
  int64_t axis = cumsum.getNormalizedAxis();
  // f16/bf16 inputs arrive converted to f32 (emitWithConversions).
  os << "  modelc_cpu::cumsum<"
     << computeType(tensorType(cumsum.getInput()).getElementType()) << ">(ctx, "
     << in(op, 0) << ", " << out(op) << ", "
     << sized(product(x.take_front(axis)), cumsum.getInput()) << ", " << x[axis]
     << ", " << product(x.drop_front(axis + 1)) << ", "
     << (cumsum.getExclusive() ? "true" : "false") << ", "
     << (cumsum.getReverse() ? "true" : "false") << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitCrossEntropy(CrossEntropyOp loss) {
  Operation *op = loss;
  ArrayRef<int64_t> logits = shapeOf(loss.getLogits());
  os << "  if (modelc_cpu::cross_entropy<" << typeName(loss.getTargets())
     << ">(ctx, " << in(op, 0) << ", " << in(op, 1) << ", "
     << nullable(loss.getWeight()) << ", " << out(op) << ", " << logits[0]
     << ", " << logits[1] << ", " << static_cast<int>(loss.getReduction())
     << ", " << static_cast<int64_t>(loss.getIgnoreIndex()) << "LL, "
     << cString(describeOp(op)) << "))\n    return 1;\n";
  return success();
}

std::string FunctionEmitter::weightOnDevice(AssignOp assign, unsigned d) {
  unsigned w = weightIndex.lookup(assign.getName());
  residency.insert({d, w});
  return "ctx->device_weights[" + std::to_string(d) + "][" + std::to_string(w) +
         "]";
}

LogicalResult FunctionEmitter::emitAssign(AssignOp assign) {
  // Written into the weight by the loop that computed it.
  if (Operation *def = assign.getValue().getDefiningOp())
    if (auto weight =
            def->getAttrOfType<FlatSymbolRefAttr>(sched::kWritesWeightAttrName);
        weight && weight.getAttr() == assign.getNameAttr().getAttr()) {
      os << "  // " << assign.getName() << ": written in place\n";
      return success();
    }
  // The weight's writable copy on this device (the runtime made it so for
  // writable weights) receives the new value.
  std::string target =
      plan.multiDevice
          ? weightOnDevice(assign, deviceOf(assign))
          : "ctx->weights[" +
                std::to_string(weightIndex.lookup(assign.getName())) + "]";
  os << "  std::memcpy(const_cast<void *>(" << target << "), "
     << name(assign.getValue()) << ", " << valueBytes(assign.getValue())
     << ");\n";
  return success();
}

const KernelTable<FunctionEmitter> &FunctionEmitter::kernels() {
  using E = FunctionEmitter;
  static const KernelTable<E> table = [] {
    KernelTable<E> t;
    const Compute f32 = Compute::InF32;
    t.add<LinearOp>(&E::emitLinear, floatOperands, f32)
        // f16/bf16: one batch at a time through f32 scratch. Integers of
        // every width accumulate in their type, f64 in double.
        .add<MatmulOp>(&E::emitMatmul)
        .add<GemmOp>(&E::emitGemm, anyTypes, f32)
        // Row kernels read and write f16/bf16 as they are, in f32.
        .add<SoftmaxOp>(&E::emitSoftmax<SoftmaxOp>, floatOperands)
        .add<LogSoftmaxOp>(&E::emitSoftmax<LogSoftmaxOp>, floatOperands)
        .add<LayerNormOp>(&E::emitLayerNorm, floatOperands)
        .add<BatchNormOp>(&E::emitBatchNorm, floatOperands)
        .add<Conv2dOp>(&E::emitConv2d, floatOperands, f32)
        .add<ConvTranspose2dOp>(&E::emitConvTranspose2d, floatOperands, f32)
        .add<MaxPool2dOp>(&E::emitPool<MaxPool2dOp>, floatOperands)
        .add<AvgPool2dOp>(&E::emitPool<AvgPool2dOp>, floatOperands)
        .add<GlobalAvgPoolOp>(&E::emitGlobalAvgPool, floatOperands)
        .add<MaxPool2dGradOp>(&E::emitMaxPoolGrad, floatOperands)
        .add<Conv2dWeightGradOp>(&E::emitConvWeightGrad, floatOperands)
        .add<GatherGradOp>(&E::emitGatherGrad, floatOperands)
        .add<DropoutOp>(&E::emitDropout, floatOperands)
        .add<AllReduceOp>(&E::emitAllReduce, floatOperands)
        .add<OwnerBroadcastOp>(&E::emitOwnerBroadcast)
        .add<sched::AllReduceStartOp>(&E::emitAllReduceStart, floatOperands)
        .add<sched::AllReduceWaitOp>(&E::emitAllReduceWait, floatOperands)
        // Data movement, reductions and cumsum: templates on the C type
        // (every element type; f16/bf16 reductions in f32).
        .add<TransposeOp>(&E::emitTranspose)
        .add<ConcatOp>(&E::emitConcat)
        .add<SliceOp>(&E::emitSlice)
        .add<GatherOp>(&E::emitGather)
        .add<ScatterNdOp>(&E::emitScatterNd, anyTypes, f32)
        .add<ReduceSumOp>(&E::emitReduce<ReduceSumOp>, anyTypes, f32)
        .add<ReduceMeanOp>(&E::emitReduce<ReduceMeanOp>, anyTypes, f32)
        .add<ReduceMaxOp>(&E::emitReduce<ReduceMaxOp>, anyTypes, f32)
        .add<ReduceProdOp>(&E::emitReduce<ReduceProdOp>, anyTypes, f32)
        .add<CumsumOp>(&E::emitCumsum, anyTypes, f32)
        .add<CrossEntropyOp>(&E::emitCrossEntropy, floatOperands, f32)
        .add<AssignOp>(&E::emitAssign);
    return t;
  }();
  return table;
}

LogicalResult FunctionEmitter::emitOp(Operation *op) {
  if (auto fused = dyn_cast<sched::FusedOp>(op)) {
    emitFused(fused);
    return success();
  }
  if (auto fused = dyn_cast<sched::FusedReduceOp>(op)) {
    emitFusedReduce(fused);
    return success();
  }
  if (auto packed = dyn_cast<sched::PackedProductOp>(op)) {
    ++kernelCalls;
    return emitPackedProduct(packed);
  }
  if (auto gemm = dyn_cast<sched::GemmOp>(op)) {
    ++kernelCalls;
    return emitStridedMatmul(gemm);
  }
  if (!kernels().prints(op))
    return op->emitError("the CPU backend does not support '")
           << op->getName() << "' with these operand types yet";
  ++kernelCalls;
  return kernels().lookup(op)->print(op, *this);
}

LogicalResult FunctionEmitter::emitWithConversions(Operation *op) {
  ArrayRef<uint64_t> scratch;
  if (auto it = scratchOffsets.find(op); it != scratchOffsets.end())
    scratch = it->second;
  size_t next = 0;
  if (auto conv = dyn_cast<Conv2dOp>(op);
      conv && !conv.isPointwise() && !usesDnnlConv(op))
    im2colOffsets[op] = scratch[next++];
  if (auto conv = dyn_cast<ConvTranspose2dOp>(op);
      conv && transposedConvUsesGemm(conv))
    im2colOffsets[op] = scratch[next++];
  if (auto grad = dyn_cast<Conv2dWeightGradOp>(op);
      grad && weightGradNeedsColumns(grad) && !usesDnnlConv(op))
    im2colOffsets[op] = scratch[next++];
  if (isHalfMatmul(op))
    matmulScratch[op] = scratch[next++];
  SmallVector<std::pair<Value, std::string>> saved;
  auto f32Copy = [&](Value v) {
    std::string copy = "f" + std::to_string(globalCounter++);
    os << "  float *" << copy << " = reinterpret_cast<float *>(arena + "
       << scratch[next++] << ");\n";
    saved.push_back({v, names[v]});
    return copy;
  };
  auto bf16 = [&](Value v) {
    return tensorType(v).getElementType().isBF16() ? "true" : "false";
  };
  for (Value operand : halfOperands(op)) {
    std::string copy = f32Copy(operand);
    os << "  modelc_cpu::to_f32<" << bf16(operand) << ">(ctx, " << name(operand)
       << ", " << copy << ", "
       << sized(tensorType(operand).getNumElements(), operand) << ");\n";
    names[operand] = copy;
  }
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  std::string resultName = result ? names[result] : "";
  if (hasHalfResult(op))
    names[result] = f32Copy(result);
  if (failed(emitOp(op)))
    return failure();
  if (hasHalfResult(op))
    os << "  modelc_cpu::from_f32<" << bf16(result) << ">(ctx, "
       << names[result] << ", " << resultName << ", "
       << sized(tensorType(result).getNumElements(), result) << ");\n";
  for (auto &[value, original] : saved)
    names[value] = original;
  return success();
}

LogicalResult FunctionEmitter::emit(CpuEmitReport::Entry &report) {
  // Placement (modelc-place) has rejected ops that no device has a kernel
  // for.
  if (!function->hasAttr("sched.arenas"))
    return function.emitError("internal error: '")
           << function.getSymName()
           << "' has no memory plan (run modelc-plan-memory before the "
              "printers)";
  analyze();
  if (brokenDynamic)
    return function.emitError("internal error: the dynamic dimensions of '")
           << function.getSymName()
           << "' do not follow through the back end's IR (a pass after "
              "modelc-check-dynamic-dims broke a shape; the error above)";
  report.name = function.getSymName().str();
  if (failed(checkShardGuards()))
    return failure();
  if (plan.multiDevice) {
    if (failed(emitMultiDevice()))
      return failure();
    report.arenaBytes = arenaBytes;
    report.kernelCalls = kernelCalls;
    report.fusedLoops = fusedLoops;
    report.fusedOps = fusedOps;
    return success();
  }

  // Weight indices follow the module's declaration order.
  for (auto [index, slot] : llvm::enumerate(options.weights))
    weightIndex[slot.name] = index;
  for (auto [index, arg] : llvm::enumerate(function.getArguments())) {
    std::string type = cType(tensorType(arg).getElementType());
    names[arg] = "in" + std::to_string(index);
    declarations[arg] = {
        "  const " + type + " *" + names[arg] + " = static_cast<const " + type +
            " *>(ctx->inputs[" + std::to_string(index) + "]);\n",
        Value()};
  }
  SmallVector<size_t> starts = partStarts();
  if (starts.size() > 1) {
    if (failed(emitParts(starts)))
      return failure();
  } else {
    os << "// Entry point '" << function.getSymName() << "' on the CPU.\n"
       << "int entry_" << plan.symbol << "_" << index
       << "(modelc_run_ctx *ctx) {\n"
       << "  unsigned char *arena = ctx->arena;\n"
       << "  (void)arena;\n";
    for (BlockArgument arg : function.getArguments())
      os << declarations[arg].text;
    for (Operation *op : ops)
      if (failed(emitStatement(op)))
        return failure();
    os << "  return 0;\n}\n\n";
  }
  report.name = function.getSymName().str();
  report.arenaBytes = arenaBytes;
  report.kernelCalls = kernelCalls;
  report.fusedLoops = fusedLoops;
  report.fusedOps = fusedOps;
  return success();
}

void FunctionEmitter::declare(Value v, std::string text, Value from) {
  os << text;
  declarations[v] = {std::move(text), from};
}

LogicalResult FunctionEmitter::emitStatement(Operation *op) {
  if (failed(checkDynamicSupported(op)))
    return failure();
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      RankedTensorType type = tensorType(value);
      os << "  std::memcpy(ctx->outputs[" << index << "], " << name(value)
         << ", "
         << sized(type.getNumElements() * elementBytes(type.getElementType()),
                  value)
         << ");\n";
    }
    return success();
  }
  if (op->getNumResults() == 1) {
    Value result = op->getResult(0);
    std::string type = cType(tensorType(result).getElementType());
    names[result] = "v" + std::to_string(valueCounter++);
    if (auto ref = dyn_cast<WeightRefOp>(op)) {
      declare(result, "  const " + type + " *" + names[result] +
                          " = static_cast<const " + type + " *>(ctx->weights[" +
                          std::to_string(weightIndex.lookup(ref.getName())) +
                          "]);\n");
      return success();
    }
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      emitConstant(constant);
      return success();
    }
    if (auto weight = op->getAttrOfType<FlatSymbolRefAttr>(
            sched::kWritesWeightAttrName)) {
      // The new value goes straight into the weight's writable copy
      // (modelc-update-weights-in-place).
      declare(result,
              "  " + type + " *" + names[result] + " = static_cast<" + type +
                  " *>(const_cast<void *>(ctx->weights[" +
                  std::to_string(weightIndex.lookup(weight.getValue())) +
                  "]));\n");
    } else if (auto wait = dyn_cast<sched::AllReduceWaitOp>(op)) {
      // The sum is in its start's buffer once the wait returns.
      declare(result,
              "  " + type + " *" + names[result] + " = " +
                  name(wait.getStarted()) + ";\n",
              wait.getStarted());
    } else if (isAlias(op)) {
      declare(result,
              "  auto *" + names[result] + " = " +
                  viewOf(op, name(op->getOperand(0))) + ";\n",
              op->getOperand(0));
      return success();
    } else {
      declare(result, "  " + type + " *" + names[result] +
                          " = reinterpret_cast<" + type + " *>(arena + " +
                          std::to_string(offsets.lookup(result)) + ");\n");
    }
  }
  // An op of one shard of the optimizer's work runs on the rank that owns
  // it (modelc-shard-optimizer-state; modelc_shard_owner, abi.h).
  auto shard = op->getAttrOfType<IntegerAttr>(GraphDialect::kShardAttrName);
  if (shard)
    os << "  if (ctx->rank == modelc_shard_owner(" << shard.getInt()
       << "LL, ctx->world_size)) {\n";
  unsigned point = tracePoint(op, 0);
  os << traceCall(point, "MODELC_TRACE_BEGIN");
  if (failed(emitWithConversions(op)))
    return failure();
  os << traceCall(point, "MODELC_TRACE_END");
  if (shard)
    os << "  }\n";
  return success();
}

/// Whether `op` prints code (a kernel call or a loop), not only a pointer.
static bool printsCode(Operation *op) {
  return !isa<WeightRefOp, ConstantOp, func::ReturnOp>(op) && !isAlias(op);
}

SmallVector<size_t> FunctionEmitter::partStarts() {
  SmallVector<size_t> starts = {0};
  if (!parts)
    return starts;
  unsigned total = llvm::count_if(ops, printsCode);
  unsigned limit = std::max(1u, options.opsPerFunction);
  // Parts of equal size, so that files compiled in parallel take as long.
  unsigned count = (total + limit - 1) / limit;
  if (count <= 1)
    return starts;
  unsigned size = (total + count - 1) / count, inPart = 0;
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (!printsCode(op))
      continue;
    if (inPart == size) {
      starts.push_back(i);
      inPart = 0;
    }
    ++inPart;
  }
  return starts;
}

llvm::SetVector<Value> FunctionEmitter::liveIns(size_t begin, size_t end) {
  Block *body = &function.getBody().front();
  llvm::SetVector<Value> values;
  std::function<void(Value)> add = [&](Value v) {
    if (values.contains(v))
      return;
    if (Value from = declarations.lookup(v).from)
      add(from);
    values.insert(v);
  };
  for (size_t i = begin; i < end; ++i)
    ops[i]->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        if (operand.getParentBlock() != body)
          continue;
        Operation *def = operand.getDefiningOp();
        if (!def || position.lookup(def) < static_cast<int64_t>(begin))
          add(operand);
      }
    });
  return values;
}

LogicalResult FunctionEmitter::emitParts(ArrayRef<size_t> starts) {
  std::string entry = "entry_" + plan.symbol + "_" + std::to_string(index);
  std::vector<std::string> partNames;
  for (auto [p, begin] : llvm::enumerate(starts)) {
    size_t end = p + 1 < starts.size() ? starts[p + 1] : ops.size();
    HostPart part;
    part.name = entry + "_part" + std::to_string(p);
    part.text.first = os.tell();
    size_t globalsBegin = globals.tell();
    std::vector<TextRange> readConstants;
    os << "namespace modelc_parts {\n"
       << "// Entry point '" << function.getSymName() << "', part " << p
       << ".\n"
       << "int " << part.name << "(modelc_run_ctx *ctx) {\n"
       << "  unsigned char *arena = ctx->arena;\n"
       << "  (void)arena;\n";
    for (Value v : liveIns(begin, end)) {
      os << declarations[v].text;
      if (auto data = constantData.find(v); data != constantData.end())
        readConstants.push_back(data->second);
    }
    for (size_t i = begin; i < end; ++i) {
      part.ops += printsCode(ops[i]);
      if (failed(emitStatement(ops[i])))
        return failure();
    }
    os << "  return 0;\n}\n} // namespace modelc_parts\n\n";
    part.text.second = os.tell();
    // Its own globals first (HostParts.h).
    part.globals.push_back({globalsBegin, globals.tell()});
    llvm::append_range(part.globals, readConstants);
    partNames.push_back(part.name);
    parts->push_back(std::move(part));
  }
  os << "// Entry point '" << function.getSymName() << "' on the CPU, in "
     << partNames.size() << " parts.\n"
     << "int " << entry << "(modelc_run_ctx *ctx) {\n";
  for (const std::string &part : partNames)
    os << "  if (int status = modelc_parts::" << part << "(ctx))\n"
       << "    return status;\n";
  os << "  return 0;\n}\n\n";
  return success();
}

std::string FunctionEmitter::pointerExpression(
    Value v, const llvm::StringMap<unsigned> &weightIndex) {
  std::string type = cType(tensorType(v).getElementType());
  if (auto arg = dyn_cast<BlockArgument>(v))
    return "static_cast<const " + type + " *>(ctx->inputs[" +
           std::to_string(arg.getArgNumber()) + "])";
  Operation *def = v.getDefiningOp();
  if (auto ref = dyn_cast<WeightRefOp>(def)) {
    unsigned d = deviceOf(def), w = weightIndex.lookup(ref.getName());
    residency.insert({d, w});
    return "static_cast<const " + type + " *>(ctx->device_weights[" +
           std::to_string(d) + "][" + std::to_string(w) + "])";
  }
  if (isView(def))
    return viewOf(def, names.lookup(def->getOperand(0)));
  return "reinterpret_cast<" + type + " *>(ctx->arenas[" +
         std::to_string(bufferDevice.lookup(v)) + "] + " +
         std::to_string(offsets.lookup(v)) + ")";
}

Value FunctionEmitter::viewRoot(Value v) {
  while (v.getDefiningOp() && isView(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

std::optional<unsigned> FunctionEmitter::eventOf(Value v) {
  Operation *def = viewRoot(v).getDefiningOp();
  auto record =
      def ? def->getAttrOfType<IntegerAttr>("sched.record") : IntegerAttr();
  if (!record)
    return std::nullopt;
  return static_cast<unsigned>(record.getInt());
}

void FunctionEmitter::emitWaits(Operation *op, unsigned d, bool copyStream) {
  // The events modelc-schedule-streams says this op's stream waits for.
  if (auto waits = op->getAttrOfType<DenseI64ArrayAttr>("sched.waits"))
    for (int64_t e : waits.asArrayRef())
      host << "  api->wait(ctx, " << d << ", "
           << (copyStream ? "MODELC_STREAM_COPY" : "MODELC_STREAM_COMPUTE")
           << ", " << e << ");\n";
}

void FunctionEmitter::check(unsigned d, Value v, StringRef what) {
  if (!plan.checked)
    return;
  Operation *def = viewRoot(v).getDefiningOp();
  if (def && isa<ConstantOp>(def))
    return; // constants (and views of them) are code, readable everywhere
  host << "  api->check(ctx, " << d << ", " << name(v) << ", " << runBytes(v)
       << ", " << cString(what) << ");\n";
}

void FunctionEmitter::emitErrorWordClears() {
  // Error words of GPUs whose kernels check indices: cleared first.
  for (auto &[d, word] : errorWords) {
    unsigned kernel = gpuModule.addKernel(
        {{"int *", "word"}},
        "  if (blockIdx.x == 0 && threadIdx.x == 0)\n    *word = 0;\n", 32,
        false, "clear_error_word");
    std::string task =
        "task_" + taskPrefix + "_clear_error_word_" + std::to_string(d);
    os << "int " << task << "(modelc_run_ctx *ctx) {\n"
       << "  int *a0 = reinterpret_cast<int *>(ctx->arenas[" << d << "] + "
       << word.first << ");\n  void *args[] = {&a0};\n"
       << "  const uint32_t grid[3] = {1u, 1u, 1u}, block[3] = {32u, 1u, "
          "1u};\n"
       << "  ctx->api->launch_kernel(ctx, " << d << ", " << kernel
       << ", grid, block, 0, args);\n  return 0;\n}\n\n";
    host << "  api->launch(ctx, " << d << ", " << task << ");\n";
  }
}

void FunctionEmitter::emitOutputsTask(func::ReturnOp ret) {
  std::string task = "task_" + taskPrefix + "_outputs";
  // The error words come back to the host before the outputs task.
  for (auto &[d, word] : errorWords) {
    unsigned done = numEvents++, copied = numEvents++;
    host << "  api->record(ctx, " << d << ", MODELC_STREAM_COMPUTE, " << done
         << ");\n"
         << "  api->wait(ctx, 0, MODELC_STREAM_COPY, " << done << ");\n"
         << "  api->copy(ctx, 0, ctx->arenas[0] + " << word.second << ", " << d
         << ", ctx->arenas[" << d << "] + " << word.first
         << ", 4, \"the error word of " << plan.devices[d] << "\");\n"
         << "  api->record(ctx, 0, MODELC_STREAM_COPY, " << copied << ");\n"
         << "  api->wait(ctx, 0, MODELC_STREAM_COMPUTE, " << copied << ");\n";
  }
  os << "int " << task << "(modelc_run_ctx *ctx) {\n";
  for (auto &[d, word] : errorWords) {
    os << "  {\n    int code;\n    std::memcpy(&code, ctx->arenas[0] + "
       << word.second << ", sizeof code);\n"
       << "    static const char *const messages[] = {";
    for (auto [i, m] : llvm::enumerate(errorMessages))
      os << (i ? ", " : "") << cString(m);
    os << "};\n    if (code > 0 && code <= " << errorMessages.size()
       << ") {\n      ctx->api->report_error(ctx, messages[code - 1]);\n"
       << "      return 1;\n    }\n  }\n";
  }
  emitWaits(ret, 0, false);
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    check(0, v, "return");
    os << "  std::memcpy(ctx->outputs[" << i << "], " << name(v) << ", "
       << runBytes(v) << ");\n";
  }
  os << "  return 0;\n}\n\n";
  host << "  api->launch(ctx, 0, " << task << ");\n"
       << "  return 0;\n}\n\n";
}

void FunctionEmitter::emitCopy(device::TransferOp transfer) {
  Value input = transfer.getInput(), result = transfer.getResult();
  unsigned src = deviceIndex(transfer.getSource());
  unsigned dst = deviceIndex(transfer.getTarget());
  emitWaits(transfer, dst, true);
  if (plan.checked) {
    check(src, input, "device.transfer (source)");
    check(dst, result, "device.transfer (destination)");
  }
  std::string what = graph::describeOp(transfer);
  host << "  api->copy(ctx, " << dst << ", " << name(result) << ", " << src
       << ", " << name(input) << ", " << runBytes(result) << ", "
       << cString(what) << ");\n"
       << "  api->record(ctx, " << dst << ", MODELC_STREAM_COPY, "
       << *eventOf(result) << ");\n";
}

void FunctionEmitter::beginSum(Operation *op, unsigned d, Value input,
                               Value result) {
  // On device d's copy stream, after the events it waits for; a checked
  // plan checks both buffers are d's.
  std::string name = op->getName().getStringRef().str();
  emitWaits(op, d, true);
  check(d, input, name + " (input)");
  check(d, result, name + " (result)");
}

void FunctionEmitter::emitReplicaSum(ReplicaAllReduceOp member) {
  // One replica's part, on its device's copy stream; the runtime sums the
  // group (modelc-schedule-streams checked that its members come in member
  // order, one group after the other).
  unsigned d = deviceOf(member);
  Value input = member.getInput(), result = member.getResult();
  beginSum(member, d, input, result);
  std::string devices = "replica_group_" + std::to_string(member.getGroup());
  if (member.getMember() == 0) {
    // The group's devices in member order (its members follow this one).
    host << "  static const uint32_t " << devices << "[] = {";
    for (Operation *op = member; op; op = op->getNextNode())
      if (auto other = dyn_cast<ReplicaAllReduceOp>(op);
          other && other.getGroup() == member.getGroup())
        host << (other.getMember() ? ", " : "") << deviceOf(other);
    host << "};\n";
  }
  host << "  api->replica_all_reduce(ctx, " << member.getGroup() << "u, "
       << member.getMember() << "u, " << member.getMembers() << "u, " << devices
       << ", " << name(input) << ", " << name(result) << ", "
       << tensorType(result).getNumElements() << "LL, "
       << cString(graph::describeOp(member)) << ");\n"
       << "  api->record(ctx, " << d << ", MODELC_STREAM_COPY, "
       << *eventOf(result) << ");\n";
  // The host's sum (where NCCL is absent) holds the copy streams of the
  // members until all have arrived: nothing a CUDA graph can replay.
  graphCapturable = false;
}

LogicalResult FunctionEmitter::emitRankSum(AllReduceOp reduce) {
  // The sum over the ranks on the GPU's copy stream (modelc-place-devices
  // put every one of the plan's on one GPU): NCCL's all-reduce where it
  // loads on every rank, else through the host and the backend.
  unsigned d = deviceOf(reduce);
  Value input = reduce.getInput(), result = reduce.getResult();
  if (Operation *def = viewRoot(input).getDefiningOp();
      def && isa<ConstantOp>(def))
    return reduce.emitError("internal error: a sum over the ranks on a GPU "
                            "reads a constant, which is host memory (run "
                            "modelc-insert-transfers, which transfers it)");
  beginSum(reduce, d, input, result);
  host << "  api->rank_all_reduce(ctx, " << d << ", " << name(input) << ", "
       << name(result) << ", " << tensorType(result).getNumElements() << "LL, "
       << cString(graph::describeOp(reduce)) << ");\n"
       << "  api->record(ctx, " << d << ", MODELC_STREAM_COPY, "
       << *eventOf(result) << ");\n";
  // The host's way holds the copy stream until the ranks have met.
  graphCapturable = false;
  return success();
}

LogicalResult FunctionEmitter::emitGpuTask(Operation *op, unsigned d,
                                           const std::string &what) {
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  GpuOpContext context;
  context.device = d;
  context.opName = namedOp(op)->getName().stripDialect().str();
  context.what = what;
  // A value of a group's body is the group's result (the only buffer the
  // group writes).
  context.pointer = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->getParentOp() == op ? name(result) : name(v);
  };
  // Sizes at the run's: a value of the group's body (a product's result
  // under its epilogue) has the group's result's dimension 0.
  context.sized = [&](int64_t count, Value v) {
    Operation *def = v.getDefiningOp();
    return sized(count, def && def->getParentOp() == op ? result : v);
  };
  // (A value of the group's body has its own symbolic shape.)
  context.extent = [&](Value v, size_t from, size_t to) {
    return runExtent(v, from, to);
  };
  if (auto it = scratchOffsets.find(op); it != scratchOffsets.end())
    context.scratch.assign(it->second.begin(), it->second.end());
  if (gpuOpChecksIndices(op)) {
    context.errorWord = "reinterpret_cast<int *>(ctx->arenas[" +
                        std::to_string(d) + "] + " +
                        std::to_string(errorWords.lookup(d).first) + ")";
    errorMessages.push_back(what + (isa<CrossEntropyOp>(op)
                                        ? ": a target is out of range"
                                        : ": an index is out of range"));
    context.errorCode = static_cast<int>(errorMessages.size());
  }
  context.gemmSites = &globalCounter;
  if (auto sliced = dyn_cast<sched::SlicedTransposeOp>(op))
    context.foldedSlice = sliced.getSlice();
  if (auto gemm = dyn_cast<sched::GemmOp>(op))
    describeGemm(gemm, context);
  context.allowTf32 = options.allowTf32;
  if (auto assign = dyn_cast<AssignOp>(op))
    context.assignTarget = weightOnDevice(assign, d);
  if (failed(emitGpuOp(op, gpuModule, context, os)))
    return failure();
  ++kernelCalls;
  return success();
}

LogicalResult FunctionEmitter::emitTask(Operation *op) {
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  unsigned d = deviceOf(op);
  if (failed(checkDynamicSupported(op, plan.gpu[d])))
    return failure();
  std::string what = describeOp(op);
  emitWaits(op, d, false);
  SmallVector<Value> reads = valuesRead(op);
  for (Value v : reads)
    check(d, v, what);
  if (result)
    check(d, result, what);
  std::string task = "task_" + taskPrefix + "_" + std::to_string(taskCounter++);
  unsigned point = tracePoint(op, d);
  os << "// " << what << " on " << plan.devices[d] << "\n"
     << "int " << task << "(modelc_run_ctx *ctx) {\n"
     << traceCall(point, "MODELC_TRACE_BEGIN");
  if (plan.gpu[d]) {
    if (failed(emitGpuTask(op, d, what)))
      return failure();
  } else {
    graphCapturable = false;
    os << "  unsigned char *arena = ctx->arenas[" << d << "];\n"
       << "  (void)arena;\n";
    if (failed(emitWithConversions(op)))
      return failure();
  }
  os << traceCall(point, "MODELC_TRACE_END") << "  return 0;\n}\n\n";
  host << "  api->launch(ctx, " << d << ", " << task << ");\n";
  if (!result)
    return success();
  if (std::optional<unsigned> e = eventOf(result))
    host << "  api->record(ctx, " << d << ", MODELC_STREAM_COMPUTE, " << *e
         << ");\n";
  return success();
}

LogicalResult FunctionEmitter::emitMultiDevice() {
  for (auto [i, slot] : llvm::enumerate(options.weights))
    weightIndex[slot.name] = i;
  taskPrefix = plan.symbol + "_" + std::to_string(index);
  // The events of the stream schedule; the error words add theirs.
  auto events = function->getAttrOfType<IntegerAttr>("sched.events");
  if (!events)
    return function.emitError("internal error: plan '")
           << plan.name << "' has no stream schedule (run "
           << "modelc-schedule-streams before the printers)";
  numEvents = static_cast<unsigned>(events.getInt());
  for (BlockArgument arg : function.getArguments())
    names[arg] = pointerExpression(arg, weightIndex);

  host << "// Entry point '" << function.getSymName() << "', plan '"
       << plan.name << "': enqueues every task and copy.\n"
       << "int entry_" << taskPrefix << "(modelc_run_ctx *ctx) {\n"
       << "  const modelc_runtime_api *api = ctx->api;\n";
  emitErrorWordClears();
  // A captured CUDA graph replays its launches with the sizes it saw:
  // a dynamic dimension launches anew each run.
  graphCapturable =
      llvm::is_contained(plan.gpu, true) && symbolic.shapes.empty();
  for (Operation *op : ops) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      emitOutputsTask(ret);
      continue;
    }
    if (isa<AssignOp>(op)) {
      if (failed(emitTask(op)))
        return failure();
      continue;
    }
    if (op->getNumResults() != 1)
      continue;
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      emitConstant(constant);
      continue;
    }
    if (op->hasAttr(sched::kWritesWeightAttrName))
      return op->emitError("internal error: 'sched.writes_weight' in a plan "
                           "with streams (modelc-update-weights-in-place "
                           "writes in place on the CPU plan only)");
    if (isa<sched::AllReduceStartOp, sched::AllReduceWaitOp>(op))
      return op->emitError("internal error: a split all-reduce in a plan "
                           "with streams (modelc-overlap-all-reduce splits "
                           "them on the CPU plan only)");
    names[op->getResult(0)] = pointerExpression(op->getResult(0), weightIndex);
    if (isa<WeightRefOp>(op) || isView(op))
      continue;
    if (auto transfer = dyn_cast<device::TransferOp>(op))
      emitCopy(transfer);
    else if (auto member = dyn_cast<ReplicaAllReduceOp>(op))
      emitReplicaSum(member);
    else if (auto reduce = dyn_cast<AllReduceOp>(op); reduce && onGpu(op)) {
      if (failed(emitRankSum(reduce)))
        return failure();
    } else if (failed(emitTask(op)))
      return failure();
  }
  os << hostText;
  return success();
}

/// Whether the plan sums over replicas on their devices (its
/// MODELC_PLAN_REPLICA_SUMS).
bool sumsOverReplicas(ModuleOp module) {
  return module
      ->walk([](ReplicaAllReduceOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// The index in `devices` of the GPU whose copy stream sums over the ranks
/// (modelc_plan_desc::rank_sums_device), or -1 when the host does. An
/// internal error when an entry point sums on more than one device, or the
/// plan's entry points on more than one GPU (modelc-place-devices gathers
/// them: every rank must meet them in one order, on one stream).
FailureOr<int> rankSumsDevice(ModuleOp module,
                              const std::vector<std::string> &devices) {
  int found = -1;
  for (auto function : module.getOps<func::FuncOp>()) {
    std::optional<std::string> mine;
    WalkResult walk = function.walk([&](AllReduceOp reduce) {
      std::string d = sched::runningDevice(reduce).str();
      auto it = llvm::find(devices, d);
      int index =
          it == devices.end() ? -1 : static_cast<int>(it - devices.begin());
      bool gpu = d.rfind("cuda:", 0) == 0;
      if (index < 0 || (mine && *mine != d) ||
          (gpu && found >= 0 && found != index)) {
        reduce.emitError("internal error: the sums over the ranks of a plan "
                         "are not all on one device (modelc-place-devices "
                         "gathers them on one)");
        return WalkResult::interrupt();
      }
      mine = d;
      if (gpu)
        found = index;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return found;
}

void emitTensorDescs(llvm::raw_ostream &os, StringRef prefix,
                     func::FuncOp function, bool results) {
  TypeRange types =
      results ? function.getResultTypes() : function.getArgumentTypes();
  // ABI 11: per axis of an input or output with a dynamic dimension, -1
  // or the dimension's index in the model's table (graph.dim order).
  llvm::StringMap<unsigned> dimIndex;
  for (DimOp dim : function->getParentOfType<ModuleOp>().getOps<DimOp>())
    dimIndex.try_emplace(dim.getSymName(), dimIndex.size());
  SmallVector<bool> hasDims;
  for (auto [index, type] : llvm::enumerate(types)) {
    os << "const int64_t " << prefix << "_shape" << index << "[] = {"
       << (cast<RankedTensorType>(type).getRank()
               ? list(cast<RankedTensorType>(type).getShape())
               : std::string("0"))
       << "};\n";
    auto dims =
        results ? function.getResultAttrOfType<ArrayAttr>(index, kDimsAttrName)
                : function.getArgAttrOfType<ArrayAttr>(index, kDimsAttrName);
    hasDims.push_back(dims != nullptr);
    if (!dims)
      continue;
    SmallVector<std::string> indices;
    for (auto name : dims.getAsRange<StringAttr>())
      indices.push_back(name.empty()
                            ? "-1"
                            : std::to_string(dimIndex.lookup(name.getValue())));
    os << "const int32_t " << prefix << "_dims" << index << "[] = {"
       << llvm::join(indices, ", ") << "};\n";
  }
  os << "const modelc_tensor_desc " << prefix << "[] = {\n";
  for (auto [index, type] : llvm::enumerate(types)) {
    auto tensor = cast<RankedTensorType>(type);
    os << "    {" << cString(boundaryName(function, results, index)) << ", "
       << abiDTypeCode(tensor.getElementType()) << ", " << tensor.getRank()
       << ", " << prefix << "_shape" << index << ", "
       << (hasDims[index] ? prefix.str() + "_dims" + std::to_string(index)
                          : std::string("nullptr"))
       << "},\n";
  }
  if (types.empty())
    os << "    {nullptr, 0, 0, nullptr, nullptr},\n";
  os << "};\n";
}

bool computesInF32(Operation *op) {
  return FunctionEmitter::kernels().computesInF32(op);
}

} // namespace

/// ABI 11: the table of dynamic dimensions (graph.dim, in declaration
/// order) as `dims`, when there are any; returns their number.
static size_t emitDimTable(llvm::raw_ostream &out,
                           ArrayRef<PlanModule> planModules) {
  if (planModules.empty())
    return 0;
  auto dims =
      llvm::to_vector(ModuleOp(planModules.front().module).getOps<DimOp>());
  if (dims.empty())
    return 0;
  out << "const modelc_dim_desc dims[] = {\n";
  for (DimOp dim : dims)
    out << "    {" << cString(dim.getSymName()) << ", " << dim.getMin() << ", "
        << dim.getMax() << ", " << dim.getOpt() << "},\n";
  out << "};\n";
  return dims.size();
}

bool modelc::hostPrinterPrints(Operation *op) {
  return FunctionEmitter::kernels().prints(op);
}

std::vector<uint64_t> modelc::cpuScratchBytes(Operation *op) {
  std::vector<uint64_t> bytes;
  if (auto grad = dyn_cast<Conv2dWeightGradOp>(op);
      grad && weightGradNeedsColumns(grad) && !usesDnnlConv(op)) {
    ArrayRef<int64_t> w = tensorType(grad.getResult()).getShape();
    ArrayRef<int64_t> g = tensorType(grad.getGrad()).getShape();
    bytes.push_back(static_cast<uint64_t>(w[1] * w[2] * w[3]) *
                    static_cast<uint64_t>(g[2] * g[3]) * 4);
  }
  if (auto conv = dyn_cast<ConvTranspose2dOp>(op);
      conv && transposedConvUsesGemm(conv)) {
    ArrayRef<int64_t> x = tensorType(conv.getInput()).getShape();
    ArrayRef<int64_t> w = tensorType(conv.getWeight()).getShape();
    bytes.push_back(static_cast<uint64_t>(w[1] * w[2] * w[3]) *
                    static_cast<uint64_t>(x[2] * x[3]) * 4);
  }
  if (auto conv = dyn_cast<Conv2dOp>(op);
      conv && !conv.isPointwise() && !usesDnnlConv(op)) {
    ArrayRef<int64_t> w = tensorType(conv.getWeight()).getShape();
    ArrayRef<int64_t> y = tensorType(conv.getResult()).getShape();
    bytes.push_back(static_cast<uint64_t>(w[1] * w[2] * w[3]) *
                    static_cast<uint64_t>(y[2] * y[3]) * 4);
  }
  if (isHalfMatmul(op)) {
    ArrayRef<int64_t> a = tensorType(op->getOperand(0)).getShape();
    ArrayRef<int64_t> b = tensorType(op->getOperand(1)).getShape();
    int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
    bytes.push_back(static_cast<uint64_t>(m * k + k * n + m * n) * 4);
  }
  for (Value operand : halfOperands(op))
    bytes.push_back(
        static_cast<uint64_t>(tensorType(operand).getNumElements()) * 4);
  if (hasHalfResult(op))
    bytes.push_back(
        static_cast<uint64_t>(tensorType(op->getResult(0)).getNumElements()) *
        4);
  return bytes;
}

/// Prints one plan's entry points (into `functions` and `globals`) and its
/// tables (devices, arenas, entry functions, weight residency, events).
static LogicalResult emitPlan(const PlanModule &planModule, unsigned planIndex,
                              const CpuEmitOptions &options, bool haveGpuCode,
                              llvm::raw_ostream &functions,
                              llvm::raw_ostream &globals,
                              llvm::raw_ostream &plansOut,
                              unsigned &globalCounter, GpuModule &gpuModule,
                              CpuEmitReport &localReport,
                              std::vector<HostPart> &parts) {
  unsigned numWeights = options.weights.size();
  PlanSpec plan;
  plan.name = planModule.name;
  plan.symbol = "plan" + std::to_string(planIndex);
  plan.devices = planModule.devices;
  plan.multiDevice = plan.devices.size() > 1 || plan.devices.front() != "cpu";
  plan.checked = options.checked;
  for (const std::string &device : plan.devices)
    plan.gpu.push_back(StringRef(device).starts_with("cuda"));
  if (llvm::is_contained(plan.gpu, true) && !haveGpuCode)
    return ModuleOp(planModule.module)
        .emitError("plan '" + plan.name +
                   "' has GPUs: its kernels need the CUDA build (emit with "
                   "GpuCode)");
  std::vector<PlanSpec::TracePoint> tracePoints;
  plan.tracePoints = &tracePoints;
  ModuleOp planOps = planModule.module;
  SmallVector<func::FuncOp> functionsOfPlan(planOps.getOps<func::FuncOp>());
  std::vector<uint64_t> arenaBytes;
  std::vector<unsigned> events;
  std::vector<bool> capturable;
  std::set<std::pair<unsigned, unsigned>> residency;
  for (auto [index, function] : llvm::enumerate(functionsOfPlan)) {
    CpuEmitReport::Entry entry;
    entry.plan = plan.name;
    FunctionEmitter emitter(function, index, plan, options, functions, globals,
                            globalCounter, gpuModule);
    emitter.parts = &parts;
    if (failed(emitter.emit(entry)))
      return failure();
    for (auto [device, bytes] :
         llvm::zip(plan.devices, emitter.deviceArenaBytes))
      entry.deviceArenas.push_back({device, bytes});
    localReport.entries.push_back(entry);
    llvm::append_range(arenaBytes, emitter.deviceArenaBytes);
    events.push_back(emitter.numEvents);
    capturable.push_back(emitter.graphCapturable);
    residency.insert(emitter.residency.begin(), emitter.residency.end());
  }
  std::string p = plan.symbol;
  plansOut << "const char *const " << p << "_devices[] = {";
  for (auto [i, d] : llvm::enumerate(plan.devices))
    plansOut << (i ? ", " : "") << cString(d);
  plansOut << "};\nconst uint64_t " << p << "_arena_bytes[] = {";
  for (auto [i, b] : llvm::enumerate(arenaBytes))
    plansOut << (i ? ", " : "") << b << "ULL";
  plansOut << "};\nconst modelc_entry_fn " << p << "_run[] = {";
  for (unsigned i = 0; i < functionsOfPlan.size(); ++i)
    plansOut << (i ? ", " : "") << "entry_" << p << "_" << i;
  plansOut << "};\nconst modelc_trace_point " << p << "_trace_points[] = {\n";
  for (const PlanSpec::TracePoint &t : tracePoints)
    plansOut << "    {" << cString(t.what) << ", " << t.device << ", "
             << llvm::formatv("{0:F3}", t.estimateUs).str() << "},\n";
  if (tracePoints.empty())
    plansOut << "    {nullptr, 0, -1.0},\n";
  plansOut << "};\nconst uint32_t " << p
           << "_num_trace_points = " << tracePoints.size() << ";\n";
  if (plan.multiDevice) {
    plansOut << "const uint8_t " << p << "_weight_devices[] = {";
    for (unsigned d = 0; d < plan.devices.size(); ++d)
      for (unsigned w = 0; w < numWeights; ++w)
        plansOut << (d + w ? ", " : "") << (residency.count({d, w}) ? 1 : 0);
    if (numWeights == 0)
      plansOut << "0";
    plansOut << "};\nconst uint32_t " << p << "_num_events[] = {";
    for (auto [i, e] : llvm::enumerate(events))
      plansOut << (i ? ", " : "") << e;
    plansOut << "};\nconst uint8_t " << p << "_graph_capturable[] = {";
    for (auto [i, c] : llvm::enumerate(capturable))
      plansOut << (i ? ", " : "") << (c ? 1 : 0);
    plansOut << "};\n";
  }
  return success();
}

/// The embedded weights and GPU image, as .incbin sections (or, for host
/// emulation, a placeholder image); fills `gpu` with the kernels' source.
/// They go to large-data sections (.lrodata, flag "l": SHF_X86_64_LARGE),
/// which the linker places after everything else, so that weights beyond
/// 2 GiB do not push the code's 32-bit PC-relative references to other
/// data out of range; only the descriptor points at them, with 64-bit
/// relocations.
static void emitEmbeddedData(llvm::raw_ostream &out,
                             const CpuEmitOptions &options,
                             const GpuModule &gpuModule, GpuCode *gpu) {
  if (!options.weightBlobPath.empty()) {
    out << "// The weights, embedded from " << options.weightBlobPath << ".\n"
        << "asm(\".section .lrodata.modelc_weights,\\\"al\\\"\\n\"\n"
        << "    \".balign 64\\n\"\n"
        << "    \".hidden modelc_weight_blob\\n\"\n"
        << "    \"modelc_weight_blob:\\n\"\n"
        << "    \".incbin \\\"" << options.weightBlobPath << "\\\"\\n\"\n"
        << "    \".previous\\n\");\n"
        << "extern \"C\" const unsigned char modelc_weight_blob[];\n\n";
  }
  if (!gpuModule.empty()) {
    gpu->source = gpuModule.source(options.compilerVersion);
    gpu->kernelNames = gpuModule.kernelNames();
    if (!gpu->imagePath.empty())
      out << "// The GPU code (a CUDA fatbin), embedded from " << gpu->imagePath
          << ".\n"
          << "asm(\".section .lrodata.modelc_gpu,\\\"al\\\"\\n\"\n"
          << "    \".balign 64\\n\"\n"
          << "    \".hidden modelc_gpu_image\\n\"\n"
          << "    \"modelc_gpu_image:\\n\"\n"
          << "    \".incbin \\\"" << gpu->imagePath << "\\\"\\n\"\n"
          << "    \".hidden modelc_gpu_image_end\\n\"\n"
          << "    \"modelc_gpu_image_end:\\n\"\n"
          << "    \".byte 0\\n\"\n"
          << "    \".previous\\n\");\n"
          << "extern \"C\" const unsigned char modelc_gpu_image[];\n"
          << "extern \"C\" const unsigned char modelc_gpu_image_end[];\n\n";
    else
      out << "// The GPU kernels are host functions of this library (built "
             "with\n// --cuda-emulation, for the test suite's stand-in "
             "driver).\n"
          << "extern \"C\" const unsigned char modelc_gpu_image[] =\n"
          << "    \"modelc: GPU kernels emulated on the host\";\n"
          << "extern \"C\" const unsigned char *const modelc_gpu_image_end =\n"
          << "    modelc_gpu_image + sizeof modelc_gpu_image;\n\n";
  }
}

/// The weight table (`weights`, `weight_flags`): each weight's name, type,
/// shape and place in the embedded data, and whether the model writes it
/// and it starts as zeros (not in the data).
static void emitWeightTable(llvm::raw_ostream &out,
                            ArrayRef<PlanModule> planModules,
                            ArrayRef<WeightSlot> slots) {
  for (auto [index, slot] : llvm::enumerate(slots))
    out << "const int64_t weight_shape" << index << "[] = {"
        << (slot.type.getRank() ? list(slot.type.getShape()) : std::string("0"))
        << "};\n";
  out << "const modelc_weight_desc weights[] = {\n";
  for (auto [index, slot] : llvm::enumerate(slots))
    out << "    {" << cString(slot.name) << ", "
        << abiDTypeCode(slot.type.getElementType()) << ", "
        << slot.type.getRank() << ", weight_shape" << index << ", "
        << slot.offset << "ULL, " << slot.nbytes << "ULL},\n";
  if (slots.empty())
    out << "    {nullptr, 0, 0, nullptr, 0, 0},\n";
  // ABI 7: weights a training step writes (graph.weight `writable`).
  llvm::StringSet<> writable;
  if (!planModules.empty()) {
    ModuleOp module = planModules.front().module;
    for (graph::WeightOp w : module.getOps<graph::WeightOp>())
      if (w.getWritable())
        writable.insert(w.getSymName());
  }
  out << "};\nconst uint8_t weight_flags[] = {";
  for (const WeightSlot &slot : slots) {
    // The blob leaves out only weights the model writes (their copies
    // start as zeros): a weight read in place must be in it.
    if (slot.zeros && !writable.contains(slot.name))
      llvm::report_fatal_error("internal error: weight '" +
                               llvm::Twine(slot.name) +
                               "' is not in the embedded data but the model "
                               "does not write it");
    out << (!writable.contains(slot.name) ? "0, "
            : slot.zeros ? "MODELC_WEIGHT_WRITABLE | MODELC_WEIGHT_ZEROS, "
                         : "MODELC_WEIGHT_WRITABLE, ");
  }
  out << (slots.empty() ? "0" : "") << "};\n";
  // ABI 16: the shard of optimizer state one rank holds (graph.weight
  // `shard`, modelc-shard-optimizer-state), -1 for every other weight.
  llvm::StringMap<int64_t> shards;
  if (!planModules.empty())
    for (graph::WeightOp w :
         ModuleOp(planModules.front().module).getOps<graph::WeightOp>())
      if (IntegerAttr shard = w.getShardAttr())
        shards[w.getSymName()] = shard.getInt();
  out << "const int32_t weight_shards[] = {";
  for (const WeightSlot &slot : slots) {
    auto it = shards.find(slot.name);
    out << (it == shards.end() ? int64_t{-1} : it->second) << ", ";
  }
  out << (slots.empty() ? "-1" : "") << "};\n";
}

/// The descriptor the runtime reads: entry points, weights, plans, the GPU
/// image and the model itself, and the exported entry point.
static void emitDescriptor(llvm::raw_ostream &out,
                           ArrayRef<PlanModule> planModules,
                           const CpuEmitOptions &options,
                           MutableArrayRef<func::FuncOp> entries,
                           StringRef plansText, const GpuModule &gpuModule,
                           ArrayRef<int> rankSums) {
  bool hasGpuCode = !gpuModule.empty();
  bool needsCublasLt = gpuModule.usesGemm;
  for (auto [index, function] : llvm::enumerate(entries)) {
    emitTensorDescs(out, "entry" + std::to_string(index) + "_inputs", function,
                    false);
    emitTensorDescs(out, "entry" + std::to_string(index) + "_outputs", function,
                    true);
  }
  // ABI 8: inputs with a default (graph.default, train_step's `lr`).
  SmallVector<std::string> defaultTables;
  for (auto [index, function] : llvm::enumerate(entries)) {
    std::string prefix = "entry" + std::to_string(index) + "_default";
    SmallVector<std::string> pointers;
    bool any = false;
    for (unsigned arg = 0; arg < function.getNumArguments(); ++arg) {
      auto value = function.getArgAttrOfType<DenseElementsAttr>(
          arg, graph::GraphDialect::kDefaultAttrName);
      if (!value) {
        pointers.push_back("nullptr");
        continue;
      }
      any = true;
      std::string global = prefix + std::to_string(arg);
      out << "alignas(64) const " << cType(value.getElementType()) << " "
          << global << "[" << std::max<int64_t>(1, value.getNumElements())
          << "] = {" << elementsInitializer(value) << "};\n";
      pointers.push_back(global);
    }
    if (!any) {
      defaultTables.push_back("nullptr");
      continue;
    }
    out << "const void *const " << prefix << "s[] = {"
        << llvm::join(pointers, ", ") << "};\n";
    defaultTables.push_back(prefix + "s");
  }
  out << "const modelc_entry_desc entries[] = {\n";
  for (auto [index, function] : llvm::enumerate(entries))
    out << "    {" << cString(function.getSymName()) << ", "
        << function.getNumArguments() << ", entry" << index << "_inputs, "
        << function.getNumResults() << ", entry" << index << "_outputs, "
        << defaultTables[index] << "},\n";
  out << "};\n";
  emitWeightTable(out, planModules, options.weights);

  out << plansText << "const modelc_plan_desc plans[] = {\n";
  for (auto [planIndex, planModule] : llvm::enumerate(planModules)) {
    std::string p = "plan" + std::to_string(planIndex);
    bool multi =
        planModule.devices.size() > 1 || planModule.devices.front() != "cpu";
    out << "    {" << cString(planModule.name) << ", "
        << planModule.devices.size() << ", " << p << "_devices, " << p
        << "_arena_bytes, " << p << "_run, "
        << (multi ? p + "_weight_devices" : std::string("nullptr")) << ", "
        << (multi ? p + "_num_events" : std::string("nullptr")) << ", "
        << (multi ? p + "_graph_capturable" : std::string("nullptr")) << ", "
        << p << "_num_trace_points, " << p << "_trace_points, "
        << (sumsOverReplicas(planModule.module) ? "MODELC_PLAN_REPLICA_SUMS"
                                                : "0u")
        << (rankSums[planIndex] >= 0 ? " | MODELC_PLAN_RANK_SUMS" : "") << ", "
        << planModule.regimeDim << ", " << planModule.regimeMin << "LL, "
        << planModule.regimeMax << "LL, " << std::max(rankSums[planIndex], 0)
        << "u},\n";
  }
  out << "};\n";
  size_t numDims = emitDimTable(out, planModules);
  out << "const modelc_model_desc model = {\n"
      << "    MODELC_ABI_VERSION,\n"
      << "    sizeof(modelc_model_desc),\n"
      << "    " << cString(options.compilerVersion) << ",\n"
      << "    " << cString(options.compilerFlags) << ",\n"
      << "    " << entries.size() << ", entries,\n"
      << "    " << options.weights.size() << ", weights,\n"
      << "    "
      << (options.weightBlobPath.empty() ? "nullptr" : "modelc_weight_blob")
      << ", " << options.weightBlobBytes << "ULL,\n"
      << "    "
      << (options.externalWeightsPath.empty()
              ? std::string("nullptr")
              : cString(options.externalWeightsPath))
      << ",\n"
      << "    " << planModules.size() << ", plans,\n";
  if (hasGpuCode)
    out << "    modelc_gpu_image,\n"
        << "    static_cast<uint64_t>(modelc_gpu_image_end - "
           "modelc_gpu_image),\n"
        << "    " << gpuModule.kernelNames().size() << ", kernel_names,\n";
  else
    out << "    nullptr, 0, 0, nullptr,\n";
  out << "    " << (needsCublasLt ? "MODELC_GPU_NEEDS_CUBLASLT" : "0u")
      << ",\n";
  bool collectives = llvm::any_of(planModules, [](const PlanModule &plan) {
    return plan.module
        ->walk([](Operation *op) {
          return isa<AllReduceOp, sched::AllReduceStartOp>(op)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  });
  // The lowest precision any op computes in (any plan).
  bool f16 = false, bf16 = false;
  for (const PlanModule &plan : planModules)
    plan.module->walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(t)) {
          f16 |= tensor.getElementType().isF16();
          bf16 |= tensor.getElementType().isBF16();
        }
    });
  std::string flags = collectives ? "MODELC_MODEL_COLLECTIVES" : "";
  for (auto [on, name] : {std::pair{f16, "MODELC_MODEL_COMPUTES_F16"},
                          std::pair{bf16, "MODELC_MODEL_COMPUTES_BF16"}})
    if (on)
      flags += (flags.empty() ? "" : " | ") + std::string(name);
  out << "    weight_flags,\n";
  out << "    " << (flags.empty() ? "0u" : flags) << ",\n";
  out << "    " << numDims << ", " << (numDims ? "dims" : "nullptr") << ",\n";
  out << "    weight_shards,\n";
  out << "};\n\n"
      << "} // namespace\n\n"
      << "extern \"C\" __attribute__((visibility(\"default\"))) const "
         "modelc_model_desc *\n"
      << "modelc_model_v1(void) {\n  return &model;\n}\n";
}

LogicalResult modelc::emitModelSources(ArrayRef<PlanModule> planModules,
                                       const CpuEmitOptions &options,
                                       unsigned files, HostSources &sources,
                                       CpuEmitReport *report, GpuCode *gpu) {
  GpuModule gpuModule;
  PrintedHost printed;
  llvm::raw_string_ostream globals(printed.globals),
      functions(printed.functions), embedded(printed.embedded),
      tail(printed.tail);
  std::string plansText;
  llvm::raw_string_ostream plansOut(plansText);
  unsigned globalCounter = 0;
  CpuEmitReport localReport;
  for (auto [planIndex, planModule] : llvm::enumerate(planModules))
    if (failed(emitPlan(planModule, planIndex, options, gpu != nullptr,
                        functions, globals, plansOut, globalCounter, gpuModule,
                        localReport, printed.parts)))
      return failure();

  printed.prelude =
      "// Generated by modelc " + options.compilerVersion +
      ": a model for the modelc runtime (ABI: modelc/abi.h). Do not "
      "edit.\n" +
      generatedCodeIncludes().str() + "\n";
  emitEmbeddedData(embedded, options, gpuModule, gpu);
  if (!gpuModule.empty()) {
    tail << "const char *const kernel_names[] = {";
    for (auto [i, n] : llvm::enumerate(gpuModule.kernelNames()))
      tail << (i ? ", " : "") << cString(n);
    tail << "};\n";
  }
  // The entry points' types: a plan's whose types hold every dimension at
  // its max (a size regime's below the max holds its own max).
  ModuleOp firstModule = planModules.front().module;
  for (const PlanModule &plan : planModules) {
    SmallVector<DimOp> dims(ModuleOp(plan.module).getOps<DimOp>());
    if (plan.regimeMax == 0 ||
        (plan.regimeDim < static_cast<int32_t>(dims.size()) &&
         plan.regimeMax ==
             static_cast<int64_t>(dims[plan.regimeDim].getMax()))) {
      firstModule = plan.module;
      break;
    }
  }
  SmallVector<func::FuncOp> entries(firstModule.getOps<func::FuncOp>());
  SmallVector<int> rankSums;
  for (const PlanModule &plan : planModules) {
    FailureOr<int> d = rankSumsDevice(plan.module, plan.devices);
    if (failed(d))
      return failure();
    rankSums.push_back(*d);
  }
  emitDescriptor(tail, planModules, options, entries, plansText, gpuModule,
                 rankSums);
  assembleHostSources(printed, files, sources.main, sources.parts);
  if (report)
    *report = std::move(localReport);
  return success();
}

LogicalResult modelc::emitModel(ArrayRef<PlanModule> planModules,
                                const CpuEmitOptions &options,
                                llvm::raw_ostream &out, CpuEmitReport *report,
                                GpuCode *gpu) {
  HostSources sources;
  if (failed(emitModelSources(planModules, options, 1, sources, report, gpu)))
    return failure();
  out << sources.main;
  return success();
}
