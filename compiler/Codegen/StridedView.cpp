//===- StridedView.cpp - matmul operands read in place as strided views ---===//

#include "compiler/Codegen/StridedView.h"
#include "compiler/Codegen/EmitHelpers.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::codegen;

namespace {

/// The strides of a view reshaped from `shape` with `strides` to `to`
/// without copying, when there are (numpy's no-copy reshape).
std::optional<SmallVector<int64_t>> reshapeStrides(ArrayRef<int64_t> shape,
                                                   ArrayRef<int64_t> strides,
                                                   ArrayRef<int64_t> to) {
  SmallVector<int64_t> oldDims, oldStrides, newIndex;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) {
      oldDims.push_back(shape[d]);
      oldStrides.push_back(strides[d]);
    }
  SmallVector<int64_t> newDims;
  for (size_t d = 0; d < to.size(); ++d)
    if (to[d] != 1) {
      newDims.push_back(to[d]);
      newIndex.push_back(d);
    }
  SmallVector<int64_t> newStrides(newDims.size(), 0);
  size_t oi = 0, ni = 0;
  while (oi < oldDims.size() && ni < newDims.size()) {
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = oldDims[oi], np = newDims[ni];
    while (op != np) {
      if (np < op) {
        if (nj == newDims.size())
          return std::nullopt;
        np *= newDims[nj++];
      } else {
        if (oj == oldDims.size())
          return std::nullopt;
        op *= oldDims[oj++];
      }
    }
    // The old dimensions merged here must be contiguous with each other.
    for (size_t k = oi; k + 1 < oj; ++k)
      if (oldStrides[k] != oldDims[k + 1] * oldStrides[k + 1])
        return std::nullopt;
    newStrides[nj - 1] = oldStrides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k)
      newStrides[k - 1] = newStrides[k] * newDims[k];
    oi = oj;
    ni = nj;
  }
  if (oi != oldDims.size() || ni != newDims.size())
    return std::nullopt;
  SmallVector<int64_t> result(to.size(), 0);
  for (size_t i = 0; i < newIndex.size(); ++i)
    result[newIndex[i]] = newStrides[i];
  return result;
}

} // namespace

// The batch stride (elements) of a matmul operand of `shape`, for output
// batch dimensions `batch`: 0 for one matrix, a matrix for one per output
// matrix; none for other broadcasts.
std::optional<int64_t> modelc::uniformBatchStride(ArrayRef<int64_t> shape,
                                                  ArrayRef<int64_t> batch) {
  if (product(shape.drop_back(2)) == 1)
    return 0;
  if (shape.drop_back(2) == batch)
    return shape[shape.size() - 2] * shape.back();
  return std::nullopt;
}

std::optional<StridedOperand>
modelc::stridedMatmulOperand(Operation *matmulOp, unsigned index,
                             function_ref<bool(Operation *)> foldable) {
  auto matmul = cast<MatmulOp>(matmulOp);
  Value operand = matmulOp->getOperand(index);
  // Back to the buffer: slices (any), reshapes (views), transposes.
  SmallVector<Operation *> chain;
  Value v = operand;
  while (Operation *def = v.getDefiningOp()) {
    bool reshape = getViewOffset(def) && !isa<SliceOp>(def);
    if (!(isa<SliceOp, TransposeOp>(def) || reshape) || !v.hasOneUse() ||
        !foldable(def))
      break;
    chain.push_back(def);
    v = def->getOperand(0);
  }
  // Not a chain, or from an input (host memory) or a constant (kernel data,
  // which cuBLASLt cannot read).
  if (chain.empty() || !v.getDefiningOp() || v.getDefiningOp<ConstantOp>())
    return std::nullopt;
  // Forward from the buffer: the view's shape, strides and offset.
  SmallVector<int64_t> shape(tensorType(v).getShape());
  SmallVector<int64_t> strides = stridesOf(shape);
  int64_t offset = 0;
  for (Operation *op : llvm::reverse(chain)) {
    ArrayRef<int64_t> out = tensorType(op->getResult(0)).getShape();
    if (auto slice = dyn_cast<SliceOp>(op)) {
      NormalizedSlice window = slice.getNormalizedSlice();
      for (size_t d = 0; d < shape.size(); ++d) {
        offset += window.starts[d] * strides[d];
        strides[d] *= window.steps[d];
      }
    } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
      SmallVector<int64_t> permuted;
      for (int64_t p : transpose.getPerm())
        permuted.push_back(strides[p]);
      strides = permuted;
    } else {
      std::optional<SmallVector<int64_t>> reshaped =
          reshapeStrides(shape, strides, out);
      if (!reshaped)
        return std::nullopt;
      strides = *reshaped;
    }
    shape.assign(out.begin(), out.end());
  }
  if (offset < 0 || llvm::any_of(strides, [](int64_t s) { return s < 0; }))
    return std::nullopt;
  // A matrix cuBLASLt reads: a unit stride in one of the last two
  // dimensions, the batch one stride (as the output's batch, or one matrix).
  size_t rank = shape.size();
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  int64_t sr = strides[rank - 2], sc = strides[rank - 1];
  StridedOperand result;
  result.base = v;
  result.offset = offset;
  // (A one-row or one-column matrix's other stride is free: at least the
  // length, as cuBLASLt wants.)
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
    result.ld = rows == 1 ? cols : sr;
  } else if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
    result.transposed = true;
    result.ld = cols == 1 ? rows : sc;
  } else {
    return std::nullopt;
  }
  // Both operands one matrix or one per output matrix: one strided call
  // (other broadcasts take a call per matrix, from plain buffers).
  ArrayRef<int64_t> batch =
      tensorType(matmul.getResult()).getShape().drop_back(2);
  for (Value o : matmulOp->getOperands())
    if (!uniformBatchStride(tensorType(o).getShape(), batch))
      return std::nullopt;
  ArrayRef<int64_t> mine = ArrayRef<int64_t>(shape).drop_back(2);
  // The batch dimensions (of more than one matrix) must nest: each one's
  // stride is the next one's times its size; a batch index then steps by
  // the innermost stride.
  SmallVector<std::pair<int64_t, int64_t>> dims; // size, stride
  for (size_t d = 0; d < mine.size(); ++d)
    if (mine[d] != 1)
      dims.push_back({mine[d], strides[d]});
  int64_t batchStride = 0;
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (dims[i].second != dims[i + 1].second * dims[i + 1].first)
      return std::nullopt;
  if (!dims.empty())
    batchStride = dims.back().second;
  result.batchStride = batchStride;
  result.chain = chain;
  return result;
}
