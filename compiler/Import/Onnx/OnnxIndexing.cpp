//===- OnnxIndexing.cpp - ONNX ops that work through indices --------------===//
//
// ONNX ops defined by element positions, built from graph ops that already
// exist: a position becomes an i64 constant ("iota"), a comparison with it a
// mask, and a mask a select or a sum. GatherElements becomes one gather on
// the flattened data. ArgMax/ArgMin, Hardmax, OneHot, Trilu, EyeLike and
// the two losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) are
// here. Every piece has kernels on every device, so these run anywhere.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

/// 0, 1, ..., size - 1 along `axis` of a rank-`rank` i64 tensor whose other
/// dimensions are 1.
Value iota(At &at, int64_t rank, int64_t axis, int64_t size) {
  if (!at.fits(size))
    return nullptr;
  SmallVector<int64_t> shape(rank, 1), data(size);
  shape[axis] = size;
  for (int64_t i = 0; i < size; ++i)
    data[i] = i;
  return at.indices(shape, data);
}

/// `x` as i64 (a no-op when it is).
Value toI64(At &at, Value x) {
  if (!x || typeOf(x).getElementType().isInteger(64))
    return x;
  return at.cast(x, at.im.builder.getI64Type());
}

/// The normalized `axis` attribute of a node reading a rank-`rank` tensor;
/// nullopt after an error.
std::optional<int64_t> axisOf(Importer &im, const NodeProto &n, int64_t rank,
                              int64_t otherwise) {
  int64_t axis = Importer::intAttr(n, "axis", otherwise);
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    im.error(n) << "axis " << axis << " is out of range for rank " << rank;
    return std::nullopt;
  }
  return normalized;
}

/// The index of the largest (`max`) or smallest element along `axis`, the
/// first one or with `last` the last one, as i64. Built as: the extreme
/// value, a mask of the elements equal to it, and the smallest (largest)
/// position under the mask. ArgMin negates: for integers, the most negative
/// value's negation wraps, which the docs list as a limit.
Value argIndex(At &at, Value x, int64_t axis, bool max, bool last,
               bool keepdims) {
  if (!x)
    return nullptr;
  int64_t rank = typeOf(x).getRank(), size = typeOf(x).getDimSize(axis);
  Value v = max ? x : at.neg(x);
  Value extreme = at.reduce<ReduceMaxOp>(v, {axis}, true);
  Value hit = at.compare(v, extreme, ComparePredicate::eq);
  Value positions = iota(at, rank, axis, size);
  if (last) {
    Value candidates = at.select(hit, positions, at.scalar(positions, -1));
    return at.reduce<ReduceMaxOp>(candidates, {axis}, keepdims);
  }
  Value candidates = at.select(hit, positions, at.scalar(positions, size));
  return at.neg(at.reduce<ReduceMaxOp>(at.neg(candidates), {axis}, keepdims));
}

template <bool Max> LogicalResult argExtreme(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  std::optional<int64_t> axis = axisOf(im, n, typeOf(x).getRank(), 0);
  if (!axis)
    return failure();
  return at.define(argIndex(at, x, *axis, Max,
                            Importer::intAttr(n, "select_last_index", 0) != 0,
                            Importer::intAttr(n, "keepdims", 1) != 0));
}

