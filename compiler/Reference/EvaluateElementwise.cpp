//===- EvaluateElementwise.cpp - constants and elementwise ops ------------===//
//
// The scalar function of each elementwise op, written once, and the two
// loops that apply them: over one operand, and over broadcast operands.
//
//===----------------------------------------------------------------------===//

#include "compiler/Reference/Evaluate.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::reference;

using UnaryFunction = std::function<double(double)>;
using BroadcastFunction = std::function<double(ArrayRef<double>)>;

/// Rounds a value to what its element type can hold: integers truncate
/// toward zero, i1 is 0 or 1.
static double toElementType(double v, Type type) {
  if (type.isSignlessInteger(1))
    return v != 0.0 ? 1.0 : 0.0;
  if (isa<IntegerType>(type))
    return std::trunc(v);
  return v;
}

/// An integer result wrapped to its type's `width` bits, as two's
/// complement arithmetic does (INT_MIN / -1 is INT_MIN; an unsigned -1 is
/// its maximum); exact while the value is (|v| < 2^53).
static double wrapInteger(double v, unsigned width, bool isUnsigned) {
  double range = std::ldexp(1.0, width);
  double low = isUnsigned ? 0.0 : -range / 2, high = low + range;
  if (v >= low && v < high)
    return v;
  double r = std::fmod(v, range); // in (-range, range)
  if (r < low)
    r += range;
  else if (r >= high)
    r -= range;
  return r;
}

/// Integer power of a `width`-bit type, by squaring in unsigned arithmetic
/// so that an overflow wraps as it does in the kernels.
static double intPow(double base, double exp, unsigned width) {
  int64_t b = static_cast<int64_t>(base), e = static_cast<int64_t>(exp);
  if (e < 0)
    return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, factor = static_cast<uint64_t>(b);
  for (; e; e >>= 1) {
    if (e & 1)
      r *= factor;
    factor *= factor;
  }
  // The low `width` bits; the caller wraps them to the result's type.
  if (width < 64)
    return static_cast<double>(r & ((uint64_t(1) << width) - 1));
  return static_cast<double>(static_cast<int64_t>(r));
}

/// graph.mod: C fmod (the dividend's sign), or with the divisor's sign
/// when not `fmod`; an integer remainder by zero is 0.
static double modulo(double a, double b, bool isInt, bool fmod) {
  if (isInt && b == 0)
    return 0.0;
  double r = std::fmod(a, b);
  if (!fmod && r != 0 && (r < 0) != (b < 0))
    r += b;
  return r;
}

