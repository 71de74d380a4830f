//===- GraphGradients.cpp - each graph op's reverse-mode rule -------------===//
//
// GradientOpInterface for the graph ops that have a derivative: given the
// gradient of each result, the gradient of each operand, spelled as graph
// ops (so the backward runs wherever the forward can). Rules follow
// torch.autograd's formulas (derivatives.yaml); where PyTorch picks a
// subgradient (relu at 0) they pick the same.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GradientBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;

namespace modelc::graph {
namespace {

using Grads = SmallVectorImpl<Value>;

} // namespace

//===--- Elementwise ------------------------------------------------------===//

LogicalResult NegOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  dx.push_back(b.neg(dy[0]));
  return allBuilt(dx);
}

LogicalResult ReluOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  // torch: threshold_backward(grad, x, 0): the gradient where x > 0.
  Value positive =
      b.compare(ComparePredicate::gt, getInput(), b.scalar(getInput(), 0.0));
  dx.push_back(b.select(positive, dy[0], b.scalar(dy[0], 0.0)));
  return allBuilt(dx);
}

LogicalResult LeakyReluOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  Value positive =
      b.compare(ComparePredicate::gt, getInput(), b.scalar(getInput(), 0.0));
  dx.push_back(
      b.select(positive, dy[0], b.scale(dy[0], getAlpha().convertToDouble())));
  return allBuilt(dx);
}

LogicalResult ExpOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  dx.push_back(b.mul(dy[0], getResult()));
  return allBuilt(dx);
}

LogicalResult LogOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  dx.push_back(b.div(dy[0], getInput()));
  return allBuilt(dx);
}

LogicalResult SqrtOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  dx.push_back(b.div(dy[0], b.scale(getResult(), 2.0)));
  return allBuilt(dx);
}

LogicalResult RsqrtOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                      Grads &dx) {
  // d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 y^3.
  Value y = getResult();
  dx.push_back(b.mul(dy[0], b.scale(b.mul(y, b.mul(y, y)), -0.5)));
  return allBuilt(dx);
}

LogicalResult TanhOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  Value y = getResult();
  dx.push_back(b.mul(dy[0], b.sub(b.scalar(y, 1.0), b.mul(y, y))));
  return allBuilt(dx);
}

LogicalResult SigmoidOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                        Grads &dx) {
  Value y = getResult();
  dx.push_back(b.mul(dy[0], b.mul(y, b.sub(b.scalar(y, 1.0), y))));
  return allBuilt(dx);
}

LogicalResult SiluOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  // s + x s (1 - s), s = sigmoid(x).
  Value x = getInput();
  Value s = b.sigmoid(x);
  Value d =
      b.mul(s, b.add(b.scalar(x, 1.0), b.mul(x, b.sub(b.scalar(x, 1.0), s))));
  dx.push_back(b.mul(dy[0], d));
  return allBuilt(dx);
}

LogicalResult ErfOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  Value x = getInput();
  Value d = b.scale(b.exp(b.neg(b.mul(x, x))), 2.0 / std::sqrt(M_PI));
  dx.push_back(b.mul(dy[0], d));
  return allBuilt(dx);
}

LogicalResult GeluOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  Value x = getInput();
  Value one = b.scalar(x, 1.0);
  Value d;
  if (getApproximate() == GeluApproximation::none) {
    // Phi(x) + x phi(x): Phi = (1 + erf(x/sqrt2))/2, phi =
    // e^(-x^2/2)/sqrt(2pi).
    Value cdf = b.scale(b.add(one, b.erf(b.scale(x, M_SQRT1_2))), 0.5);
    Value pdf =
        b.scale(b.exp(b.scale(b.mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
    d = b.add(cdf, b.mul(x, pdf));
  } else {
    // y = x/2 (1 + t), t = tanh(u), u = k (x + c x^3):
    // dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2).
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Value x2 = b.mul(x, x);
    Value u = b.scale(b.add(x, b.scale(b.mul(x2, x), c)), k);
    Value t = b.tanh(u);
    Value du = b.scale(b.add(one, b.scale(x2, 3.0 * c)), k);
    Value left = b.scale(b.add(one, t), 0.5);
    Value right = b.mul(b.scale(x, 0.5), b.mul(b.sub(one, b.mul(t, t)), du));
    d = b.add(left, right);
  }
  dx.push_back(b.mul(dy[0], d));
  return allBuilt(dx);
}

LogicalResult AddOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  dx.push_back(b.sumToShape(dy[0], getLhs().getType()));
  dx.push_back(b.sumToShape(dy[0], getRhs().getType()));
  return allBuilt(dx);
}

LogicalResult SubOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  dx.push_back(b.sumToShape(dy[0], getLhs().getType()));
  dx.push_back(b.sumToShape(b.neg(dy[0]), getRhs().getType()));
  return allBuilt(dx);
}

LogicalResult MulOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  dx.push_back(b.sumToShape(b.mul(dy[0], getRhs()), getLhs().getType()));
  dx.push_back(b.sumToShape(b.mul(dy[0], getLhs()), getRhs().getType()));
  return allBuilt(dx);
}

