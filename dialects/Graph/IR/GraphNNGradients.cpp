//===- GraphNNGradients.cpp - reverse-mode rules of the NN graph ops ------===//
//
// GradientOpInterface for convolutions, pooling, normalisation, concat,
// slice and the piecewise-linear elementwise ops (abs, max, min). Each rule
// spells its derivative with graph ops that have kernels already: a
// convolution's input gradient is a transposed convolution with the same
// weight, its weight gradient a convolution of the input with the output's
// gradient (batch and channels swapped); max pooling's goes to
// graph.max_pool2d_grad. Rules follow torch.autograd's formulas.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

using namespace mlir;

namespace modelc::graph {
namespace {

using Grads = SmallVectorImpl<Value>;

/// 0, 1, ..., n-1 except `skip`.
SmallVector<int64_t> allAxesBut(int64_t rank, int64_t skip) {
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != skip)
      axes.push_back(d);
  return axes;
}

/// `a` sliced to `[0, size)` along each spatial dimension (2, 3) where it
/// is larger.
Value cropSpatial(GradientBuilder &b, Value a, int64_t h, int64_t w) {
  if (!a)
    return nullptr;
  ArrayRef<int64_t> shape = tensorTypeOf(a).getShape();
  if (shape[2] == h && shape[3] == w)
    return a;
  OpBuilder &ob = b.getBuilder();
  return b.op<SliceOp>({a}, {b.named("starts", ob.getDenseI64ArrayAttr({0, 0})),
                             b.named("ends", ob.getDenseI64ArrayAttr({h, w})),
                             b.named("axes", ob.getDenseI64ArrayAttr({2, 3}))});
}

/// The gradient of a convolution's weight `[O, C/groups, KH, KW]` given its
/// input `x: [N, C, H, W]` and the gradient `g: [N, O, OH, OW]` of its
/// output (graph.conv2d_weight_grad).
Value convWeightGradient(GradientBuilder &b, Value x, Value g,
                         ArrayRef<int64_t> kernelShape,
                         ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                         ArrayRef<int64_t> dilations, int64_t groups) {
  OpBuilder &ob = b.getBuilder();
  return b.op<Conv2dWeightGradOp>(
      {x, g},
      {b.named("kernel", ob.getDenseI64ArrayAttr(kernelShape.drop_front(2))),
       b.named("strides", ob.getDenseI64ArrayAttr(strides)),
       b.named("padding", ob.getDenseI64ArrayAttr(padding)),
       b.named("dilations", ob.getDenseI64ArrayAttr(dilations)),
       b.named("groups", ob.getI64IntegerAttr(groups))});
}

} // namespace

//===--- Piecewise-linear elementwise ops ---------------------------------===//

LogicalResult AbsOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  if (!isa<FloatType>(getInput().getType().getElementType()))
    return b.notSupported(*this, "of integers");
  // torch: grad * sgn(x), 0 at 0.
  Value x = getInput(), zero = b.scalar(x, 0.0);
  Value g = dy[0];
  dx.push_back(b.select(b.compare(ComparePredicate::gt, x, zero), g,
                        b.select(b.compare(ComparePredicate::lt, x, zero),
                                 b.neg(g), b.scalar(g, 0.0))));
  return allBuilt(dx);
}

/// torch's maximum/minimum backward: the gradient goes to the operand that
/// wins, split in half where they are equal.
static LogicalResult extremumGradients(Operation *op, GradientBuilder &b,
                                       Value lhs, Value rhs, Value dy,
                                       ComparePredicate wins, Grads &dx) {
  if (!isa<FloatType>(tensorTypeOf(lhs).getElementType()))
    return b.notSupported(op, "of integers");
  Value zero = b.scalar(dy, 0.0);
  Value half = b.scale(dy, 0.5);
  Value equal = b.compare(ComparePredicate::eq, lhs, rhs);
  Value lhsWins = b.compare(wins, lhs, rhs);
  Value rhsWins = b.compare(wins, rhs, lhs);
  dx.push_back(b.sumToShape(b.select(lhsWins, dy, b.select(equal, half, zero)),
                            lhs.getType()));
  dx.push_back(b.sumToShape(b.select(rhsWins, dy, b.select(equal, half, zero)),
                            rhs.getType()));
  return allBuilt(dx);
}

LogicalResult MaxOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  return extremumGradients(*this, b, getLhs(), getRhs(), dy[0],
                           ComparePredicate::gt, dx);
}

