//===- GraphOps.cpp - weights, constants, elementwise ops, products -------===//
//
// Type inference and verifiers of the graph ops other than normalization,
// convolution, pooling, losses (GraphNNOps.cpp) and shape ops
// (GraphShapeOps.cpp). Folders and patterns are in GraphCanonicalize.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Graph/IR/GraphOpUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <utility>

using namespace mlir;
using namespace modelc::graph;

#include "dialects/Graph/IR/GraphEnums.cpp.inc"
#include "dialects/Graph/IR/GraphInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.cpp.inc"

//===----------------------------------------------------------------------===//
// GraphOpTrait
//===----------------------------------------------------------------------===//

/// A misspelled attribute (`pading`) would otherwise be kept as a
/// discardable one and ignored. Only the device pin and dialect-prefixed
/// attributes (`sched.buffer`, written by passes) may be added to a graph op;
/// any other name is an error suggesting the closest inherent one.
std::string modelc::graph::describeLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return " (line " + std::to_string(file.getLine()) + ")";
  if (auto name = dyn_cast<NameLoc>(loc)) {
    // The ONNX importer's "model.onnx:node 'NAME'" (and modelc's own
    // "model.onnx:loss 'cross_entropy'"): what follows the file.
    StringRef text = name.getName().getValue();
    size_t quote = text.find(" '");
    size_t colon =
        quote == StringRef::npos ? StringRef::npos : text.rfind(':', quote);
    if (colon != StringRef::npos)
      return " (" + text.substr(colon + 1).str() + ")";
    // A bare file name says nothing an op's kind does not.
    return describeLocation(name.getChildLoc());
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::string text = describeLocation(part); !text.empty())
        return text;
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return describeLocation(call.getCallee());
  return "";
}

std::string modelc::graph::describeOp(Operation *op) {
  return op->getName().getStringRef().str() + describeLocation(op->getLoc());
}

LogicalResult modelc::graph::detail::checkAttributeNames(
    OperationName opName, ArrayRef<NamedAttribute> attributes,
    function_ref<InFlightDiagnostic()> emit) {
  ArrayRef<StringAttr> inherent = opName.getAttributeNames();
  for (NamedAttribute attr : attributes) {
    StringRef name = attr.getName().getValue();
    if (name == kDeviceAttrName || name.contains('.') ||
        llvm::is_contained(inherent, attr.getName()))
      continue;
    StringRef closest;
    unsigned best = ~0u;
    auto consider = [&](StringRef candidate) {
      unsigned distance = name.edit_distance(candidate, true, best);
      if (distance < best) {
        best = distance;
        closest = candidate;
      }
    };
    for (StringAttr own : inherent)
      consider(own.getValue());
    consider(kDeviceAttrName);
    InFlightDiagnostic error = emit();
    error << "'" << opName.getStringRef() << "' op has no attribute '" << name
          << "'";
    // A suggestion only when it is close: at most a third of the letters.
    if (!closest.empty() && best <= std::max<size_t>(1, name.size() / 3))
      error << "; did you mean '" << closest << "'?";
    else {
      SmallVector<StringRef> names;
      for (StringAttr own : inherent)
        names.push_back(own.getValue());
      names.push_back(kDeviceAttrName);
      error << "; its attributes are " << llvm::join(names, ", ");
    }
    return error;
  }
  return success();
}

/// A misspelled attribute (`pading`) would otherwise be kept as a
/// discardable one and ignored. Only the device pin and dialect-prefixed
/// attributes (`sched.buffer`, written by passes) may be added to a graph op;
/// any other name is an error suggesting the closest inherent one.
static LogicalResult verifyAttributeNames(Operation *op) {
  SmallVector<NamedAttribute> discardable(op->getDiscardableAttrs());
  return modelc::graph::detail::checkAttributeNames(
      op->getName(), discardable, [&] { return op->emitError(); });
}