/// TopK(x, k): the k largest (or smallest) elements along the axis, sorted,
/// and their i64 indices, ties to the lower index. Built as k rounds of:
/// the extreme of the elements not taken yet, the first position holding
/// it, that position marked taken. Float inputs and k <= 64 (each round is
/// a pass over the input).
LogicalResult topK(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  auto type = typeOf(x);
  if (!isa<FloatType>(type.getElementType())) {
    im.error(n) << "integer inputs are not supported yet (float are)";
    return failure();
  }
  std::optional<int64_t> axis = axisOf(im, n, type.getRank(), -1);
  if (!axis)
    return failure();
  std::optional<double> given =
      im.opset() < 10 ? std::optional<double>(Importer::intAttr(n, "k", -1))
                      : im.constantScalar(n, 1);
  if (!given) {
    im.error(n) << "a k given at run time is not supported (it must be a "
                   "constant)";
    return failure();
  }
  int64_t size = type.getDimSize(*axis);
  if (!std::isfinite(*given) || *given < 1 || *given > size) {
    im.error(n) << "k = " << *given << " must be in [1, " << size << "]";
    return failure();
  }
  int64_t k = static_cast<int64_t>(*given);
  if (k < 1 || k > size) {
    im.error(n) << "k = " << k << " must be in [1, " << size << "]";
    return failure();
  }
  if (k > 64) {
    im.error(n) << "k = " << k << " is not supported yet (at most 64)";
    return failure();
  }
  bool largest = Importer::intAttr(n, "largest", 1) != 0;
  int64_t rank = type.getRank();
  Value v = largest ? x : at.neg(x);
  Value positions = iota(at, rank, *axis, size);
  Value yes = at.constant(im.builder.getI1Type(), {}, {1});
  Value no = at.constant(im.builder.getI1Type(), {}, {0});
  Value lowest = at.scalar(x, -std::numeric_limits<double>::infinity());
  Value taken;
  SmallVector<Value> values, indices;
  for (int64_t round = 0; round < k; ++round) {
    Value open = taken ? at.select(taken, lowest, v) : v;
    Value extreme = at.reduce<ReduceMaxOp>(open, {*axis}, true);
    Value hit = at.compare(v, extreme, ComparePredicate::eq);
    if (taken)
      hit = at.select(taken, no, hit);
    Value first = at.neg(at.reduce<ReduceMaxOp>(
        at.neg(at.select(hit, positions, at.scalar(positions, size))), {*axis},
        true));
    Value chosen = at.compare(positions, first, ComparePredicate::eq);
    taken = taken ? at.select(chosen, yes, taken) : chosen;
    values.push_back(largest ? extreme : at.neg(extreme));
    indices.push_back(first);
    if (!taken)
      return failure();
  }
  Value allValues = k == 1 ? values[0] : at.concat(values, *axis);
  Value allIndices = k == 1 ? indices[0] : at.concat(indices, *axis);
  if (!allValues || !allIndices)
    return failure();
  im.define(n, allValues, 0);
  im.define(n, allIndices, 1);
  return success();
}

/// Hardmax: 1 at the first largest element along the axis, 0 elsewhere.
/// Before opset 13 the input is seen as 2-D, [outer, inner] at `axis`.
LogicalResult hardmax(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  bool coerced = im.opset() < 13;
  std::optional<int64_t> axis = axisOf(im, n, shape.size(), coerced ? 1 : -1);
  if (!axis)
    return failure();
  Value v = x;
  int64_t along = *axis;
  if (coerced) {
    int64_t outer = 1, inner = 1;
    for (auto [i, d] : llvm::enumerate(shape))
      (static_cast<int64_t>(i) < *axis ? outer : inner) *= d;
    v = at.reshape(x, {outer, inner});
    along = 1;
  }
  Value index = argIndex(at, v, along, true, false, true);
  if (!index)
    return failure();
  int64_t rank = typeOf(v).getRank(), size = typeOf(v).getDimSize(along);
  Value hit =
      at.compare(iota(at, rank, along, size), index, ComparePredicate::eq);
  Value y = at.select(hit, at.scalar(x, 1), at.scalar(x, 0));
  return at.define(coerced ? at.reshape(y, shape) : y);
}

