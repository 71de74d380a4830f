//===- RaiseComposites.cpp - formulas back to the graph ops they compute --===//
//
// Finds GELU spelled as a formula (PyTorch's ONNX export of F.gelu, exact
// and tanh-approximated) and replaces it with graph.gelu; a square spelled
// as pow becomes a product; LayerNorm spelled as means, a square root and a
// division (PyTorch's exports before opset 17) becomes graph.layer_norm,
// with its affine Mul and Add as scale and bias.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace modelc {
#define GEN_PASS_DEF_RAISECOMPOSITESPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// The value of a one-element f32 constant, or nullopt.
std::optional<double> scalarConstant(Value v) {
  std::optional<APFloat> value = floatScalar(v);
  if (!value || &value->getSemantics() != &APFloat::IEEEsingle())
    return std::nullopt;
  return value->convertToDouble();
}

bool near(std::optional<double> value, double want) {
  return value && std::abs(*value - want) <= 1e-6 * std::abs(want);
}

bool isScalar(Value v, double want) { return near(scalarConstant(v), want); }

/// The factors of a product tree rooted at `v`: multiplications whose
/// value only the product reads are opened up.
void factors(Value v, bool root, SmallVectorImpl<Value> &out) {
  auto mul = v.getDefiningOp<MulOp>();
  if (mul && (root || v.hasOneUse())) {
    factors(mul.getLhs(), false, out);
    factors(mul.getRhs(), false, out);
    return;
  }
  out.push_back(v);
}

/// Whether `v` is `a op b` for the commutative `OpTy`, with `a` matching
/// `first` and `b` matching `second` in either order; `v` has one reader.
template <typename OpTy, typename F, typename G>
bool commutes(Value v, F first, G second) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || !v.hasOneUse())
    return false;
  Value a = op->getOperand(0), b = op->getOperand(1);
  return (first(a) && second(b)) || (first(b) && second(a));
}

/// x / sqrt(2) or x * (1 / sqrt(2)).
bool isScaledForErf(Value v, Value x) {
  if (auto div = v.getDefiningOp<DivOp>())
    return v.hasOneUse() && div.getLhs() == x &&
           isScalar(div.getRhs(), std::sqrt(2.0));
  return commutes<MulOp>(
      v, [&](Value a) { return a == x; },
      [](Value c) { return isScalar(c, 1.0 / std::sqrt(2.0)); });
}

/// x^3 as x * (x * x) in any order.
bool isCube(Value v, Value x) {
  auto square = [&](Value s) {
    return commutes<MulOp>(
        s, [&](Value a) { return a == x; }, [&](Value b) { return b == x; });
  };
  return commutes<MulOp>(
      v, [&](Value a) { return a == x; }, square);
}

/// sqrt(2/pi) * (x + 0.044715 * x^3).
bool isTanhArgument(Value v, Value x) {
  auto cubic = [&](Value s) {
    auto scaledCube = [&](Value c) {
      return commutes<MulOp>(
          c, [](Value k) { return isScalar(k, 0.044715); },
          [&](Value cube) { return isCube(cube, x); });
    };
    return commutes<AddOp>(
        s, [&](Value a) { return a == x; }, scaledCube);
  };
  return commutes<MulOp>(
      v, [](Value k) { return isScalar(k, std::sqrt(2.0 / M_PI)); }, cubic);
}

/// 1 + erf(...) or 1 + tanh(...) of `x`: which GELU, or nullopt.
std::optional<GeluApproximation> geluBracket(Value v, Value x) {
  std::optional<GeluApproximation> kind;
  auto function = [&](Value f) {
    if (!f.hasOneUse())
      return false;
    if (auto erf = f.getDefiningOp<ErfOp>();
        erf && isScaledForErf(erf.getInput(), x))
      kind = GeluApproximation::none;
    else if (auto tanh = f.getDefiningOp<TanhOp>();
             tanh && isTanhArgument(tanh.getInput(), x))
      kind = GeluApproximation::tanh;
    return kind.has_value();
  };
  if (!commutes<AddOp>(
          v, [](Value c) { return isScalar(c, 1.0); }, function))
    return std::nullopt;
  return kind;
}

/// 0.5 * x * (1 + erf(x / sqrt(2))) and its tanh approximation ==>
/// graph.gelu x.
struct RaiseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> parts;
    factors(root.getResult(), true, parts);
    if (parts.size() != 3)
      return failure();
    auto half = llvm::find_if(parts, [](Value v) { return isScalar(v, 0.5); });
    if (half == parts.end())
      return failure();
    parts.erase(half);
    for (auto [x, bracket] :
         {std::pair(parts[0], parts[1]), std::pair(parts[1], parts[0])}) {
      if (x.getType() != root.getType())
        continue;
      if (std::optional<GeluApproximation> kind = geluBracket(bracket, x)) {
        rewriter.replaceOpWithNewOp<GeluOp>(root, x, *kind);
        return success();
      }
    }
    return failure();
  }
};

/// x ^ 2 ==> x * x (PyTorch's exports spell LayerNorm's variance before
/// opset 17, and `x ** 2`, as Pow). The product is the correctly rounded
/// square (pow gives it within an ulp) and one multiply where pow is a
/// call.
struct SquareAsProduct : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PowOp pow,
                                PatternRewriter &rewriter) const override {
    Value x = pow.getLhs();
    if (x.getType() != pow.getType() || scalarConstant(pow.getRhs()) != 2.0)
      return failure(); // exactly 2: x ^ 2.0000001 is not a square
    rewriter.replaceOpWithNewOp<MulOp>(pow, x, x);
    return success();
  }
};