LogicalResult DivOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                    Grads &dx) {
  if (!isa<FloatType>(getResult().getType().getElementType()))
    return b.notSupported(*this, "of integer division");
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = -y/b.
  Value da = b.div(dy[0], getRhs());
  dx.push_back(b.sumToShape(da, getLhs().getType()));
  dx.push_back(b.sumToShape(b.neg(b.mul(da, getResult())), getRhs().getType()));
  return allBuilt(dx);
}

LogicalResult CastOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  Type from = getInput().getType().getElementType();
  if (!isa<FloatType>(from) ||
      !isa<FloatType>(getResult().getType().getElementType())) {
    dx.push_back(nullptr); // no gradient through integers
    return success();
  }
  dx.push_back(b.cast(dy[0], from));
  return allBuilt(dx);
}

//===--- Matrix products --------------------------------------------------===//

LogicalResult MatmulOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                       Grads &dx) {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  if (!isa<FloatType>(lhs.getElementType()))
    return b.notSupported(*this, "of integers");
  if (lhs.getRank() == 2 && rhs.getRank() == 2) {
    dx.push_back(b.gemm(dy[0], getRhs(), false, true));
    dx.push_back(b.gemm(getLhs(), dy[0], true, false));
    return allBuilt(dx);
  }
  // B shared by every matrix of A (its batch dimensions all 1, or none: a
  // weight, as nn.Linear on a 3-D input is exported): A's matrices are rows
  // of one [rows, K] matrix, so dB = A^T g is one product over all rows and
  // dA = g B^T one product too. A product per batch entry summed after
  // would hold batch x K x N in memory (an encoder's input projection: 50
  // MB for a 0.8 MB gradient).
  ArrayRef<int64_t> rhsShape = rhs.getShape();
  if (llvm::all_of(rhsShape.drop_back(2), [](int64_t d) { return d == 1; })) {
    int64_t k = rhsShape[rhsShape.size() - 2], n = rhsShape.back();
    int64_t rows = lhs.getNumElements() / std::max<int64_t>(k, 1);
    Value b2 = b.reshape(getRhs(), {k, n});
    Value g2 = b.reshape(dy[0], {rows, n});
    Value a2 = b.reshape(getLhs(), {rows, k});
    dx.push_back(b.reshape(b.gemm(g2, b2, false, true), lhs.getShape()));
    dx.push_back(b.reshape(b.gemm(a2, g2, true, false), rhsShape));
    return allBuilt(dx);
  }
  // Batched: dA = g B^T, dB = A^T g with the batch dimensions summed back.
  auto swapLast = [&](Value v) {
    int64_t rank = tensorTypeOf(v).getRank();
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return b.transpose(v, perm);
  };
  dx.push_back(b.sumToShape(b.matmul(dy[0], swapLast(getRhs())), lhs));
  dx.push_back(b.sumToShape(b.matmul(swapLast(getLhs()), dy[0]), rhs));
  return allBuilt(dx);
}

LogicalResult LinearOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                       Grads &dx) {
  // y = x W^T + b over rows: with x as [B, K] and g as [B, N]:
  // dx = g W, dW = g^T x, db = sum of g's rows.
  RankedTensorType x = getInput().getType();
  RankedTensorType w = getWeight().getType();
  int64_t n = w.getDimSize(0), k = w.getDimSize(1);
  int64_t rows = x.getNumElements() / k;
  Value g = b.reshape(dy[0], {rows, n});
  Value x2 = b.reshape(getInput(), {rows, k});
  dx.push_back(b.reshape(b.gemm(g, getWeight(), false, false), x.getShape()));
  dx.push_back(b.gemm(g, x2, true, false));
  if (getBias())
    dx.push_back(b.reduceSum(g, {0}, false));
  return allBuilt(dx);
}

LogicalResult GemmOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                     Grads &dx) {
  if (!isa<FloatType>(getA().getType().getElementType()))
    return b.notSupported(*this, "of integers");
  bool ta = getTransposeA(), tb = getTransposeB();
  double alpha = getAlpha().convertToDouble();
  Value g = dy[0];
  // Y = alpha op(A) op(B): d op(A) = alpha g op(B)^T, d op(B) = alpha op(A)^T
  // g.
  Value da = ta ? b.gemm(getB(), g, tb, true, alpha)
                : b.gemm(g, getB(), false, !tb, alpha);
  Value db = tb ? b.gemm(g, getA(), true, ta, alpha)
                : b.gemm(getA(), g, !ta, false, alpha);
  dx.push_back(da);
  dx.push_back(db);
  if (getC())
    dx.push_back(b.sumToShape(b.scale(g, getBeta().convertToDouble()),
                              getC().getType()));
  return allBuilt(dx);
}

//===--- Normalization ----------------------------------------------------===//

LogicalResult SoftmaxOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                        Grads &dx) {
  // y (g - sum(g y)) along the axis.
  Value y = getResult();
  Value dot = b.reduceSum(b.mul(dy[0], y), {getNormalizedAxis()}, true);
  dx.push_back(b.mul(y, b.sub(dy[0], dot)));
  return allBuilt(dx);
}

