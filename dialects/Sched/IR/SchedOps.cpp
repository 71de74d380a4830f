//===- SchedOps.cpp - sched dialect operations ------------------*- C++ -*-===//

#include "dialects/Sched/IR/SchedOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/CpuPostOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <array>

using namespace mlir;
using namespace modelc;
using namespace modelc::sched;

#define GET_OP_CLASSES
#include "dialects/Sched/IR/SchedOps.cpp.inc"

SmallVector<Operation *> FusedOp::getBodyOps() {
  SmallVector<Operation *> ops;
  for (Operation &op : getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

Operation *FusedOp::getRoot() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  return yield.getValue().getDefiningOp();
}

Operation *FusedOp::getSingleOp() {
  Block &body = getBody().front();
  return body.getOperations().size() == 2 ? &body.front() : nullptr;
}

Value FusedOp::getOutsideValue(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (argument && argument.getOwner() == &getBody().front())
    return getInputs()[argument.getArgNumber()];
  return value;
}

namespace {

/// What a sched.fused and a sched.fused_reduce both check: the body's
/// arguments have the inputs' types and it ends in sched.yield.
LogicalResult verifyLoopSignature(Operation *op, ValueRange inputs,
                                  Block &body) {
  if (body.getNumArguments() != inputs.size())
    return op->emitOpError("has ")
           << inputs.size() << " inputs but its body has "
           << body.getNumArguments() << " arguments";
  for (auto [index, input, argument] :
       llvm::enumerate(inputs, body.getArguments()))
    if (input.getType() != argument.getType())
      return op->emitOpError("input #")
             << index << " is " << input.getType()
             << " but the body's argument is " << argument.getType();
  if (!isa<YieldOp>(body.getTerminator()))
    return op->emitOpError("body must end in 'sched.yield'");
  return success();
}

/// Every op of the loop's body but the terminator and `skip` is an
/// elementwise graph op or a splat constant (computed in the loop:
/// modelc-fuse-elementwise).
LogicalResult verifyElementOps(Block &body, Operation *skip = nullptr) {
  for (Operation &op : body.without_terminator()) {
    if (&op == skip)
      continue;
    if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
      auto values = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!values || !values.isSplat())
        return op.emitOpError("in a fused body must be a splat");
      continue;
    }
    if (!op.hasTrait<graph::Elementwise>())
      return op.emitOpError("is not elementwise and cannot be fused");
  }
  return success();
}

} // namespace

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  if (failed(verifyLoopSignature(*this, getInputs(), body)))
    return failure();
  if (body.without_terminator().empty())
    return emitOpError("body computes nothing");
  if (failed(verifyElementOps(body)))
    return failure();
  Value yielded = cast<YieldOp>(body.getTerminator()).getValue();
  if (yielded.getType() != getResult().getType())
    return emitOpError("yields ") << yielded.getType() << " but its result is "
                                  << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// FusedReduceOp
//===----------------------------------------------------------------------===//

Operation *FusedReduceOp::getReduce() {
  Block &body = getBody().front();
  return body.getTerminator()->getPrevNode();
}

SmallVector<Operation *> FusedReduceOp::getElementOps() {
  SmallVector<Operation *> ops;
  Operation *reduce = getReduce();
  for (Operation &op : getBody().front().without_terminator())
    if (&op != reduce)
      ops.push_back(&op);
  return ops;
}

