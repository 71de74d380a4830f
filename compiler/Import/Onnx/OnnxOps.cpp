//===- OnnxOps.cpp - one converter per ONNX op type -----------------------===//
//
// Each converter reads its node's inputs and attributes and builds the
// graph ops that compute the same thing, or emits an error at the node for
// an attribute value modelc does not support (never a silent difference).
// Result types come from the graph ops' own type inference, so a shape
// error is reported at the node too.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

/// Builds OpT over `operands` with `attributes` at the node (its result
/// type inferred, errors at the node); null on failure.
template <typename OpT>
Value build(Importer &im, const NodeProto &node, ValueRange operands,
            ArrayRef<NamedAttribute> attributes = {}) {
  return At{im, node}.op<OpT>(operands, attributes);
}

/// As build, binding the node's output to the result.
template <typename OpT>
LogicalResult emit(Importer &im, const NodeProto &node, ValueRange operands,
                   ArrayRef<NamedAttribute> attributes = {}) {
  At at{im, node};
  return at.define(at.op<OpT>(operands, attributes));
}

NamedAttribute named(Importer &im, StringRef name, Attribute value) {
  return im.builder.getNamedAttr(name, value);
}
Attribute ints(Importer &im, ArrayRef<int64_t> values) {
  return im.builder.getDenseI64ArrayAttr(values);
}

/// A node whose only result is the elementwise OpT of its inputs.
template <typename OpT>
LogicalResult elementwise(Importer &im, const NodeProto &n) {
  SmallVector<Value> operands;
  for (int i = 0; i < n.input_size(); ++i)
    operands.push_back(im.input(n, i));
  return emit<OpT>(im, n, operands);
}

/// Variadic Max/Min/Sum: a chain of the binary op.
template <typename OpT> LogicalResult chain(Importer &im, const NodeProto &n) {
  Value acc = im.input(n, 0);
  for (int i = 1; acc && i < n.input_size(); ++i)
    acc = build<OpT>(im, n, {acc, im.input(n, i)});
  if (!acc)
    return failure();
  im.define(n, acc);
  return success();
}

/// Pow's exponent may have another type than its base (ONNX); the result
/// has the base's type. A float base, or an integer base with an integer
/// exponent, takes the exponent converted to the base's type; an integer
/// base with a float exponent is raised in f64 and converted back,
/// truncating toward zero (as ONNX Runtime computes it).
LogicalResult power(Importer &im, const NodeProto &n) {
  Value base = im.input(n, 0), exponent = im.input(n, 1);
  if (!base || !exponent)
    return failure();
  Type b = typeOf(base).getElementType(), e = typeOf(exponent).getElementType();
  auto castTo = [&](Value v, Type to) {
    return build<CastOp>(im, n, {v}, {named(im, "dtype", TypeAttr::get(to))});
  };
  if (b != e && !isa<FloatType>(b) && isa<FloatType>(e)) {
    Type f64 = im.builder.getF64Type();
    Value raised =
        build<PowOp>(im, n, {castTo(base, f64), castTo(exponent, f64)});
    return emit<CastOp>(im, n, {raised},
                        {named(im, "dtype", TypeAttr::get(b))});
  }
  if (b != e)
    exponent = castTo(exponent, b);
  return emit<PowOp>(im, n, {base, exponent});
}

LogicalResult passThrough(Importer &im, const NodeProto &n) {
  Value v = im.input(n, 0);
  if (!v)
    return failure();
  im.define(n, v);
  return success();
}

LogicalResult compare(Importer &im, const NodeProto &n,
                      ComparePredicate predicate) {
  return emit<CompareOp>(
      im, n, {im.input(n, 0), im.input(n, 1)},
      {named(im, "predicate",
             ComparePredicateAttr::get(&im.context, predicate))});
}

/// Constant: 'value' (a tensor), or since opset 12 'value_float',
/// 'value_floats', 'value_int', 'value_ints' (a float32 or int64 scalar or
/// vector); not the string and sparse forms.
LogicalResult constant(Importer &im, const NodeProto &n) {
  if (n.attribute_size() != 1) {
    im.error(n) << "must have exactly one attribute (the value), has "
                << n.attribute_size();
    return failure();
  }
  const onnx::AttributeProto &a = n.attribute(0);
  onnx::TensorProto t;
  if (a.name() == "value" && a.has_t()) {
    t = a.t();
  } else if (a.name() == "value_float") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a.floats_size());
    for (float v : a.floats())
      t.add_float_data(v);
  } else if (a.name() == "value_int") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a.ints_size());
    for (int64_t v : a.ints())
      t.add_int64_data(v);
  } else {
    im.error(n) << "the '" << a.name()
                << "' form is not supported (value, value_float, "
                   "value_floats, value_int and value_ints are)";
    return failure();
  }
  im.defineConstant(n, t);
  return success();
}

LogicalResult leakyRelu(Importer &im, const NodeProto &n) {
  return emit<LeakyReluOp>(
      im, n, {im.input(n, 0)},
      {named(
          im, "alpha",
          im.builder.getF64FloatAttr(Importer::floatAttr(n, "alpha", 0.01f)))});
}

