//===- Interpreter.cpp - the reference interpreter of the graph IR --------===//
//
// Each op is evaluated from its definition in docs/ir.md, one output element
// at a time, in double precision. No fusion, no layout tricks.
//
//===----------------------------------------------------------------------===//

#include "compiler/Reference/Interpreter.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

int64_t RefTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

using Shape = std::vector<int64_t>;

Shape shapeOf(Value v) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(v.getType()).getShape();
  return Shape(s.begin(), s.end());
}

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

RefTensor make(const Shape &shape) {
  RefTensor t{shape, {}};
  t.data.assign(t.numel(), 0.0);
  return t;
}

Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Coordinates of linear index `i` in `shape`.
Shape coordsOf(int64_t i, const Shape &shape) {
  Shape coords(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = i % shape[d];
    i /= shape[d];
  }
  return coords;
}

/// Element of `t` read at output coordinates `coords` under numpy
/// broadcasting (t's shape aligned at the right).
double broadcastRead(const RefTensor &t, const Shape &coords) {
  Shape strides = stridesOf(t.shape);
  size_t shift = coords.size() - t.shape.size();
  int64_t offset = 0;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1)
      offset += coords[d + shift] * strides[d];
  return t.data[offset];
}

/// Rounds a value to what its element type can hold: integers truncate
/// toward zero, i1 is 0 or 1.
double toElementType(double v, Type type) {
  if (type.isSignlessInteger(1))
    return v != 0.0 ? 1.0 : 0.0;
  if (isa<IntegerType>(type))
    return std::trunc(v);
  return v;
}

double intPow(double base, double exp) {
  int64_t b = static_cast<int64_t>(base), e = static_cast<int64_t>(exp);
  if (e < 0)
    return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  int64_t r = 1;
  for (int64_t i = 0; i < e; ++i)
    r *= b;
  return static_cast<double>(r);
}

double gelu(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

class Interpreter {
public:
  explicit Interpreter(const WeightProvider &weights) : weights(weights) {}

  FailureOr<std::vector<RefTensor>> run(func::FuncOp function,
                                        const std::vector<RefTensor> &inputs) {
    for (auto [arg, input] : llvm::zip(function.getArguments(), inputs))
      values[arg] = input;
    for (Operation &op : function.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        std::vector<RefTensor> results;
        for (Value v : ret.getOperands())
          results.push_back(values[v]);
        return results;
      }
      if (failed(evaluate(&op)))
        return failure();
    }
    return std::vector<RefTensor>{};
  }

private:
  const RefTensor &get(Value v) { return values[v]; }
  LogicalResult evaluate(Operation *op);
  RefTensor unary(Operation *op, const std::function<double(double)> &fn);
  RefTensor nary(Operation *op,
                 const std::function<double(ArrayRef<double>)> &fn);

  const WeightProvider &weights;
  llvm::DenseMap<Value, RefTensor> values;
};

RefTensor Interpreter::unary(Operation *op,
                             const std::function<double(double)> &fn) {
  const RefTensor &x = get(op->getOperand(0));
  RefTensor y = make(x.shape);
  for (int64_t i = 0; i < x.numel(); ++i)
    y.data[i] = fn(x.data[i]);
  return y;
}

RefTensor Interpreter::nary(Operation *op,
                            const std::function<double(ArrayRef<double>)> &fn) {
  Shape out = shapeOf(op->getResult(0));
  RefTensor y = make(out);
  SmallVector<double> args(op->getNumOperands());
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape coords = coordsOf(i, out);
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      args[k] = broadcastRead(get(op->getOperand(k)), coords);
    y.data[i] = fn(args);
  }
  return y;
}

