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

} // namespace

void modelc::onnx_import::addCompositeConverters(
    llvm::StringMap<NodeConverter> &t) {
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