/// Clip(x, min, max) as max(x, min) then min(., max), with constant bounds.
LogicalResult clip(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  for (int i : {1, 2}) {
    if (!Importer::hasInput(n, i))
      continue;
    Value bound = im.input(n, i);
    x = i == 1 ? build<MaxOp>(im, n, {x, bound})
               : build<MinOp>(im, n, {x, bound});
    if (!x)
      return failure();
  }
  if (im.opset() < 11 &&
      (Importer::attribute(n, "min") || Importer::attribute(n, "max"))) {
    im.error(n) << "the opset < 11 form (min/max attributes) is not "
                   "supported yet";
    return failure();
  }
  im.define(n, x);
  return success();
}

/// Matrix products of floats, and of integers (computed in their type,
/// wrapping around on overflow); not of booleans.
LogicalResult checkProductType(Importer &im, const NodeProto &n, Value a) {
  if (!a)
    return failure();
  Type element = typeOf(a).getElementType();
  if (!element.isInteger(1))
    return success();
  im.error(n) << "operands of type " << element
              << " are not supported (floats and integers are)";
  return failure();
}

LogicalResult matmul(Importer &im, const NodeProto &n) {
  if (failed(checkProductType(im, n, im.input(n, 0))))
    return failure();
  return elementwise<MatmulOp>(im, n);
}

LogicalResult gemm(Importer &im, const NodeProto &n) {
  SmallVector<Value> operands = {im.input(n, 0), im.input(n, 1)};
  if (failed(checkProductType(im, n, operands[0])))
    return failure();
  float alpha = Importer::floatAttr(n, "alpha", 1),
        beta = Importer::floatAttr(n, "beta", 1);
  if (isa<IntegerType>(typeOf(operands[0]).getElementType()) &&
      (alpha != std::trunc(alpha) || beta != std::trunc(beta))) {
    im.error(n) << "integer operands with a fractional alpha or beta are not "
                   "supported (alpha "
                << alpha << ", beta " << beta << ")";
    return failure();
  }
  if (Importer::hasInput(n, 2))
    operands.push_back(im.input(n, 2));
  return emit<GemmOp>(
      im, n, operands,
      {named(im, "transpose_a",
             im.builder.getBoolAttr(Importer::intAttr(n, "transA", 0))),
       named(im, "transpose_b",
             im.builder.getBoolAttr(Importer::intAttr(n, "transB", 0))),
       named(im, "alpha", im.builder.getF32FloatAttr(alpha)),
       named(im, "beta", im.builder.getF32FloatAttr(beta))});
}

/// Checks what conv and pooling nodes share: 2-D, explicit padding.
Value reshapeTo(Importer &im, const NodeProto &n, Value x,
                ArrayRef<int64_t> shape) {
  if (!x)
    return nullptr;
  return build<ReshapeOp>(im, n, {x}, {named(im, "shape", ints(im, shape))});
}

SmallVector<int64_t> attrOr(const NodeProto &n, StringRef name,
                            SmallVector<int64_t> otherwise) {
  return Importer::intsAttr(n, name).value_or(otherwise);
}

/// The window of a Conv, ConvTranspose or pooling node in the 2-D terms of
/// the graph ops: a 1-D window (rank-3 input) becomes 2-D with a unit
/// height (`lifted`), and auto_pad SAME_UPPER/SAME_LOWER becomes explicit
/// pads computed from the static shapes.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations, outputPadding;
  bool lifted = false;
};