LogicalResult Interpreter::evaluate(Operation *op) {
  Type element = op->getNumOperands() ? elementOf(op->getOperand(0)) : Type();
  bool isInt = element && isa<IntegerType>(element);
  auto set = [&](RefTensor t) {
    values[op->getResult(0)] = std::move(t);
    return success();
  };
  auto product = [](const Shape &s, size_t begin, size_t end) {
    int64_t p = 1;
    for (size_t d = begin; d < end; ++d)
      p *= s[d];
    return p;
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](WeightRefOp ref) -> LogicalResult {
        FailureOr<RefTensor> w = weights(ref.getName());
        if (failed(w))
          return failure();
        return set(*w);
      })
      .Case([&](ConstantOp constant) {
        RefTensor t = make(shapeOf(constant.getResult()));
        auto attr = cast<DenseElementsAttr>(constant.getValue());
        int64_t i = 0;
        if (isa<FloatType>(attr.getElementType()))
          for (APFloat v : attr.getValues<APFloat>())
            t.data[i++] = v.convertToDouble();
        else if (attr.getElementType().isSignlessInteger(1))
          for (bool v : attr.getValues<bool>())
            t.data[i++] = v;
        else
          for (APInt v : attr.getValues<APInt>())
            t.data[i++] = static_cast<double>(v.getSExtValue());
        return set(t);
      })
      // Elementwise.
      .Case([&](NegOp) { return set(unary(op, [](double x) { return -x; })); })
      .Case([&](AbsOp) {
        return set(unary(op, [](double x) { return std::fabs(x); }));
      })
      .Case([&](ReluOp) {
        return set(unary(op, [](double x) { return x > 0 ? x : 0.0; }));
      })
      .Case([&](ExpOp) {
        return set(unary(op, [](double x) { return std::exp(x); }));
      })
      .Case([&](LogOp) {
        return set(unary(op, [](double x) { return std::log(x); }));
      })
      .Case([&](SqrtOp) {
        return set(unary(op, [](double x) { return std::sqrt(x); }));
      })
      .Case([&](RsqrtOp) {
        return set(unary(op, [](double x) { return 1.0 / std::sqrt(x); }));
      })
      .Case([&](TanhOp) {
        return set(unary(op, [](double x) { return std::tanh(x); }));
      })
      .Case([&](SigmoidOp) {
        return set(
            unary(op, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
      })
      .Case([&](SiluOp) {
        return set(
            unary(op, [](double x) { return x / (1.0 + std::exp(-x)); }));
      })
      .Case([&](ErfOp) {
        return set(unary(op, [](double x) { return std::erf(x); }));
      })
      .Case([&](GeluOp g) {
        bool tanhForm = g.getApproximate() == GeluApproximation::tanh;
        return set(unary(op, [&](double x) { return gelu(x, tanhForm); }));
      })
      .Case([&](AddOp) {
        return set(nary(op, [](ArrayRef<double> a) { return a[0] + a[1]; }));
      })
      .Case([&](SubOp) {
        return set(nary(op, [](ArrayRef<double> a) { return a[0] - a[1]; }));
      })
      .Case([&](MulOp) {
        return set(nary(op, [](ArrayRef<double> a) { return a[0] * a[1]; }));
      })
      .Case([&](DivOp) {
        return set(nary(op, [&](ArrayRef<double> a) {
          if (isInt)
            return a[1] == 0 ? 0.0 : std::trunc(a[0] / a[1]);
          return a[0] / a[1];
        }));
      })
      .Case([&](MaxOp) {
        return set(
            nary(op, [](ArrayRef<double> a) { return std::max(a[0], a[1]); }));
      })
      .Case([&](MinOp) {
        return set(
            nary(op, [](ArrayRef<double> a) { return std::min(a[0], a[1]); }));
      })
      .Case([&](PowOp) {
        return set(nary(op, [&](ArrayRef<double> a) {
          return isInt ? intPow(a[0], a[1]) : std::pow(a[0], a[1]);
        }));
      })
      .Case([&](CompareOp cmp) {
        ComparePredicate p = cmp.getPredicate();
        return set(nary(op, [&](ArrayRef<double> a) -> double {
          switch (p) {
          case ComparePredicate::eq:
            return a[0] == a[1];
          case ComparePredicate::ne:
            return a[0] != a[1];
          case ComparePredicate::lt:
            return a[0] < a[1];
          case ComparePredicate::le:
            return a[0] <= a[1];
          case ComparePredicate::gt:
            return a[0] > a[1];
          case ComparePredicate::ge:
            return a[0] >= a[1];
          }
          return 0.0;
        }));
      })
      .Case([&](SelectOp) {
        return set(nary(
            op, [](ArrayRef<double> a) { return a[0] != 0 ? a[1] : a[2]; }));
      })
      .Case([&](CastOp cast) {
        Type to = cast.getDtype();
        return set(unary(op, [&](double x) { return toElementType(x, to); }));
      })
      // Matrix products.
      .Case([&](MatmulOp matmul) {
        const RefTensor &a = get(matmul.getLhs()), &b = get(matmul.getRhs());
        Shape out = shapeOf(matmul.getResult());
        size_t r = out.size();
        int64_t k = a.shape.back();
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out);
          double sum = 0;
          for (int64_t kk = 0; kk < k; ++kk) {
            Shape ca = c, cb = c;
            ca[r - 1] = kk;
            cb[r - 2] = kk;
            sum += broadcastRead(a, ca) * broadcastRead(b, cb);
          }
          y.data[i] = sum;
        }
        return set(y);
      })
      .Case([&](LinearOp linear) {
        const RefTensor &x = get(linear.getInput()),
                        &w = get(linear.getWeight());
        int64_t k = x.shape.back(), n = w.shape[0], m = x.numel() / k;
        RefTensor y = make(shapeOf(linear.getResult()));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = linear.getBias() ? get(linear.getBias()).data[j] : 0.0;
            for (int64_t kk = 0; kk < k; ++kk)
              sum += x.data[i * k + kk] * w.data[j * k + kk];
            y.data[i * n + j] = sum;
          }
        return set(y);
      })
      .Case([&](GemmOp gemm) {
        const RefTensor &a = get(gemm.getA()), &b = get(gemm.getB());
        bool ta = gemm.getTransposeA(), tb = gemm.getTransposeB();
        Shape out = shapeOf(gemm.getResult());
        int64_t m = out[0], n = out[1], k = a.shape[ta ? 0 : 1];
        double alpha = gemm.getAlpha().convertToDouble();
        double beta = gemm.getBeta().convertToDouble();
        RefTensor y = make(out);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t kk = 0; kk < k; ++kk)
              sum += a.data[ta ? kk * m + i : i * k + kk] *
                     b.data[tb ? j * k + kk : kk * n + j];
            double c =
                gemm.getC() ? broadcastRead(get(gemm.getC()), {i, j}) : 0;
            y.data[i * n + j] = alpha * sum + beta * c;
          }
        return set(y);
      })
      // Normalization.
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        const RefTensor &x = get(softmax.getInput());
        int64_t axis = graph::normalizeAxis(softmax.getAxis(), x.shape.size());
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
              y.data[at(j)] = isa<LogSoftmaxOp>(op)
                                  ? x.data[at(j)] - mx - std::log(sum)
                                  : std::exp(x.data[at(j)] - mx) / sum;
          }
        return set(y);
      })
      .Case([&](LayerNormOp norm) {
        const RefTensor &x = get(norm.getInput());
        int64_t axis = graph::normalizeAxis(norm.getAxis(), x.shape.size());
        int64_t cols = product(x.shape, axis, x.shape.size());
        int64_t rows = x.numel() / std::max<int64_t>(cols, 1);
        double eps = norm.getEpsilon().convertToDouble();
        RefTensor y = make(x.shape);
        for (int64_t r = 0; r < rows; ++r) {
          double mean = 0, var = 0;
          for (int64_t j = 0; j < cols; ++j)
            mean += x.data[r * cols + j];
          mean /= cols;
          for (int64_t j = 0; j < cols; ++j)
            var +=
                (x.data[r * cols + j] - mean) * (x.data[r * cols + j] - mean);
          var /= cols;
          for (int64_t j = 0; j < cols; ++j) {
            double v = (x.data[r * cols + j] - mean) / std::sqrt(var + eps);
            if (norm.getScale())
              v *= get(norm.getScale()).data[j];
            if (norm.getBias())
              v += get(norm.getBias()).data[j];
            y.data[r * cols + j] = v;
          }
        }
        return set(y);
      })
      .Case([&](BatchNormOp norm) {
        const RefTensor &x = get(norm.getInput());
        const RefTensor &s = get(norm.getScale()), &b = get(norm.getBias());
        const RefTensor &m = get(norm.getMean()), &v = get(norm.getVariance());
        double eps = norm.getEpsilon().convertToDouble();
        int64_t c = x.shape[1], spatial = product(x.shape, 2, x.shape.size());
        RefTensor y = make(x.shape);
        for (int64_t i = 0; i < x.numel(); ++i) {
          int64_t ch = (i / spatial) % c;
          y.data[i] = (x.data[i] - m.data[ch]) / std::sqrt(v.data[ch] + eps) *
                          s.data[ch] +
                      b.data[ch];
        }
        return set(y);
      })
      // Convolution and pooling.
      .Case([&](Conv2dOp conv) {
        const RefTensor &x = get(conv.getInput()), &w = get(conv.getWeight());
        Shape out = shapeOf(conv.getResult());
        ArrayRef<int64_t> st = conv.getStrides(), pad = conv.getPadding(),
                          dil = conv.getDilations();
        int64_t groups = conv.getGroups();
        int64_t cg = x.shape[1] / groups, og = out[1] / groups;
        int64_t kh = w.shape[2], kw = w.shape[3], H = x.shape[2],
                W = x.shape[3];
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out); // n, o, oy, ox
          int64_t g = c[1] / og;
          double sum = conv.getBias() ? get(conv.getBias()).data[c[1]] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = c[2] * st[0] - pad[0] + ky * dil[0];
                int64_t ix = c[3] * st[1] - pad[1] + kx * dil[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                  continue;
                sum += x.data[((c[0] * x.shape[1] + g * cg + ci) * H + iy) * W +
                              ix] *
                       w.data[((c[1] * cg + ci) * kh + ky) * kw + kx];
              }
          y.data[i] = sum;
        }
        return set(y);
      })
      .Case<MaxPool2dOp, AvgPool2dOp>([&](auto pool) {
        const RefTensor &x = get(pool.getInput());
        Shape out = shapeOf(pool.getResult());
        ArrayRef<int64_t> k = pool.getKernel();
        ArrayRef<int64_t> st = pool.getStrides().value_or(k);
        ArrayRef<int64_t> pad = pool.getPadding();
        int64_t H = x.shape[2], W = x.shape[3];
        bool isMax = isa<MaxPool2dOp>(op);
        bool includePad = false;
        if constexpr (std::is_same_v<decltype(pool), AvgPool2dOp>)
          includePad = pool.getCountIncludePad();
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out);
          int64_t y0 = c[2] * st[0] - pad[0], x0 = c[3] * st[1] - pad[1];
          int64_t y1 = std::min(y0 + k[0], H + pad[2]);
          int64_t x1 = std::min(x0 + k[1], W + pad[3]);
          double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t count = 0;
          for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y1, H);
               ++iy)
            for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x1, W);
                 ++ix) {
              double v = x.data[((c[0] * x.shape[1] + c[1]) * H + iy) * W + ix];
              acc = isMax ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!isMax) {
            int64_t divisor = includePad ? (y1 - y0) * (x1 - x0) : count;
            acc = divisor ? acc / divisor : 0.0;
          }
          y.data[i] = acc;
        }
        return set(y);
      })
      .Case([&](GlobalAvgPoolOp pool) {
        const RefTensor &x = get(pool.getInput());
        int64_t spatial = product(x.shape, 2, x.shape.size());
        RefTensor y = make(shapeOf(pool.getResult()));
        for (int64_t p = 0; p < y.numel(); ++p) {
          double sum = 0;
          for (int64_t j = 0; j < spatial; ++j)
            sum += x.data[p * spatial + j];
          y.data[p] = sum / spatial;
        }
        return set(y);
      })
      // Shapes and data movement.
      .Case<ReshapeOp, FlattenOp>([&](auto) {
        RefTensor y = get(op->getOperand(0));
        y.shape = shapeOf(op->getResult(0));
        return set(y);
      })
      .Case([&](TransposeOp transpose) {
        const RefTensor &x = get(transpose.getInput());
        Shape out = shapeOf(transpose.getResult());
        Shape strides = stridesOf(x.shape);
        ArrayRef<int64_t> perm = transpose.getPerm();
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out);
          int64_t offset = 0;
          for (size_t d = 0; d < c.size(); ++d)
            offset += c[d] * strides[perm[d]];
          y.data[i] = x.data[offset];
        }
        return set(y);
      })
      .Case([&](ConcatOp concat) {
        Shape out = shapeOf(concat.getResult());
        int64_t axis = graph::normalizeAxis(concat.getAxis(), out.size());
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out);
          for (Value input : concat.getInputs()) {
            const RefTensor &x = get(input);
            if (c[axis] < x.shape[axis]) {
              Shape s = stridesOf(x.shape);
              int64_t offset = 0;
              for (size_t d = 0; d < c.size(); ++d)
                offset += c[d] * s[d];
              y.data[i] = x.data[offset];
              break;
            }
            c[axis] -= x.shape[axis];
          }
        }
        return set(y);
      })
      .Case([&](SliceOp slice) {
        const RefTensor &x = get(slice.getInput());
        Shape out = shapeOf(slice.getResult());
        Shape starts(x.shape.size(), 0), steps(x.shape.size(), 1);
        for (size_t i = 0; i < slice.getStarts().size(); ++i) {
          int64_t axis =
              slice.getAxes()
                  ? graph::normalizeAxis((*slice.getAxes())[i], x.shape.size())
                  : static_cast<int64_t>(i);
          int64_t start = slice.getStarts()[i];
          if (start < 0)
            start += x.shape[axis];
          starts[axis] = std::clamp<int64_t>(start, 0, x.shape[axis]);
          steps[axis] = slice.getSteps() ? (*slice.getSteps())[i] : 1;
        }
        Shape strides = stridesOf(x.shape);
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out);
          int64_t offset = 0;
          for (size_t d = 0; d < c.size(); ++d)
            offset += (starts[d] + c[d] * steps[d]) * strides[d];
          y.data[i] = x.data[offset];
        }
        return set(y);
      })
      .Case([&](GatherOp gather) -> LogicalResult {
        const RefTensor &data = get(gather.getData());
        const RefTensor &indices = get(gather.getIndices());
        int64_t axis =
            graph::normalizeAxis(gather.getAxis(), data.shape.size());
        Shape out = shapeOf(gather.getResult());
        Shape strides = stridesOf(data.shape);
        size_t ir = indices.shape.size();
        RefTensor y = make(out);
        for (int64_t i = 0; i < y.numel(); ++i) {
          Shape c = coordsOf(i, out);
          Shape ic(c.begin() + axis, c.begin() + axis + ir);
          Shape is = stridesOf(indices.shape);
          int64_t io = 0;
          for (size_t d = 0; d < ir; ++d)
            io += ic[d] * is[d];
          int64_t index = static_cast<int64_t>(indices.data[io]);
          if (index < -data.shape[axis] || index >= data.shape[axis])
            return op->emitError("index ")
                   << index << " is out of range for dimension of size "
                   << data.shape[axis];
          if (index < 0)
            index += data.shape[axis];
          int64_t offset = 0;
          for (int64_t d = 0; d < axis; ++d)
            offset += c[d] * strides[d];
          offset += index * strides[axis];
          for (size_t d = axis + 1; d < data.shape.size(); ++d)
            offset += c[d + ir - 1] * strides[d];
          y.data[i] = data.data[offset];
        }
        return set(y);
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](auto reduce) {
        const RefTensor &x = get(reduce.getInput());
        size_t rank = x.shape.size();
        std::vector<bool> reduced(rank, !reduce.getAxes().has_value());
        if (auto axes = reduce.getAxes())
          for (int64_t a : *axes)
            reduced[graph::normalizeAxis(a, rank)] = true;
        // Accumulate into the keepdims shape, then take the declared shape.
        Shape kept = x.shape;
        for (size_t d = 0; d < rank; ++d)
          if (reduced[d])
            kept[d] = 1;
        RefTensor y = make(kept);
        bool isMax = isa<ReduceMaxOp>(op);
        if (isMax)
          std::fill(y.data.begin(), y.data.end(),
                    -std::numeric_limits<double>::infinity());
        Shape ks = stridesOf(kept);
        for (int64_t i = 0; i < x.numel(); ++i) {
          Shape c = coordsOf(i, x.shape);
          int64_t o = 0;
          for (size_t d = 0; d < rank; ++d)
            o += (reduced[d] ? 0 : c[d]) * ks[d];
          y.data[o] =
              isMax ? std::max(y.data[o], x.data[i]) : y.data[o] + x.data[i];
        }
        if (isa<ReduceMeanOp>(op)) {
          int64_t count = x.numel() / std::max<int64_t>(1, y.numel());
          for (double &v : y.data)
            v /= count;
        }
        if (isa<IntegerType>(element))
          for (double &v : y.data)
            v = std::trunc(v);
        y.shape = shapeOf(reduce.getResult());
        return set(y);
      })
      .Case([&](CrossEntropyOp loss) -> LogicalResult {
        const RefTensor &x = get(loss.getLogits());
        const RefTensor &t = get(loss.getTargets());
        int64_t n = x.shape[0], c = x.shape[1];
        int64_t ignore = loss.getIgnoreIndex();
        RefTensor y = make(shapeOf(loss.getResult()));
        double total = 0, weightSum = 0;
        for (int64_t i = 0; i < n; ++i) {
          int64_t target = static_cast<int64_t>(t.data[i]);
          if (target == ignore)
            continue;
          if (target < 0 || target >= c)
            return op->emitError("target ")
                   << target << " of sample " << i << " is out of range [0, "
                   << c << ")";
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t j = 0; j < c; ++j)
            mx = std::max(mx, x.data[i * c + j]);
          double sum = 0;
          for (int64_t j = 0; j < c; ++j)
            sum += std::exp(x.data[i * c + j] - mx);
          double l = -(x.data[i * c + target] - mx - std::log(sum));
          double w =
              loss.getWeight() ? get(loss.getWeight()).data[target] : 1.0;
          if (loss.getReduction() == Reduction::none)
            y.data[i] = w * l;
          total += w * l;
          weightSum += w;
        }
        if (loss.getReduction() == Reduction::mean)
          y.data[0] = weightSum != 0 ? total / weightSum : std::nan("");
        else if (loss.getReduction() == Reduction::sum)
          y.data[0] = total;
        return set(y);
      })
      .Default([&](Operation *) {
        return op->emitError("the reference interpreter does not know '")
               << op->getName() << "'";
      });
}

} // namespace

FailureOr<std::vector<RefTensor>>
modelc::interpret(func::FuncOp function, const std::vector<RefTensor> &inputs,
                  const WeightProvider &weights) {
  if (inputs.size() != function.getNumArguments())
    return function.emitError("expected ")
           << function.getNumArguments() << " inputs, got " << inputs.size();
  Interpreter interpreter(weights);
  return interpreter.run(function, inputs);
}
