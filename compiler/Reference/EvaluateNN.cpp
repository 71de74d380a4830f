//===- EvaluateNN.cpp - products, normalization, convolution, losses ------===//
//
// Reference evaluation of the matrix products, softmax and the
// normalizations, convolution and pooling (NCHW), and the cross-entropy
// loss, each from its definition in docs/ir.md.
//
//===----------------------------------------------------------------------===//

#include "compiler/Reference/Evaluate.h"
#include "compiler/kernels/common/philox.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::reference;

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// An integer dot product of `type`'s width (i32 or i64), exact: it wraps
/// around on overflow as the kernels do, where doubles would round.
class WrappingInteger {
public:
  explicit WrappingInteger(Type type) : type(type) {}

  void add(double x, double y) { acc += wrappedBits(x) * wrappedBits(y); }
  /// alpha * the sum + beta * c.
  double result(int64_t alpha = 1, int64_t beta = 0, double c = 0) const {
    return wrappedValue(static_cast<uint64_t>(alpha) * acc +
                            static_cast<uint64_t>(beta) * wrappedBits(c),
                        type);
  }

private:
  Type type;
  uint64_t acc = 0;
};

static RefTensor evaluate(MatmulOp op, const Values &values) {
  const RefTensor &a = values.get(op.getLhs()), &b = values.get(op.getRhs());
  Shape out = shapeOf(op.getResult());
  size_t r = out.size();
  int64_t k = a.shape.back();
  Type element = elementOf(op.getResult());
  bool integers = isa<IntegerType>(element);
  RefTensor y = make(out);
  // Each operand's stride along each output dimension (0 where it is
  // broadcast): a's k runs along the output's last dimension, b's along
  // the one before.
  Shape sa = broadcastStrides(a.shape, r), sb = broadcastStrides(b.shape, r);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out);
    int64_t offsetA = 0, offsetB = 0;
    for (size_t d = 0; d < r; ++d) {
      if (d != r - 1)
        offsetA += c[d] * sa[d];
      if (d != r - 2)
        offsetB += c[d] * sb[d];
    }
    double sum = 0;
    std::optional<WrappingInteger> exact;
    if (integers)
      exact.emplace(element);
    for (int64_t kk = 0; kk < k; ++kk) {
      double x = a.data[offsetA + kk * sa[r - 1]],
             w = b.data[offsetB + kk * sb[r - 2]];
      if (integers)
        exact->add(x, w);
      else
        sum += x * w;
    }
    y.data[i] = integers ? exact->result() : sum;
  }
  return y;
}

static RefTensor evaluate(LinearOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput()),
                  &w = values.get(op.getWeight());
  int64_t k = x.shape.back(), n = w.shape[0], m = x.numel() / k;
  RefTensor y = make(shapeOf(op.getResult()));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = op.getBias() ? values.get(op.getBias()).data[j] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk)
        sum += x.data[i * k + kk] * w.data[j * k + kk];
      y.data[i * n + j] = sum;
    }
  return y;
}

static RefTensor evaluate(GemmOp op, const Values &values) {
  const RefTensor &a = values.get(op.getA()), &b = values.get(op.getB());
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  Shape out = shapeOf(op.getResult());
  int64_t m = out[0], n = out[1], k = a.shape[ta ? 0 : 1];
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  Type element = elementOf(op.getResult());
  bool integers = isa<IntegerType>(element);
  RefTensor y = make(out);
  const RefTensor *c = op.getC() ? &values.get(op.getC()) : nullptr;
  Shape sc = c ? broadcastStrides(c->shape, 2) : Shape();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      std::optional<WrappingInteger> exact;
      if (integers)
        exact.emplace(element);
      for (int64_t kk = 0; kk < k; ++kk) {
        double x = a.data[ta ? kk * m + i : i * k + kk],
               w = b.data[tb ? j * k + kk : kk * n + j];
        if (integers)
          exact->add(x, w);
        else
          sum += x * w;
      }
      double addend = c ? c->data[i * sc[0] + j * sc[1]] : 0;
      // Integers: whole alpha and beta (the verifier checks).
      y.data[i * n + j] =
          integers ? exact->result(static_cast<int64_t>(alpha),
                                   static_cast<int64_t>(beta), addend)
                   : alpha * sum + beta * addend;
    }
  return y;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Softmax, or its logarithm, of `x` along `axis`.
