//===- GraphShapeOps.cpp - reshape, transpose, slicing, reductions --------===//

#include "dialects/Graph/IR/GraphOpUtils.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/IR/SymbolicShape.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace modelc::graph;

LogicalResult
ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                            Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.tensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  SmallVector<int64_t> shape(adaptor.getShape());
  int64_t known = 1;
  std::optional<size_t> inferredDim;
  for (auto [index, dim] : llvm::enumerate(shape)) {
    if (dim == -1) {
      if (inferredDim)
        return diag.fail("shape ", formatShape(shape), " has more than one -1");
      inferredDim = index;
    } else if (dim < 0) {
      return diag.fail("shape ", formatShape(shape),
                       " has a negative entry other than -1");
    } else if (__builtin_mul_overflow(known, dim, &known)) {
      return diag.fail("shape ", formatShape(shape),
                       " has more elements than fit in 64 bits");
    }
  }
  int64_t count = input->getNumElements();
  if (inferredDim) {
    if (known == 0 || count % known != 0)
      return diag.fail("cannot reshape ", formatShape(input->getShape()), " (",
                       count, " elements) to ", formatShape(shape));
    shape[*inferredDim] = count / known;
  } else if (known != count) {
    return diag.fail("cannot reshape ", formatShape(input->getShape()), " (",
                     count, " elements) to ", formatShape(shape), " (", known,
                     " elements)");
  }
  return inferred(inferredTypes, input->clone(shape));
}

LogicalResult
FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                            Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.tensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  FailureOr<int64_t> start =
      diag.axis(static_cast<int64_t>(adaptor.getStartDim()), rank, "start_dim");
  if (failed(start))
    return failure();
  FailureOr<int64_t> end =
      diag.axis(static_cast<int64_t>(adaptor.getEndDim()), rank, "end_dim");
  if (failed(end))
    return failure();
  if (*start > *end)
    return diag.fail("start_dim (", *start, ") is after end_dim (", *end, ")");
  ArrayRef<int64_t> dims = input->getShape();
  SmallVector<int64_t> shape(dims.take_front(*start));
  int64_t merged = 1;
  for (int64_t i = *start; i <= *end; ++i)
    merged *= dims[i];
  shape.push_back(merged);
  llvm::append_range(shape, dims.drop_front(*end + 1));
  return inferred(inferredTypes, input->clone(shape));
}

LogicalResult
TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.tensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPerm();
  int64_t rank = input->getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return diag.fail("perm ", formatShape(perm), " has ", perm.size(),
                     " entries; the input has rank ", rank);
  llvm::SmallBitVector seen(rank);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen.test(p))
      return diag.fail("perm ", formatShape(perm),
                       " is not a permutation of [0, ", rank, ")");
    seen.set(p);
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(input->getDimSize(p));
  return inferred(inferredTypes, input->clone(shape));
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  if (adaptor.getInputs().empty())
    return diag.fail("needs at least one input");
  if (failed(diag.required(adaptor.getAxisAttr(), "axis")))
    return failure();
  FailureOr<RankedTensorType> first =
      diag.tensor(adaptor.getInputs().front().getType(), "input #0");
  if (failed(first))
    return failure();
  FailureOr<int64_t> axis =
      diag.axis(static_cast<int64_t>(adaptor.getAxis()), first->getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (auto [index, value] :
       llvm::enumerate(adaptor.getInputs().drop_front())) {
    std::string name = "input #" + std::to_string(index + 1);
    FailureOr<RankedTensorType> type = diag.tensor(value.getType(), name);
    if (failed(type) ||
        failed(diag.sameElementType(*first, "input #0", *type, name)))
      return failure();
    if (type->getRank() != first->getRank())
      return diag.fail(name, " has rank ", type->getRank(), ", input #0 has ",
                       first->getRank());
    for (int64_t d = 0; d < first->getRank(); ++d)
      if (d != *axis && type->getDimSize(d) != shape[d])
        return diag.fail(name, " ", formatShape(type->getShape()),
                         " differs from input #0 ",
                         formatShape(first->getShape()), " in dimension ", d,
                         ", which is not the concat axis");
    shape[*axis] += type->getDimSize(*axis);
  }
  return inferred(inferredTypes, first->clone(shape));
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.tensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  if (failed(diag.required(adaptor.getStartsAttr(), "starts")) ||
      failed(diag.required(adaptor.getEndsAttr(), "ends")))
    return failure();
  int64_t rank = input->getRank();
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds();
  size_t count = starts.size();
  if (ends.size() != count)
    return diag.fail("starts has ", count, " entries but ends has ",
                     ends.size());
  SmallVector<int64_t> defaultAxes =
      llvm::to_vector(llvm::seq<int64_t>(0, static_cast<int64_t>(count)));
  ArrayRef<int64_t> axes = adaptor.getAxes().value_or(defaultAxes);
  SmallVector<int64_t> defaultSteps(count, 1);
  ArrayRef<int64_t> steps = adaptor.getSteps().value_or(defaultSteps);
  if (axes.size() != count || steps.size() != count)
    return diag.fail("starts, ends, axes and steps must have equal lengths, "
                     "got ",
                     count, ", ", ends.size(), ", ", axes.size(), ", ",
                     steps.size());
  llvm::SmallBitVector seen(std::max<int64_t>(rank, 1));
  for (size_t i = 0; i < count; ++i) {
    FailureOr<int64_t> axis = diag.axis(axes[i], rank, "slice axis");
    if (failed(axis))
      return failure();
    if (seen.test(*axis))
      return diag.fail("axis ", *axis, " is sliced twice");
    seen.set(*axis);
    if (steps[i] < 1)
      return diag.fail("step ", steps[i], " on axis ", *axis,
                       (steps[i] < 0 ? ": negative steps are not supported yet"
                                     : ": steps must be >= 1"));
  }
  NormalizedSlice slice = normalizeSlice(input->getShape(), starts, ends,
                                         adaptor.getAxes(), adaptor.getSteps());
  return inferred(inferredTypes, input->clone(slice.sizes));
}

