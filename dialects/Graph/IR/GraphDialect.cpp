//===- GraphDialect.cpp - the graph dialect ---------------------*- C++ -*-===//

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Device/IR/DeviceDialect.h"
#include "dialects/Graph/IR/GraphOps.h"

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