std::optional<Window> windowOf(Importer &im, const NodeProto &n, Value x,
                               ArrayRef<int64_t> kernel, bool transposed) {
  int64_t rank = typeOf(x).getRank();
  if (rank != 3 && rank != 4) {
    im.error(n) << "inputs of rank " << rank
                << " are not supported yet (1-D and 2-D windows, rank 3 "
                   "and 4, are)";
    return std::nullopt;
  }
  size_t spatial = rank - 2;
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = attrOr(n, "strides", SmallVector<int64_t>(spatial, 1));
  w.dilations = attrOr(n, "dilations", SmallVector<int64_t>(spatial, 1));
  w.pads = attrOr(n, "pads", SmallVector<int64_t>(2 * spatial, 0));
  w.outputPadding =
      attrOr(n, "output_padding", SmallVector<int64_t>(spatial, 0));
  if (w.kernel.size() != spatial || w.strides.size() != spatial ||
      w.dilations.size() != spatial || w.pads.size() != 2 * spatial ||
      w.outputPadding.size() != spatial) {
    im.error(n) << "kernel, strides, dilations, pads and output_padding "
                   "must have one entry per spatial dimension (pads two)";
    return std::nullopt;
  }
  auto inRange = [](int64_t v) { return v >= 1 && v <= (int64_t(1) << 31); };
  if (!llvm::all_of(w.strides, inRange) ||
      !llvm::all_of(w.dilations, inRange) || !llvm::all_of(w.kernel, inRange)) {
    im.error(n) << "kernel sizes, strides and dilations must be in [1, 2^31]";
    return std::nullopt;
  }
  std::string autoPad = Importer::stringAttr(n, "auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (transposed) {
      im.error(n) << "auto_pad " << autoPad
                  << " is not supported yet (give explicit pads)";
      return std::nullopt;
    }
    // Output size ceil(in / stride); the padding that needs, split evenly
    // with the odd one at the end (SAME_UPPER) or the start (SAME_LOWER).
    for (size_t d = 0; d < spatial; ++d) {
      int64_t in = typeOf(x).getDimSize(2 + d);
      int64_t out = (in + w.strides[d] - 1) / w.strides[d];
      int64_t reach = (w.kernel[d] - 1) * w.dilations[d] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + reach - in);
      int64_t small = total / 2, large = total - small;
      w.pads[d] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[d + spatial] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    im.error(n) << "auto_pad " << autoPad << " is not supported";
    return std::nullopt;
  }
  // ConvTranspose's output_shape (its spatial sizes, or the whole shape):
  // the pads that give it, the odd one at the start (ONNX's rule without
  // SAME_UPPER); a size beyond what the convolution covers is output
  // padding at the end (as ONNX Runtime computes it: pads 0, the rows past
  // the last window get the bias only).
  if (const onnx::AttributeProto *shape =
          transposed ? Importer::attribute(n, "output_shape") : nullptr) {
    SmallVector<int64_t> out(shape->ints().begin(), shape->ints().end());
    if (out.size() == spatial + 2)
      out.erase(out.begin(), out.begin() + 2);
    if (out.size() != spatial) {
      im.error(n) << "output_shape must have one entry per spatial "
                     "dimension (or the whole output shape)";
      return std::nullopt;
    }
    for (size_t d = 0; d < spatial; ++d) {
      int64_t in = typeOf(x).getDimSize(2 + d);
      int64_t reach = (w.kernel[d] - 1) * w.dilations[d] + 1;
      int64_t total =
          w.strides[d] * (in - 1) + w.outputPadding[d] + reach - out[d];
      if (out[d] < 1) {
        im.error(n) << "output_shape " << out[d] << " of spatial dimension "
                    << d << " is not positive";
        return std::nullopt;
      }
      if (total < 0) {
        w.outputPadding[d] -= total;
        total = 0;
      }
      w.pads[d] = total - total / 2;
      w.pads[d + spatial] = total / 2;
    }
  }
  if (spatial == 1) {
    w.lifted = true;
    w.kernel = {1, w.kernel[0]};
    w.strides = {1, w.strides[0]};
    w.dilations = {1, w.dilations[0]};
    w.pads = {0, w.pads[0], 0, w.pads[1]};
    w.outputPadding = {0, w.outputPadding[0]};
  }
  return w;
}

/// [N, C, L] as [N, C, 1, L] (a lifted 1-D window's operand).
Value lift(Importer &im, const NodeProto &n, Value v) {
  if (!v)
    return v;
  SmallVector<int64_t> shape(typeOf(v).getShape());
  shape.insert(shape.begin() + 2, 1);
  return reshapeTo(im, n, v, shape);
}

/// The result of a lifted window back to [N, C, L].
LogicalResult defineWindowResult(Importer &im, const NodeProto &n, Value y,
                                 const Window &w) {
  if (y && w.lifted) {
    SmallVector<int64_t> shape(typeOf(y).getShape());
    shape.erase(shape.begin() + 2);
    y = reshapeTo(im, n, y, shape);
  }
  return At{im, n}.define(y);
}

template <typename ConvOp>
LogicalResult conv(Importer &im, const NodeProto &n) {
  constexpr bool transposed = std::is_same_v<ConvOp, ConvTranspose2dOp>;
  Value x = im.input(n, 0), w = im.input(n, 1);
  if (!x || !w)
    return failure();
  ArrayRef<int64_t> weightShape = typeOf(w).getShape();
  int64_t rank = typeOf(x).getRank();
  if (rank >= 3 && weightShape.size() != static_cast<size_t>(rank)) {
    im.error(n) << "the weight must have the input's rank";
    return failure();
  }
  // windowOf refuses ranks other than 3 and 4 (its kernel is then empty).
  std::optional<Window> window = windowOf(
      im, n, x, rank >= 3 ? weightShape.drop_front(2) : ArrayRef<int64_t>(),
      transposed);
  if (!window)
    return failure();
  SmallVector<Value> operands = {x, w};
  if (window->lifted)
    operands = {lift(im, n, x), lift(im, n, w)};
  if (Importer::hasInput(n, 2))
    operands.push_back(im.input(n, 2));
  SmallVector<NamedAttribute> attrs = {
      named(im, "strides", ints(im, window->strides)),
      named(im, "padding", ints(im, window->pads)),
      named(im, "dilations", ints(im, window->dilations)),
      named(im, "groups",
            im.builder.getI64IntegerAttr(Importer::intAttr(n, "group", 1)))};
  if constexpr (transposed) {
    attrs.push_back(
        named(im, "output_padding", ints(im, window->outputPadding)));
  }
  return defineWindowResult(im, n, build<ConvOp>(im, n, operands, attrs),
                            *window);
}