LogicalResult modelc::graph::detail::verifyGraphOp(Operation *op) {
  OpDiagnostics diag(op->getLoc(), op->getName().getStringRef());
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(diag.tensor(type, "operand #" + std::to_string(index))))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(diag.tensor(type, "result #" + std::to_string(index))))
      return failure();

  if (failed(verifyAttributeNames(op)))
    return failure();

  Attribute pin = op->getAttr(kDeviceAttrName);
  if (!pin || isa<modelc::device::DeviceAttr>(pin))
    return success();
  auto text = dyn_cast<StringAttr>(pin);
  if (!text)
    return op->emitOpError("device pin must be a string such as \"cuda:0\", "
                           "got ")
           << pin;
  if (!modelc::device::DeviceAttr::parseFromString(op->getContext(),
                                                   text.getValue()))
    return op->emitOpError("invalid device pin \"")
           << text.getValue() << "\"; expected \"cpu\", \"cuda:N\" or "
           << "\"sim:N\"";
  return success();
}

//===----------------------------------------------------------------------===//
// WeightOp, WeightRefOp, ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  OpDiagnostics diag(getLoc(), getOperationName());
  if (getSymName().empty())
    return emitOpError("weight name must not be empty");
  if (failed(diag.tensor(getType(), "weight '" + getSymName().str() + "'")))
    return failure();
  if (std::optional<Type> source = getSourceDtype()) {
    Type element = getTensorType().getElementType();
    if (!source->isF32() || !(element.isF16() || element.isBF16()))
      return emitOpError("weight '")
             << getSymName() << "' is rounded from " << *source << " to "
             << element << "; only f32 rounds, to f16 or bf16";
  }
  if (IntegerAttr shard = getShardAttr()) {
    if (shard.getInt() < 0)
      return emitOpError("weight '")
             << getSymName() << "' has shard " << shard.getInt()
             << "; expected a non-negative shard index";
    if (!getWritable() || !getZeros())
      return emitOpError("weight '")
             << getSymName()
             << "' has a shard but is not writable optimizer state "
                "(writable, zeros)";
  }
  return success();
}

LogicalResult OwnerBroadcastOp::verify() {
  if (getShardAttr().getInt() < 0)
    return emitOpError("shard ") << getShardAttr().getInt()
                                 << ": expected a non-negative shard index";
  return success();
}

LogicalResult DimOp::verify() {
  if (getSymName().empty())
    return emitOpError("dimension name must not be empty");
  int64_t min = getMin(), max = getMax(), opt = getOpt();
  if (min < 1 || min > opt || opt > max)
    return emitOpError("dimension '")
           << getSymName() << "' has range " << min << " to " << max << " at "
           << opt << "; expected 1 <= min <= opt <= max";
  return success();
}

/// The graph.weight `name` refers to from `op` (a weight_ref or an
/// assign), or failure after an error at `op` that says what it is instead.
static FailureOr<WeightOp> lookUpWeight(Operation *op, FlatSymbolRefAttr name,
                                        SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(op, name);
  if (auto weight = dyn_cast_or_null<WeightOp>(symbol))
    return weight;
  if (symbol)
    return op->emitOpError("'@")
           << name.getValue() << "' is a '" << symbol->getName()
           << "', not a graph.weight";
  return op->emitOpError("references unknown weight '@")
         << name.getValue() << "'; declare it with graph.weight";
}

LogicalResult
WeightRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<WeightOp> weight =
      lookUpWeight(getOperation(), getNameAttr(), symbolTable);
  if (failed(weight))
    return failure();
  if (weight->getType() != getType())
    return emitOpError("result type ")
           << getType() << " differs from the declared type "
           << weight->getType() << " of weight '@" << getName() << "'";
  return success();
}

std::optional<APFloat> modelc::graph::floatScalar(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || dense.getNumElements() != 1 ||
      !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return *dense.value_begin<APFloat>();
}