static RefTensor softmax(const RefTensor &x, int64_t axis, bool log) {
  int64_t len = x.shape[axis];
  int64_t inner = product(x.shape, axis + 1, x.shape.size());
  int64_t outer = product(x.shape, 0, axis);
  RefTensor y = make(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + in; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j)
        mx = std::max(mx, x.data[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < len; ++j)
        sum += std::exp(x.data[at(j)] - mx);
      for (int64_t j = 0; j < len; ++j)
        y.data[at(j)] = log ? x.data[at(j)] - mx - std::log(sum)
                            : std::exp(x.data[at(j)] - mx) / sum;
    }
  return y;
}

static RefTensor evaluate(SoftmaxOp op, const Values &values) {
  return softmax(values.get(op.getInput()), op.getNormalizedAxis(),
                 /*log=*/false);
}

static RefTensor evaluate(LogSoftmaxOp op, const Values &values) {
  return softmax(values.get(op.getInput()), op.getNormalizedAxis(),
                 /*log=*/true);
}

static RefTensor evaluate(LayerNormOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  int64_t axis = op.getNormalizedAxis();
  int64_t cols = product(x.shape, axis, x.shape.size());
  int64_t rows = x.numel() / std::max<int64_t>(cols, 1);
  double eps = op.getEpsilon().convertToDouble();
  const RefTensor *scale = op.getScale() ? &values.get(op.getScale()) : nullptr;
  const RefTensor *bias = op.getBias() ? &values.get(op.getBias()) : nullptr;
  RefTensor y = make(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j)
      mean += x.data[r * cols + j];
    mean /= cols;
    for (int64_t j = 0; j < cols; ++j)
      var += (x.data[r * cols + j] - mean) * (x.data[r * cols + j] - mean);
    var /= cols;
    for (int64_t j = 0; j < cols; ++j) {
      double v = (x.data[r * cols + j] - mean) / std::sqrt(var + eps);
      if (scale)
        v *= scale->data[j];
      if (bias)
        v += bias->data[j];
      y.data[r * cols + j] = v;
    }
  }
  return y;
}

static RefTensor evaluate(BatchNormOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  const RefTensor &s = values.get(op.getScale()), &b = values.get(op.getBias());
  const RefTensor &m = values.get(op.getMean()),
                  &v = values.get(op.getVariance());
  double eps = op.getEpsilon().convertToDouble();
  int64_t c = x.shape[1], spatial = product(x.shape, 2, x.shape.size());
  RefTensor y = make(x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t ch = (i / spatial) % c;
    y.data[i] =
        (x.data[i] - m.data[ch]) / std::sqrt(v.data[ch] + eps) * s.data[ch] +
        b.data[ch];
  }
  return y;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

static RefTensor evaluate(Conv2dOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput()),
                  &w = values.get(op.getWeight());
  const RefTensor *bias = op.getBias() ? &values.get(op.getBias()) : nullptr;
  Shape out = shapeOf(op.getResult());
  ArrayRef<int64_t> st = op.getStrides(), pad = op.getPadding(),
                    dil = op.getDilations();
  int64_t groups = op.getGroups();
  int64_t cg = x.shape[1] / groups, og = out[1] / groups;
  int64_t kh = w.shape[2], kw = w.shape[3], H = x.shape[2], W = x.shape[3];
  RefTensor y = make(out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out); // n, o, oy, ox
    int64_t g = c[1] / og;
    double sum = bias ? bias->data[c[1]] : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx) {
          int64_t iy = c[2] * st[0] - pad[0] + ky * dil[0];
          int64_t ix = c[3] * st[1] - pad[1] + kx * dil[1];
          if (iy < 0 || iy >= H || ix < 0 || ix >= W)
            continue;
          sum += x.data[((c[0] * x.shape[1] + g * cg + ci) * H + iy) * W + ix] *
                 w.data[((c[1] * cg + ci) * kh + ky) * kw + kx];
        }
    y.data[i] = sum;
  }
  return y;
}

