//===- Interpreter.cpp - the reference interpreter of the graph IR --------===//
//
// Each op is evaluated from its definition in docs/ir.md, one output element
// at a time, in double precision. No fusion, no layout tricks. This file
// walks a function and dispatches each op to its evaluation function, which
// the Evaluate*.cpp files register; it also holds the tensor helpers they
// share.
//
//===----------------------------------------------------------------------===//

#include "compiler/Reference/Interpreter.h"
#include "compiler/Reference/Evaluate.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::reference;

int64_t RefTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

Shape modelc::reference::shapeOf(Value value) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(value.getType()).getShape();
  return Shape(s.begin(), s.end());
}

Type modelc::reference::elementOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

RefTensor modelc::reference::make(const Shape &shape) {
  RefTensor t{shape, {}};
  t.data.assign(t.numel(), 0.0);
  return t;
}

Shape modelc::reference::stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

Shape modelc::reference::coordsOf(int64_t i, const Shape &shape) {
  Shape coords(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = i % shape[d];
    i /= shape[d];
  }
  return coords;
}

int64_t modelc::reference::product(const Shape &shape, size_t begin,
                                   size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

Shape modelc::reference::broadcastStrides(const Shape &shape, size_t rank) {
  Shape along(rank, 0);
  size_t shift = rank - shape.size();
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1)
      along[d + shift] = stride;
    stride *= shape[d];
  }
  return along;
}

uint64_t modelc::reference::wrappedBits(double x) {
  return x < 0 ? static_cast<uint64_t>(static_cast<int64_t>(x))
               : static_cast<uint64_t>(x);
}

double modelc::reference::wrappedValue(uint64_t bits, Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (width < 64) {
    bits &= (uint64_t(1) << width) - 1;
    // Sign-extend a signed type's top bit.
    if (!type.isUnsignedInteger() && (bits >> (width - 1)) & 1)
      return static_cast<double>(static_cast<int64_t>(bits)) -
             std::ldexp(1.0, width);
    return static_cast<double>(bits);
  }
  if (type.isUnsignedInteger())
    return static_cast<double>(bits);
  return static_cast<double>(static_cast<int64_t>(bits));
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

namespace {

/// Rounds the values of a float result to its element type, as the
/// kernels store them: what overflows the type becomes an infinity (a
/// product of 3e38 and 2 is inf in f32, not 6e38), and a later op sees
/// what the kernels would. Arithmetic inside one op stays in double.
void roundToElementType(RefTensor &t, Type element) {
  auto floatType = dyn_cast<FloatType>(element);
  if (!floatType || floatType.getWidth() > 32)
    return;
  bool f16 = floatType.isF16();
  for (double &v : t.data) {
    v = static_cast<double>(static_cast<float>(v));
    if (f16 && std::fabs(v) >= 65520.0) // beyond f16's largest, 65504
      v = v > 0 ? INFINITY : -INFINITY;
  }
}

class Interpreter {
public:
  Interpreter(const WeightProvider &weights, bool roundResults)
      : weights(weights), roundResults(roundResults) {}

  /// Evaluates `ops` (see evaluateOps): an operand defined outside them is
  /// a graph.constant, evaluated where it is first read.
  FailureOr<std::vector<RefTensor>> runOps(ArrayRef<Operation *> ops,
                                           ValueRange results) {
    llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
    auto evaluateInto = [&](Operation *op) -> LogicalResult {
      FailureOr<RefTensor> result = evaluate(op);
      if (failed(result))
        return failure();
      roundToElementType(*result, elementOf(op->getResult(0)));
      values.set(op->getResult(0), std::move(*result));
      return success();
    };
    for (Operation *op : ops) {
      if (op->getNumResults() != 1)
        return op->emitError("the reference interpreter cannot evaluate it "
                             "here");
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && inside.contains(def))
          continue;
        if (!def || !isa<ConstantOp>(def))
          return op->emitError("an operand is neither a constant nor "
                               "computed by the ops evaluated");
        if (failed(evaluateInto(def)))
          return failure();
      }
      if (failed(evaluateInto(op)))
        return failure();
    }
    std::vector<RefTensor> out;
    for (Value v : results)
      out.push_back(values.get(v));
    return out;
  }

  FailureOr<std::vector<RefTensor>> run(func::FuncOp function,
                                        const std::vector<RefTensor> &inputs) {
    for (auto [arg, input] : llvm::zip(function.getArguments(), inputs))
      values.set(arg, input);
    for (Operation &op : function.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        std::vector<RefTensor> results;
        for (Value v : ret.getOperands())
          results.push_back(values.get(v));
        return results;
      }
      // A weight's write-back (graph.assign) waits for every reader of the
      // old value: it changes no result of this call, and the interpreter
      // keeps no weights between calls.
      if (isa<AssignOp>(op))
        continue;
      FailureOr<RefTensor> result = evaluate(&op);
      if (failed(result))
        return failure();
      if (roundResults)
        roundToElementType(*result, elementOf(op.getResult(0)));
      values.set(op.getResult(0), std::move(*result));
    }
    return std::vector<RefTensor>{};
  }

private:
  /// The value of `op`'s result, or failure after an error at `op`.
  FailureOr<RefTensor> evaluate(Operation *op);

  const WeightProvider &weights;
  bool roundResults;
  Values values;
};