/// OneHot(indices, depth, values): values[1] where the position along the
/// new axis equals the index (negative ones count from depth), values[0]
/// elsewhere.
LogicalResult oneHot(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value indices = im.input(n, 0), values = im.input(n, 2);
  std::optional<double> depth = im.constantScalar(n, 1);
  if (!indices || !values)
    return failure();
  if (!depth) {
    im.error(n) << "a depth given at run time is not supported (it must be "
                   "a constant scalar)";
    return failure();
  }
  if (!std::isfinite(*depth) || *depth < 1 || *depth > (1 << 24)) {
    im.error(n) << "depth " << *depth << " is not supported (1 to 2^24)";
    return failure();
  }
  if (typeOf(values).getShape() != ArrayRef<int64_t>{2}) {
    im.error(n) << "values must be [off, on], a tensor of 2 elements";
    return failure();
  }
  int64_t size = static_cast<int64_t>(*depth);
  ArrayRef<int64_t> in = typeOf(indices).getShape();
  int64_t rank = in.size() + 1;
  std::optional<int64_t> axis = axisOf(im, n, rank, -1);
  if (!axis)
    return failure();
  Value index = toI64(at, indices);
  Value wrapped = at.select(at.less(index, at.scalar(index, 0)),
                            at.add(index, at.scalar(index, size)), index);
  SmallVector<int64_t> shape(in);
  shape.insert(shape.begin() + *axis, 1);
  Value hit = at.compare(at.reshape(wrapped, shape),
                         iota(at, rank, *axis, size), ComparePredicate::eq);
  auto element = [&](int64_t i) {
    return at.op<SliceOp>(
        {values},
        {im.builder.getNamedAttr("starts", im.builder.getDenseI64ArrayAttr(i)),
         im.builder.getNamedAttr("ends",
                                 im.builder.getDenseI64ArrayAttr(i + 1))});
  };
  return at.define(at.select(hit, element(1), element(0)));
}

/// GatherElements(data, indices, axis): out[p] = data[p with p[axis] =
/// indices[p]], as one gather from the flattened data at
/// index * stride(axis) + the offset of p's other coordinates.
/// Whether each element of `index` lies in [-extent, extent) (i1).
Value inRange(At &at, Value index, int64_t extent) {
  return at.select(at.less(index, at.scalar(index, -extent)),
                   at.constant(at.im.builder.getI1Type(), {}, {0}),
                   at.less(index, at.scalar(index, extent)));
}

/// The offsets in the flattened `data` of the elements that `indices`
/// addresses along the node's `axis` attribute (GatherElements,
/// ScatterElements: indices of the data's rank, every other coordinate
/// their own position), as i64. An index outside [-extent, extent) gives
/// the data's element count, past the end, so that the gather or scatter on
/// the flattened data reports it at run time instead of touching a
/// neighbour. Null after an error.
Value elementOffsets(At &at, Value data, Value indices) {
  Importer &im = at.im;
  const NodeProto &n = at.node;
  ArrayRef<int64_t> shape = typeOf(data).getShape();
  ArrayRef<int64_t> ishape = typeOf(indices).getShape();
  int64_t rank = shape.size();
  std::optional<int64_t> normalized = axisOf(im, n, rank, 0);
  if (!normalized)
    return nullptr;
  int64_t axis = *normalized;
  if (static_cast<int64_t>(ishape.size()) != rank) {
    im.error(n) << "indices must have the data's rank " << rank;
    return nullptr;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && ishape[d] > shape[d]) {
      im.error(n) << "indices dimension " << d << " (" << ishape[d]
                  << ") is larger than the data's (" << shape[d] << ")";
      return nullptr;
    }
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t count = typeOf(indices).getNumElements();
  if (!at.fits(count))
    return nullptr;
  // The offset of each index position's coordinates other than `axis`.
  SmallVector<int64_t> offsets(count), coordinate(rank, 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        offset += coordinate[d] * strides[d];
    offsets[k] = offset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coordinate[d] < ishape[d])
        break;
      coordinate[d] = 0;
    }
  }
  Value index = toI64(at, indices);
  int64_t extent = shape[axis];
  Value wrapped = at.select(at.less(index, at.scalar(index, 0)),
                            at.add(index, at.scalar(index, extent)), index);
  Value flat = at.add(at.mul(wrapped, at.scalar(wrapped, strides[axis])),
                      at.indices(ishape, offsets));
  int64_t total = typeOf(data).getNumElements();
  return at.select(inRange(at, index, extent), flat, at.scalar(flat, total));
}