LogicalResult MinOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  return extremumGradients(*this, b, getLhs(), getRhs(), dy[0],
                           ComparePredicate::lt, dx);
}

LogicalResult PowOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  if (!isa<FloatType>(getLhs().getType().getElementType()))
    return b.notSupported(*this, "of integers");
  // torch's pow_backward: d/da = b a^(b-1) (0 where b is 0), d/db = a^b
  // log(a) (0 where a is 0 and b >= 0, as torch masks it).
  Value a = getLhs(), e = getRhs(), g = dy[0];
  Value zero = b.scalar(g, 0.0);
  Value da = b.mul(g, b.mul(e, b.op<PowOp>({a, b.sub(e, b.scalar(e, 1.0))})));
  da = b.select(b.compare(ComparePredicate::eq, e, b.scalar(e, 0.0)), zero, da);
  dx.push_back(b.sumToShape(da, a.getType()));
  Value db = b.mul(g, b.mul(getResult(), b.op<LogOp>({a})));
  Value masked =
      b.select(b.compare(ComparePredicate::eq, a, b.scalar(a, 0.0)), zero, db);
  dx.push_back(b.sumToShape(masked, e.getType()));
  return allBuilt(dx);
}

LogicalResult SelectOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                       Grads &dx) {
  // The gradient goes where each side was chosen; none to the condition.
  dx.push_back(nullptr);
  for (auto [value, chosen] :
       {std::pair{getTrueValue(), true}, {getFalseValue(), false}}) {
    if (!isa<FloatType>(tensorTypeOf(value).getElementType())) {
      dx.push_back(nullptr);
      continue;
    }
    Value zero = b.scalar(dy[0], 0.0);
    Value g = chosen ? b.select(getCondition(), dy[0], zero)
                     : b.select(getCondition(), zero, dy[0]);
    dx.push_back(b.sumToShape(g, value.getType()));
    if (!dx.back())
      return failure();
  }
  return success();
}

//===--- Convolution ------------------------------------------------------===//

LogicalResult Conv2dOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                       Grads &dx) {
  ArrayRef<int64_t> xs = getInput().getType().getShape();
  ArrayRef<int64_t> ws = getWeight().getType().getShape();
  ArrayRef<int64_t> ys = getResult().getType().getShape();
  ArrayRef<int64_t> s = getStrides(), p = getPadding(), d = getDilations();
  int64_t groups = getGroups();
  OpBuilder &ob = b.getBuilder();
  // dx: the transposed convolution with the same weight, its output padding
  // making up the rows the forward's stride skipped at the end.
  SmallVector<int64_t> outputPadding;
  for (int i = 0; i < 2; ++i) {
    int64_t covered =
        (ys[2 + i] - 1) * s[i] - p[i] - p[2 + i] + d[i] * (ws[2 + i] - 1) + 1;
    outputPadding.push_back(xs[2 + i] - covered);
  }
  Value g = dy[0];
  Value gx = b.op<ConvTranspose2dOp>(
      {g, getWeight()},
      {b.named("strides", ob.getDenseI64ArrayAttr(s)),
       b.named("padding", ob.getDenseI64ArrayAttr(p)),
       b.named("output_padding", ob.getDenseI64ArrayAttr(outputPadding)),
       b.named("dilations", ob.getDenseI64ArrayAttr(d)),
       b.named("groups", ob.getI64IntegerAttr(groups))});
  dx.push_back(gx);
  dx.push_back(convWeightGradient(b, getInput(), g, ws, s, p, d, groups));
  if (getBias())
    dx.push_back(b.reduceSum(g, {0, 2, 3}, false));
  return allBuilt(dx);
}

