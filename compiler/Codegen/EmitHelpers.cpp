//===- EmitHelpers.cpp - text helpers shared by the code emitters ---------===//

#include "compiler/Codegen/EmitHelpers.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace modelc::graph;

namespace modelc::codegen {

bool isHalf(Type type) { return type.isF16() || type.isBF16(); }

/// The C++ storage type of an element type.
std::string cType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (isHalf(type))
    return "uint16_t";
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return "";
  unsigned width = integer.getWidth();
  if (width == 1)
    return "uint8_t";
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return "";
  return (integer.isUnsigned() ? "uint" : "int") + std::to_string(width) + "_t";
}

/// The C++ type elementwise code computes in: f16/bf16 compute in float.
std::string computeType(Type type) {
  return isHalf(type) ? "float" : cType(type);
}

/// `expr` (a stored element of `type`) as its compute type, and back.
std::string loadElement(Type type, const std::string &expr, CodeFlavor flavor) {
  std::string ns = flavor == CodeFlavor::Gpu ? "modelc_gpu::" : "modelc::";
  if (type.isF16())
    return ns + "f16_to_float(" + expr + ")";
  if (type.isBF16())
    return ns + "bf16_to_float(" + expr + ")";
  return expr;
}
std::string storeElement(Type type, const std::string &expr,
                         CodeFlavor flavor) {
  std::string ns = flavor == CodeFlavor::Gpu ? "modelc_gpu::" : "modelc::";
  if (type.isF16())
    return ns + "float_to_f16(" + expr + ")";
  if (type.isBF16())
    return ns + "float_to_bf16(" + expr + ")";
  return expr;
}

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