LogicalResult gatherElements(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value data = im.input(n, 0), indices = im.input(n, 1);
  if (!data || !indices)
    return failure();
  Value flat = elementOffsets(at, data, indices);
  if (!flat)
    return failure();
  Value all = at.reshape(data, {typeOf(data).getNumElements()});
  return at.define(at.gather(all, flat, 0));
}

/// The `reduction` attribute of ScatterND and ScatterElements; nullopt
/// after an error.
std::optional<graph::ScatterReduction> scatterReduction(Importer &im,
                                                        const NodeProto &n) {
  std::string name = Importer::stringAttr(n, "reduction", "none");
  std::optional<graph::ScatterReduction> how =
      graph::symbolizeScatterReduction(name);
  if (!how)
    im.error(n) << "reduction '" << name
                << "' is not supported (none, add, mul, max, min)";
  return how;
}

/// graph.scatter_nd of `data` by `indices` (i64) with `updates`.
Value scatterNdOp(At &at, Value data, Value indices, Value updates,
                  graph::ScatterReduction how) {
  SmallVector<mlir::NamedAttribute> attrs;
  if (how != graph::ScatterReduction::none)
    attrs.push_back(at.im.builder.getNamedAttr(
        "reduction", graph::ScatterReductionAttr::get(&at.im.context, how)));
  return at.op<graph::ScatterNdOp>({data, indices, updates}, attrs);
}

/// ScatterND: graph.scatter_nd, which has its semantics.
LogicalResult scatterNd(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value data = im.input(n, 0), indices = im.input(n, 1),
        updates = im.input(n, 2);
  std::optional<graph::ScatterReduction> how = scatterReduction(im, n);
  if (!data || !indices || !updates || !how)
    return failure();
  return at.define(scatterNdOp(at, data, toI64(at, indices), updates, *how));
}

/// ScatterElements (and opset 9-10's Scatter): a graph.scatter_nd on the
/// flattened data, one row per element of `indices` addressing its offset
/// (elementOffsets), in the order of `indices`.
LogicalResult scatterElements(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value data = im.input(n, 0), indices = im.input(n, 1),
        updates = im.input(n, 2);
  std::optional<graph::ScatterReduction> how = scatterReduction(im, n);
  if (!data || !indices || !updates || !how)
    return failure();
  if (typeOf(updates).getShape() != typeOf(indices).getShape()) {
    im.error(n) << "updates must have the indices' shape";
    return failure();
  }
  Value flat = elementOffsets(at, data, indices);
  if (!flat)
    return failure();
  int64_t count = typeOf(indices).getNumElements();
  Value scattered = scatterNdOp(
      at, at.reshape(data, {typeOf(data).getNumElements()}),
      at.reshape(flat, {count, 1}), at.reshape(updates, {count}), *how);
  return at.define(at.reshape(scattered, typeOf(data).getShape()));
}

