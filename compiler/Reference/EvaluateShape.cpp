//===- EvaluateShape.cpp - shape ops, data movement, reductions, cumsum ---===//
//
// Reference evaluation of the ops that move elements (reshape, transpose,
// concat, slice, gather), of the reductions and of cumsum. Attributes are read
// through the ops' normalised accessors (GraphOps.td), as shape inference reads
// them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Reference/Evaluate.h"
#include "dialects/Graph/IR/SymbolicShape.h"

#include "llvm/ADT/SmallBitVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::reference;

/// The operand's elements under the result's shape.
static RefTensor reshaped(Operation *op, const Values &values) {
  RefTensor y = values.get(op->getOperand(0));
  y.shape = shapeOf(op->getResult(0));
  return y;
}

static RefTensor evaluate(ReshapeOp op, const Values &values) {
  return reshaped(op, values);
}

static RefTensor evaluate(FlattenOp op, const Values &values) {
  return reshaped(op, values);
}

static RefTensor evaluate(TransposeOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  Shape out = shapeOf(op.getResult());
  Shape strides = stridesOf(x.shape);
  ArrayRef<int64_t> perm = op.getPerm();
  RefTensor y = make(out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out);
    int64_t offset = 0;
    for (size_t d = 0; d < c.size(); ++d)
      offset += c[d] * strides[perm[d]];
    y.data[i] = x.data[offset];
  }
  return y;
}

static RefTensor evaluate(ConcatOp op, const Values &values) {
  Shape out = shapeOf(op.getResult());
  int64_t axis = op.getNormalizedAxis();
  RefTensor y = make(out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out);
    for (Value input : op.getInputs()) {
      const RefTensor &x = values.get(input);
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
  return y;
}

static RefTensor evaluate(SliceOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  Shape out = shapeOf(op.getResult());
  NormalizedSlice slice = op.getNormalizedSlice();
  Shape strides = stridesOf(x.shape);
  RefTensor y = make(out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out);
    int64_t offset = 0;
    for (size_t d = 0; d < c.size(); ++d)
      offset += (slice.starts[d] + c[d] * slice.steps[d]) * strides[d];
    y.data[i] = x.data[offset];
  }
  return y;
}

static RefTensor evaluate(BatchPartOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  RefTensor y = make(shapeOf(op.getResult()));
  int64_t row = x.shape[0] ? x.numel() / x.shape[0] : 0;
  int64_t first = partOffset(x.shape[0], op.getPart(), op.getParts());
  for (int64_t i = 0; i < y.numel(); ++i)
    y.data[i] = x.data[first * row + i];
  return y;
}

/// ScatterND: the rows of `indices` in order, each writing (or combining)
/// its slice of `updates` into a copy of `data`.
static FailureOr<RefTensor> evaluate(ScatterNdOp op, const Values &values) {
  const RefTensor &data = values.get(op.getData());
  const RefTensor &indices = values.get(op.getIndices());
  const RefTensor &updates = values.get(op.getUpdates());
  int64_t k = op.getIndexLength(), rows = op.getNumRows(),
          slice = op.getSliceElements();
  Shape strides = stridesOf(data.shape);
  Type element = elementOf(op.getResult());
  bool integer = isa<IntegerType>(element) && !element.isInteger(1);
  ScatterReduction how = op.getReduction();
  RefTensor y = data;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t index = static_cast<int64_t>(indices.data[r * k + d]);
      if (index < -data.shape[d] || index >= data.shape[d])
        return op->emitError("index ")
               << index << " is out of range for dimension " << d << " of size "
               << data.shape[d];
      offset += (index < 0 ? index + data.shape[d] : index) * strides[d];
    }
    for (int64_t j = 0; j < slice; ++j) {
      double &to = y.data[offset + j];
      double u = updates.data[r * slice + j];
      switch (how) {
      case ScatterReduction::none:
        to = u;
        break;
      case ScatterReduction::add:
        to += u;
        break;
      case ScatterReduction::mul:
        to *= u;
        break;
      case ScatterReduction::max:
        to = maxOrNaN(to, u);
        break;
      case ScatterReduction::min:
        to = minOrNaN(to, u);
        break;
      }
      if (integer)
        to = wrappedValue(wrappedBits(to), element);
    }
  }
  return y;
}