LogicalResult FusedReduceOp::verify() {
  Block &body = getBody().front();
  if (failed(verifyLoopSignature(*this, getInputs(), body)))
    return failure();
  Operation *reduce = getReduce();
  if (!reduce || !isa<graph::ReduceSumOp, graph::ReduceMeanOp>(reduce))
    return emitOpError("body must end in a 'graph.reduce_sum' or "
                       "'graph.reduce_mean' before its yield");
  Operation *source = reduce->getOperand(0).getDefiningOp();
  if (!source || source->getBlock() != &body)
    return emitOpError("reduces a value its body does not compute");
  if (failed(verifyElementOps(body, reduce)))
    return failure();
  Value yielded = cast<YieldOp>(body.getTerminator()).getValue();
  if (yielded != reduce->getResult(0))
    return emitOpError("must yield its reduction's result");
  if (yielded.getType() != getResult().getType())
    return emitOpError("yields ") << yielded.getType() << " but its result is "
                                  << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

namespace {

/// The ops of a single-block body, without the terminator.
SmallVector<Operation *> bodyOps(Region &region) {
  SmallVector<Operation *> ops;
  for (Operation &op : region.front().without_terminator())
    ops.push_back(&op);
  return ops;
}

bool isProduct(Operation *op) {
  return isa<graph::LinearOp, graph::MatmulOp, graph::Conv2dOp>(op);
}

/// Whether `v` is computed by an op of `region`.
bool definedIn(Value v, Region &region) {
  Operation *def = v.getDefiningOp();
  return def && def->getParentRegion() == &region;
}

} // namespace

Operation *GemmOp::getProduct() {
  for (Operation *op : bodyOps(getBody()))
    if (isProduct(op))
      return op;
  return nullptr;
}

Operation *GemmOp::getResidualAdd() {
  for (Operation *op : bodyOps(getBody()))
    if (isa<graph::AddOp>(op))
      return op;
  return nullptr;
}

Value GemmOp::getResidualValue() {
  Operation *add = getResidualAdd();
  if (!add)
    return Value();
  for (Value operand : add->getOperands())
    if (!definedIn(operand, getBody()))
      return operand;
  return Value();
}

Value GemmOp::getViewBase(unsigned index) {
  Value v = getProduct()->getOperand(index);
  while (definedIn(v, getBody()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

LogicalResult GemmOp::verify() {
  SmallVector<Operation *> products, relus, muls, adds;
  for (Operation *op : bodyOps(getBody())) {
    if (isProduct(op))
      products.push_back(op);
    else if (isa<graph::ReluOp>(op))
      relus.push_back(op);
    else if (isa<graph::MulOp>(op))
      muls.push_back(op);
    else if (isa<graph::AddOp>(op))
      adds.push_back(op);
    else if (!isa<graph::SliceOp, graph::ReshapeOp, graph::FlattenOp,
                  graph::TransposeOp>(op))
      return op->emitOpError("cannot be computed by a GEMM");
  }
  if (products.size() != 1)
    return emitOpError("body must hold one linear, matmul or conv2d, not ")
           << products.size();
  Operation *product = products.front();
  if (getRelu() != !relus.empty() || relus.size() > 1)
    return emitOpError("'relu' must be set exactly when the body applies "
                       "one relu after the product");
  if ((getAlpha().convertToDouble() != 1.0) != !muls.empty() || muls.size() > 1)
    return emitOpError("'alpha' must differ from 1 exactly when the body "
                       "scales the product once");
  double beta = getBeta().convertToDouble();
  if (beta != 0.0 && beta != 1.0)
    return emitOpError("'beta' must be 0 or 1, not ") << beta;
  if ((beta == 1.0) != !adds.empty() || adds.size() > 1)
    return emitOpError("'beta' must be 1 exactly when the body adds a "
                       "residual value to the product");
  if (!adds.empty() && (!isa<graph::LinearOp>(product) || !getResidualValue()))
    return emitOpError("a residual addition must add a value from above to "
                       "a linear's result");
  std::array<StridedViewAttr, 2> views = {getLhsViewAttr(), getRhsViewAttr()};
  for (auto [index, view] : llvm::enumerate(views)) {
    if (!view)
      continue;
    if (!isa<graph::MatmulOp>(product))
      return emitOpError("operand views are for a matmul's operands only");
    if (!definedIn(product->getOperand(index), getBody()))
      return emitOpError("the view of operand #")
             << index << " needs the ops it folds in the body";
  }
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValue().getType() != getResult().getType())
    return emitOpError("yields ")
           << yield.getValue().getType() << " but its result is "
           << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// SlicedTransposeOp
//===----------------------------------------------------------------------===//

graph::SliceOp SlicedTransposeOp::getSlice() {
  return cast<graph::SliceOp>(getBody().front().front());
}

graph::TransposeOp SlicedTransposeOp::getTranspose() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  return yield.getValue().getDefiningOp<graph::TransposeOp>();
}

LogicalResult SlicedTransposeOp::verify() {
  SmallVector<Operation *> ops = bodyOps(getBody());
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (ops.size() < 2 || !isa<graph::SliceOp>(ops.front()) ||
      !isa<graph::TransposeOp>(ops.back()) ||
      yield.getValue() != ops.back()->getResult(0))
    return emitOpError("body must be a slice, views of it, and a transpose "
                       "whose value it yields");
  for (size_t i = 1; i < ops.size(); ++i) {
    // Between the slice and the transpose: views that keep the row-major
    // order from the start (reshapes, flattens, a leading contiguous slice).
    std::optional<int64_t> viewOffset = graph::getViewOffset(ops[i]);
    if (i + 1 < ops.size() && (!viewOffset || *viewOffset != 0))
      return ops[i]->emitOpError("cannot be computed by a sliced transpose");
    if (ops[i]->getOperand(0) != ops[i - 1]->getResult(0))
      return ops[i]->emitOpError("must read the op before it in the body");
  }
  if (yield.getValue().getType() != getResult().getType())
    return emitOpError("yields ")
           << yield.getValue().getType() << " but its result is "
           << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// PackedProductOp
//===----------------------------------------------------------------------===//

Operation *PackedProductOp::getProduct() {
  Block &body = getBody().front();
  return body.empty() ? nullptr : &body.front();
}

SmallVector<Operation *> PackedProductOp::getPostOps() {
  SmallVector<Operation *> ops = bodyOps(getBody());
  if (!ops.empty())
    ops.erase(ops.begin());
  if (!ops.empty() && isa<graph::CastOp>(ops.back()))
    ops.pop_back();
  return ops;
}

Operation *PackedProductOp::getOutputCast() {
  SmallVector<Operation *> ops = bodyOps(getBody());
  return ops.size() > 1 && isa<graph::CastOp>(ops.back()) ? ops.back()
                                                          : nullptr;
}

Value PackedProductOp::getSumOperand() {
  Operation *product = getProduct();
  if (!product)
    return nullptr;
  bool conv = isa<graph::Conv2dOp>(product);
  Value chain = product->getResult(0);
  for (Operation *op : getPostOps()) {
    std::optional<CpuPostOp> post = cpuPostOp(op, chain, conv);
    if (post && post->isSum())
      return post->operand;
    chain = op->getResult(0);
  }
  return nullptr;
}

/// The type of the product's own result (before an output cast).
static RankedTensorType typeOfProduct(Operation *product) {
  return cast<RankedTensorType>(product->getResult(0).getType());
}

LogicalResult PackedProductOp::verify() {
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end in 'sched.yield'");
  Operation *product = getProduct();
  if (product == yield || !isPackableProduct(product))
    return emitOpError("body must start with a linear, matmul, gemm or "
                       "conv2d of f32, f16 or bf16 tensors (one type) and a "
                       "constant weight");
  bool conv = isa<graph::Conv2dOp>(product);
  Value chain = product->getResult(0);
  bool summed = false;
  for (Operation *op : getPostOps()) {
    std::optional<CpuPostOp> post = cpuPostOp(op, chain, conv);
    if (post && post->isSum() && summed)
      return op->emitOpError("is a second sum: oneDNN takes one per product");
    summed |= post && post->isSum();
    if (!post)
      return op->emitOpError("cannot be applied by oneDNN after the product "
                             "(or does not read the value before it)");
    if (!chain.hasOneUse())
      return op->emitOpError("reads a value that another op also reads");
    chain = op->getResult(0);
  }
  if (Operation *outputCast = getOutputCast()) {
    if (!isF32OutputCast(outputCast, chain) || !chain.hasOneUse())
      return outputCast->emitOpError(
          "can end a packed product only as a cast of its f16 or bf16 value "
          "to f32");
    chain = outputCast->getResult(0);
  }
  if (yield.getValue() != chain)
    return emitOpError("must yield the value of its last op");
  if (chain.getType() != getResult().getType())
    return emitOpError("yields ")
           << chain.getType() << " but its result is " << getResult().getType();
  if (getKeepLayout() &&
      (!conv || !typeOfProduct(product).getElementType().isF32()))
    return emitOpError("keeps oneDNN's layout only for an f32 convolution");
  if (getWinograd() &&
      (!conv || !suitsWinograd(cast<graph::Conv2dOp>(product))))
    return emitOpError("asks for Winograd's algorithm, which applies only "
                       "to a 3x3 convolution with stride 1, dilation 1, one "
                       "group and a multiple of 16 channels in and out");
  if (getKeepLayout() && !readsKeptLayout(getResult()))
    return emitOpError("keeps oneDNN's layout, so every reader must be "
                       "a packed convolution reading it as its input or "
                       "as the operand of its sum, or a global average "
                       "pool on its device");
  return success();
}

/// Whether `use` reads its value as a convolution's input, or as the
/// operand of a sum after a convolution, in a sched.packed_product.
static bool takesKeptLayout(OpOperand &use) {
  Operation *user = use.getOwner();
  // A global average pool of a static f32 NCHW tensor on the producer's
  // device: the runtime pools the kept layout as it is (kept_pool).
  if (auto pool = dyn_cast<graph::GlobalAvgPoolOp>(user)) {
    auto type = cast<RankedTensorType>(pool.getInput().getType());
    Operation *producer = use.get().getDefiningOp();
    return type.getElementType().isF32() && type.getRank() == 4 &&
           type.hasStaticShape() && producer &&
           user->getAttr("device") == producer->getAttr("device");
  }
  auto reader = user->getParentOfType<PackedProductOp>();
  if (!reader || !isa<graph::Conv2dOp>(reader.getProduct()))
    return false;
  if (user == reader.getProduct())
    return use.getOperandNumber() == 0;
  // A post-op: its other operand is the value before it, in the body.
  for (Value chain : user->getOperands()) {
    Operation *def = chain.getDefiningOp();
    if (chain == use.get() || !def || def->getParentOp() != reader)
      continue;
    std::optional<CpuPostOp> post = cpuPostOp(user, chain, true);
    return post && post->isSum() && post->operand == use.get();
  }
  return false;
}

bool modelc::sched::suitsWinograd(graph::Conv2dOp conv) {
  auto is = [](ArrayRef<int64_t> values, int64_t want) {
    return llvm::all_of(values, [&](int64_t v) { return v == want; });
  };
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  ArrayRef<int64_t> w = weight.getShape();
  return input.getElementType().isF32() && conv.getGroups() == 1 &&
         is(conv.getStrides(), 1) && is(conv.getDilations(), 1) &&
         w.size() == 4 && w[2] == 3 && w[3] == 3 && w[0] % 16 == 0 &&
         w[1] % 16 == 0;
}

bool modelc::sched::readsKeptLayout(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUses(), [](OpOperand &use) {
    return takesKeptLayout(use);
  });
}

std::optional<std::array<int64_t, 18>>
modelc::sched::dnnlConvShape(Operation *op) {
  auto shapeOf = [](Value v) -> std::optional<ArrayRef<int64_t>> {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape() ||
        type.getRank() != 4)
      return std::nullopt;
    return type.getShape();
  };
  // x: the forward convolution's input, y: its output.
  std::optional<ArrayRef<int64_t>> x, y, w;
  ArrayRef<int64_t> strides, padding, dilations, kernel;
  int64_t groups = 1;
  if (auto conv = dyn_cast<graph::Conv2dOp>(op)) {
    x = shapeOf(conv.getInput());
    w = shapeOf(conv.getWeight());
    y = shapeOf(conv.getResult());
    if (conv.getBias() && !cast<RankedTensorType>(conv.getBias().getType())
                               .getElementType()
                               .isF32())
      return std::nullopt;
    strides = conv.getStrides();
    padding = conv.getPadding();
    dilations = conv.getDilations();
    groups = static_cast<int64_t>(conv.getGroups());
  } else if (auto conv = dyn_cast<graph::ConvTranspose2dOp>(op)) {
    if (conv.getBias())
      return std::nullopt;
    x = shapeOf(conv.getResult());
    w = shapeOf(conv.getWeight());
    y = shapeOf(conv.getInput());
    strides = conv.getStrides();
    padding = conv.getPadding();
    dilations = conv.getDilations();
    groups = static_cast<int64_t>(conv.getGroups());
  } else if (auto grad = dyn_cast<graph::Conv2dWeightGradOp>(op)) {
    x = shapeOf(grad.getInput());
    y = shapeOf(grad.getGrad());
    w = shapeOf(grad.getResult());
    strides = grad.getStrides();
    padding = grad.getPadding();
    dilations = grad.getDilations();
    groups = static_cast<int64_t>(grad.getGroups());
  } else {
    return std::nullopt;
  }
  if (!x || !y || !w || strides.size() != 2 || padding.size() != 4 ||
      dilations.size() != 2 || groups < 1)
    return std::nullopt;
  int64_t n = (*x)[0], c = (*x)[1], h = (*x)[2], wd = (*x)[3];
  int64_t o = (*y)[1], oh = (*y)[2], ow = (*y)[3];
  int64_t kh = (*w)[2], kw = (*w)[3];
  if (isa<graph::ConvTranspose2dOp>(op)) {
    // Its weight is [its input's channels = o, c / groups, kh, kw].
    if ((*w)[0] != o || (*w)[1] * groups != c)
      return std::nullopt;
  } else if ((*w)[0] != o || (*w)[1] * groups != c) {
    return std::nullopt;
  }
  if ((*y)[0] != n || c % groups || o % groups)
    return std::nullopt;
  // oneDNN's sizes: oh = (h + top + bottom - ((kh - 1) * dh + 1)) / sh + 1,
  // rounded down as ours: the least bottom padding that gives oh (0 where
  // the last rows are in no window: a strided convolution's, or a
  // transposed one's output padding).
  auto pad = [](int64_t in, int64_t out, int64_t k, int64_t s, int64_t d,
                int64_t before, int64_t after) -> std::optional<int64_t> {
    int64_t extent = (k - 1) * d + 1;
    int64_t need = std::max<int64_t>(0, (out - 1) * s + extent - in - before);
    if (s < 1 || need > after || (in + before + need - extent) / s + 1 != out)
      return std::nullopt;
    return need;
  };
  std::optional<int64_t> bottom =
      pad(h, oh, kh, strides[0], dilations[0], padding[0], padding[2]);
  std::optional<int64_t> right =
      pad(wd, ow, kw, strides[1], dilations[1], padding[1], padding[3]);
  if (!bottom || !right)
    return std::nullopt;
  return std::array<int64_t, 18>{n,
                                 c,
                                 h,
                                 wd,
                                 o,
                                 kh,
                                 kw,
                                 oh,
                                 ow,
                                 strides[0],
                                 strides[1],
                                 padding[0],
                                 padding[1],
                                 *bottom,
                                 *right,
                                 dilations[0],
                                 dilations[1],
                                 groups};
}

AllReduceWaitOp AllReduceStartOp::getWait() {
  for (Operation *user : getResult().getUsers())
    if (auto wait = dyn_cast<AllReduceWaitOp>(user))
      return wait;
  return {};
}

LogicalResult AllReduceStartOp::verify() {
  Operation *op = *this;
  if (!getResult().hasOneUse())
    return emitOpError("must have exactly one use, its "
                       "'sched.all_reduce_wait'");
  Operation *user = *getResult().getUsers().begin();
  if (!isa<AllReduceWaitOp>(user) || user->getBlock() != op->getBlock() ||
      !op->isBeforeInBlock(user))
    return emitOpError("must be used by a 'sched.all_reduce_wait' later in "
                       "its block");
  if (getSlot() < 0)
    return emitOpError("has a negative slot ") << getSlot();
  // Against the starts before it: the second of two reports it.
  for (Operation *other = op->getPrevNode(); other;
       other = other->getPrevNode())
    if (auto start = dyn_cast<AllReduceStartOp>(other);
        start && start.getSlot() == getSlot())
      return emitOpError("has slot ")
             << getSlot() << ", as an earlier start of its block";
  return success();
}

AllReduceStartOp AllReduceWaitOp::getStart() {
  return getStarted().getDefiningOp<AllReduceStartOp>();
}

LogicalResult AllReduceWaitOp::verify() {
  if (!getStart())
    return emitOpError("must wait for the result of a "
                       "'sched.all_reduce_start'");
  return success();
}