LogicalResult ConvTranspose2dOp::buildGradients(GradientBuilder &b,
                                                ArrayRef<Value> dy, Grads &dx) {
  ArrayRef<int64_t> xs = getInput().getType().getShape();
  ArrayRef<int64_t> ws = getWeight().getType().getShape();
  ArrayRef<int64_t> s = getStrides(), p = getPadding(), d = getDilations();
  int64_t groups = getGroups();
  OpBuilder &ob = b.getBuilder();
  Value g = dy[0];
  // dx: the forward convolution of the gradient with the same weight
  // ([C, O/groups, KH, KW] is a convolution's [out, in/groups, ...]); an
  // output padding of a stride or more leaves rows to crop.
  Value gx = b.op<Conv2dOp>({g, getWeight()},
                            {b.named("strides", ob.getDenseI64ArrayAttr(s)),
                             b.named("padding", ob.getDenseI64ArrayAttr(p)),
                             b.named("dilations", ob.getDenseI64ArrayAttr(d)),
                             b.named("groups", ob.getI64IntegerAttr(groups))});
  dx.push_back(cropSpatial(b, gx, xs[2], xs[3]));
  // dW: the weight gradient of that convolution, the roles of input and
  // output swapped (its input is g, its output's gradient x).
  dx.push_back(convWeightGradient(b, g, getInput(), ws, s, p, d, groups));
  if (getBias())
    dx.push_back(b.reduceSum(g, {0, 2, 3}, false));
  return allBuilt(dx);
}

//===--- Pooling ----------------------------------------------------------===//

LogicalResult MaxPool2dOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  OpBuilder &ob = b.getBuilder();
  SmallVector<NamedAttribute> attrs{
      b.named("kernel", getKernelAttr()),
      b.named("strides", ob.getDenseI64ArrayAttr(getNormalizedStrides())),
      b.named("padding", getPaddingAttr())};
  dx.push_back(b.op<MaxPool2dGradOp>({getInput(), dy[0]}, attrs));
  return allBuilt(dx);
}

LogicalResult AvgPool2dOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  // Each output's gradient divided by its window's divisor (PyTorch's: the
  // window clipped to input + padding, or to the input without
  // count_include_pad) and spread over the window: a transposed
  // convolution of the planes with a kernel of ones.
  ArrayRef<int64_t> xs = getInput().getType().getShape();
  ArrayRef<int64_t> ys = getResult().getType().getShape();
  ArrayRef<int64_t> k = getKernel(), s = getNormalizedStrides(),
                    p = getPadding();
  int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], oh = ys[2], ow = ys[3];
  Type element = getInput().getType().getElementType();
  SmallVector<Attribute> divisors;
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) {
      int64_t y0 = oy * s[0] - p[0], x0 = ox * s[1] - p[1];
      int64_t y1 = std::min(y0 + k[0], h + p[2]);
      int64_t x1 = std::min(x0 + k[1], w + p[3]);
      int64_t count = (y1 - y0) * (x1 - x0);
      if (!getCountIncludePad())
        count = (std::min(y1, h) - std::max<int64_t>(y0, 0)) *
                (std::min(x1, w) - std::max<int64_t>(x0, 0));
      divisors.push_back(
          FloatAttr::get(element, count > 0 ? 1.0 / double(count) : 0.0));
    }
  OpBuilder &ob = b.getBuilder();
  Value scale = ConstantOp::create(
      ob, b.getLoc(),
      DenseElementsAttr::get(RankedTensorType::get({oh, ow}, element),
                             divisors));
  Value g = b.reshape(b.mul(dy[0], scale), {n * c, 1, oh, ow});
  Value ones = b.splat(RankedTensorType::get({1, 1, k[0], k[1]}, element), 1.0);
  SmallVector<int64_t> outputPadding;
  bool crop = false;
  for (int i = 0; i < 2; ++i) {
    int64_t covered = (ys[2 + i] - 1) * s[i] - p[i] - p[2 + i] + (k[i] - 1) + 1;
    int64_t extra = xs[2 + i] - covered;
    crop |= extra < 0;
    outputPadding.push_back(std::max<int64_t>(extra, 0));
  }
  // ceil_mode windows that run past the padding leave output rows to crop.
  SmallVector<int64_t> padding(p);
  if (crop)
    for (int i = 0; i < 2; ++i)
      padding[2 + i] = 0;
  Value gx = b.op<ConvTranspose2dOp>(
      {g, ones},
      {b.named("strides", ob.getDenseI64ArrayAttr(s)),
       b.named("padding", ob.getDenseI64ArrayAttr(padding)),
       b.named("output_padding", ob.getDenseI64ArrayAttr(outputPadding))});
  if (crop) {
    // Without end padding the output is at least the input's size.
    for (int i = 0; i < 2; ++i) {
      int64_t covered = (ys[2 + i] - 1) * s[i] - p[i] + (k[i] - 1) + 1;
      if (covered < xs[2 + i])
        return b.notSupported(*this, "with this ceil_mode window");
    }
    gx = cropSpatial(b, gx, h, w);
  }
  dx.push_back(b.reshape(gx, xs));
  return allBuilt(dx);
}

