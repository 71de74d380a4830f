//===- RaiseComposites.cpp - formulas back to the graph ops they compute --===//
//
// Finds GELU spelled as a formula (PyTorch's ONNX export of F.gelu, exact
// and tanh-approximated) and replaces it with graph.gelu; a square spelled
// as pow becomes a product.
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
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!elements || elements.getNumElements() != 1 ||
      !elements.getElementType().isF32())
    return std::nullopt;
  return (*elements.getValues<APFloat>().begin()).convertToDouble();
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

struct RaiseCompositesPass
    : modelc::impl::RaiseCompositesPassBase<RaiseCompositesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseGelu, SquareAsProduct>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