bool modelc::graph::isWritableWeight(WeightRefOp ref) {
  auto weight = SymbolTable::lookupNearestSymbolFrom<WeightOp>(
      ref.getOperation(), ref.getNameAttr());
  return weight && weight.getWritable();
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<WeightOp> found =
      lookUpWeight(getOperation(), getNameAttr(), symbolTable);
  if (failed(found))
    return failure();
  WeightOp weight = *found;
  if (!weight.getWritable())
    return emitOpError("assigns weight '@")
           << getName() << "', which is not declared writable";
  if (weight.getType() != getValue().getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the declared type "
           << weight.getType() << " of weight '@" << getName() << "'";
  return success();
}

LogicalResult
ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                             Adaptor adaptor,
                             SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  auto value = dyn_cast_or_null<ElementsAttr>(adaptor.getValue());
  if (!value)
    return diag.fail("value must be an elements attribute such as "
                     "dense<...> : tensor<...>");
  FailureOr<RankedTensorType> type = diag.tensor(value.getType(), "value");
  if (failed(type))
    return failure();
  return inferred(inferredTypes, *type);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult modelc::graph::inferElementwiseBinary(
    std::optional<Location> location, StringRef opName, Type lhs, Type rhs,
    Type resultElementType, SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, opName);
  // Comparisons accept i1; arithmetic does not.
  FailureOr<RankedTensorType> lhsType = resultElementType
                                            ? diag.tensor(lhs, "lhs")
                                            : diag.numericTensor(lhs, "lhs");
  if (failed(lhsType))
    return failure();
  FailureOr<RankedTensorType> rhsType = resultElementType
                                            ? diag.tensor(rhs, "rhs")
                                            : diag.numericTensor(rhs, "rhs");
  if (failed(rhsType) ||
      failed(diag.sameElementType(*lhsType, "lhs", *rhsType, "rhs")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      diag.broadcast(lhsType->getShape(), rhsType->getShape());
  if (failed(shape))
    return failure();
  Type element =
      resultElementType ? resultElementType : lhsType->getElementType();
  return inferred(inferredTypes, RankedTensorType::get(*shape, element));
}

LogicalResult
CompareOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredTypes) {
  return inferElementwiseBinary(
      location, getOperationName(), adaptor.getLhs().getType(),
      adaptor.getRhs().getType(), IntegerType::get(context, 1), inferredTypes);
}

LogicalResult ModOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferredTypes) {
  if (failed(inferElementwiseBinary(
          location, getOperationName(), adaptor.getLhs().getType(),
          adaptor.getRhs().getType(),
          /*resultElementType=*/nullptr, inferredTypes)))
    return failure();
  Type element = cast<RankedTensorType>(inferredTypes.back()).getElementType();
  if (isa<FloatType>(element) && !adaptor.getFmod())
    return OpDiagnostics(location, getOperationName())
        .fail("fmod = false (the divisor's sign, Python's %) is for integers; ",
              element,
              " operands need fmod = true (C fmod, as ONNX Mod "
              "requires for floats)");
  return success();
}

