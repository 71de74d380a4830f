//===- GradientBuilder.cpp - graph ops built by gradient rules ------------===//

#include "dialects/Graph/IR/GradientBuilder.h"

using namespace mlir;

namespace modelc::graph {

Value GradientBuilder::build(StringRef name, ValueRange operands,
                             ArrayRef<NamedAttribute> attributes, Infer infer) {
  for (Value v : operands)
    if (!v)
      return nullptr;
  MLIRContext *context = builder.getContext();
  SmallVector<Type> types;
  DictionaryAttr dict = DictionaryAttr::get(context, attributes);
  if (failed(infer(context, loc, operands, dict, nullptr, {}, types)))
    return nullptr;
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attributes);
  state.addTypes(types);
  return builder.create(state)->getResult(0);
}

NamedAttribute GradientBuilder::named(StringRef name, Attribute value) {
  return builder.getNamedAttr(name, value);
}

Value GradientBuilder::add(Value a, Value b) { return op<AddOp>({a, b}); }
Value GradientBuilder::sub(Value a, Value b) { return op<SubOp>({a, b}); }
Value GradientBuilder::mul(Value a, Value b) { return op<MulOp>({a, b}); }
Value GradientBuilder::div(Value a, Value b) { return op<DivOp>({a, b}); }
Value GradientBuilder::neg(Value a) {
  return a ? NegOp::create(builder, loc, a).getResult() : nullptr;
}
Value GradientBuilder::exp(Value a) {
  return a ? ExpOp::create(builder, loc, a).getResult() : nullptr;
}
Value GradientBuilder::tanh(Value a) {
  return a ? TanhOp::create(builder, loc, a).getResult() : nullptr;
}
Value GradientBuilder::sigmoid(Value a) {
  return a ? SigmoidOp::create(builder, loc, a).getResult() : nullptr;
}
Value GradientBuilder::erf(Value a) {
  return a ? ErfOp::create(builder, loc, a).getResult() : nullptr;
}
Value GradientBuilder::scale(Value a, double c) { return mul(a, scalar(a, c)); }

Value GradientBuilder::compare(ComparePredicate predicate, Value a, Value b) {
  return op<CompareOp>(
      {a, b}, {named("predicate", ComparePredicateAttr::get(
                                      builder.getContext(), predicate))});
}

Value GradientBuilder::select(Value condition, Value a, Value b) {
  return op<SelectOp>({condition, a, b});
}

Value GradientBuilder::cast(Value a, Type element) {
  if (!a)
    return nullptr;
  if (tensorTypeOf(a).getElementType() == element)
    return a;
  return op<CastOp>({a}, {named("dtype", TypeAttr::get(element))});
}

Value GradientBuilder::scalar(Value like, double value) {
  if (!like)
    return nullptr;
  return splat(RankedTensorType::get({}, tensorTypeOf(like).getElementType()),
               value);
}

Value GradientBuilder::splat(RankedTensorType type, double value) {
  Type element = type.getElementType();
  Attribute one;
  if (isa<FloatType>(element))
    one = FloatAttr::get(element, value);
  else if (element.isInteger(1))
    one = BoolAttr::get(builder.getContext(), value != 0);
  else
    one = IntegerAttr::get(element, static_cast<int64_t>(value));
  return ConstantOp::create(builder, loc, DenseElementsAttr::get(type, one));
}

Value GradientBuilder::reshape(Value a, ArrayRef<int64_t> shape) {
  if (!a)
    return nullptr;
  if (tensorTypeOf(a).getShape() == shape)
    return a;
  return op<ReshapeOp>({a},
                       {named("shape", builder.getDenseI64ArrayAttr(shape))});
}

Value GradientBuilder::transpose(Value a, ArrayRef<int64_t> perm) {
  return op<TransposeOp>({a},
                         {named("perm", builder.getDenseI64ArrayAttr(perm))});
}

Value GradientBuilder::reduceSum(Value a, ArrayRef<int64_t> axes,
                                 bool keepdims) {
  if (axes.empty())
    return a;
  return op<ReduceSumOp>({a},
                         {named("axes", builder.getDenseI64ArrayAttr(axes)),
                          named("keepdims", builder.getBoolAttr(keepdims))});
}

Value GradientBuilder::gemm(Value a, Value b, bool transposeA, bool transposeB,
                            double alpha) {
  SmallVector<NamedAttribute> attributes;
  if (transposeA)
    attributes.push_back(named("transpose_a", builder.getBoolAttr(true)));
  if (transposeB)
    attributes.push_back(named("transpose_b", builder.getBoolAttr(true)));
  if (alpha != 1.0)
    attributes.push_back(named("alpha", builder.getF32FloatAttr(alpha)));
  return op<GemmOp>({a, b}, attributes);
}

Value GradientBuilder::matmul(Value a, Value b) { return op<MatmulOp>({a, b}); }

Value GradientBuilder::sumToShape(Value g, Type target) {
  if (!g)
    return nullptr;
  auto to = mlir::cast<RankedTensorType>(target);
  ArrayRef<int64_t> from = tensorTypeOf(g).getShape();
  if (from == to.getShape())
    return g;
  int64_t lead = static_cast<int64_t>(from.size()) - to.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d)
    if (d < lead || (to.getDimSize(d - lead) == 1 && from[d] != 1))
      axes.push_back(d);
  return reshape(reduceSum(g, axes, /*keepdims=*/false), to.getShape());
}

Value GradientBuilder::broadcastTo(Value a, ArrayRef<int64_t> shape) {
  if (!a)
    return nullptr;
  if (tensorTypeOf(a).getShape() == shape)
    return a;
  Value all = splat(RankedTensorType::get(shape, builder.getI1Type()), 1);
  return select(all, a, a);
}

LogicalResult GradientBuilder::notSupported(Operation *op, const Twine &what) {
  return op->emitError("the gradient of '")
         << op->getName() << "' " << what << " is not supported yet";
}

} // namespace modelc::graph