template <typename PoolOp>
LogicalResult pool(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  if (n.output_size() > 1 && !n.output(1).empty()) {
    im.error(n) << "the Indices output is not supported";
    return failure();
  }
  std::optional<SmallVector<int64_t>> kernel =
      Importer::intsAttr(n, "kernel_shape");
  if (!kernel) {
    im.error(n) << "kernel_shape is required";
    return failure();
  }
  std::optional<Window> window = windowOf(im, n, x, *kernel, false);
  if (!window)
    return failure();
  if (llvm::any_of(window->dilations, [](int64_t d) { return d != 1; })) {
    im.error(n) << "dilated pooling is not supported yet";
    return failure();
  }
  for (auto [i, p] : llvm::enumerate(window->pads))
    if (p > window->kernel[i % 2] / 2) {
      im.error(n) << "padding larger than half the kernel is not supported "
                     "(pads "
                  << p << ", kernel " << window->kernel[i % 2] << ")";
      return failure();
    }
  SmallVector<NamedAttribute> attrs = {
      named(im, "kernel", ints(im, window->kernel)),
      named(im, "strides", ints(im, window->strides)),
      named(im, "padding", ints(im, window->pads)),
      named(im, "ceil_mode",
            im.builder.getBoolAttr(Importer::intAttr(n, "ceil_mode", 0)))};
  if constexpr (std::is_same_v<PoolOp, AvgPool2dOp>)
    attrs.push_back(named(
        im, "count_include_pad",
        im.builder.getBoolAttr(Importer::intAttr(n, "count_include_pad", 0))));
  Value in = window->lifted ? lift(im, n, x) : x;
  return defineWindowResult(
      im, n, in ? build<PoolOp>(im, n, {in}, attrs) : Value(), *window);
}

LogicalResult batchNorm(Importer &im, const NodeProto &n) {
  // Training mode (torch.onnx.export with TrainingMode.TRAINING, as ONNX
  // Runtime's training expects): the op keeps its momentum, so a training
  // build (modelc-training-mode) can normalise with the batch's statistics
  // and update the running ones; it is the inference form everywhere else.
  // The running statistics' outputs are what that update writes back to
  // the weights: nothing may read them as values.
  bool training = Importer::intAttr(n, "training_mode", 0) != 0;
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && im.isUsed(n.output(i))) {
      im.error(n) << "output '" << n.output(i)
                  << "' (a running statistic) is read by the model: not "
                     "supported yet (only the normalised output can be read)";
      return failure();
    }
  SmallVector<Value> operands;
  for (int i = 0; i < 5; ++i)
    operands.push_back(im.input(n, i));
  SmallVector<NamedAttribute> attrs{named(
      im, "epsilon",
      im.builder.getF32FloatAttr(Importer::floatAttr(n, "epsilon", 1e-5f)))};
  if (training) {
    // ONNX's momentum weighs the running statistic (0.9), PyTorch's the
    // batch's (0.1).
    double onnxMomentum = Importer::floatAttr(n, "momentum", 0.9f);
    attrs.push_back(named(
        im, "momentum",
        im.builder.getF32FloatAttr(static_cast<float>(1.0 - onnxMomentum))));
  }
  return emit<BatchNormOp>(im, n, operands, attrs);
}

template <typename SoftmaxLike>
LogicalResult softmax(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  int64_t rank = typeOf(x).getRank();
  int64_t axis = Importer::intAttr(n, "axis", im.opset() < 13 ? 1 : -1);
  // Before opset 13 the input is seen as 2-D, split at `axis`: the same as
  // over the last axis only when `axis` is the last one.
  if (im.opset() < 13 && normalizeAxis(axis, rank) != rank - 1) {
    im.error(n) << "the opset " << im.opset()
                << " form over the flattened dimensions from axis " << axis
                << " is not supported yet";
    return failure();
  }
  return emit<SoftmaxLike>(
      im, n, {x}, {named(im, "axis", im.builder.getI64IntegerAttr(axis))});
}