/// GatherND: the index tuples (each addressing a slice of `data` after the
/// `batch_dims` leading dimensions) become rows of the data reshaped to
/// [rows, slice], which one graph.gather takes. A tuple with a number out
/// of range becomes a row past the end, which the gather reports.
LogicalResult gatherNd(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value data = im.input(n, 0), indices = im.input(n, 1);
  if (!data || !indices)
    return failure();
  ArrayRef<int64_t> shape = typeOf(data).getShape();
  ArrayRef<int64_t> ishape = typeOf(indices).getShape();
  int64_t rank = shape.size(), irank = ishape.size();
  int64_t b = Importer::intAttr(n, "batch_dims", 0);
  if (irank < 1 || b < 0 || b >= std::min(rank, irank)) {
    im.error(n) << "batch_dims " << b << " does not fit data of rank " << rank
                << " and indices of rank " << irank;
    return failure();
  }
  int64_t k = ishape.back();
  if (k < 1 || b + k > rank) {
    im.error(n) << "index tuples of " << k << " numbers after " << b
                << " batch dimensions do not fit data of rank " << rank;
    return failure();
  }
  for (int64_t d = 0; d < b; ++d)
    if (shape[d] != ishape[d]) {
      im.error(n) << "batch dimension " << d << " differs: data " << shape[d]
                  << ", indices " << ishape[d];
      return failure();
    }
  int64_t batch = 1, tuples = 1, slice = 1;
  for (int64_t d = 0; d < b; ++d)
    batch *= shape[d];
  for (int64_t d = b; d < b + k; ++d)
    tuples *= shape[d];
  for (int64_t d = b + k; d < rank; ++d)
    slice *= shape[d];
  // Each index row's batch offset (its position in the batch dimensions
  // times the tuples per batch entry), as a constant of indices' shape
  // without the last dimension.
  SmallVector<int64_t> rowShape(ishape.drop_back());
  int64_t rows = 1;
  for (int64_t d : rowShape)
    rows *= d;
  if (!at.fits(rows))
    return failure();
  int64_t perBatch = rows / std::max<int64_t>(batch, 1);
  SmallVector<int64_t> batchOffset(rows);
  for (int64_t r = 0; r < rows; ++r)
    batchOffset[r] = (perBatch ? r / perBatch : 0) * tuples;
  Value index = toI64(at, indices);
  Value row = at.indices(rowShape, batchOffset);
  Value inside = at.constant(im.builder.getI1Type(), {}, {1});
  int64_t stride = tuples;
  for (int64_t j = 0; j < k; ++j) {
    int64_t extent = shape[b + j];
    stride /= extent ? extent : 1;
    Value part = at.gather(index, at.indices({}, {j}), irank - 1);
    Value wrapped = at.select(at.less(part, at.scalar(part, 0)),
                              at.add(part, at.scalar(part, extent)), part);
    row = at.add(row, at.mul(wrapped, at.scalar(wrapped, stride)));
    inside = at.select(inside, inRange(at, part, extent),
                       at.constant(im.builder.getI1Type(), {}, {0}));
  }
  row = at.select(inside, row, at.scalar(row, batch * tuples));
  Value table = at.reshape(data, {batch * tuples, slice});
  SmallVector<int64_t> outShape(rowShape);
  llvm::append_range(outShape, shape.drop_front(b + k));
  return at.define(at.reshape(at.gather(table, row, 0), outShape));
}

