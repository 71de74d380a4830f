//===- OnnxComposite.cpp - ONNX ops spelled with several graph ops --------===//
//
// ONNX ops that are, by their definition in the ONNX spec, a short formula
// over ops modelc has (HardSwish, Elu, Softplus, ReduceL2, PRelu, ...). Each
// is built from that formula, so it runs on every device that runs the
// pieces, and the elementwise pieces fuse into one loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"
#include "dialects/Graph/IR/GraphOps.h"

#include <limits>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

float attr(const NodeProto &n, StringRef name, float otherwise) {
  return Importer::floatAttr(n, name, otherwise);
}

/// A unary formula over input 0.
LogicalResult unary(Importer &im, const NodeProto &n,
                    llvm::function_ref<Value(At &, Value)> formula) {
  At at{im, n};
  Value x = im.input(n, 0);
  return at.define(x ? formula(at, x) : Value());
}

/// A reduction over the axes attribute (`keepdims`), of `element(x)`, then
/// `finish`.
template <typename ReduceOp>
LogicalResult reduceOf(Importer &im, const NodeProto &n,
                       llvm::function_ref<Value(At &, Value)> element,
                       llvm::function_ref<Value(At &, Value)> finish) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  if (Importer::hasInput(n, 1)) {
    im.error(n) << "axes given as an input (opset 18) are not supported yet";
    return failure();
  }
  SmallVector<NamedAttribute> attrs = {im.builder.getNamedAttr(
      "keepdims", im.builder.getBoolAttr(Importer::intAttr(n, "keepdims", 1)))};
  if (std::optional<SmallVector<int64_t>> axes = Importer::intsAttr(n, "axes"))
    if (!axes->empty())
      attrs.push_back(im.builder.getNamedAttr(
          "axes", im.builder.getDenseI64ArrayAttr(*axes)));
  Value reduced = at.op<ReduceOp>({element(at, x)}, attrs);
  return at.define(reduced ? finish(at, reduced) : Value());
}

Value identity(At &, Value v) { return v; }

/// Whether `x` is a float tensor; an error at the node if not.
bool isFloat(At &at, Value x) {
  if (isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType()))
    return true;
  at.im.error(at.node) << "integer inputs are not supported (float are)";
  return false;
}

SmallVector<int64_t> spatialAxes(Value x) {
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < cast<RankedTensorType>(x.getType()).getRank(); ++d)
    axes.push_back(d);
  return axes;
}

/// InstanceNormalization(x, scale, B): per sample and channel, normalized
/// over the spatial dimensions, then scale[c] * y + B[c].
LogicalResult instanceNorm(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0), scale = im.input(n, 1), bias = im.input(n, 2);
  if (!x || !scale || !bias)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() < 3) {
    im.error(n) << "the input must be [N, C, d...] with at least one "
                   "spatial dimension";
    return failure();
  }
  int64_t channels = type.getDimSize(1);
  for (Value v : {scale, bias})
    if (cast<RankedTensorType>(v.getType()).getShape() !=
        ArrayRef<int64_t>{channels}) {
      im.error(n) << "scale and B must be [C] = [" << channels << "]";
      return failure();
    }
  auto [mean, centered, variance] = at.moments(x, spatialAxes(x));
  float epsilon = attr(n, "epsilon", 1e-5f);
  Value normalized = at.mul(
      centered, at.op<RsqrtOp>({at.add(variance, at.scalar(x, epsilon))}));
  SmallVector<int64_t> perChannel(type.getRank(), 1);
  perChannel[1] = channels;
  return at.define(at.add(at.mul(normalized, at.reshape(scale, perChannel)),
                          at.reshape(bias, perChannel)));
}

/// LRN: x / (bias + alpha / size * sum of x^2 over a window of `size`
/// channels) ^ beta. The window sum is an average pool (zeros counted) over
/// the channels of [N, 1, C, H*W], times size.
LogicalResult lrn(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t size = Importer::intAttr(n, "size", 0);
  if (shape.size() < 3 || size < 1 || size > 2 * shape[1] + 1) {
    im.error(n) << "the input must be [N, C, d...] and size in [1, 2C + 1]";
    return failure();
  }
  int64_t spatial = 1;
  for (int64_t d : shape.drop_front(2))
    spatial *= d;
  float alpha = attr(n, "alpha", 1e-4f), beta = attr(n, "beta", 0.75f),
        bias = attr(n, "bias", 1.0f);
  auto array = [&](ArrayRef<int64_t> v) {
    return im.builder.getDenseI64ArrayAttr(v);
  };
  Value squares = at.reshape(at.mul(x, x), {shape[0], 1, shape[1], spatial});
  Value mean = at.op<AvgPool2dOp>(
      {squares},
      {im.builder.getNamedAttr("kernel", array({size, 1})),
       im.builder.getNamedAttr("strides", array({1, 1})),
       im.builder.getNamedAttr(
           "padding", array({(size - 1) / 2, 0, size - 1 - (size - 1) / 2, 0})),
       im.builder.getNamedAttr("count_include_pad",
                               im.builder.getBoolAttr(true))});
  // alpha / size * (mean * size) = alpha * mean
  Value base = at.add(at.scalar(x, bias),
                      at.mul(at.scalar(x, alpha), at.reshape(mean, shape)));
  return at.define(at.div(x, at.op<PowOp>({base, at.scalar(x, beta)})));
}

/// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over
/// `axes` (default [0, 2, 3]), as ONNX's function body.
LogicalResult meanVarianceNorm(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  SmallVector<int64_t> axes =
      Importer::intsAttr(n, "axes").value_or(SmallVector<int64_t>{0, 2, 3});
  auto [mean, centered, variance] = at.moments(x, axes);
  return at.define(
      at.div(centered, at.add(at.op<SqrtOp>({variance}), at.scalar(x, 1e-9))));
}
} // namespace

namespace {

/// The activations and elementwise formulas (HardSigmoid ... Mean).
void addElementwiseFormulas(llvm::StringMap<NodeConverter> &t) {
  // max(0, min(1, alpha * x + beta))
  t["HardSigmoid"] = [](Importer &im, const NodeProto &n) {
    float alpha = attr(n, "alpha", 0.2f), beta = attr(n, "beta", 0.5f);
    return unary(im, n, [&](At &a, Value x) {
      Value y = a.add(a.mul(x, a.scalar(x, alpha)), a.scalar(x, beta));
      return a.max(a.min(y, a.scalar(x, 1)), a.scalar(x, 0));
    });
  };
  // x * max(0, min(1, x / 6 + 1 / 2))
  t["HardSwish"] = [](Importer &im, const NodeProto &n) {
    return unary(im, n, [&](At &a, Value x) {
      Value y = a.add(a.mul(x, a.scalar(x, 1.0 / 6)), a.scalar(x, 0.5));
      return a.mul(x, a.max(a.min(y, a.scalar(x, 1)), a.scalar(x, 0)));
    });
  };
  // x if x > 0 else alpha * (exp(x) - 1)
  t["Elu"] = [](Importer &im, const NodeProto &n) {
    float alpha = attr(n, "alpha", 1.0f);
    return unary(im, n, [&](At &a, Value x) {
      Value negative =
          a.mul(a.scalar(x, alpha), a.sub(a.exp(x), a.scalar(x, 1)));
      return a.select(a.greater(x, a.scalar(x, 0)), x, negative);
    });
  };
  // gamma * (x if x > 0 else alpha * (exp(x) - 1))
  t["Selu"] = [](Importer &im, const NodeProto &n) {
    float alpha = attr(n, "alpha", 1.67326319217681884765625f),
          gamma = attr(n, "gamma", 1.05070102214813232421875f);
    return unary(im, n, [&](At &a, Value x) {
      Value negative =
          a.mul(a.scalar(x, alpha), a.sub(a.exp(x), a.scalar(x, 1)));
      return a.mul(a.scalar(x, gamma),
                   a.select(a.greater(x, a.scalar(x, 0)), x, negative));
    });
  };
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  t["Celu"] = [](Importer &im, const NodeProto &n) {
    float alpha = attr(n, "alpha", 1.0f);
    return unary(im, n, [&](At &a, Value x) {
      Value e = a.sub(a.exp(a.div(x, a.scalar(x, alpha))), a.scalar(x, 1));
      return a.add(a.max(x, a.scalar(x, 0)),
                   a.min(a.mul(a.scalar(x, alpha), e), a.scalar(x, 0)));
    });
  };
  // x if x > alpha else 0
  t["ThresholdedRelu"] = [](Importer &im, const NodeProto &n) {
    float alpha = attr(n, "alpha", 1.0f);
    return unary(im, n, [&](At &a, Value x) {
      return a.select(a.greater(x, a.scalar(x, alpha)), x, a.scalar(x, 0));
    });
  };
  // log(exp(x) + 1), as ONNX defines it
  t["Softplus"] = [](Importer &im, const NodeProto &n) {
    return unary(im, n, [&](At &a, Value x) {
      return a.log(a.add(a.exp(x), a.scalar(x, 1)));
    });
  };
  // x / (1 + |x|)
  t["Softsign"] = [](Importer &im, const NodeProto &n) {
    return unary(im, n, [&](At &a, Value x) {
      return a.div(x, a.add(a.op<AbsOp>({x}), a.scalar(x, 1)));
    });
  };
  t["Reciprocal"] = [](Importer &im, const NodeProto &n) {
    return unary(im, n,
                 [&](At &a, Value x) { return a.div(a.scalar(x, 1), x); });
  };
  // 1 if x > 0, -1 if x < 0, else 0
  t["Sign"] = [](Importer &im, const NodeProto &n) {
    return unary(im, n, [&](At &a, Value x) {
      Value zero = a.scalar(x, 0);
      return a.select(a.greater(x, zero), a.scalar(x, 1),
                      a.select(a.less(x, zero), a.scalar(x, -1), zero));
    });
  };
  // x if x >= 0 else slope * x (slope broadcasts)
  t["PRelu"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value x = im.input(n, 0), slope = im.input(n, 1);
    if (!x || !slope)
      return failure();
    return at.define(
        at.select(at.less(x, at.scalar(x, 0)), at.mul(x, slope), x));
  };
  // The mean of the inputs.
  t["Mean"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value sum = im.input(n, 0);
    for (int i = 1; sum && i < n.input_size(); ++i)
      sum = at.add(sum, im.input(n, i));
    return at.define(sum ? at.div(sum, at.scalar(sum, n.input_size()))
                         : Value());
  };
}

} // namespace