/// LayerNormalization; its optional Mean and InvStdDev outputs (over the
/// normalized axes, kept as size 1) are computed beside it.
LogicalResult layerNorm(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0), scale = im.input(n, 1);
  Value bias = Importer::hasInput(n, 2) ? im.input(n, 2) : Value();
  if (!x || !scale || (Importer::hasInput(n, 2) && !bias))
    return failure();
  int64_t axis = Importer::intAttr(n, "axis", -1);
  float epsilon = Importer::floatAttr(n, "epsilon", 1e-5f);
  SmallVector<Value> operands = {x, scale};
  if (bias)
    operands.push_back(bias);
  if (failed(emit<LayerNormOp>(
          im, n, operands,
          {named(im, "axis", im.builder.getI64IntegerAttr(axis)),
           named(im, "epsilon", im.builder.getF32FloatAttr(epsilon)),
           named(im, "operandSegmentSizes",
                 im.builder.getDenseI32ArrayAttr({1, 1, bias ? 1 : 0}))})))
    return failure();
  bool statistics =
      llvm::any_of(llvm::drop_begin(n.output()),
                   [](const std::string &o) { return !o.empty(); });
  if (!statistics)
    return success();
  At at{im, n};
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = normalizeAxis(axis, rank); d < rank; ++d)
    axes.push_back(d);
  // The statistics are computed in, and typed as, stash_type (f32 unless
  // the node says otherwise).
  int64_t stash = Importer::intAttr(n, "stash_type", 1);
  Type stashType = elementTypeOf(im.context, static_cast<int32_t>(stash));
  if (!stashType || !isa<FloatType>(stashType)) {
    im.error(n) << "stash_type " << stash << " is not supported";
    return failure();
  }
  Value xs =
      typeOf(x).getElementType() == stashType ? x : at.cast(x, stashType);
  auto [mean, centered, variance] = at.moments(xs, axes);
  Value inverse =
      at.op<RsqrtOp>({at.add(variance, at.scalar(variance, epsilon))});
  if (!mean || !inverse)
    return failure();
  im.define(n, mean, 1);
  im.define(n, inverse, 2);
  return success();
}

LogicalResult reshape(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  std::optional<SmallVector<int64_t>> shape = im.constantInts(n, 1);
  if (!x)
    return failure();
  if (!shape) {
    im.error(n) << "a shape computed at run time is not supported (it must "
                   "be constant: an initializer or a Constant node)";
    return failure();
  }
  bool allowZero = Importer::intAttr(n, "allowzero", 0) != 0;
  ArrayRef<int64_t> in = typeOf(x).getShape();
  const SmallVector<int64_t> raw = *shape; // before the copies (0)
  for (auto [i, d] : llvm::enumerate(*shape))
    if (d == 0 && !allowZero) {
      if (i >= in.size()) {
        im.error(n) << "shape entry " << i << " is 0 (copy) but the input "
                    << "has rank " << in.size();
        return failure();
      }
      d = in[i];
    }
  // Dynamic dimensions (docs/dynamic.md): the shape's sizes are symbolic
  // where it read them with Shape (symbolicInts: products of dimensions,
  // folded at the max), copies them (0) or infers them (-1).
  std::optional<graph::SymShape> input = im.symbolicShapeOf(n.input(0));
  if (!input || !graph::hasSymbols(*input)) {
    if (std::string dim = im.symbolicInput(n); !dim.empty()) {
      im.error(n) << "puts the size of dynamic dimension '" << dim
                  << "' into the shape of a value without it; not "
                     "supported yet";
      return failure();
    }
    return At{im, n}.define(reshapeTo(im, n, x, *shape));
  }
  MLIRContext *context = im.builder.getContext();
  ArrayRef<std::string> symbols = im.symbolsOf(n.input(1));
  graph::SymShape target;
  int64_t unknown = -1;
  graph::SymDim known = graph::SymDim::of(1), total = graph::SymDim::of(1);
  for (const graph::SymDim &d : *input)
    total = total * d;
  for (size_t i = 0; i < shape->size(); ++i) {
    std::optional<graph::SymDim> d;
    if (i < symbols.size() && !symbols[i].empty())
      d = graph::SymDim::parse(context, symbols[i]);
    else if (raw[i] == 0 && !allowZero)
      d = (*input)[i];
    else if (raw[i] == -1)
      unknown = i;
    else
      d = graph::SymDim::of((*shape)[i]);
    target.push_back(d.value_or(graph::SymDim::of(1)));
    if (d)
      known = known * *d;
  }
  // -1: the input's elements over the others', exact at every size.
  auto quotient = [](graph::SymDim a,
                     const graph::SymDim &b) -> std::optional<graph::SymDim> {
    if (b.coef <= 0 || a.coef % b.coef != 0)
      return std::nullopt;
    a.coef /= b.coef;
    for (StringAttr d : b.dims) {
      auto *it = llvm::find(a.dims, d);
      if (it == a.dims.end())
        return std::nullopt;
      a.dims.erase(it);
    }
    return a;
  };
  if (unknown >= 0) {
    std::optional<graph::SymDim> q = quotient(total, known);
    if (!q) {
      SmallVector<std::string> given;
      for (auto [i, d] : llvm::enumerate(target))
        given.push_back(static_cast<int64_t>(i) == unknown ? "-1" : d.str());
      im.error(n) << "reshapes " << graph::describe(*input) << " to ["
                  << llvm::join(given, ", ") << "]: the -1 would be "
                  << total.str() << " / " << known.str()
                  << ", not exact at every size of the dynamic dimensions (a "
                     "fixed size where a dimension should be? a shape that "
                     "keeps it takes it with Shape, 0 or -1)";
      return failure();
    }
    target[unknown] = *q;
    known = known * *q;
  }
  if (known != total) {
    im.error(n) << "reshapes " << graph::describe(*input) << " to "
                << graph::describe(target)
                << ", which has other elements at other sizes of the "
                   "dynamic dimensions (a fixed size where the dimension "
                   "should be: a shape that keeps it takes it with Shape, 0 "
                   "or -1)";
    return failure();
  }
  Value y = reshapeTo(im, n, x, *shape);
  if (auto reshape = y ? y.getDefiningOp<ReshapeOp>() : ReshapeOp()) {
    // Its grouping, exact at every size (SymbolicShape.h).
    SmallVector<Attribute> dims;
    for (const graph::SymDim &d : target)
      dims.push_back(im.builder.getStringAttr(d.isStatic() ? "" : d.str()));
    reshape->setAttr(graph::kDimsAttrName, im.builder.getArrayAttr(dims));
  }
  return At{im, n}.define(y);
}