LogicalResult LogSoftmaxOp::buildGradients(GradientBuilder &b,
                                           ArrayRef<Value> dy, Grads &dx) {
  // g - exp(y) sum(g) along the axis.
  Value total = b.reduceSum(dy[0], {getNormalizedAxis()}, true);
  dx.push_back(b.sub(dy[0], b.mul(b.exp(getResult()), total)));
  return allBuilt(dx);
}

//===--- Shapes -----------------------------------------------------------===//

LogicalResult ReshapeOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                        Grads &dx) {
  dx.push_back(b.reshape(dy[0], getInput().getType().getShape()));
  return allBuilt(dx);
}

LogicalResult FlattenOp::buildGradients(GradientBuilder &b, ArrayRef<Value> dy,
                                        Grads &dx) {
  dx.push_back(b.reshape(dy[0], getInput().getType().getShape()));
  return allBuilt(dx);
}

LogicalResult TransposeOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  dx.push_back(b.transpose(dy[0], inverse));
  return allBuilt(dx);
}

//===--- Reductions and losses --------------------------------------------===//

/// The gradient of a sum over `reduced` dimensions of `input`, `g`, spread
/// back over them.
static Value spreadReduction(GradientBuilder &b, Value g, Value input,
                             const llvm::SmallBitVector &reduced) {
  RankedTensorType type = tensorTypeOf(input);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < type.getRank(); ++d)
    kept.push_back(reduced.test(d) ? 1 : type.getDimSize(d));
  return b.broadcastTo(b.reshape(g, kept), type.getShape());
}

LogicalResult ReduceSumOp::buildGradients(GradientBuilder &b,
                                          ArrayRef<Value> dy, Grads &dx) {
  if (!isa<FloatType>(getInput().getType().getElementType())) {
    dx.push_back(nullptr);
    return success();
  }
  dx.push_back(spreadReduction(b, dy[0], getInput(), getReducedDims()));
  return allBuilt(dx);
}

LogicalResult ReduceMeanOp::buildGradients(GradientBuilder &b,
                                           ArrayRef<Value> dy, Grads &dx) {
  if (!isa<FloatType>(getInput().getType().getElementType())) {
    dx.push_back(nullptr);
    return success();
  }
  llvm::SmallBitVector reduced = getReducedDims();
  int64_t count = 1;
  for (int d : reduced.set_bits())
    count *= getInput().getType().getDimSize(d);
  dx.push_back(spreadReduction(b, b.scale(dy[0], 1.0 / double(count)),
                               getInput(), reduced));
  return allBuilt(dx);
}

LogicalResult CrossEntropyOp::buildGradients(GradientBuilder &b,
                                             ArrayRef<Value> dy, Grads &dx) {
  // Per sample i with target t_i and weight w_i = weight[t_i] (1 without
  // weights; 0 when t_i is ignore_index): dlogits_i = w_i (softmax_i -
  // onehot(t_i)) times the sample's share of the loss's gradient: g for
  // sum, g / sum(w) for mean, g_i for none.
  Value logits = getLogits(), targets = getTargets();
  RankedTensorType type = getLogits().getType();
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  Type element = type.getElementType();
  Type index = tensorTypeOf(targets).getElementType();
  OpBuilder &ob = b.getBuilder();

  Value ignore = b.scalar(
      targets, static_cast<double>(static_cast<int64_t>(getIgnoreIndex())));
  Value kept = b.compare(ComparePredicate::ne, targets, ignore);
  Value keptF = b.cast(kept, element); // [N]
  Value w = keptF;
  if (getWeight()) {
    // An ignored target reads class 0's weight, then counts 0.
    Value safe = b.select(kept, targets, b.scalar(targets, 0.0));
    w = b.mul(b.op<GatherOp>({getWeight(), safe}), keptF);
  }
  SmallVector<APInt> classes;
  for (int64_t j = 0; j < c; ++j)
    classes.push_back(APInt(index.getIntOrFloatBitWidth(), j, true));
  Value iota = ConstantOp::create(
      ob, b.getLoc(),
      DenseElementsAttr::get(RankedTensorType::get({1, c}, index), classes));
  Value onehot =
      b.cast(b.compare(ComparePredicate::eq, b.reshape(targets, {n, 1}), iota),
             element);
  Value diff = b.sub(b.op<SoftmaxOp>({logits}), onehot); // [N, C]
  Value share = getReduction() == Reduction::mean        // [N]
                    ? b.mul(w, b.div(dy[0], b.reduceSum(w, {0}, false)))
                    : b.mul(w, dy[0]); // sum: g; none: g_i
  dx.push_back(b.mul(diff, b.reshape(share, {n, 1})));
  dx.push_back(nullptr); // targets
  if (getWeight())
    dx.push_back(nullptr); // class weights: a buffer, not trained
  return success(dx[0] != nullptr);
}

} // namespace modelc::graph