NormalizedSlice
modelc::graph::normalizeSlice(ArrayRef<int64_t> shape, ArrayRef<int64_t> starts,
                              ArrayRef<int64_t> ends,
                              std::optional<ArrayRef<int64_t>> axes,
                              std::optional<ArrayRef<int64_t>> steps) {
  int64_t rank = shape.size();
  NormalizedSlice slice;
  slice.starts.assign(rank, 0);
  slice.steps.assign(rank, 1);
  slice.sizes.assign(shape.begin(), shape.end());
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis =
        normalizeAxis(axes ? (*axes)[i] : static_cast<int64_t>(i), rank);
    int64_t dim = shape[axis];
    // Negative indices count from the end; both ends clamp to the dimension.
    auto clampIndex = [dim](int64_t index) {
      if (index < 0)
        index += dim;
      return std::clamp<int64_t>(index, 0, dim);
    };
    int64_t begin = clampIndex(starts[i]), end = clampIndex(ends[i]);
    int64_t step = steps ? (*steps)[i] : 1;
    slice.axes.push_back(axis);
    slice.starts[axis] = begin;
    slice.steps[axis] = step;
    slice.sizes[axis] = end > begin ? (end - begin + step - 1) / step : 0;
  }
  return slice;
}

LogicalResult
BatchPartOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.tensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  if (failed(diag.required(adaptor.getPartAttr(), "part")) ||
      failed(diag.required(adaptor.getPartsAttr(), "parts")))
    return failure();
  if (input->getRank() < 1)
    return diag.fail("needs an input with a dimension 0 (the batch)");
  int64_t part = adaptor.getPart(), parts = adaptor.getParts();
  if (parts < 1 || part < 0 || part >= parts)
    return diag.fail("part ", part, " of ", parts, ": needs 0 <= part < parts");
  SmallVector<int64_t> shape(input->getShape());
  shape[0] = partSize(shape[0], part, parts);
  inferredTypes.push_back(
      RankedTensorType::get(shape, input->getElementType()));
  return success();
}