LogicalResult flatten(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape();
  int64_t axis = normalizeAxis(Importer::intAttr(n, "axis", 1), in.size());
  int64_t outer = 1, inner = 1;
  for (auto [i, d] : llvm::enumerate(in))
    (static_cast<int64_t>(i) < axis ? outer : inner) *= d;
  return At{im, n}.define(reshapeTo(im, n, x, {outer, inner}));
}

/// Squeeze and Unsqueeze: axes from the attribute (opset < 13) or input 1.
template <bool Unsqueeze>
LogicalResult squeeze(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  std::optional<SmallVector<int64_t>> axes =
      im.opset() < 13 ? Importer::intsAttr(n, "axes") : im.constantInts(n, 1);
  if (!axes && (Unsqueeze || Importer::hasInput(n, 1))) {
    im.error(n) << "axes given at run time are not supported (they must be "
                   "constant)";
    return failure();
  }
  SmallVector<int64_t> shape(typeOf(x).getShape());
  if (Unsqueeze) {
    int64_t rank = shape.size() + axes->size();
    SmallVector<int64_t> sorted;
    for (int64_t a : *axes)
      sorted.push_back(normalizeAxis(a, rank));
    llvm::sort(sorted);
    for (int64_t a : sorted)
      shape.insert(shape.begin() + std::min<int64_t>(a, shape.size()), 1);
  } else {
    SmallVector<int64_t> out;
    for (auto [i, d] : llvm::enumerate(shape)) {
      bool listed = !axes || llvm::any_of(*axes, [&](int64_t a) {
        return normalizeAxis(a, shape.size()) == static_cast<int64_t>(i);
      });
      if (listed && d != 1 && axes) {
        im.error(n) << "axis " << i << " has size " << d << ", not 1";
        return failure();
      }
      if (!(listed && d == 1))
        out.push_back(d);
    }
    shape = out;
  }
  return At{im, n}.define(reshapeTo(im, n, x, shape));
}

LogicalResult transpose(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = rank - 1; i >= 0; --i)
    perm.push_back(i); // the default reverses the dimensions
  return emit<TransposeOp>(
      im, n, {x},
      {named(im, "perm",
             ints(im, Importer::intsAttr(n, "perm").value_or(perm)))});
}

LogicalResult concat(Importer &im, const NodeProto &n) {
  SmallVector<Value> inputs;
  for (int i = 0; i < n.input_size(); ++i)
    inputs.push_back(im.input(n, i));
  return emit<ConcatOp>(
      im, n, inputs,
      {named(im, "axis",
             im.builder.getI64IntegerAttr(Importer::intAttr(n, "axis", 0)))});
}

LogicalResult slice(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (im.opset() < 10) {
    starts = Importer::intsAttr(n, "starts");
    ends = Importer::intsAttr(n, "ends");
    axes = Importer::intsAttr(n, "axes");
  } else {
    starts = im.constantInts(n, 1);
    ends = im.constantInts(n, 2);
    axes = im.constantInts(n, 3);
    steps = im.constantInts(n, 4);
    if ((Importer::hasInput(n, 3) && !axes) ||
        (Importer::hasInput(n, 4) && !steps)) {
      im.error(n) << "axes or steps given at run time are not supported "
                     "(they must be constant)";
      return failure();
    }
  }
  if (!starts || !ends) {
    im.error(n) << "starts or ends given at run time are not supported "
                   "(they must be constant)";
    return failure();
  }
  // ONNX clamps starts and ends into the dimension (INT64_MAX means the
  // end); graph.slice clamps the same way.
  SmallVector<NamedAttribute> attrs = {named(im, "starts", ints(im, *starts)),
                                       named(im, "ends", ints(im, *ends))};
  if (axes)
    attrs.push_back(named(im, "axes", ints(im, *axes)));
  if (steps)
    attrs.push_back(named(im, "steps", ints(im, *steps)));
  return emit<SliceOp>(im, n, {x}, attrs);
}

LogicalResult gather(Importer &im, const NodeProto &n) {
  return emit<GatherOp>(
      im, n, {im.input(n, 0), im.input(n, 1)},
      {named(im, "axis",
             im.builder.getI64IntegerAttr(Importer::intAttr(n, "axis", 0)))});
}