/// By its definition: every input element scatters its kernel-weighted
/// values into the output (the kernels gather instead).
static RefTensor evaluate(ConvTranspose2dOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput()),
                  &w = values.get(op.getWeight());
  Shape out = shapeOf(op.getResult());
  ArrayRef<int64_t> st = op.getStrides(), pad = op.getPadding(),
                    dil = op.getDilations();
  int64_t groups = op.getGroups();
  int64_t cg = x.shape[1] / groups, og = w.shape[1];
  int64_t kh = w.shape[2], kw = w.shape[3];
  RefTensor y = make(out);
  for (int64_t i = 0; i < x.numel(); ++i) {
    Shape c = coordsOf(i, x.shape); // n, ci, iy, ix
    int64_t g = c[1] / cg;
    for (int64_t oc = 0; oc < og; ++oc)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx) {
          int64_t oy = c[2] * st[0] - pad[0] + ky * dil[0];
          int64_t ox = c[3] * st[1] - pad[1] + kx * dil[1];
          if (oy < 0 || oy >= out[2] || ox < 0 || ox >= out[3])
            continue;
          y.data[((c[0] * out[1] + g * og + oc) * out[2] + oy) * out[3] + ox] +=
              x.data[i] * w.data[((c[1] * og + oc) * kh + ky) * kw + kx];
        }
  }
  if (Value bias = op.getBias()) {
    const RefTensor &b = values.get(bias);
    for (int64_t i = 0; i < y.numel(); ++i)
      y.data[i] += b.data[coordsOf(i, out)[1]];
  }
  return y;
}

namespace {
/// The window of a 2-D pooling op.
struct PoolWindow {
  ArrayRef<int64_t> kernel, strides, padding;
};
} // namespace

/// Max pooling (`isMax`) or average pooling of `x` into `out`.
static RefTensor pool2d(const RefTensor &x, const Shape &out,
                        const PoolWindow &window, bool isMax, bool includePad) {
  ArrayRef<int64_t> k = window.kernel, st = window.strides,
                    pad = window.padding;
  int64_t H = x.shape[2], W = x.shape[3];
  RefTensor y = make(out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out);
    int64_t y0 = c[2] * st[0] - pad[0], x0 = c[3] * st[1] - pad[1];
    int64_t y1 = std::min(y0 + k[0], H + pad[2]);
    int64_t x1 = std::min(x0 + k[1], W + pad[3]);
    double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    int64_t count = 0;
    for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y1, H); ++iy)
      for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x1, W); ++ix) {
        double v = x.data[((c[0] * x.shape[1] + c[1]) * H + iy) * W + ix];
        acc = isMax ? maxOrNaN(acc, v) : acc + v;
        ++count;
      }
    if (!isMax) {
      int64_t divisor = includePad ? (y1 - y0) * (x1 - x0) : count;
      acc = divisor ? acc / divisor : 0.0;
    }
    y.data[i] = acc;
  }
  return y;
}

static RefTensor evaluate(MaxPool2dOp op, const Values &values) {
  PoolWindow window{op.getKernel(), op.getNormalizedStrides(), op.getPadding()};
  return pool2d(values.get(op.getInput()), shapeOf(op.getResult()), window,
                /*isMax=*/true, /*includePad=*/false);
}

// One process: the sum over the ranks is the input itself.
static RefTensor evaluate(AllReduceOp op, const Values &values) {
  return values.get(op.getInput());
}

// One process owns every shard: the owner's value is the input itself.
static RefTensor evaluate(OwnerBroadcastOp op, const Values &values) {
  return values.get(op.getInput());
}

