//===- GraphDialect.cpp - the graph dialect ---------------------*- C++ -*-===//

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Device/IR/DeviceDialect.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace modelc::graph;

#include "dialects/Graph/IR/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Graph/IR/GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

LogicalResult GraphDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  if (attribute.getName() != kShardAttrName)
    return success();
  auto shard = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!shard || !shard.getType().isInteger(64) || shard.getInt() < 0)
    return op->emitOpError("'")
           << kShardAttrName << "' must be a non-negative i64 (a shard index)";
  // Collectives run on every rank; declarations and functions are not
  // steps' ops.
  if (isa<WeightOp, OwnerBroadcastOp, AllReduceOp, FunctionOpInterface>(op) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return op->emitOpError("'")
           << kShardAttrName
           << "' guards an op of a training step; this op cannot be guarded";
  return success();
}

LogicalResult GraphDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attribute) {
  if (attribute.getName() != kDefaultAttrName)
    return success();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0)
    return op->emitOpError("'")
           << kDefaultAttrName << "' belongs on an entry point's argument";
  auto value = dyn_cast<DenseElementsAttr>(attribute.getValue());
  Type argType = function.getArgumentTypes()[argIndex];
  if (!value || value.getType() != argType)
    return op->emitOpError("argument #")
           << argIndex << ": '" << kDefaultAttrName
           << "' must be dense elements of the argument's type " << argType;
  if (argIndex + 1 < function.getNumArguments() &&
      !function.getArgAttr(argIndex + 1, kDefaultAttrName))
    return op->emitOpError("argument #")
           << argIndex + 1 << " has no '" << kDefaultAttrName
           << "' but follows one that has (inputs with a default come last)";
  return success();
}