LogicalResult GlobalAvgPoolOp::buildGradients(GradientBuilder &b,
                                              ArrayRef<Value> dy, Grads &dx) {
  RankedTensorType type = getInput().getType();
  int64_t spatial =
      type.getNumElements() / (type.getDimSize(0) * type.getDimSize(1));
  dx.push_back(b.mul(dy[0], b.splat(type, 1.0 / double(spatial))));
  return allBuilt(dx);
}

//===--- Normalisation ----------------------------------------------------===//

LogicalResult LayerNormOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  // xhat = (x - mean) rstd over [axis, rank); with g = dy scale:
  // dx = rstd (g - mean(g) - xhat mean(g xhat)); dscale = sum of dy xhat,
  // dbias = sum of dy, over the leading dimensions.
  RankedTensorType type = getInput().getType();
  int64_t axis = getNormalizedAxis(), rank = type.getRank();
  SmallVector<int64_t> normalized, leading;
  for (int64_t d = 0; d < rank; ++d)
    (d >= axis ? normalized : leading).push_back(d);
  OpBuilder &ob = b.getBuilder();
  auto mean = [&](Value v) {
    return b.op<ReduceMeanOp>(
        {v}, {b.named("axes", ob.getDenseI64ArrayAttr(normalized)),
              b.named("keepdims", ob.getBoolAttr(true))});
  };
  Value x = getInput();
  Value centered = b.sub(x, mean(x));
  Value rstd =
      b.op<RsqrtOp>({b.add(mean(b.mul(centered, centered)),
                           b.scalar(x, getEpsilon().convertToDouble()))});
  Value xhat = b.mul(centered, rstd);
  Value g = getScale() ? b.mul(dy[0], getScale()) : dy[0];
  dx.push_back(
      b.mul(rstd, b.sub(b.sub(g, mean(g)), b.mul(xhat, mean(b.mul(g, xhat))))));
  if (getScale())
    dx.push_back(b.reduceSum(b.mul(dy[0], xhat), leading, false));
  if (getBias())
    dx.push_back(b.reduceSum(dy[0], leading, false));
  return allBuilt(dx);
}

LogicalResult BatchNormOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  // The inference form (running statistics, constants here): y = (x -
  // mean) rstd scale + bias per channel. (The training form is rewritten to
  // reductions by modelc-training-mode before differentiation.)
  RankedTensorType type = getInput().getType();
  int64_t c = type.getDimSize(1);
  SmallVector<int64_t> perChannel(type.getRank(), 1);
  perChannel[1] = c;
  SmallVector<int64_t> axes = allAxesBut(type.getRank(), 1);
  Value rstd = b.reshape(
      b.op<RsqrtOp>(
          {b.add(getVariance(),
                 b.scalar(getVariance(), getEpsilon().convertToDouble()))}),
      perChannel);
  Value xhat = b.mul(b.sub(getInput(), b.reshape(getMean(), perChannel)), rstd);
  dx.push_back(b.mul(dy[0], b.mul(rstd, b.reshape(getScale(), perChannel))));
  dx.push_back(b.reduceSum(b.mul(dy[0], xhat), axes, false));
  dx.push_back(b.reduceSum(dy[0], axes, false));
  if (failed(allBuilt(dx)))
    return failure();
  dx.push_back(nullptr); // running mean and variance: buffers
  dx.push_back(nullptr);
  return success();
}

//===--- Data movement ----------------------------------------------------===//

LogicalResult ConcatOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                       Grads &dx) {
  int64_t axis = getNormalizedAxis(), offset = 0;
  OpBuilder &ob = b.getBuilder();
  for (Value input : getInputs()) {
    int64_t size = tensorTypeOf(input).getDimSize(axis);
    if (!isa<FloatType>(tensorTypeOf(input).getElementType())) {
      dx.push_back(nullptr);
    } else {
      dx.push_back(b.op<SliceOp>(
          {dy[0]}, {b.named("starts", ob.getDenseI64ArrayAttr({offset})),
                    b.named("ends", ob.getDenseI64ArrayAttr({offset + size})),
                    b.named("axes", ob.getDenseI64ArrayAttr({axis}))}));
      if (!dx.back())
        return failure();
    }
    offset += size;
  }
  return success();
}