void modelc::onnx_import::addCompositeConverters(
    llvm::StringMap<NodeConverter> &t) {
  addElementwiseFormulas(t);
  // Reductions by their ONNX definitions.
  t["ReduceL1"] = [](Importer &im, const NodeProto &n) {
    return reduceOf<ReduceSumOp>(
        im, n, [](At &a, Value x) { return a.op<AbsOp>({x}); }, identity);
  };
  t["ReduceL2"] = [](Importer &im, const NodeProto &n) {
    return reduceOf<ReduceSumOp>(
        im, n, [](At &a, Value x) { return a.mul(x, x); },
        [](At &a, Value s) { return a.op<SqrtOp>({s}); });
  };
  t["ReduceSumSquare"] = [](Importer &im, const NodeProto &n) {
    return reduceOf<ReduceSumOp>(
        im, n, [](At &a, Value x) { return a.mul(x, x); }, identity);
  };
  t["ReduceLogSum"] = [](Importer &im, const NodeProto &n) {
    return reduceOf<ReduceSumOp>(im, n, identity,
                                 [](At &a, Value s) { return a.log(s); });
  };
  t["ReduceLogSumExp"] = [](Importer &im, const NodeProto &n) {
    return reduceOf<ReduceSumOp>(
        im, n, [](At &a, Value x) { return a.exp(x); },
        [](At &a, Value s) { return a.log(s); });
  };
  // min(x) = -max(-x)
  t["ReduceMin"] = [](Importer &im, const NodeProto &n) {
    return reduceOf<ReduceMaxOp>(
        im, n, [](At &a, Value x) { return a.op<NegOp>({x}); },
        [](At &a, Value m) { return a.op<NegOp>({m}); });
  };
  t["InstanceNormalization"] = instanceNorm;
  t["MeanVarianceNormalization"] = meanVarianceNorm;
  t["LRN"] = lrn;
  // x + bias if x < -lambd, x - bias if x > lambd, else 0
  t["Shrink"] = [](Importer &im, const NodeProto &n) {
    float lambd = attr(n, "lambd", 0.5f), bias = attr(n, "bias", 0.0f);
    return unary(im, n, [&](At &a, Value x) {
      Value zero = a.scalar(x, 0);
      return a.select(a.less(x, a.scalar(x, -lambd)),
                      a.add(x, a.scalar(x, bias)),
                      a.select(a.greater(x, a.scalar(x, lambd)),
                               a.sub(x, a.scalar(x, bias)), zero));
    });
  };
  // NaN is the one value not equal to itself.
  t["IsNaN"] = [](Importer &im, const NodeProto &n) {
    return unary(im, n, [&](At &a, Value x) -> Value {
      if (!isFloat(a, x))
        return nullptr;
      return a.compare(x, x, ComparePredicate::ne);
    });
  };
  t["IsInf"] = [](Importer &im, const NodeProto &n) {
    bool positive = Importer::intAttr(n, "detect_positive", 1) != 0;
    bool negative = Importer::intAttr(n, "detect_negative", 1) != 0;
    return unary(im, n, [&](At &a, Value x) -> Value {
      if (!isFloat(a, x))
        return nullptr;
      double inf = std::numeric_limits<double>::infinity();
      Value up = a.compare(x, a.scalar(x, inf), ComparePredicate::eq);
      Value down = a.compare(x, a.scalar(x, -inf), ComparePredicate::eq);
      if (positive && negative)
        return a.select(up, up, down);
      if (positive)
        return up;
      if (negative)
        return down;
      return a.select(up, down, up); // up and down: never
    });
  };
  // Cast to the element type of the second input.
  t["CastLike"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value x = im.input(n, 0), like = im.input(n, 1);
    if (!x || !like)
      return failure();
    return at.define(
        at.cast(x, cast<RankedTensorType>(like.getType()).getElementType()));
  };
  // The maximum over the spatial dimensions, kept as size 1.
  t["GlobalMaxPool"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value x = im.input(n, 0);
    if (!x)
      return failure();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    return at.define(at.op<ReduceMaxOp>(
        {x},
        {im.builder.getNamedAttr("axes", im.builder.getDenseI64ArrayAttr(axes)),
         im.builder.getNamedAttr("keepdims", im.builder.getBoolAttr(true))}));
  };
}