std::string list(ArrayRef<int64_t> values) {
  std::string text;
  for (auto [i, v] : llvm::enumerate(values))
    text += (i ? ", " : "") + std::to_string(v);
  return text;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Strides to read an operand of shape `in` broadcast to `out` (right
/// aligned), with stride 0 on broadcast dimensions.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out) {
  SmallVector<int64_t> inStrides = stridesOf(in);
  SmallVector<int64_t> result(out.size(), 0);
  size_t shift = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    result[d + shift] = in[d] == 1 ? 0 : inStrides[d];
  return result;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

std::string literalOf(Type type, double value, CodeFlavor flavor) {
  if (!type.isF64())
    return isa<FloatType>(type)
               ? floatLiteral(value, flavor)
               : cType(type) + "(" +
                     std::to_string(static_cast<long long>(value)) + ")";
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.17g", value);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

std::string floatLiteral(double value, CodeFlavor flavor) {
  bool gpu = flavor == CodeFlavor::Gpu;
  // Constant expressions in device code too (__device__ array initializers
  // must be constant), for nvcc and for the host compiler.
  if (std::isnan(value) && gpu)
    return "__builtin_nanf(\"\")";
  if (std::isinf(value) && gpu)
    return value > 0 ? "__builtin_huge_valf()" : "(-__builtin_huge_valf())";
  if (std::isnan(value))
    return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.9g", value);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

/// C++ for one element of an elementwise op, given its operands' element
/// expressions.
std::string splatExpression(ConstantOp constant, CodeFlavor flavor) {
  auto values = cast<DenseElementsAttr>(constant.getValue());
  Type element = values.getElementType();
  if (isa<FloatType>(element))
    return literalOf(isHalf(element) ? Float32Type::get(element.getContext())
                                     : element,
                     values.getSplatValue<APFloat>().convertToDouble(), flavor);
  APInt v = values.getSplatValue<APInt>();
  if (element.isSignlessInteger(1))
    return cType(element) + "(" + (v.isZero() ? "0" : "1") + ")";
  auto integer = cast<IntegerType>(element);
  if (integer.isUnsigned())
    return cType(element) + "(" + std::to_string(v.getZExtValue()) + "ULL)";
  // INT64_MIN has no literal: spell it as an expression.
  if (integer.getWidth() == 64 && v.isMinSignedValue())
    return "(-9223372036854775807LL - 1)";
  return cType(element) + "(" + std::to_string(v.getSExtValue()) + "LL)";
}

std::string elementExpression(Operation *op, ArrayRef<std::string> args,
                              CodeFlavor flavor) {
  if (auto constant = dyn_cast<ConstantOp>(op))
    return splatExpression(constant, flavor);
  bool gpu = flavor == CodeFlavor::Gpu;
  // The spelling of a math function and of a kernel helper.
  auto math = [&](StringRef name) {
    return gpu ? (name + "f").str() : ("std::" + name).str();
  };
  std::string helper = gpu ? "modelc_gpu::" : "modelc_cpu::";
  // NaN-propagating (torch.maximum), in kernels/cpu and kernels/cuda.
  std::string maxName = helper + "max_";
  std::string minName = helper + "min_";
  Type in = tensorType(op->getOperand(0)).getElementType();
  bool isFloat = isa<FloatType>(in);
  std::string zero = literalOf(in, 0.0, flavor);
  auto call = [&](const std::string &fn) { return fn + "(" + args[0] + ")"; };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](NegOp) { return "(-" + args[0] + ")"; })
      .Case([&](AbsOp) {
        return isFloat ? call(math("fabs"))
                       : "(" + args[0] + " < 0 ? -" + args[0] + " : " +
                             args[0] + ")";
      })
      .Case([&](ReluOp) { return maxName + "(" + args[0] + ", " + zero + ")"; })
      .Case([&](LeakyReluOp leaky) {
        return "(" + args[0] + " >= 0 ? " + args[0] + " : " +
               literalOf(in, leaky.getAlpha().convertToDouble(), flavor) +
               " * " + args[0] + ")";
      })
      .Case([&](ExpOp) { return call(math("exp")); })
      .Case([&](LogOp) { return call(math("log")); })
      .Case([&](SqrtOp) { return call(math("sqrt")); })
      .Case([&](RsqrtOp) {
        return "(" + literalOf(in, 1.0, flavor) + " / " + call(math("sqrt")) +
               ")";
      })
      .Case([&](TanhOp) { return call(math("tanh")); })
      .Case([&](SigmoidOp) { return call(helper + "sigmoid"); })
      .Case([&](SiluOp) {
        return "(" + args[0] + " * " + call(helper + "sigmoid") + ")";
      })
      .Case([&](ErfOp) { return call(math("erf")); })
      .Case([&](SinOp) { return call(math("sin")); })
      .Case([&](CosOp) { return call(math("cos")); })
      .Case([&](TanOp) { return call(math("tan")); })
      .Case([&](AsinOp) { return call(math("asin")); })
      .Case([&](AcosOp) { return call(math("acos")); })
      .Case([&](AtanOp) { return call(math("atan")); })
      .Case([&](SinhOp) { return call(math("sinh")); })
      .Case([&](CoshOp) { return call(math("cosh")); })
      .Case([&](AsinhOp) { return call(math("asinh")); })
      .Case([&](AcoshOp) { return call(math("acosh")); })
      .Case([&](AtanhOp) { return call(math("atanh")); })
      .Case([&](FloorOp) { return call(math("floor")); })
      .Case([&](CeilOp) { return call(math("ceil")); })
      // Halves to even: rint in the default rounding mode (roundf would
      // round them away from zero).
      .Case([&](RoundOp) { return call(gpu ? "rintf" : "std::nearbyint"); })
      .Case([&](GeluOp gelu) {
        return call(helper + (gelu.getApproximate() == GeluApproximation::tanh
                                  ? "gelu_tanh"
                                  : "gelu_erf"));
      })
      .Case([&](AddOp) { return "(" + args[0] + " + " + args[1] + ")"; })
      .Case([&](SubOp) { return "(" + args[0] + " - " + args[1] + ")"; })
      .Case([&](MulOp) { return "(" + args[0] + " * " + args[1] + ")"; })
      .Case([&](DivOp) {
        return isFloat ? "(" + args[0] + " / " + args[1] + ")"
                       : helper + "int_div(" + args[0] + ", " + args[1] + ")";
      })
      .Case([&](ModOp mod) {
        std::string name =
            isFloat ? math("fmod")
                    : helper + (mod.getFmod() ? "int_fmod" : "int_mod");
        return name + "(" + args[0] + ", " + args[1] + ")";
      })
      .Case([&](BitShiftOp shift) {
        // Host code only: placement keeps it off GPUs (no CUDA helper).
        if (gpu || isFloat)
          return std::string();
        return helper + (shift.getRight() ? "shift_right" : "shift_left") +
               "<" + cType(in) + ">(" + args[0] + ", " + args[1] + ")";
      })
      .Case(
          [&](MaxOp) { return maxName + "(" + args[0] + ", " + args[1] + ")"; })
      .Case(
          [&](MinOp) { return minName + "(" + args[0] + ", " + args[1] + ")"; })
      .Case([&](PowOp) {
        return (isFloat ? math("pow") + "(" : helper + "int_pow(") + args[0] +
               ", " + args[1] + ")";
      })
      .Case([&](CompareOp cmp) {
        static const char *symbols[] = {"==", "!=", "<", "<=", ">", ">="};
        return "static_cast<uint8_t>(" + args[0] + " " +
               symbols[static_cast<int>(cmp.getPredicate())] + " " + args[1] +
               ")";
      })
      .Case([&](SelectOp) {
        return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
      })
      .Case([&](CastOp cast) {
        Type to = cast.getDtype();
        if (to.isSignlessInteger(1))
          return "static_cast<uint8_t>(" + args[0] + " != 0)";
        // A cast to f16/bf16 rounds even when the value stays in a register.
        if (isHalf(to))
          return loadElement(
              to,
              storeElement(to, "static_cast<float>(" + args[0] + ")", flavor),
              flavor);
        return "static_cast<" + cType(to) + ">(" + args[0] + ")";
      })
      .Default([](Operation *) { return std::string(); });
}

std::string cString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}
std::string constantInitializer(Operation *op, CodeFlavor flavor) {
  return elementsInitializer(
      cast<DenseElementsAttr>(cast<ConstantOp>(op).getValue()), flavor);
}

std::string elementsInitializer(DenseElementsAttr values, CodeFlavor flavor) {
  Type element = values.getElementType();
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t i = 0;
  auto sep = [&] { return i++ ? ", " : ""; };
  if (isHalf(element)) {
    for (APFloat v : values.getValues<APFloat>())
      os << sep() << v.bitcastToAPInt().getZExtValue();
  } else if (isa<FloatType>(element)) {
    for (APFloat v : values.getValues<APFloat>())
      os << sep() << literalOf(element, v.convertToDouble(), flavor);
  } else if (element.isSignlessInteger(1)) {
    for (bool v : values.getValues<bool>())
      os << sep() << (v ? "1" : "0");
  } else if (element.isUnsignedInteger()) {
    for (APInt v : values.getValues<APInt>())
      os << sep() << v.getZExtValue() << "ULL";
  } else {
    bool wide = element.isSignlessInteger(64);
    for (APInt v : values.getValues<APInt>()) {
      // INT64_MIN has no literal: spell it as an expression.
      if (wide && v.isMinSignedValue())
        os << sep() << "(-9223372036854775807LL - 1)";
      else
        os << sep() << v.getSExtValue() << (wide ? "LL" : "");
    }
  }
  if (i == 0)
    os << "0";
  return text;
}

Operation *namedOp(Operation *op) {
  if (auto fused = dyn_cast<sched::FusedOp>(op))
    return fused.getRoot();
  if (auto fused = dyn_cast<sched::FusedReduceOp>(op))
    return fused.getReduce();
  if (auto gemm = dyn_cast<sched::GemmOp>(op))
    return gemm.getProduct();
  if (auto packed = dyn_cast<sched::PackedProductOp>(op))
    return packed.getProduct();
  if (auto sliced = dyn_cast<sched::SlicedTransposeOp>(op))
    return sliced.getTranspose();
  return op;
}

SmallVector<Value> valuesRead(Operation *op) {
  SmallVector<Value> values;
  auto add = [&](Value v) {
    if (!llvm::is_contained(values, v))
      values.push_back(v);
  };
  for (Value operand : op->getOperands())
    add(operand);
  op->walk([&](Operation *nested) {
    if (nested == op)
      return;
    for (Value operand : nested->getOperands())
      if (!op->isAncestor(operand.getParentBlock()->getParentOp()))
        add(operand);
  });
  return values;
}

} // namespace modelc::codegen
