//===- NodeBuilder.h - graph ops built at one ONNX node (private) -*- C++ -*-//
//
// Private to compiler/Import/Onnx: the converters that spell an ONNX op with
// several graph ops build them through `At`, which locates each at the
// node, infers its type (errors at the node) and propagates a failure.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_IMPORT_ONNX_NODEBUILDER_H
#define MODELC_COMPILER_IMPORT_ONNX_NODEBUILDER_H

#include "compiler/Import/Onnx/Importer.h"
#include "dialects/Graph/IR/GraphOps.h"

namespace modelc::onnx_import {

using mlir::Value;

/// A builder of graph ops at one node: every op it makes is located there.
/// An operand that is null (an earlier failure) makes the result null.
struct At {
  Importer &im;
  const onnx::NodeProto &node;

  mlir::Location loc() const { return im.locationOf(node); }

  template <typename OpT>
  Value op(mlir::ValueRange operands,
           llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    for (Value v : operands)
      if (!v)
        return nullptr;
    llvm::SmallVector<mlir::Type> types;
    mlir::DictionaryAttr dict =
        mlir::DictionaryAttr::get(&im.context, attributes);
    if (mlir::failed(OpT::inferReturnTypes(&im.context, loc(), operands, dict,
                                           nullptr, {}, types)))
      return nullptr;
    mlir::OperationState state(loc(), OpT::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attributes);
    state.addTypes(types);
    return im.builder.create(state)->getResult(0);
  }

  /// A rank-0 constant `value` of `like`'s element type.
  Value scalar(Value like, double value) {
    if (!like)
      return nullptr;
    mlir::Type element =
        mlir::cast<mlir::RankedTensorType>(like.getType()).getElementType();
    auto type = mlir::RankedTensorType::get({}, element);
    mlir::Attribute one =
        mlir::isa<mlir::FloatType>(element)
            ? mlir::Attribute(mlir::FloatAttr::get(element, value))
            : mlir::Attribute(
                  mlir::IntegerAttr::get(element, static_cast<int64_t>(value)));
    return im.builder.create<graph::ConstantOp>(
        loc(), mlir::DenseElementsAttr::get(type, one));
  }

  Value add(Value a, Value b) { return op<graph::AddOp>({a, b}); }
  Value sub(Value a, Value b) { return op<graph::SubOp>({a, b}); }
  Value mul(Value a, Value b) { return op<graph::MulOp>({a, b}); }
  Value div(Value a, Value b) { return op<graph::DivOp>({a, b}); }
  Value max(Value a, Value b) { return op<graph::MaxOp>({a, b}); }
  Value min(Value a, Value b) { return op<graph::MinOp>({a, b}); }
  Value exp(Value a) { return op<graph::ExpOp>({a}); }
  Value log(Value a) { return op<graph::LogOp>({a}); }
  Value greater(Value a, Value b) {
    return op<graph::CompareOp>(
        {a, b},
        {im.builder.getNamedAttr(
            "predicate", graph::ComparePredicateAttr::get(
                             &im.context, graph::ComparePredicate::gt))});
  }
  Value less(Value a, Value b) {
    return op<graph::CompareOp>(
        {a, b},
        {im.builder.getNamedAttr(
            "predicate", graph::ComparePredicateAttr::get(
                             &im.context, graph::ComparePredicate::lt))});
  }
  Value select(Value c, Value a, Value b) {
    return op<graph::SelectOp>({c, a, b});
  }

  /// Binds the node's output to `v`; failure when `v` is null.
  mlir::LogicalResult define(Value v) {
    if (!v)
      return mlir::failure();
    im.define(node, v);
    return mlir::success();
  }
};

} // namespace modelc::onnx_import

#endif // MODELC_COMPILER_IMPORT_ONNX_NODEBUILDER_H
