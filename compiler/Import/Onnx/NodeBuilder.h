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

/// The ranked tensor type of `v` (every graph value has one).
inline mlir::RankedTensorType typeOf(Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

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
    return graph::ConstantOp::create(im.builder, loc(),
                                     mlir::DenseElementsAttr::get(type, one));
  }

  /// Whether a constant of `count` elements may be built at import (at most
  /// 2^24: index tables and masks of real models are far smaller, and a
  /// corrupt shape must not allocate gigabytes); an error at the node if not.
  bool fits(int64_t count) {
    if (count >= 0 && count <= (int64_t(1) << 24))
      return true;
    im.error(node) << "a constant of " << count
                   << " elements built at import is not supported (at most "
                      "2^24)";
    return false;
  }

  /// A constant of `shape` and element type `element` holding `data` (one
  /// number per element, in row-major order; `element` float, integer or
  /// i1).
  Value constant(mlir::Type element, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<double> data) {
    llvm::SmallVector<mlir::Attribute> elements;
    elements.reserve(data.size());
    for (double v : data)
      elements.push_back(
          element.isInteger(1)
              ? mlir::Attribute(mlir::BoolAttr::get(&im.context, v != 0))
          : mlir::isa<mlir::FloatType>(element)
              ? mlir::Attribute(mlir::FloatAttr::get(element, v))
              : mlir::Attribute(
                    mlir::IntegerAttr::get(element, static_cast<int64_t>(v))));
    auto type = mlir::RankedTensorType::get(shape, element);
    return graph::ConstantOp::create(
        im.builder, loc(), mlir::DenseElementsAttr::get(type, elements));
  }
  /// An i64 constant of `shape` holding `data`.
  Value indices(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> data) {
    auto type = mlir::RankedTensorType::get(shape, im.builder.getI64Type());
    return graph::ConstantOp::create(im.builder, loc(),
                                     mlir::DenseElementsAttr::get(type, data));
  }

  Value reshape(Value x, llvm::ArrayRef<int64_t> shape) {
    return op<graph::ReshapeOp>(
        {x}, {im.builder.getNamedAttr("shape",
                                      im.builder.getDenseI64ArrayAttr(shape))});
  }
  Value transpose(Value x, llvm::ArrayRef<int64_t> perm) {
    return op<graph::TransposeOp>(
        {x}, {im.builder.getNamedAttr("perm",
                                      im.builder.getDenseI64ArrayAttr(perm))});
  }
  Value gather(Value x, Value indices, int64_t axis) {
    return op<graph::GatherOp>(
        {x, indices},
        {im.builder.getNamedAttr("axis", im.builder.getI64IntegerAttr(axis))});
  }
  Value cast(Value x, mlir::Type element) {
    return op<graph::CastOp>(
        {x}, {im.builder.getNamedAttr("dtype", mlir::TypeAttr::get(element))});
  }
  Value concat(mlir::ValueRange parts, int64_t axis) {
    return op<graph::ConcatOp>(
        parts,
        {im.builder.getNamedAttr("axis", im.builder.getI64IntegerAttr(axis))});
  }
  /// A reduction over `axes` (all when empty).
  template <typename ReduceOp>
  Value reduce(Value x, llvm::ArrayRef<int64_t> axes, bool keepdims) {
    llvm::SmallVector<mlir::NamedAttribute> attrs = {
        im.builder.getNamedAttr("keepdims", im.builder.getBoolAttr(keepdims))};
    if (!axes.empty())
      attrs.push_back(im.builder.getNamedAttr(
          "axes", im.builder.getDenseI64ArrayAttr(axes)));
    return op<ReduceOp>({x}, attrs);
  }
  Value compare(Value a, Value b, graph::ComparePredicate predicate) {
    return op<graph::CompareOp>(
        {a, b},
        {im.builder.getNamedAttr("predicate", graph::ComparePredicateAttr::get(
                                                  &im.context, predicate))});
  }

  /// The mean over `axes`, x - mean and the variance (the mean of its
  /// square), the axes kept as size 1.
  struct Moments {
    Value mean, centered, variance;
  };
  Moments moments(Value x, llvm::ArrayRef<int64_t> axes) {
    Value mean = reduce<graph::ReduceMeanOp>(x, axes, true);
    Value centered = sub(x, mean);
    return {mean, centered,
            reduce<graph::ReduceMeanOp>(mul(centered, centered), axes, true)};
  }

  Value add(Value a, Value b) { return op<graph::AddOp>({a, b}); }
  Value sub(Value a, Value b) { return op<graph::SubOp>({a, b}); }
  Value mul(Value a, Value b) { return op<graph::MulOp>({a, b}); }
  Value div(Value a, Value b) { return op<graph::DivOp>({a, b}); }
  Value max(Value a, Value b) { return op<graph::MaxOp>({a, b}); }
  Value min(Value a, Value b) { return op<graph::MinOp>({a, b}); }
  Value exp(Value a) { return op<graph::ExpOp>({a}); }
  Value log(Value a) { return op<graph::LogOp>({a}); }
  Value neg(Value a) { return op<graph::NegOp>({a}); }
  Value greater(Value a, Value b) {
    return compare(a, b, graph::ComparePredicate::gt);
  }
  Value less(Value a, Value b) {
    return compare(a, b, graph::ComparePredicate::lt);
  }
  Value select(Value c, Value a, Value b) {
    return op<graph::SelectOp>({c, a, b});
  }

  /// Binds the node's output `i` to `v`; failure when `v` is null.
  mlir::LogicalResult define(Value v, int i = 0) {
    if (!v)
      return mlir::failure();
    im.define(node, v, i);
    return mlir::success();
  }
};

} // namespace modelc::onnx_import

#endif // MODELC_COMPILER_IMPORT_ONNX_NODEBUILDER_H
