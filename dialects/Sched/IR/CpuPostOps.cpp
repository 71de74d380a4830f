//===- CpuPostOps.cpp - ops oneDNN applies after a CPU product ------------===//

#include "dialects/Sched/IR/CpuPostOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// How `other` broadcasts to `chain`'s shape in a binary post-op, or null
/// when oneDNN takes no such operand. A convolution's output is in a
/// blocked layout inside oneDNN: only per-channel and scalar operands (a
/// same-shape value is added as a sum instead, below).
const char *broadcastOf(Value other, Value chain, bool conv) {
  ArrayRef<int64_t> y = typeOf(chain).getShape();
  ArrayRef<int64_t> v = typeOf(other).getShape();
  if (typeOf(other).getElementType() != typeOf(chain).getElementType())
    return nullptr;
  if (typeOf(other).getNumElements() == 1)
    return "MODELC_BROADCAST_SCALAR";
  if (!conv && v == y)
    return "MODELC_BROADCAST_FULL";
  // Drop leading ones; what is left must be one dimension per output
  // column ([N]) or per channel ([O, 1, 1]).
  while (!v.empty() && v.front() == 1)
    v = v.drop_front();
  if (!conv)
    return v.size() == 1 && !y.empty() && v[0] == y.back()
               ? "MODELC_BROADCAST_CHANNEL"
               : nullptr;
  return y.size() == 4 && v.size() == 3 && v[0] == y[1] && v[1] == 1 &&
                 v[2] == 1
             ? "MODELC_BROADCAST_CHANNEL"
             : nullptr;
}

/// The value of `v` where it is a graph.constant of one element, as the
/// float it holds (f32, f16 and bf16 convert exactly).
std::optional<float> constantScalar(Value v) {
  std::optional<APFloat> value = floatScalar(v);
  bool lost = false;
  if (!value ||
      value->convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                     &lost) != APFloat::opOK)
    return std::nullopt;
  return value->convertToFloat();
}

std::optional<sched::CpuPostOp> eltwise(const char *alg, float alpha = 0.0f) {
  sched::CpuPostOp post{"MODELC_POST_ELTWISE", alg};
  post.alpha = alpha;
  return post;
}

std::optional<sched::CpuPostOp> binary(Operation *op, Value chain, bool conv,
                                       const char *alg, bool commutative) {
  // The result keeps the product's shape: the other operand broadcasts.
  if (op->getResult(0).getType() != chain.getType())
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (lhs == rhs)
    return std::nullopt;
  Value other;
  if (lhs == chain)
    other = rhs;
  else if (commutative && rhs == chain)
    other = lhs;
  else
    return std::nullopt;
  // A convolution adds (or subtracts) a same-shape value as oneDNN's sum:
  // the runtime reorders it into the output's layout first.
  bool add = StringRef(alg) == "MODELC_BINARY_ADD",
       sub = StringRef(alg) == "MODELC_BINARY_SUB";
  if (conv && (add || sub) && other.getType() == chain.getType()) {
    sched::CpuPostOp post{"MODELC_POST_SUM", "0"};
    post.alpha = add ? 1.0f : -1.0f;
    post.operand = other;
    post.broadcast = "MODELC_BROADCAST_FULL";
    return post;
  }
  const char *broadcast = broadcastOf(other, chain, conv);
  if (!broadcast)
    return std::nullopt;
  sched::CpuPostOp post{"MODELC_POST_BINARY", alg};
  post.operand = other;
  post.broadcast = broadcast;
  // A constant scalar (ReLU6's 0 and 6, a clamp's bounds): its value goes
  // with the post-op, so that the runtime may apply it without an operand.
  if (StringRef(broadcast) == "MODELC_BROADCAST_SCALAR")
    if (std::optional<float> value = constantScalar(other)) {
      post.broadcast = "MODELC_BROADCAST_CONSTANT";
      post.alpha = *value;
    }
  return post;
}