LogicalResult GatherOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                       Grads &dx) {
  // Each gathered slice's gradient added back where it was read.
  RankedTensorType data = getData().getType();
  if (!isa<FloatType>(data.getElementType()))
    dx.push_back(nullptr);
  else
    dx.push_back(b.op<GatherGradOp>(
        {dy[0], getIndices()},
        {b.named("axis", b.getBuilder().getI64IntegerAttr(getNormalizedAxis())),
         b.named("size", b.getBuilder().getI64IntegerAttr(
                             data.getDimSize(getNormalizedAxis())))}));
  dx.push_back(nullptr); // indices
  return success(dx[0] || !isa<FloatType>(data.getElementType()));
}

LogicalResult AllReduceOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  // Each rank's input reaches every rank's result: the adjoint sums the
  // results' gradients over the ranks.
  dx.push_back(b.op<AllReduceOp>({dy[0]}, {}));
  return success(static_cast<bool>(dx[0]));
}

LogicalResult DropoutOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                        Grads &dx) {
  // The same mask (the same step, seed and site) on the gradient.
  SmallVector<Value> operands{dy[0]};
  if (getStep())
    operands.push_back(getStep());
  dx.push_back(b.op<DropoutOp>(
      operands,
      {b.named("ratio", getRatioAttr()), b.named("seed", getSeedAttr()),
       b.named("site", getSiteAttr()), b.named("offset", getOffsetAttr()),
       b.named("rank_stride", getRankStrideAttr())}));
  if (getStep())
    dx.push_back(nullptr); // the step count
  return success(static_cast<bool>(dx[0]));
}

LogicalResult SliceOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                      Grads &dx) {
  // One sliced axis at a time: the gradient's elements spread back to their
  // places (a step s puts s - 1 zeros after each; steps are positive, as
  // the verifier asks), then zeros before and after the window (concats).
  RankedTensorType type = getInput().getType();
  if (!isa<FloatType>(type.getElementType())) {
    dx.push_back(nullptr);
    return success();
  }
  NormalizedSlice slice = getNormalizedSlice();
  Value g = dy[0];
  SmallVector<int64_t> shape(tensorTypeOf(g).getShape());
  OpBuilder &ob = b.getBuilder();
  auto zerosLike = [&](ArrayRef<int64_t> s) {
    return b.splat(RankedTensorType::get(s, type.getElementType()), 0.0);
  };
  auto concat = [&](ArrayRef<Value> parts, int64_t axis) {
    return b.op<ConcatOp>(parts, {b.named("axis", ob.getI64IntegerAttr(axis))});
  };
  for (int64_t d = 0; d < type.getRank() && g; ++d) {
    int64_t start = slice.starts[d], size = slice.sizes[d];
    int64_t step = size > 1 ? slice.steps[d] : 1;
    int64_t full = type.getDimSize(d);
    if (size == full && step == 1)
      continue;
    if (size == 0) { // nothing was read: a zero gradient
      shape[d] = full;
      g = zerosLike(shape);
      continue;
    }
    int64_t span = size; // the elements [start, start + span) cover
    if (step > 1) {
      // [.., size, ..] -> [.., size, 1, ..], then step - 1 zeros after
      // each along the new axis, flattened back: [.., size * step, ..].
      SmallVector<int64_t> column(shape);
      column.insert(column.begin() + d + 1, 1);
      SmallVector<int64_t> gaps(column);
      gaps[d + 1] = step - 1;
      g = concat({b.reshape(g, column), zerosLike(gaps)}, d + 1);
      shape[d] = size * step;
      g = b.reshape(g, shape);
      span = size * step;
    }
    if (start + span > full) {
      // The last gaps run past the end: keep [0, full - start).
      g = b.op<SliceOp>(
          {g}, {b.named("starts", ob.getDenseI64ArrayAttr({0})),
                b.named("ends", ob.getDenseI64ArrayAttr({full - start})),
                b.named("axes", ob.getDenseI64ArrayAttr({d}))});
      span = full - start;
      shape[d] = span;
    }
    SmallVector<Value> parts;
    auto zeros = [&](int64_t count) {
      SmallVector<int64_t> s = shape;
      s[d] = count;
      return zerosLike(s);
    };
    if (start > 0)
      parts.push_back(zeros(start));
    parts.push_back(g);
    if (full - start - span > 0)
      parts.push_back(zeros(full - start - span));
    if (parts.size() > 1)
      g = concat(parts, d);
    shape[d] = full;
  }
  if (!g)
    return failure();
  dx.push_back(g);
  return success();
}

} // namespace modelc::graph