LogicalResult
BitShiftOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                             Adaptor adaptor,
                             SmallVectorImpl<Type> &inferredTypes) {
  if (failed(inferElementwiseBinary(
          location, getOperationName(), adaptor.getLhs().getType(),
          adaptor.getRhs().getType(),
          /*resultElementType=*/nullptr, inferredTypes)))
    return failure();
  Type element = cast<RankedTensorType>(inferredTypes.back()).getElementType();
  if (!isa<IntegerType>(element))
    return OpDiagnostics(location, getOperationName())
        .fail("shifts integers; ", element, " operands are not supported");
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> condition =
      diag.tensor(adaptor.getCondition().getType(), "condition");
  if (failed(condition))
    return failure();
  if (!condition->getElementType().isSignlessInteger(1))
    return diag.fail("condition must have element type i1, got ",
                     condition->getElementType());
  FailureOr<RankedTensorType> a =
      diag.tensor(adaptor.getTrueValue().getType(), "true value");
  if (failed(a))
    return failure();
  FailureOr<RankedTensorType> b =
      diag.tensor(adaptor.getFalseValue().getType(), "false value");
  if (failed(b) ||
      failed(diag.sameElementType(*a, "true value", *b, "false value")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      diag.broadcast(condition->getShape(), a->getShape());
  if (failed(shape))
    return failure();
  shape = diag.broadcast(*shape, b->getShape());
  if (failed(shape))
    return failure();
  return inferred(inferredTypes,
                  RankedTensorType::get(*shape, a->getElementType()));
}

LogicalResult CastOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.tensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  Type dtype = adaptor.getDtype();
  if (!dtype || !isSupportedElementType(dtype))
    return diag.fail("cannot cast to ", dtype, "; expected one of ",
                     kElementTypeNames);
  return inferred(inferredTypes, input->clone(dtype));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> lhs =
      diag.numericTensor(adaptor.getLhs().getType(), "lhs");
  if (failed(lhs))
    return failure();
  FailureOr<RankedTensorType> rhs =
      diag.numericTensor(adaptor.getRhs().getType(), "rhs");
  if (failed(rhs) || failed(diag.sameElementType(*lhs, "lhs", *rhs, "rhs")))
    return failure();
  if (lhs->getRank() < 2 || rhs->getRank() < 2)
    return diag.fail("operands must have rank >= 2, got ranks ", lhs->getRank(),
                     " and ", rhs->getRank(),
                     " (reshape a vector to a matrix)");
  ArrayRef<int64_t> a = lhs->getShape(), b = rhs->getShape();
  int64_t k = a[a.size() - 1];
  if (k != b[b.size() - 2])
    return diag.fail("inner dimensions differ: lhs ", formatShape(a),
                     " has K = ", k, ", rhs ", formatShape(b),
                     " has K = ", b[b.size() - 2]);
  FailureOr<SmallVector<int64_t>> shape =
      diag.broadcast(a.drop_back(2), b.drop_back(2));
  if (failed(shape))
    return failure();
  shape->push_back(a[a.size() - 2]);
  shape->push_back(b[b.size() - 1]);
  return inferred(inferredTypes,
                  RankedTensorType::get(*shape, lhs->getElementType()));
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  RankedTensorType inputType, weightType;
  if (failed(diag.inputAndWeight(adaptor.getInput().getType(),
                                 adaptor.getWeight().getType(), inputType,
                                 weightType)))
    return failure();
  if (inputType.getRank() < 1)
    return diag.fail("input must have rank >= 1, got a scalar");
  if (weightType.getRank() != 2)
    return diag.fail("weight must have rank 2 ([out_features, "
                     "in_features]), got ",
                     formatShape(weightType.getShape()));
  int64_t inFeatures = inputType.getShape().back();
  int64_t outFeatures = weightType.getDimSize(0);
  if (weightType.getDimSize(1) != inFeatures)
    return diag.fail("weight ", formatShape(weightType.getShape()), " expects ",
                     weightType.getDimSize(1), " input features, input ",
                     formatShape(inputType.getShape()), " has ", inFeatures);
  if (Value biasValue = adaptor.getBias()) {
    FailureOr<RankedTensorType> bias =
        diag.floatTensor(biasValue.getType(), "bias");
    if (failed(bias) ||
        failed(diag.sameElementType(inputType, "input", *bias, "bias")))
      return failure();
    if (bias->getShape() != ArrayRef<int64_t>{outFeatures})
      return diag.fail("bias must have shape [", outFeatures, "], got ",
                       formatShape(bias->getShape()));
  }
  SmallVector<int64_t> shape(inputType.getShape());
  shape.back() = outFeatures;
  return inferred(inferredTypes,
                  RankedTensorType::get(shape, inputType.getElementType()));
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> a =
      diag.numericTensor(adaptor.getA().getType(), "a");
  if (failed(a))
    return failure();
  FailureOr<RankedTensorType> b =
      diag.numericTensor(adaptor.getB().getType(), "b");
  if (failed(b) || failed(diag.sameElementType(*a, "a", *b, "b")))
    return failure();
  if (a->getRank() != 2 || b->getRank() != 2)
    return diag.fail("a and b must have rank 2, got ",
                     formatShape(a->getShape()), " and ",
                     formatShape(b->getShape()));
  bool transposeA = adaptor.getTransposeA(),
       transposeB = adaptor.getTransposeB();
  int64_t m = a->getDimSize(transposeA ? 1 : 0);
  int64_t k = a->getDimSize(transposeA ? 0 : 1);
  int64_t kB = b->getDimSize(transposeB ? 1 : 0);
  int64_t n = b->getDimSize(transposeB ? 0 : 1);
  if (k != kB)
    return diag.fail("inner dimensions differ: op(a) is [", m, ", ", k,
                     "], op(b) is [", kB, ", ", n, "]");
  if (isa<IntegerType>(a->getElementType()))
    for (auto [name, value] : {std::pair{"alpha", adaptor.getAlpha()},
                               std::pair{"beta", adaptor.getBeta()}})
      if (double v = value.convertToDouble();
          v != std::trunc(v) || std::fabs(v) >= 0x1p63)
        return diag.fail(name, " must be a whole number for ",
                         a->getElementType(), " operands, got ",
                         value.convertToDouble());
  if (Value cValue = adaptor.getC()) {
    FailureOr<RankedTensorType> c = diag.numericTensor(cValue.getType(), "c");
    if (failed(c) || failed(diag.sameElementType(*a, "a", *c, "c")))
      return failure();
    FailureOr<SmallVector<int64_t>> shape =
        diag.broadcast(c->getShape(), {m, n});
    if (failed(shape))
      return failure();
    if (*shape != ArrayRef<int64_t>{m, n})
      return diag.fail("c ", formatShape(c->getShape()),
                       " does not broadcast to the result shape [", m, ", ", n,
                       "]");
  }
  return inferred(inferredTypes,
                  RankedTensorType::get({m, n}, a->getElementType()));
}

//===----------------------------------------------------------------------===//
// Cost and batch splitting (GraphInterfaces.td)
//===----------------------------------------------------------------------===//

// A conversion costs only the memory it moves.
double CastOp::getFlops() { return 0; }

double MatmulOp::getFlops() {
  int64_t k = getLhs().getType().getShape().back();
  return 2 * elementCount(getResult()) * static_cast<double>(k);
}

std::string MatmulOp::whyNotSplit(llvm::function_ref<bool(Value)> isBatched,
                                  int64_t) {
  if (isBatched(getRhs()) && !isBatched(getLhs()))
    return "its right operand carries the batch";
  // A right operand with batch dimensions of its own pairs its matrix i
  // with sample i: it would have to be split too.
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  if (!isBatched(getRhs()) &&
      rhs.size() == getResult().getType().getShape().size() && rhs.size() > 2 &&
      rhs[0] != 1)
    return "it pairs each sample with a matrix of a right operand that is "
           "not split";
  return "";
}

double LinearOp::getFlops() {
  int64_t k = getInput().getType().getShape().back();
  double out = elementCount(getResult());
  return 2 * out * static_cast<double>(k) + out;
}

double GemmOp::getFlops() {
  int64_t k = getA().getType().getShape()[getTransposeA() ? 0 : 1];
  double out = elementCount(getResult());
  return 2 * out * static_cast<double>(k) + 2 * out;
}

std::string GemmOp::whyNotSplit(llvm::function_ref<bool(Value)> isBatched,
                                int64_t) {
  if (isBatched(getB()) || getTransposeA())
    return "it does not keep the batch in the rows of its result";
  // A C of the result's shape adds its row i to sample i.
  if (Value c = getC(); c && !isBatched(c)) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(c.getType()).getShape();
    if (shape.size() == 2 && shape[0] != 1)
      return "it adds a full-size C that is not split";
  }
  return "";
}