/// f32, f16 or bf16: the types oneDNN's products take (f16 and bf16
/// accumulate in f32).
bool isFloat(Type element) {
  return element.isF32() || element.isF16() || element.isBF16();
}

/// A value the same in every run: a constant, or a weight no training step
/// writes (packed once by the runtime).
bool isConstant(Value v) {
  if (auto ref = v.getDefiningOp<WeightRefOp>())
    return !isWritableWeight(ref);
  return static_cast<bool>(v.getDefiningOp<ConstantOp>());
}

} // namespace

std::optional<sched::CpuPostOp> sched::cpuPostOp(Operation *op, Value chain,
                                                 bool conv) {
  if (op->getNumResults() != 1 ||
      !llvm::is_contained(op->getOperands(), chain) ||
      typeOf(op->getResult(0)).getElementType() !=
          typeOf(chain).getElementType())
    return std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<CpuPostOp>>(op)
      .Case([](ReluOp) { return eltwise("MODELC_ELTWISE_RELU"); })
      .Case([](LeakyReluOp relu) {
        return eltwise("MODELC_ELTWISE_RELU",
                       static_cast<float>(relu.getAlpha().convertToDouble()));
      })
      .Case([](GeluOp gelu) {
        return eltwise(gelu.getApproximate() == GeluApproximation::tanh
                           ? "MODELC_ELTWISE_GELU_TANH"
                           : "MODELC_ELTWISE_GELU_ERF");
      })
      .Case([](SigmoidOp) { return eltwise("MODELC_ELTWISE_LOGISTIC"); })
      .Case([](TanhOp) { return eltwise("MODELC_ELTWISE_TANH"); })
      .Case([](SiluOp) { return eltwise("MODELC_ELTWISE_SWISH", 1.0f); })
      .Case([&](AddOp) {
        return binary(op, chain, conv, "MODELC_BINARY_ADD", true);
      })
      .Case([&](MulOp) {
        return binary(op, chain, conv, "MODELC_BINARY_MUL", true);
      })
      .Case([&](SubOp) {
        return binary(op, chain, conv, "MODELC_BINARY_SUB", false);
      })
      .Case([&](DivOp) {
        return binary(op, chain, conv, "MODELC_BINARY_DIV", false);
      })
      .Case([&](MaxOp) {
        return binary(op, chain, conv, "MODELC_BINARY_MAX", true);
      })
      .Case([&](MinOp) {
        return binary(op, chain, conv, "MODELC_BINARY_MIN", true);
      })
      .Default([](Operation *) { return std::nullopt; });
}

bool sched::isF32OutputCast(Operation *op, Value chain) {
  auto cast = dyn_cast<CastOp>(op);
  if (!cast || cast.getInput() != chain || !cast.getDtype().isF32())
    return false;
  Type from = typeOf(chain).getElementType();
  return from.isF16() || from.isBF16();
}

bool sched::isPackableProduct(Operation *op) {
  if (op->getNumResults() != 1)
    return false;
  Type element = typeOf(op->getResult(0)).getElementType();
  if (!isFloat(element) || !llvm::all_of(op->getOperands(), [&](Value v) {
        return typeOf(v).getElementType() == element;
      }))
    return false;
  if (auto linear = dyn_cast<LinearOp>(op))
    return isConstant(linear.getWeight());
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return isConstant(matmul.getRhs()) &&
           typeOf(matmul.getRhs()).getRank() == 2;
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    // y = a op(b) (+ c per column): the forms a packed matmul computes.
    Value c = gemm.getC();
    bool columnBias =
        !c ||
        (gemm.getBeta().convertToDouble() == 1.0 && typeOf(c).getRank() == 1 &&
         typeOf(c).getDimSize(0) == typeOf(gemm.getResult()).getDimSize(1));
    return isConstant(gemm.getB()) && !gemm.getTransposeA() &&
           gemm.getAlpha().convertToDouble() == 1.0 && columnBias;
  }
  if (auto conv = dyn_cast<Conv2dOp>(op))
    return isConstant(conv.getWeight());
  return false;
}