/// ReduceSum takes its axes as input 1 from opset 13 on, the others from
/// opset 18 (not in ONNX 1.12); an empty axes list reduces everything unless
/// noop_with_empty_axes.
template <typename ReduceOp>
LogicalResult reduce(Importer &im, const NodeProto &n, bool axesInput) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  std::optional<SmallVector<int64_t>> axes =
      axesInput ? im.constantInts(n, 1) : Importer::intsAttr(n, "axes");
  if (axesInput && Importer::hasInput(n, 1) && !axes) {
    im.error(n) << "axes given at run time are not supported (they must be "
                   "constant)";
    return failure();
  }
  if ((!axes || axes->empty()) &&
      Importer::intAttr(n, "noop_with_empty_axes", 0)) {
    im.define(n, x);
    return success();
  }
  SmallVector<NamedAttribute> attrs = {
      named(im, "keepdims",
            im.builder.getBoolAttr(Importer::intAttr(n, "keepdims", 1)))};
  if (axes && !axes->empty())
    attrs.push_back(named(im, "axes", ints(im, *axes)));
  return emit<ReduceOp>(im, n, {x}, attrs);
}

/// CumSum: the axis is input 1 and must be a constant.
LogicalResult cumsum(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  std::optional<SmallVector<int64_t>> axis = im.constantInts(n, 1);
  if (!axis || axis->size() != 1) {
    im.error(n) << "an axis given at run time is not supported (it must be "
                   "one constant integer)";
    return failure();
  }
  return emit<CumsumOp>(
      im, n, {x},
      {named(im, "axis", im.builder.getI64IntegerAttr(axis->front())),
       named(im, "exclusive",
             im.builder.getBoolAttr(Importer::intAttr(n, "exclusive", 0))),
       named(im, "reverse",
             im.builder.getBoolAttr(Importer::intAttr(n, "reverse", 0)))});
}

LogicalResult castTo(Importer &im, const NodeProto &n) {
  Value x = im.input(n, 0);
  int64_t to = Importer::intAttr(n, "to", 0);
  Type element = elementTypeOf(im.context, static_cast<int32_t>(to));
  if (!x)
    return failure();
  if (!element) {
    im.error(n) << "casting to ONNX data type " << to
                << " is not supported (f32, f16, bf16, f64, bool and the 8- to "
                   "64-bit integers are)";
    return failure();
  }
  return emit<CastOp>(im, n, {x}, {named(im, "dtype", TypeAttr::get(element))});
}

/// `v` as printf's %g writes it ("0.5").
std::string shortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

LogicalResult dropout(Importer &im, const NodeProto &n) {
  bool maskUsed =
      n.output_size() > 1 && !n.output(1).empty() && im.isUsed(n.output(1));
  std::optional<double> training =
      Importer::hasInput(n, 2) ? im.constantScalar(n, 2) : 0.0;
  if (!training) {
    im.error(n) << "a training_mode given at run time is not supported yet "
                   "(it must be a constant)";
    return failure();
  }
  if (*training == 0) {
    // Eval mode: the output is the input and the mask keeps everything.
    Value x = im.input(n, 0);
    if (!x)
      return failure();
    im.define(n, x);
    if (maskUsed) {
      auto maskType =
          RankedTensorType::get(typeOf(x).getShape(), im.builder.getI1Type());
      im.define(n,
                ConstantOp::create(im.builder, im.locationOf(n),
                                   DenseElementsAttr::get(maskType, true)),
                1);
    }
    return success();
  }
  if (maskUsed) {
    im.error(n) << "the mask output in training mode is not supported yet";
    return failure();
  }
  // Training mode (a TRAINING export): graph.dropout in its eval form,
  // which modelc-training-mode makes drop in the trained entry point.
  std::optional<double> ratio =
      Importer::hasInput(n, 1) ? im.constantScalar(n, 1) : 0.5;
  if (!ratio) {
    im.error(n) << "a ratio given at run time is not supported yet (it must "
                   "be a constant)";
    return failure();
  }
  if (!(*ratio >= 0.0 && *ratio < 1.0)) {
    im.error(n) << "ratio must be in [0, 1), got " << shortNumber(*ratio);
    return failure();
  }
  if (*ratio != 0.0 && !im.training()) {
    im.error(n) << "dropout in training mode (ratio " << shortNumber(*ratio)
                << ") outside modelc --train is not supported: the compiled "
                   "entry points run in eval mode; export the model in eval "
                   "mode, or train it with --train";
    return failure();
  }
  return emit<DropoutOp>(
      im, n, {im.input(n, 0)},
      {named(im, "ratio", im.builder.getF64FloatAttr(*ratio)),
       named(im, "seed",
             im.builder.getI64IntegerAttr(Importer::intAttr(n, "seed", 0)))});
}

} // namespace