/// Trilu(x, k): x where column - row <= k (lower) or >= k (upper), else 0,
/// over the last two dimensions. A constant k makes the mask a constant.
LogicalResult trilu(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  if (shape.size() < 2) {
    im.error(n) << "the input must have rank 2 or more";
    return failure();
  }
  bool upper = Importer::intAttr(n, "upper", 1) != 0;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  if (!at.fits(rows > 0 && cols > (int64_t(1) << 24) / rows ? -1 : rows * cols))
    return failure();
  SmallVector<int64_t> diagonal(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      diagonal[i * cols + j] = j - i;
  ComparePredicate keep = upper ? ComparePredicate::ge : ComparePredicate::le;
  Value mask;
  if (!Importer::hasInput(n, 1)) {
    mask = at.compare(at.indices({rows, cols}, diagonal), at.indices({}, {0}),
                      keep);
  } else if (std::optional<double> k = im.constantScalar(n, 1)) {
    SmallVector<double> bits(rows * cols);
    for (auto [b, d] : llvm::zip(bits, diagonal))
      b = upper ? d >= *k : d <= *k;
    mask = at.constant(im.builder.getI1Type(), {rows, cols}, bits);
  } else {
    Value given = toI64(at, im.input(n, 1));
    if (given && typeOf(given).getNumElements() != 1) {
      im.error(n) << "k must be a scalar";
      return failure();
    }
    mask = at.compare(at.indices({rows, cols}, diagonal),
                      given ? at.reshape(given, {}) : Value(), keep);
  }
  return at.define(at.select(mask, x, at.scalar(x, 0)));
}

/// EyeLike: a constant of the input's 2-D shape, ones where column - row
/// = k.
LogicalResult eyeLike(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  if (shape.size() != 2) {
    im.error(n) << "the input must have rank 2";
    return failure();
  }
  Type element = typeOf(x).getElementType();
  if (const onnx::AttributeProto *dtype = Importer::attribute(n, "dtype")) {
    element = elementTypeOf(im.context, static_cast<int32_t>(dtype->i()));
    if (!element) {
      im.error(n) << "dtype " << dtype->i() << " is not supported (f32, f16, "
                  << "bf16, i32, i64, bool are)";
      return failure();
    }
  }
  int64_t k = Importer::intAttr(n, "k", 0);
  if (!at.fits(shape[0] > 0 && shape[1] > (int64_t(1) << 24) / shape[0]
                   ? -1
                   : shape[0] * shape[1]))
    return failure();
  SmallVector<double> data(shape[0] * shape[1], 0.0);
  // |k| at least the larger dimension leaves no diagonal (and i + k
  // cannot overflow below).
  if (std::abs(k) < std::max(shape[0], shape[1]))
    for (int64_t i = 0; i < shape[0]; ++i)
      if (i + k >= 0 && i + k < shape[1])
        data[i * shape[1] + i + k] = 1;
  return at.define(at.constant(element, shape, data));
}

/// NegativeLogLikelihoodLoss over log-probabilities `x` [N, C, d...] and
/// targets [N, d...]: -x[n, t, d...] * weight[t], 0 where t is
/// ignore_index, then reduced (none, sum, or the weighted mean).
Value nllLoss(At &at, const NodeProto &n, Value x, Value target, Value weight) {
  Importer &im = at.im;
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  int64_t rank = shape.size(), classes = shape[1];
  int64_t samples = typeOf(x).getNumElements() / classes;
  // [N, C, d...] -> [N * d..., C]
  Value rows = x;
  if (rank > 2) {
    SmallVector<int64_t> perm = {0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    rows = at.transpose(x, perm);
  }
  rows = at.reshape(rows, {samples, classes});
  Value t = at.reshape(toI64(at, target), {samples});
  Value chosen = at.compare(at.reshape(t, {samples, 1}),
                            iota(at, 2, 1, classes), ComparePredicate::eq);
  Value picked = at.reduce<ReduceSumOp>(
      at.select(chosen, rows, at.scalar(rows, 0)), {1}, false);
  const onnx::AttributeProto *ignore = Importer::attribute(n, "ignore_index");
  Value kept;
  if (ignore)
    kept = at.compare(t, at.indices({}, {ignore->i()}), ComparePredicate::ne);
  Value w;
  if (weight) {
    Value safe = kept ? at.select(kept, t, at.scalar(t, 0)) : t;
    w = at.gather(weight, safe, 0);
    if (kept)
      w = at.select(kept, w, at.scalar(w, 0));
  } else if (kept) {
    w = at.select(kept, at.scalar(rows, 1), at.scalar(rows, 0));
  }
  Value loss = at.neg(picked);
  if (w)
    loss = at.mul(loss, w);
  // An ignored sample is 0 even when its log-probability is -inf (0 * -inf
  // would be NaN).
  if (kept)
    loss = at.select(kept, loss, at.scalar(loss, 0));
  std::string reduction = Importer::stringAttr(n, "reduction", "mean");
  if (reduction == "none")
    return at.reshape(loss, typeOf(target).getShape());
  if (reduction == "sum")
    return at.reduce<ReduceSumOp>(loss, {}, false);
  if (reduction != "mean") {
    im.error(n) << "reduction '" << reduction << "' is not supported (none, "
                << "sum, mean are)";
    return nullptr;
  }
  if (!w)
    return at.reduce<ReduceMeanOp>(loss, {}, false);
  return at.div(at.reduce<ReduceSumOp>(loss, {}, false),
                at.reduce<ReduceSumOp>(w, {}, false));
}

/// The shapes a loss node reads: x [N, C, d...], target [N, d...], weight
/// [C]; false after an error.
bool checkLossOperands(Importer &im, const NodeProto &n, Value x, Value target,
                       Value weight) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  if (shape.size() < 2) {
    im.error(n) << "the input must be [N, C, d...]";
    return false;
  }
  SmallVector<int64_t> want = {shape[0]};
  want.append(shape.begin() + 2, shape.end());
  if (typeOf(target).getShape() != ArrayRef<int64_t>(want)) {
    im.error(n) << "the target must have the input's shape without the "
                   "class dimension";
    return false;
  }
  if (!isa<IntegerType>(typeOf(target).getElementType()) ||
      typeOf(target).getElementType().isInteger(1)) {
    im.error(n) << "the target must be integer class indices";
    return false;
  }
  if (weight && typeOf(weight).getShape() != ArrayRef<int64_t>{shape[1]}) {
    im.error(n) << "the weight must be [C]";
    return false;
  }
  return true;
}

/// A loss node's operands: input, target and the optional weight; false
/// after an error.
bool readLossOperands(Importer &im, const NodeProto &n, Value &x, Value &target,
                      Value &weight) {
  x = im.input(n, 0);
  target = im.input(n, 1);
  weight = Importer::hasInput(n, 2) ? im.input(n, 2) : Value();
  return x && target && (!Importer::hasInput(n, 2) || weight) &&
         checkLossOperands(im, n, x, target, weight);
}

LogicalResult nll(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x, target, weight;
  if (!readLossOperands(im, n, x, target, weight))
    return failure();
  return at.define(nllLoss(at, n, x, target, weight));
}

/// SoftmaxCrossEntropyLoss: the NLL loss of log_softmax over the classes,
/// which is also its optional second output. The 2-D case without that
/// output is graph.cross_entropy itself.
LogicalResult softmaxCrossEntropy(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x, target, weight;
  if (!readLossOperands(im, n, x, target, weight))
    return failure();
  bool logProbOut = n.output_size() > 1 && !n.output(1).empty();
  std::string reduction = Importer::stringAttr(n, "reduction", "mean");
  const onnx::AttributeProto *ignore = Importer::attribute(n, "ignore_index");
  std::optional<Reduction> kind = symbolizeReduction(reduction);
  if (typeOf(x).getRank() == 2 && !logProbOut && kind) {
    SmallVector<Value> operands = {x, target};
    if (weight)
      operands.push_back(weight);
    SmallVector<NamedAttribute> attrs = {im.builder.getNamedAttr(
        "reduction", ReductionAttr::get(&im.context, *kind))};
    // Without ignore_index ONNX ignores nothing (graph.cross_entropy's
    // default is PyTorch's -100); an index no class has stands for that.
    int64_t none = std::numeric_limits<int64_t>::min() + 1;
    attrs.push_back(im.builder.getNamedAttr(
        "ignore_index",
        im.builder.getI64IntegerAttr(ignore ? ignore->i() : none)));
    return at.define(at.op<CrossEntropyOp>(operands, attrs));
  }
  Value logProb = at.op<LogSoftmaxOp>(
      {x}, {im.builder.getNamedAttr("axis", im.builder.getI64IntegerAttr(1))});
  if (!logProb)
    return failure();
  if (logProbOut)
    im.define(n, logProb, 1);
  return at.define(nllLoss(at, n, logProb, target, weight));
}

} // namespace

void modelc::onnx_import::addIndexingConverters(
    llvm::StringMap<NodeConverter> &t) {
  t["ArgMax"] = argExtreme<true>;
  t["ArgMin"] = argExtreme<false>;
  t["Hardmax"] = hardmax;
  t["TopK"] = topK;
  t["OneHot"] = oneHot;
  t["GatherElements"] = gatherElements;
  t["GatherND"] = gatherNd;
  t["ScatterND"] = scatterNd;
  t["ScatterElements"] = scatterElements;
  t["Scatter"] = scatterElements;
  t["Trilu"] = trilu;
  t["EyeLike"] = eyeLike;
  t["NegativeLogLikelihoodLoss"] = nll;
  t["SoftmaxCrossEntropyLoss"] = softmaxCrossEntropy;
}