/// The first normalized dimension when `mean` is a reduce_mean of `x`
/// over trailing dimensions [axis, rank) with keepdims; nullopt otherwise.
std::optional<int64_t> trailingMean(Value mean, Value x) {
  auto reduce = mean.getDefiningOp<ReduceMeanOp>();
  if (!reduce || reduce.getInput() != x || !reduce.getKeepdims())
    return std::nullopt;
  llvm::SmallBitVector reduced = reduce.getReducedDims();
  int64_t rank = reduced.size(), axis = rank;
  while (axis > 0 && reduced[axis - 1])
    --axis;
  if (axis == rank || reduced.count() != static_cast<unsigned>(rank - axis))
    return std::nullopt;
  return axis;
}

/// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps), the means over the
/// trailing dimensions [axis, rank) (PyTorch's export of LayerNorm before
/// opset 17, the square a product after SquareAsProduct or still a pow)
/// ==> graph.layer_norm x {axis, epsilon}. Every intermediate value is
/// read only inside the formula.
struct RaiseLayerNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp root,
                                PatternRewriter &rewriter) const override {
    auto centered = root.getLhs().getDefiningOp<SubOp>();
    auto sqrt = root.getRhs().getDefiningOp<SqrtOp>();
    if (!centered || !sqrt || !sqrt->hasOneUse() ||
        root.getType() != centered.getType())
      return failure();
    Value x = centered.getLhs(), d = centered.getResult();
    if (x.getType() != root.getType() || !centered.getRhs().hasOneUse())
      return failure();
    std::optional<int64_t> axis = trailingMean(centered.getRhs(), x);
    if (!axis)
      return failure();
    // sqrt(variance + eps), in either order.
    auto add = sqrt.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      return failure();
    Value variance = add.getLhs();
    std::optional<double> eps = scalarConstant(add.getRhs());
    if (!eps) {
      variance = add.getRhs();
      eps = scalarConstant(add.getLhs());
    }
    auto varianceMean = variance.getDefiningOp<ReduceMeanOp>();
    if (!eps || !(*eps > 0) || !variance.hasOneUse() || !varianceMean ||
        trailingMean(variance, varianceMean.getInput()) != axis)
      return failure();
    // The variance's input: d * d or d ^ 2, read only by that mean.
    Value square = varianceMean.getInput();
    Operation *squareOp = square.getDefiningOp();
    bool isSquare = square.hasOneUse() && squareOp &&
                    ((isa<MulOp>(squareOp) && squareOp->getOperand(0) == d &&
                      squareOp->getOperand(1) == d) ||
                     (isa<PowOp>(squareOp) && squareOp->getOperand(0) == d &&
                      scalarConstant(squareOp->getOperand(1)) == 2.0));
    // d is read by the square and by the division only.
    if (!isSquare || !llvm::all_of(d.getUsers(), [&](Operation *user) {
          return user == squareOp || user == root.getOperation();
        }))
      return failure();
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        root, root.getType(), x, /*scale=*/Value(), /*bias=*/Value(),
        rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(static_cast<float>(*eps)));
    return success();
  }
};

/// Whether `v` has the normalized shape of `norm` (x.shape[axis:]) and
/// its element type: a valid scale or bias.
bool fitsNormalized(LayerNormOp norm, Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  auto x = norm.getInput().getType();
  return type && type.getElementType() == x.getElementType() &&
         type.getShape() == x.getShape().drop_front(norm.getNormalizedAxis());
}

/// layer_norm(x) * w ==> layer_norm(x) scale w, and then + b ==> bias b
/// (torch.nn.LayerNorm's affine parameters, exported as Mul and Add), when
/// the layer norm has only that reader and w and b have the normalized
/// shape. A scale is folded only before any bias (the bias adds after it).
struct FoldLayerNormAffine : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp norm,
                                PatternRewriter &rewriter) const override {
    if (!norm->hasOneUse() || norm.getBias())
      return failure();
    Operation *user = *norm->getUsers().begin();
    if (!isa<MulOp, AddOp>(user) ||
        user->getResultTypes() != norm->getResultTypes())
      return failure();
    Value other = user->getOperand(0) == norm.getResult() ? user->getOperand(1)
                                                          : user->getOperand(0);
    if (other == norm.getResult() || !fitsNormalized(norm, other))
      return failure();
    bool scale = isa<MulOp>(user);
    if (scale && norm.getScale())
      return failure();
    rewriter.setInsertionPoint(user);
    Value newScale = scale ? other : norm.getScale();
    Value newBias = scale ? Value() : other;
    // The operands must exist where the new op goes: after `other`'s
    // definition (the user comes after both).
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        user, norm.getType(), norm.getInput(), newScale, newBias,
        norm.getAxisAttr(), norm.getEpsilonAttr());
    rewriter.eraseOp(norm);
    return success();
  }
};

struct RaiseCompositesPass
    : modelc::impl::RaiseCompositesPassBase<RaiseCompositesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns
        .add<RaiseGelu, SquareAsProduct, RaiseLayerNorm, FoldLayerNormAffine>(
            &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