// The group's inputs (its members in the same block) added in member
// order, each partial sum rounded to f32 as the host's sum (and the
// stand-in NCCL's) adds them. A member whose input is computed after this
// one cannot be evaluated here (modelc-replicate computes every input
// first).
static FailureOr<RefTensor> evaluate(ReplicaAllReduceOp op,
                                     const Values &values) {
  SmallVector<Value> inputs(op.getMembers());
  for (Operation &other : *op->getBlock())
    if (auto member = dyn_cast<ReplicaAllReduceOp>(other);
        member && member.getGroup() == op.getGroup() &&
        member.getMember() < inputs.size())
      inputs[member.getMember()] = member.getInput();
  for (auto [m, input] : llvm::enumerate(inputs))
    if (!input || !values.contains(input))
      return op.emitError("the reference interpreter needs member ")
             << m << " of replica_all_reduce group " << op.getGroup()
             << (input ? "'s input before the group's first member"
                       : ", which the block lacks");
  RefTensor sum = values.get(inputs[0]);
  for (Value input : llvm::drop_begin(inputs)) {
    const RefTensor &part = values.get(input);
    for (int64_t i = 0; i < sum.numel(); ++i)
      sum.data[i] = static_cast<float>(static_cast<float>(sum.data[i]) +
                                       static_cast<float>(part.data[i]));
  }
  return sum;
}

// One process: rank 0, so `rank_stride` adds nothing to the offset.
static RefTensor evaluate(DropoutOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  if (!op.getStep())
    return x; // eval mode
  auto step = static_cast<int64_t>(values.get(op.getStep()).data[0]);
  float ratio = static_cast<float>(op.getRatio().convertToDouble());
  double scale = modelc_philox::dropout_scale(ratio);
  RefTensor y = make(x.shape);
  for (int64_t i = 0; i < x.numel(); ++i)
    y.data[i] =
        x.data[i] * (modelc_philox::dropout_keep(
                         static_cast<uint64_t>(op.getSeed()), step,
                         static_cast<uint32_t>(op.getSite()),
                         i + static_cast<int64_t>(op.getOffset()), ratio)
                         ? scale
                         : 0.0);
  return y;
}

static RefTensor evaluate(GatherGradOp op, const Values &values) {
  const RefTensor &g = values.get(op.getGrad());
  const RefTensor &indices = values.get(op.getIndices());
  int64_t axis = op.getAxis(), size = op.getSize();
  int64_t count = indices.numel();
  RefTensor dx = make(shapeOf(op.getResult()));
  int64_t outer = product(dx.shape, 0, axis);
  int64_t inner = product(dx.shape, axis + 1, dx.shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < count; ++i) {
      int64_t idx = static_cast<int64_t>(indices.data[i]);
      if (idx < 0)
        idx += size;
      if (idx < 0 || idx >= size)
        continue;
      for (int64_t j = 0; j < inner; ++j)
        dx.data[(o * size + idx) * inner + j] +=
            g.data[(o * count + i) * inner + j];
    }
  return dx;
}

static RefTensor evaluate(Conv2dWeightGradOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  const RefTensor &g = values.get(op.getGrad());
  ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(),
                    p = op.getPadding(), d = op.getDilations();
  int64_t n = x.shape[0], c = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t o = g.shape[1], OH = g.shape[2], OW = g.shape[3];
  int64_t groups = op.getGroups(), cg = c / groups, og = o / groups;
  RefTensor dw = make(shapeOf(op.getResult()));
  for (int64_t oc = 0; oc < o; ++oc)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ky = 0; ky < k[0]; ++ky)
        for (int64_t kx = 0; kx < k[1]; ++kx) {
          double sum = 0;
          int64_t channel = oc / og * cg + ci;
          for (int64_t img = 0; img < n; ++img)
            for (int64_t oy = 0; oy < OH; ++oy) {
              int64_t iy = oy * s[0] - p[0] + ky * d[0];
              if (iy < 0 || iy >= H)
                continue;
              for (int64_t ox = 0; ox < OW; ++ox) {
                int64_t ix = ox * s[1] - p[1] + kx * d[1];
                if (ix < 0 || ix >= W)
                  continue;
                sum += x.data[((img * c + channel) * H + iy) * W + ix] *
                       g.data[((img * o + oc) * OH + oy) * OW + ox];
              }
            }
          dw.data[((oc * cg + ci) * k[0] + ky) * k[1] + kx] = sum;
        }
  return dw;
}