/// Every op's evaluation function, registered by the Evaluate*.cpp files.
const Evaluators &evaluators() {
  static const Evaluators table = [] {
    Evaluators t;
    addElementwiseEvaluators(t);
    addNNEvaluators(t);
    addShapeEvaluators(t);
    return t;
  }();
  return table;
}

FailureOr<RefTensor> Interpreter::evaluate(Operation *op) {
  // Elementwise ops (the graph dialect's trait): one scalar function each.
  if (op->hasTrait<Elementwise>())
    return op->getNumOperands() == 1 ? evaluateUnary(op, values)
                                     : evaluateBroadcast(op, values);
  if (auto ref = dyn_cast<WeightRefOp>(op)) {
    if (!weights)
      return op->emitError("a weight has no value here");
    return weights(ref.getName());
  }
  if (const Evaluators::Function *evaluateOp = evaluators().lookup(op))
    return (*evaluateOp)(op, values);
  return unknownOp(op);
}

} // namespace

FailureOr<std::vector<RefTensor>>
modelc::interpret(func::FuncOp function, const std::vector<RefTensor> &inputs,
                  const WeightProvider &weights, bool roundResults) {
  if (inputs.size() != function.getNumArguments())
    return function.emitError("expected ")
           << function.getNumArguments() << " inputs, got " << inputs.size();
  for (auto [index, input] : llvm::enumerate(inputs)) {
    auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
    if (ArrayRef<int64_t>(input.shape) != type.getShape() ||
        static_cast<int64_t>(input.data.size()) != type.getNumElements()) {
      std::string given;
      for (int64_t d : input.shape)
        given += (given.empty() ? "" : "x") + std::to_string(d);
      return function.emitError("input #")
             << index << " has shape " << (given.empty() ? "[]" : given) << " ("
             << input.data.size() << " values); '" << function.getSymName()
             << "' takes " << type;
    }
  }
  Interpreter interpreter(weights, roundResults);
  return interpreter.run(function, inputs);
}

FailureOr<std::vector<RefTensor>> modelc::evaluateOps(ArrayRef<Operation *> ops,
                                                      ValueRange results) {
  WeightProvider none;
  Interpreter interpreter(none, /*roundResults=*/true);
  return interpreter.runOps(ops, results);
}

DenseElementsAttr modelc::toElementsAttr(const RefTensor &t,
                                         RankedTensorType type) {
  Type element = type.getElementType();
  if (static_cast<int64_t>(t.data.size()) != type.getNumElements())
    return nullptr;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    values.reserve(t.data.size());
    for (double v : t.data) {
      APFloat f(v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer)
    return nullptr;
  unsigned width = integer.getWidth();
  SmallVector<APInt> values;
  values.reserve(t.data.size());
  // 2^53: every integer up to it is a double exactly; beyond it a value
  // may have rounded on the way.
  const double exact = 9007199254740992.0;
  for (double v : t.data) {
    if (v != std::trunc(v) || std::fabs(v) > exact)
      return nullptr;
    if (width == 1 && v != 0 && v != 1)
      return nullptr;
    bool isUnsigned = integer.isUnsigned();
    double low = isUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
    double high =
        isUnsigned ? std::ldexp(1.0, width) : std::ldexp(1.0, width - 1);
    if (width != 1 && (v < low || v >= high))
      return nullptr;
    values.push_back(isUnsigned ? APInt(width, static_cast<uint64_t>(v))
                                : APInt(width, static_cast<int64_t>(v),
                                        /*isSigned=*/true,
                                        /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, values);
}

bool modelc::isFoldableOnConstants(Operation *op, int64_t maxElements) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      op->getNumRegions() != 0 || !isPure(op) ||
      !isa<GraphDialect>(op->getDialect()))
    return false;
  // Dropout draws at random; constants and weights are not computations;
  // a slice cut to a dynamic dimension's size (graph.dims) has the run's.
  if (isa<DropoutOp, ConstantOp, WeightRefOp>(op) ||
      (isa<SliceOp>(op) && op->hasAttr(kDimsAttrName)))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > maxElements)
    return false;
  // The interpreter works one element at a time in double: a product of
  // two large constants would take minutes to compile. The op's own count
  // of operations (its cost interface; otherwise one per result element,
  // eight for transcendental functions) caps the work at about a second.
  const double maxOperations = double(int64_t(1) << 26);
  double operations = static_cast<double>(type.getNumElements()) *
                      (op->hasTrait<Transcendental>() ? 8.0 : 1.0);
  if (auto cost = dyn_cast<CostOpInterface>(op))
    operations = cost.getFlops();
  return operations <= maxOperations;
}

FailureOr<SmallVector<DenseElementsAttr>>
modelc::foldOnConstants(ArrayRef<Operation *> ops, ValueRange results) {
  // An op that cannot be evaluated at compile time (an index out of range)
  // stays an op: the run reports it, as it would without folding.
  ScopedDiagnosticHandler quiet(ops.front()->getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<std::vector<RefTensor>> values = evaluateOps(ops, results);
  if (failed(values))
    return failure();
  SmallVector<DenseElementsAttr> attrs;
  for (auto [value, tensor] : llvm::zip(results, *values)) {
    DenseElementsAttr attr =
        toElementsAttr(tensor, cast<RankedTensorType>(value.getType()));
    if (!attr)
      return failure();
    attrs.push_back(attr);
  }
  return attrs;
}