NormalizedSlice SliceOp::getNormalizedSlice() {
  return normalizeSlice(getInput().getType().getShape(), getStarts(), getEnds(),
                        getAxes(), getSteps());
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> data =
      diag.tensor(adaptor.getData().getType(), "data");
  if (failed(data))
    return failure();
  FailureOr<RankedTensorType> indices =
      diag.indexTensor(adaptor.getIndices().getType(), "indices");
  if (failed(indices))
    return failure();
  FailureOr<int64_t> axis =
      diag.axis(static_cast<int64_t>(adaptor.getAxis()), data->getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> dims = data->getShape();
  SmallVector<int64_t> shape(dims.take_front(*axis));
  llvm::append_range(shape, indices->getShape());
  llvm::append_range(shape, dims.drop_front(*axis + 1));
  return inferred(inferredTypes, data->clone(shape));
}

LogicalResult
ScatterNdOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> data =
      diag.tensor(adaptor.getData().getType(), "data");
  FailureOr<RankedTensorType> indices =
      diag.indexTensor(adaptor.getIndices().getType(), "indices");
  FailureOr<RankedTensorType> updates =
      diag.tensor(adaptor.getUpdates().getType(), "updates");
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  ArrayRef<int64_t> idx = indices->getShape();
  if (idx.empty())
    return diag.fail("indices must have rank >= 1 (rows of index tuples)");
  int64_t k = idx.back();
  if (k < 1 || k > data->getRank())
    return diag.fail("an index tuple of ", k, " numbers does not address data ",
                     formatShape(data->getShape()));
  SmallVector<int64_t> expected(idx.drop_back());
  llvm::append_range(expected, data->getShape().drop_front(k));
  if (updates->getShape() != ArrayRef<int64_t>(expected))
    return diag.fail("updates ", formatShape(updates->getShape()),
                     " must have the shape ", formatShape(expected),
                     " (indices' rows, then data's dimensions after the ", k,
                     " indexed)");
  if (failed(diag.sameElementType(*data, "data", *updates, "updates")))
    return failure();
  if (adaptor.getReduction() != ScatterReduction::none &&
      data->getElementType().isInteger(1))
    return diag.fail("reduction ",
                     stringifyScatterReduction(adaptor.getReduction()),
                     " needs numbers, not booleans");
  return inferred(inferredTypes, *data);
}

int64_t ScatterNdOp::getIndexLength() {
  return getIndices().getType().getShape().back();
}
int64_t ScatterNdOp::getNumRows() {
  return getIndices().getType().getNumElements() /
         std::max<int64_t>(getIndexLength(), 1);
}
int64_t ScatterNdOp::getSliceElements() {
  int64_t n = 1;
  for (int64_t d : getData().getType().getShape().drop_front(getIndexLength()))
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> location,
                                 StringRef opName, Adaptor adaptor,
                                 SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, opName);
  FailureOr<RankedTensorType> input =
      diag.numericTensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  if (std::optional<ArrayRef<int64_t>> axes = adaptor.getAxes()) {
    if (axes->empty())
      return diag.fail("axes must not be empty; omit it to reduce over all "
                       "axes");
    llvm::SmallBitVector seen(rank);
    for (int64_t a : *axes) {
      FailureOr<int64_t> axis = diag.axis(a, rank);
      if (failed(axis))
        return failure();
      if (seen.test(*axis))
        return diag.fail("axis ", *axis, " is listed twice in axes ",
                         formatShape(*axes));
      seen.set(*axis);
    }
  }
  llvm::SmallBitVector reduced = reducedDimensions(adaptor.getAxes(), rank);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced.test(d))
      shape.push_back(input->getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  return inferred(inferredTypes, input->clone(shape));
}

llvm::SmallBitVector
modelc::graph::reducedDimensions(std::optional<ArrayRef<int64_t>> axes,
                                 int64_t rank) {
  llvm::SmallBitVector reduced(rank, !axes.has_value());
  if (axes)
    for (int64_t axis : *axes)
      reduced.set(normalizeAxis(axis, rank));
  return reduced;
}

LogicalResult
ReduceSumOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  return inferReduce(location, getOperationName(), adaptor, inferredTypes);
}

LogicalResult
ReduceMeanOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                               Adaptor adaptor,
                               SmallVectorImpl<Type> &inferredTypes) {
  return inferReduce(location, getOperationName(), adaptor, inferredTypes);
}

LogicalResult
ReduceMaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  return inferReduce(location, getOperationName(), adaptor, inferredTypes);
}

LogicalResult
ReduceProdOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                               Adaptor adaptor,
                               SmallVectorImpl<Type> &inferredTypes) {
  return inferReduce(location, getOperationName(), adaptor, inferredTypes);
}

LogicalResult CumsumOp::verify() {
  OpDiagnostics diag(getLoc(), getOperationName());
  return diag.axis(static_cast<int64_t>(getAxis()),
                   getInput().getType().getRank());
}

bool modelc::graph::isView(Operation *op) {
  return isa<BatchPartOp>(op) || getViewOffset(op).has_value();
}