static double gelu(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

static double compare(ComparePredicate predicate, double a, double b) {
  switch (predicate) {
  case ComparePredicate::eq:
    return a == b;
  case ComparePredicate::ne:
    return a != b;
  case ComparePredicate::lt:
    return a < b;
  case ComparePredicate::le:
    return a <= b;
  case ComparePredicate::gt:
    return a > b;
  case ComparePredicate::ge:
    return a >= b;
  }
  return 0.0;
}

/// What a one-operand elementwise op computes per element.
static UnaryFunction unaryFunction(Operation *op) {
  return llvm::TypeSwitch<Operation *, UnaryFunction>(op)
      .Case([](NegOp) { return [](double x) { return -x; }; })
      .Case([](AbsOp) { return [](double x) { return std::fabs(x); }; })
      .Case([](ReluOp) { return [](double x) { return maxOrNaN(x, 0.0); }; })
      .Case([](LeakyReluOp leaky) {
        double alpha = leaky.getAlpha().convertToDouble();
        return [alpha](double x) { return x >= 0 ? x : alpha * x; };
      })
      .Case([](ExpOp) { return [](double x) { return std::exp(x); }; })
      .Case([](LogOp) { return [](double x) { return std::log(x); }; })
      .Case([](SqrtOp) { return [](double x) { return std::sqrt(x); }; })
      .Case([](RsqrtOp) { return [](double x) { return 1.0 / std::sqrt(x); }; })
      .Case([](TanhOp) { return [](double x) { return std::tanh(x); }; })
      .Case([](SigmoidOp) {
        return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
      })
      .Case([](SiluOp) {
        return [](double x) { return x / (1.0 + std::exp(-x)); };
      })
      .Case([](ErfOp) { return [](double x) { return std::erf(x); }; })
      .Case([](SinOp) { return [](double x) { return std::sin(x); }; })
      .Case([](CosOp) { return [](double x) { return std::cos(x); }; })
      .Case([](TanOp) { return [](double x) { return std::tan(x); }; })
      .Case([](AsinOp) { return [](double x) { return std::asin(x); }; })
      .Case([](AcosOp) { return [](double x) { return std::acos(x); }; })
      .Case([](AtanOp) { return [](double x) { return std::atan(x); }; })
      .Case([](SinhOp) { return [](double x) { return std::sinh(x); }; })
      .Case([](CoshOp) { return [](double x) { return std::cosh(x); }; })
      .Case([](AsinhOp) { return [](double x) { return std::asinh(x); }; })
      .Case([](AcoshOp) { return [](double x) { return std::acosh(x); }; })
      .Case([](AtanhOp) { return [](double x) { return std::atanh(x); }; })
      .Case([](FloorOp) { return [](double x) { return std::floor(x); }; })
      .Case([](CeilOp) { return [](double x) { return std::ceil(x); }; })
      // Halves to even (the default rounding mode), as torch.round.
      .Case([](RoundOp) { return [](double x) { return std::nearbyint(x); }; })
      .Case([](GeluOp g) {
        bool tanhForm = g.getApproximate() == GeluApproximation::tanh;
        return [tanhForm](double x) { return gelu(x, tanhForm); };
      })
      .Case([](CastOp cast) {
        Type to = cast.getDtype();
        return [to](double x) { return toElementType(x, to); };
      })
      .Default([](Operation *) { return UnaryFunction(); });
}

/// What an elementwise op with broadcast operands computes per element, from
/// its operands' elements in order; `intWidth` is the operands' integer
/// width (0 for floats).
static BroadcastFunction broadcastFunction(Operation *op, unsigned intWidth) {
  bool isInt = intWidth != 0;
  using Args = ArrayRef<double>;
  return llvm::TypeSwitch<Operation *, BroadcastFunction>(op)
      .Case([](AddOp) { return [](Args a) { return a[0] + a[1]; }; })
      .Case([](SubOp) { return [](Args a) { return a[0] - a[1]; }; })
      .Case([](MulOp) { return [](Args a) { return a[0] * a[1]; }; })
      .Case([isInt](DivOp) {
        return [isInt](Args a) {
          if (isInt)
            return a[1] == 0 ? 0.0 : std::trunc(a[0] / a[1]);
          return a[0] / a[1];
        };
      })
      .Case([isInt](ModOp op) {
        return [isInt, fmod = op.getFmod()](Args a) {
          return modulo(a[0], a[1], isInt, fmod);
        };
      })
      .Case([intWidth](BitShiftOp shift) {
        return [intWidth, right = shift.getRight()](Args a) {
          // A product or floor quotient by 2^n; the caller wraps the
          // product to the result's width (every bit out: 0).
          double n = std::max(a[1], 0.0);
          if (n >= intWidth)
            return right && a[0] < 0 ? -1.0 : 0.0;
          double scale = std::ldexp(1.0, static_cast<int>(n));
          return right ? std::floor(a[0] / scale) : a[0] * scale;
        };
      })
      .Case([](MaxOp) { return [](Args a) { return maxOrNaN(a[0], a[1]); }; })
      .Case([](MinOp) { return [](Args a) { return minOrNaN(a[0], a[1]); }; })
      .Case([intWidth](PowOp) {
        return [intWidth](Args a) {
          return intWidth ? intPow(a[0], a[1], intWidth) : std::pow(a[0], a[1]);
        };
      })
      .Case([](CompareOp cmp) {
        ComparePredicate predicate = cmp.getPredicate();
        return [predicate](Args a) { return compare(predicate, a[0], a[1]); };
      })
      .Case([](SelectOp) {
        return [](Args a) { return a[0] != 0 ? a[1] : a[2]; };
      })
      .Default([](Operation *) { return BroadcastFunction(); });
}

LogicalResult modelc::reference::unknownOp(Operation *op) {
  return op->emitError("the reference interpreter does not know '")
         << op->getName() << "'";
}

static RefTensor evaluate(ConstantOp op, const Values &) {
  RefTensor t = make(shapeOf(op.getResult()));
  auto attr = cast<DenseElementsAttr>(op.getValue());
  int64_t i = 0;
  if (isa<FloatType>(attr.getElementType()))
    for (APFloat v : attr.getValues<APFloat>())
      t.data[i++] = v.convertToDouble();
  else if (attr.getElementType().isSignlessInteger(1))
    for (bool v : attr.getValues<bool>())
      t.data[i++] = v;
  else
    for (APInt v : attr.getValues<APInt>())
      t.data[i++] = attr.getElementType().isUnsignedInteger()
                        ? static_cast<double>(v.getZExtValue())
                        : static_cast<double>(v.getSExtValue());
  return t;
}

/// Integer results wrap to their width, as the kernels' two's complement
/// arithmetic does (INT_MIN / -1, -INT_MIN, an overflowing sum).
static void wrapToResultType(Operation *op, RefTensor &y) {
  auto integer = dyn_cast<IntegerType>(elementOf(op->getResult(0)));
  if (!integer || integer.getWidth() == 1)
    return;
  for (double &v : y.data)
    v = wrapInteger(v, integer.getWidth(), integer.isUnsigned());
}

FailureOr<RefTensor> modelc::reference::evaluateUnary(Operation *op,
                                                      const Values &values) {
  UnaryFunction fn = unaryFunction(op);
  if (!fn)
    return unknownOp(op);
  const RefTensor &x = values.get(op->getOperand(0));
  RefTensor y = make(x.shape);
  for (int64_t i = 0; i < x.numel(); ++i)
    y.data[i] = fn(x.data[i]);
  wrapToResultType(op, y);
  return y;
}

FailureOr<RefTensor>
modelc::reference::evaluateBroadcast(Operation *op, const Values &values) {
  auto integer = dyn_cast<IntegerType>(elementOf(op->getOperand(0)));
  BroadcastFunction fn =
      broadcastFunction(op, integer ? integer.getWidth() : 0);
  if (!fn)
    return unknownOp(op);
  Shape out = shapeOf(op->getResult(0));
  RefTensor y = make(out);
  unsigned n = op->getNumOperands();
  // Each operand's stride along each output dimension (0 where it is
  // broadcast); the offsets follow the output's coordinates as they
  // advance, row-major.
  SmallVector<const RefTensor *> operands;
  SmallVector<Shape> strides;
  for (unsigned k = 0; k < n; ++k) {
    const RefTensor &t = values.get(op->getOperand(k));
    operands.push_back(&t);
    strides.push_back(broadcastStrides(t.shape, out.size()));
  }
  SmallVector<double> args(n);
  SmallVector<int64_t> offsets(n, 0);
  Shape coords(out.size(), 0);
  for (int64_t i = 0; i < y.numel(); ++i) {
    for (unsigned k = 0; k < n; ++k)
      args[k] = operands[k]->data[offsets[k]];
    y.data[i] = fn(args);
    for (size_t d = out.size(); d-- > 0;) {
      for (unsigned k = 0; k < n; ++k)
        offsets[k] += strides[k][d];
      if (++coords[d] < out[d])
        break;
      for (unsigned k = 0; k < n; ++k)
        offsets[k] -= strides[k][d] * out[d];
      coords[d] = 0;
    }
  }
  wrapToResultType(op, y);
  return y;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void modelc::reference::addElementwiseEvaluators(Evaluators &evaluators) {
  evaluators.add<ConstantOp>(evaluate);
}