static RefTensor evaluate(MaxPool2dGradOp op, const Values &values) {
  // Each window's gradient to its maximum: the first largest cell, or the
  // last NaN (PyTorch's `val > max || isnan(val)`); padding never wins.
  const RefTensor &x = values.get(op.getInput());
  const RefTensor &g = values.get(op.getGrad());
  ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(),
                    p = op.getPadding();
  int64_t planes = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t OH = g.shape[2], OW = g.shape[3];
  RefTensor dx = make(shapeOf(op.getResult()));
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t y0 = std::max<int64_t>(oy * s[0] - p[0], 0);
        int64_t x0 = std::max<int64_t>(ox * s[1] - p[1], 0);
        int64_t y1 = std::min(oy * s[0] - p[0] + k[0], H);
        int64_t x1 = std::min(ox * s[1] - p[1] + k[1], W);
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = y0 * W + x0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            double v = x.data[plane * H * W + iy * W + ix];
            if (v > best || std::isnan(v)) {
              best = v;
              at = iy * W + ix;
            }
          }
        dx.data[plane * H * W + at] += g.data[(plane * OH + oy) * OW + ox];
      }
  return dx;
}

static RefTensor evaluate(AvgPool2dOp op, const Values &values) {
  PoolWindow window{op.getKernel(), op.getNormalizedStrides(), op.getPadding()};
  return pool2d(values.get(op.getInput()), shapeOf(op.getResult()), window,
                /*isMax=*/false, op.getCountIncludePad());
}

static RefTensor evaluate(GlobalAvgPoolOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  int64_t spatial = product(x.shape, 2, x.shape.size());
  RefTensor y = make(shapeOf(op.getResult()));
  for (int64_t p = 0; p < y.numel(); ++p) {
    double sum = 0;
    for (int64_t j = 0; j < spatial; ++j)
      sum += x.data[p * spatial + j];
    y.data[p] = sum / spatial;
  }
  return y;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

static FailureOr<RefTensor> evaluate(CrossEntropyOp op, const Values &values) {
  const RefTensor &x = values.get(op.getLogits());
  const RefTensor &t = values.get(op.getTargets());
  const RefTensor *weight =
      op.getWeight() ? &values.get(op.getWeight()) : nullptr;
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t ignore = op.getIgnoreIndex();
  RefTensor y = make(shapeOf(op.getResult()));
  double total = 0, weightSum = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t target = static_cast<int64_t>(t.data[i]);
    if (target == ignore)
      continue;
    if (target < 0 || target >= c)
      return op->emitError("target ") << target << " of sample " << i
                                      << " is out of range [0, " << c << ")";
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < c; ++j)
      mx = std::max(mx, x.data[i * c + j]);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(x.data[i * c + j] - mx);
    double l = -(x.data[i * c + target] - mx - std::log(sum));
    double w = weight ? weight->data[target] : 1.0;
    if (op.getReduction() == Reduction::none)
      y.data[i] = w * l;
    total += w * l;
    weightSum += w;
  }
  if (op.getReduction() == Reduction::mean)
    y.data[0] = weightSum != 0 ? total / weightSum : std::nan("");
  else if (op.getReduction() == Reduction::sum)
    y.data[0] = total;
  return y;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void modelc::reference::addNNEvaluators(Evaluators &evaluators) {
  evaluators.add<MatmulOp>(evaluate);
  evaluators.add<LinearOp>(evaluate);
  evaluators.add<GemmOp>(evaluate);
  evaluators.add<SoftmaxOp>(evaluate);
  evaluators.add<LogSoftmaxOp>(evaluate);
  evaluators.add<LayerNormOp>(evaluate);
  evaluators.add<BatchNormOp>(evaluate);
  evaluators.add<Conv2dOp>(evaluate);
  evaluators.add<ConvTranspose2dOp>(evaluate);
  evaluators.add<MaxPool2dOp>(evaluate);
  evaluators.add<MaxPool2dGradOp>(evaluate);
  evaluators.add<Conv2dWeightGradOp>(evaluate);
  evaluators.add<GatherGradOp>(evaluate);
  evaluators.add<DropoutOp>(evaluate);
  evaluators.add<AllReduceOp>(evaluate);
  evaluators.add<OwnerBroadcastOp>(evaluate);
  evaluators.add<ReplicaAllReduceOp>(evaluate);
  evaluators.add<AvgPool2dOp>(evaluate);
  evaluators.add<GlobalAvgPoolOp>(evaluate);
  evaluators.add<CrossEntropyOp>(evaluate);
}