const llvm::StringMap<NodeConverter> &modelc::onnx_import::nodeConverters() {
  static const llvm::StringMap<NodeConverter> table = [] {
    llvm::StringMap<NodeConverter> t;
    t["Add"] = elementwise<AddOp>;
    t["Sub"] = elementwise<SubOp>;
    t["Mul"] = elementwise<MulOp>;
    t["Div"] = elementwise<DivOp>;
    t["Pow"] = power;
    t["Max"] = chain<MaxOp>;
    t["Min"] = chain<MinOp>;
    t["Sum"] = chain<AddOp>;
    t["Neg"] = elementwise<NegOp>;
    t["Abs"] = elementwise<AbsOp>;
    t["Relu"] = elementwise<ReluOp>;
    t["Exp"] = elementwise<ExpOp>;
    t["Log"] = elementwise<LogOp>;
    t["Sqrt"] = elementwise<SqrtOp>;
    t["Tanh"] = elementwise<TanhOp>;
    t["Sigmoid"] = elementwise<SigmoidOp>;
    t["Erf"] = elementwise<ErfOp>;
    t["Sin"] = elementwise<SinOp>;
    t["Cos"] = elementwise<CosOp>;
    t["Tan"] = elementwise<TanOp>;
    t["Asin"] = elementwise<AsinOp>;
    t["Acos"] = elementwise<AcosOp>;
    t["Atan"] = elementwise<AtanOp>;
    t["Sinh"] = elementwise<SinhOp>;
    t["Cosh"] = elementwise<CoshOp>;
    t["Asinh"] = elementwise<AsinhOp>;
    t["Acosh"] = elementwise<AcoshOp>;
    t["Atanh"] = elementwise<AtanhOp>;
    t["Floor"] = elementwise<FloorOp>;
    t["Ceil"] = elementwise<CeilOp>;
    t["Round"] = elementwise<RoundOp>;
    // fmod = 0 on floats is an error at the node (graph.mod's verifier).
    t["BitShift"] = [](Importer &im, const NodeProto &n) {
      std::string direction = Importer::stringAttr(n, "direction", "");
      if (direction != "LEFT" && direction != "RIGHT") {
        im.error(n) << "direction must be LEFT or RIGHT, got '" << direction
                    << "'";
        return failure();
      }
      return emit<BitShiftOp>(
          im, n, {im.input(n, 0), im.input(n, 1)},
          {named(im, "right", im.builder.getBoolAttr(direction == "RIGHT"))});
    };
    t["Mod"] = [](Importer &im, const NodeProto &n) {
      bool fmod = Importer::intAttr(n, "fmod", 0) != 0;
      return emit<ModOp>(im, n, {im.input(n, 0), im.input(n, 1)},
                         {named(im, "fmod", im.builder.getBoolAttr(fmod))});
    };
    t["LeakyRelu"] = leakyRelu;
    t["Clip"] = clip;
    t["Where"] = elementwise<SelectOp>;
    t["Equal"] = [](Importer &im, const NodeProto &n) {
      return compare(im, n, ComparePredicate::eq);
    };
    t["Less"] = [](Importer &im, const NodeProto &n) {
      return compare(im, n, ComparePredicate::lt);
    };
    t["LessOrEqual"] = [](Importer &im, const NodeProto &n) {
      return compare(im, n, ComparePredicate::le);
    };
    t["Greater"] = [](Importer &im, const NodeProto &n) {
      return compare(im, n, ComparePredicate::gt);
    };
    t["GreaterOrEqual"] = [](Importer &im, const NodeProto &n) {
      return compare(im, n, ComparePredicate::ge);
    };
    t["Cast"] = castTo;
    t["MatMul"] = matmul;
    t["Gemm"] = gemm;
    t["Conv"] = conv<Conv2dOp>;
    t["ConvTranspose"] = conv<ConvTranspose2dOp>;
    t["MaxPool"] = pool<MaxPool2dOp>;
    t["AveragePool"] = pool<AvgPool2dOp>;
    t["GlobalAveragePool"] = elementwise<GlobalAvgPoolOp>;
    t["BatchNormalization"] = batchNorm;
    t["Softmax"] = softmax<SoftmaxOp>;
    t["LogSoftmax"] = softmax<LogSoftmaxOp>;
    t["LayerNormalization"] = layerNorm;
    t["Reshape"] = reshape;
    t["Flatten"] = flatten;
    t["Squeeze"] = squeeze<false>;
    t["Unsqueeze"] = squeeze<true>;
    t["Transpose"] = transpose;
    t["Concat"] = concat;
    t["Slice"] = slice;
    t["Gather"] = gather;
    t["ReduceSum"] = [](Importer &im, const NodeProto &n) {
      return reduce<ReduceSumOp>(im, n, im.opset() >= 13);
    };
    t["ReduceMean"] = [](Importer &im, const NodeProto &n) {
      return reduce<ReduceMeanOp>(im, n, false);
    };
    t["ReduceMax"] = [](Importer &im, const NodeProto &n) {
      return reduce<ReduceMaxOp>(im, n, false);
    };
    t["ReduceProd"] = [](Importer &im, const NodeProto &n) {
      return reduce<ReduceProdOp>(im, n, im.opset() >= 18);
    };
    t["CumSum"] = cumsum;
    t["Identity"] = passThrough;
    t["Dropout"] = dropout;
    t["Constant"] = constant;
    addCompositeConverters(t);
    addQuantizeConverters(t);
    addDataMovementConverters(t);
    addIndexingConverters(t);
    addResizeConverters(t);
    addEinsumConverter(t);
    addRecurrentConverters(t);
    return t;
  }();
  return table;
}