std::optional<int64_t> modelc::graph::getViewOffset(Operation *op) {
  if (isa<ReshapeOp, FlattenOp>(op))
    return 0;
  // A dropout in eval mode (no step) is its input: no code, no buffer. It
  // stays in the IR until then (modelc-training-mode may make it drop).
  if (auto dropout = dyn_cast<DropoutOp>(op); dropout && !dropout.getStep())
    return 0;
  auto slice = dyn_cast<SliceOp>(op);
  if (!slice)
    return std::nullopt;
  // Contiguous when, past the outermost dimension the slice narrows, every
  // dimension is whole, and before it every output dimension is 1; steps 1.
  ArrayRef<int64_t> in = slice.getInput().getType().getShape();
  ArrayRef<int64_t> out = slice.getType().getShape();
  NormalizedSlice window = slice.getNormalizedSlice();
  if (llvm::any_of(window.steps, [](int64_t step) { return step != 1; }))
    return std::nullopt;
  int64_t rank = in.size();
  // An axis cut to a dimension's size (graph.dims) is narrowed at every
  // size but its max.
  auto dims = slice->getAttrOfType<ArrayAttr>(kDimsAttrName);
  auto narrowed = [&](int64_t d) {
    auto cut = dims && static_cast<int64_t>(dims.size()) == rank
                   ? dyn_cast<StringAttr>(dims[d])
                   : StringAttr();
    return in[d] != out[d] || (cut && !cut.getValue().empty());
  };
  int64_t first = rank;
  for (int64_t d = 0; d < rank; ++d)
    if (narrowed(d)) {
      first = d;
      break;
    }
  for (int64_t d = first + 1; d < rank; ++d)
    if (narrowed(d))
      return std::nullopt;
  for (int64_t d = 0; d < first; ++d)
    if (out[d] != 1)
      return std::nullopt;
  if (first == rank)
    return 0;
  int64_t stride = 1;
  for (int64_t d = first + 1; d < rank; ++d)
    stride *= in[d];
  return window.starts[first] * stride;
}

//===----------------------------------------------------------------------===//
// Cost and batch splitting (GraphInterfaces.td)
//===----------------------------------------------------------------------===//

// Data movement: no arithmetic, only the memory the cost model counts.
double TransposeOp::getFlops() { return 0; }
double ConcatOp::getFlops() { return 0; }
double SliceOp::getFlops() { return 0; }

double GatherOp::getFlops() { return 0; }
double ScatterNdOp::getFlops() {
  return static_cast<double>(getNumRows() * getSliceElements());
}

std::string ReshapeOp::whyNotSplit(llvm::function_ref<bool(Value)>,
                                   int64_t batch) {
  return leadingDim(getInput()) == batch ? ""
                                         : "it reshapes the batch dimension";
}

std::string TransposeOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return getPerm()[0] == 0 ? "" : "it moves the batch dimension";
}

std::string ConcatOp::whyNotSplit(llvm::function_ref<bool(Value)> isBatched,
                                  int64_t) {
  if (getNormalizedAxis() == 0)
    return "it concatenates along the batch";
  for (Value v : getInputs())
    if (!isBatched(v))
      return "it joins a batched tensor with one that is not";
  return "";
}

std::string SliceOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return llvm::is_contained(getNormalizedSlice().axes, 0)
             ? "it slices the batch"
             : "";
}

std::string GatherOp::whyNotSplit(llvm::function_ref<bool(Value)> isBatched,
                                  int64_t) {
  int64_t axis = getNormalizedAxis();
  if (isBatched(getData()) && axis == 0)
    return "it gathers along the batch";
  if (isBatched(getIndices()) && (axis != 0 || isBatched(getData())))
    return "it gathers batched indices from a batched table";
  return "";
}

template <typename ReduceOp> static std::string reduceWhyNotSplit(ReduceOp op) {
  return op.getReducedDims().test(0) ? "it reduces over the batch" : "";
}
double ReduceSumOp::getFlops() { return elementCount(getInput()); }
double ReduceMeanOp::getFlops() { return elementCount(getInput()); }
double ReduceMaxOp::getFlops() { return elementCount(getInput()); }
std::string ReduceSumOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return reduceWhyNotSplit(*this);
}
std::string ReduceMeanOp::whyNotSplit(llvm::function_ref<bool(Value)>,
                                      int64_t) {
  return reduceWhyNotSplit(*this);
}
std::string ReduceMaxOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return reduceWhyNotSplit(*this);
}
double ReduceProdOp::getFlops() { return elementCount(getInput()); }
std::string ReduceProdOp::whyNotSplit(llvm::function_ref<bool(Value)>,
                                      int64_t) {
  return reduceWhyNotSplit(*this);
}

double CumsumOp::getFlops() { return elementCount(getInput()); }
std::string CumsumOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return getNormalizedAxis() == 0 ? "it accumulates along the batch" : "";
}