static FailureOr<RefTensor> evaluate(GatherOp op, const Values &values) {
  const RefTensor &data = values.get(op.getData());
  const RefTensor &indices = values.get(op.getIndices());
  int64_t axis = op.getNormalizedAxis();
  Shape out = shapeOf(op.getResult());
  Shape strides = stridesOf(data.shape);
  Shape indexStrides = stridesOf(indices.shape);
  size_t ir = indices.shape.size();
  RefTensor y = make(out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Shape c = coordsOf(i, out);
    int64_t io = 0;
    for (size_t d = 0; d < ir; ++d)
      io += c[axis + d] * indexStrides[d];
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
  return y;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
enum class ReduceKind { Sum, Mean, Max };
} // namespace

/// `shape` with the `reduced` dimensions set to 1 (keepdims).
static Shape keptShape(const Shape &shape,
                       const llvm::SmallBitVector &reduced) {
  Shape kept = shape;
  for (size_t d = 0; d < kept.size(); ++d)
    if (reduced[d])
      kept[d] = 1;
  return kept;
}

/// Reduces the input of `op` over its reduced dimensions.
template <typename ReduceOp>
static RefTensor reduce(ReduceOp op, const Values &values, ReduceKind kind) {
  const RefTensor &x = values.get(op.getInput());
  size_t rank = x.shape.size();
  llvm::SmallBitVector reduced = op.getReducedDims();
  // Accumulate into the keepdims shape, then take the declared shape.
  Shape kept = keptShape(x.shape, reduced);
  RefTensor y = make(kept);
  bool isMax = kind == ReduceKind::Max;
  if (isMax)
    std::fill(y.data.begin(), y.data.end(),
              -std::numeric_limits<double>::infinity());
  Shape ks = stridesOf(kept);
  for (int64_t i = 0; i < x.numel(); ++i) {
    Shape c = coordsOf(i, x.shape);
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      o += (reduced[d] ? 0 : c[d]) * ks[d];
    y.data[o] = isMax ? maxOrNaN(y.data[o], x.data[i]) : y.data[o] + x.data[i];
  }
  if (kind == ReduceKind::Mean) {
    int64_t count = x.numel() / std::max<int64_t>(1, y.numel());
    for (double &v : y.data)
      v /= count;
  }
  // Integer sums wrap around to their width, as the kernels' do (exact
  // while the sum is below 2^53).
  if (isa<IntegerType>(elementOf(op.getInput())))
    for (double &v : y.data)
      v = wrappedValue(wrappedBits(std::trunc(v)), elementOf(op.getInput()));
  y.shape = shapeOf(op.getResult());
  return y;
}

static RefTensor evaluate(ReduceSumOp op, const Values &values) {
  return reduce(op, values, ReduceKind::Sum);
}

static RefTensor evaluate(ReduceMeanOp op, const Values &values) {
  return reduce(op, values, ReduceKind::Mean);
}

static RefTensor evaluate(ReduceMaxOp op, const Values &values) {
  return reduce(op, values, ReduceKind::Max);
}

/// The product over the reduced dimensions; integers multiply exactly,
/// wrapping around on overflow.
static RefTensor evaluate(ReduceProdOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  size_t rank = x.shape.size();
  llvm::SmallBitVector reduced = op.getReducedDims();
  Shape kept = keptShape(x.shape, reduced);
  Type element = elementOf(op.getInput());
  bool integers = isa<IntegerType>(element);
  RefTensor y = make(kept);
  std::vector<uint64_t> exact(y.numel(), 1);
  std::fill(y.data.begin(), y.data.end(), 1.0);
  Shape ks = stridesOf(kept);
  for (int64_t i = 0; i < x.numel(); ++i) {
    Shape c = coordsOf(i, x.shape);
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      o += (reduced[d] ? 0 : c[d]) * ks[d];
    if (integers)
      exact[o] *= wrappedBits(x.data[i]);
    else
      y.data[o] *= x.data[i];
  }
  if (integers)
    for (int64_t o = 0; o < y.numel(); ++o)
      y.data[o] = wrappedValue(exact[o], element);
  y.shape = shapeOf(op.getResult());
  return y;
}

//===----------------------------------------------------------------------===//
// Cumulative sums
//===----------------------------------------------------------------------===//

static RefTensor evaluate(CumsumOp op, const Values &values) {
  const RefTensor &x = values.get(op.getInput());
  int64_t axis = op.getNormalizedAxis();
  int64_t len = x.shape[axis];
  int64_t inner = product(x.shape, axis + 1, x.shape.size());
  int64_t outer = product(x.shape, 0, axis);
  Type element = elementOf(op.getInput());
  bool integers = isa<IntegerType>(element);
  RefTensor y = make(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double sum = 0;
      uint64_t exact = 0;
      for (int64_t step = 0; step < len; ++step) {
        int64_t j = op.getReverse() ? len - 1 - step : step;
        int64_t at = (o * len + j) * inner + in;
        // Exclusive: the sum before this element is added.
        if (op.getExclusive())
          y.data[at] = integers ? wrappedValue(exact, element) : sum;
        if (integers)
          exact += wrappedBits(x.data[at]);
        else
          sum += x.data[at];
        if (!op.getExclusive())
          y.data[at] = integers ? wrappedValue(exact, element) : sum;
      }
    }
  return y;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void modelc::reference::addShapeEvaluators(Evaluators &evaluators) {
  evaluators.add<ReshapeOp>(evaluate);
  evaluators.add<ScatterNdOp>(evaluate);
  evaluators.add<FlattenOp>(evaluate);
  evaluators.add<TransposeOp>(evaluate);
  evaluators.add<ConcatOp>(evaluate);
  evaluators.add<SliceOp>(evaluate);
  evaluators.add<BatchPartOp>(evaluate);
  evaluators.add<GatherOp>(evaluate);
  evaluators.add<ReduceSumOp>(evaluate);
  evaluators.add<ReduceMeanOp>(evaluate);
  evaluators.add<ReduceMaxOp>(evaluate);
  evaluators.add<ReduceProdOp>(evaluate);
  evaluators.add<CumsumOp>(evaluate);
}
