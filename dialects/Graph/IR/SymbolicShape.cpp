//===- SymbolicShape.cpp - sizes as products of dynamic dimensions -------===//

#include "dialects/Graph/IR/SymbolicShape.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>

using namespace mlir;

namespace modelc::graph {

//===----------------------------------------------------------------------===//
// SymDim
//===----------------------------------------------------------------------===//

SymDim SymDim::operator*(const SymDim &other) const {
  SymDim product{coef * other.coef, dims};
  product.dims.append(other.dims.begin(), other.dims.end());
  llvm::sort(product.dims, [](StringAttr a, StringAttr b) {
    return a.getValue() < b.getValue();
  });
  return product;
}

int64_t SymDim::eval(llvm::function_ref<int64_t(StringAttr)> size) const {
  int64_t value = coef;
  for (StringAttr dim : dims)
    value *= size(dim);
  return value;
}

std::string SymDim::str() const {
  std::string text;
  for (StringAttr dim : dims)
    text += (text.empty() ? "" : "*") + dim.getValue().str();
  if (coef != 1 || text.empty())
    text += (text.empty() ? "" : "*") + std::to_string(coef);
  return text;
}

std::optional<SymDim> SymDim::parse(MLIRContext *context, StringRef text) {
  SymDim result;
  SmallVector<StringRef> factors;
  text.split(factors, '*');
  for (StringRef factor : factors) {
    factor = factor.trim();
    int64_t value;
    if (factor.empty())
      return std::nullopt;
    if (!factor.getAsInteger(10, value)) {
      if (value < 1)
        return std::nullopt;
      result.coef *= value;
    } else {
      result = result * SymDim::named(StringAttr::get(context, factor));
    }
  }
  return result;
}

std::string dimPartName(StringRef base, int64_t index, int64_t parts) {
  return (base + "[" + Twine(index) + "/" + Twine(parts) + "]").str();
}

std::optional<DimPart> parseDimPart(StringRef name) {
  if (!name.ends_with("]"))
    return std::nullopt;
  size_t open = name.rfind('[');
  if (open == StringRef::npos || open == 0)
    return std::nullopt;
  auto [index, parts] = name.slice(open + 1, name.size() - 1).split('/');
  DimPart part;
  part.base = name.take_front(open);
  if (index.getAsInteger(10, part.index) ||
      parts.getAsInteger(10, part.parts) || part.parts < 1 || part.index < 0 ||
      part.index >= part.parts)
    return std::nullopt;
  return part;
}

int64_t partSize(int64_t size, int64_t index, int64_t parts) {
  return size / parts + (index < size % parts ? 1 : 0);
}

int64_t partOffset(int64_t size, int64_t index, int64_t parts) {
  return index * (size / parts) + std::min(index, size % parts);
}

int64_t SymbolicShapes::sizeOf(StringAttr dim) const {
  if (auto it = sizes.find(dim); it != sizes.end())
    return it->second;
  if (std::optional<DimPart> part = parseDimPart(dim.getValue()))
    return partSize(sizeOf(StringAttr::get(dim.getContext(), part->base)),
                    part->index, part->parts);
  return 0;
}

SymShape staticShape(ArrayRef<int64_t> shape) {
  SymShape result;
  for (int64_t size : shape)
    result.push_back(SymDim::of(size));
  return result;
}

bool hasSymbols(ArrayRef<SymDim> shape) {
  return llvm::any_of(shape, [](const SymDim &d) { return !d.isStatic(); });
}

bool onlyLeading(ArrayRef<SymDim> shape) {
  return shape.empty() || !hasSymbols(shape.drop_front());
}

std::string describe(ArrayRef<SymDim> shape) {
  std::string text = "[";
  for (auto [index, dim] : llvm::enumerate(shape))
    text += (index ? ", " : "") + dim.str();
  return text + "]";
}

std::string broadcastSymbolic(ArrayRef<SymShape> operands, SymShape &result) {
  size_t rank = 0;
  for (const SymShape &shape : operands)
    rank = std::max(rank, shape.size());
  result.assign(rank, SymDim::of(1));
  for (size_t axis = 0; axis < rank; ++axis) {
    std::optional<SymDim> size;
    for (const SymShape &shape : operands) {
      if (shape.size() + axis < rank)
        continue;
      const SymDim &dim = shape[shape.size() + axis - rank];
      if (dim.isStatic() && dim.coef == 1)
        continue; // broadcasts
      if (!size) {
        size = dim;
      } else if (*size != dim) {
        return "sizes " + size->str() + " and " + dim.str() + " (axis " +
               std::to_string(axis) + " of the result) cannot be proved equal";
      }
    }
    if (size)
      result[axis] = *size;
  }
  return "";
}

std::string reshapeSymbolic(ArrayRef<SymDim> input, ArrayRef<int64_t> shape,
                            llvm::function_ref<int64_t(StringAttr)> size,
                            SymShape &result) {
  result = staticShape(shape);
  size_t i = 0, j = 0;
  auto unit = [](const SymDim &d) { return d.isStatic() && d.coef == 1; };
  while (true) {
    while (i < input.size() && unit(input[i]))
      ++i;
    // A dimension at size 1 (a max of 1, or a size evaluated) goes to the
    // axis of size 1 where it stands, not into the next group.
    if (i < input.size() && !input[i].isStatic() && input[i].eval(size) == 1 &&
        j < shape.size() && shape[j] == 1) {
      result[j++] = input[i++];
      continue;
    }
    while (j < shape.size() && shape[j] == 1)
      ++j;
    if (i == input.size() || j == shape.size())
      break;
    // The smallest run of input axes and output axes with equal sizes.
    size_t i1 = i + 1, j1 = j + 1;
    int64_t in = input[i].eval(size), out = shape[j];
    while (in != out) {
      if (in < out && i1 < input.size())
        in *= input[i1++].eval(size);
      else if (in > out && j1 < shape.size())
        out *= shape[j1++];
      else
        return "its shape does not regroup the operand's axes";
    }
    SymDim group = SymDim::of(1);
    SmallVector<StringAttr> order; // the group's dimensions, outer first
    for (size_t a = i; a < i1; ++a) {
      group = group * input[a];
      order.append(input[a].dims.begin(), input[a].dims.end());
    }
    if (!group.isStatic()) {
      SmallVector<int64_t> left(shape.begin() + j, shape.begin() + j1);
      SmallVector<SmallVector<StringAttr, 2>> given(j1 - j);
      for (StringAttr dim : order) {
        int64_t value = size(dim);
        auto *it = llvm::find_if(
            left, [&](int64_t s) { return value > 0 && s % value == 0; });
        if (it == left.end())
          return "dimension '" + dim.getValue().str() +
                 "' divides no axis of its shape's group";
        *it /= value;
        given[it - left.begin()].push_back(dim);
      }
      for (size_t k = 0; k < left.size(); ++k) {
        SymDim dim = SymDim::of(left[k]);
        for (StringAttr d : given[k])
          dim = dim * SymDim::named(d);
        result[j + k] = dim;
      }
    }
    i = i1;
    j = j1;
  }
  for (; i < input.size(); ++i)
    if (!unit(input[i]))
      return "its shape does not regroup the operand's axes";
  return "";
}

//===----------------------------------------------------------------------===//
// The ops' rules (SymbolicShapeOpInterface)
//===----------------------------------------------------------------------===//

namespace {
/// The dimension whose parts `operands` hold at `axis`, each once and in
/// order ("batch[0/2]", "batch[1/2]" join into "batch"); else nullopt.
std::optional<SymDim> joinedParts(ArrayRef<SymShape> operands, int64_t axis) {
  std::optional<StringRef> base;
  for (auto [index, shape] : llvm::enumerate(operands)) {
    const SymDim &d = shape[axis];
    if (d.coef != 1 || d.dims.size() != 1)
      return std::nullopt;
    std::optional<DimPart> part = parseDimPart(d.dims[0].getValue());
    if (!part || part->index != static_cast<int64_t>(index) ||
        part->parts != static_cast<int64_t>(operands.size()) ||
        (base && *base != part->base))
      return std::nullopt;
    base = part->base;
  }
  if (!base)
    return std::nullopt;
  return SymDim::named(
      StringAttr::get(operands[0][axis].dims[0].getContext(), *base));
}

/// Why `dim`, which `what` needs static, is not; "" when it is.
std::string needStatic(const SymDim &dim, StringRef what) {
  if (dim.isStatic())
    return "";
  return (what + " is dynamic (" + dim.str() + ")").str();
}
} // namespace

std::string MatmulOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                         function_ref<int64_t(StringAttr)>,
                                         SymShape &result) {
  const SymShape &a = operands[0], &b = operands[1];
  if (a[a.size() - 1] != b[b.size() - 2])
    return "the contracted sizes " + a.back().str() + " and " +
           b[b.size() - 2].str() + " cannot be proved equal";
  SymShape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  if (std::string why = broadcastSymbolic({batchA, batchB}, result);
      !why.empty())
    return "batch " + why;
  result.push_back(a[a.size() - 2]);
  result.push_back(b.back());
  return "";
}

std::string LinearOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                         function_ref<int64_t(StringAttr)>,
                                         SymShape &result) {
  const SymShape &x = operands[0];
  for (const SymShape &parameter : operands.drop_front())
    if (hasSymbols(parameter))
      return "its weight or bias has a dynamic dimension";
  if (std::string why = needStatic(x.back(), "the contracted axis");
      !why.empty())
    return why;
  result.assign(x.begin(), x.end() - 1);
  result.push_back(operands[1][0]);
  return "";
}

std::string SoftmaxOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                          function_ref<int64_t(StringAttr)>,
                                          SymShape &result) {
  result = operands[0];
  return "";
}

std::string LogSoftmaxOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                             function_ref<int64_t(StringAttr)>,
                                             SymShape &result) {
  result = operands[0];
  return "";
}

std::string LayerNormOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                            function_ref<int64_t(StringAttr)>,
                                            SymShape &result) {
  const SymShape &x = operands[0];
  for (size_t axis = getNormalizedAxis(); axis < x.size(); ++axis)
    if (std::string why =
            needStatic(x[axis], "the normalized axis " + std::to_string(axis));
        !why.empty())
      return why;
  result = x;
  return "";
}

std::string TransposeOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                            function_ref<int64_t(StringAttr)>,
                                            SymShape &result) {
  result.clear();
  for (int64_t axis : getPerm())
    result.push_back(operands[0][axis]);
  return "";
}

std::string
ReshapeOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                              function_ref<int64_t(StringAttr)> size,
                              SymShape &result) {
  ArrayRef<int64_t> shape = getResult().getType().getShape();
  // The grouping written by an earlier inference (or the model): exact at
  // every size, where the regrouping by sizes can be ambiguous.
  if (auto dims = (*this)->getAttrOfType<ArrayAttr>(kDimsAttrName)) {
    if (dims.size() != shape.size())
      return "its graph.dims has " + std::to_string(dims.size()) +
             " entries for a result of rank " + std::to_string(shape.size());
    result.clear();
    for (auto [axis, attr] : llvm::enumerate(dims)) {
      auto text = dyn_cast<StringAttr>(attr);
      std::optional<SymDim> dim =
          !text ? std::nullopt
          : text.getValue().empty()
              ? std::optional<SymDim>(SymDim::of(shape[axis]))
              : SymDim::parse(getContext(), text.getValue());
      if (!dim)
        return "its graph.dims entry " + std::to_string(axis) +
               " is not a product of sizes and dimension names";
      result.push_back(*dim);
    }
    SymDim in = SymDim::of(1), out = SymDim::of(1);
    for (const SymDim &d : operands[0])
      in = in * d;
    for (const SymDim &d : result)
      out = out * d;
    if (in != out)
      return "its graph.dims " + describe(result) + " has other elements (" +
             out.str() + ") than its operand " + describe(operands[0]) + " (" +
             in.str() + ")";
    return "";
  }
  return reshapeSymbolic(operands[0], shape, size, result);
}

std::string ConcatOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                         function_ref<int64_t(StringAttr)>,
                                         SymShape &result) {
  int64_t axis = getNormalizedAxis();
  result = operands[0];
  // The parts of a dimension, all in order (modelc-data-parallel's
  // outputs), join into the dimension.
  if (std::optional<SymDim> whole = joinedParts(operands, axis)) {
    for (const SymShape &shape : operands)
      for (size_t a = 0; a < shape.size(); ++a)
        if (static_cast<int64_t>(a) != axis && shape[a] != result[a])
          return "sizes " + result[a].str() + " and " + shape[a].str() +
                 " (axis " + std::to_string(a) + ") cannot be proved equal";
    result[axis] = *whole;
    return "";
  }
  int64_t joined = 0;
  for (const SymShape &shape : operands) {
    if (std::string why = needStatic(shape[axis], "the joined axis");
        !why.empty())
      return why;
    joined += shape[axis].coef;
    for (size_t a = 0; a < shape.size(); ++a)
      if (static_cast<int64_t>(a) != axis && shape[a] != result[a])
        return "sizes " + result[a].str() + " and " + shape[a].str() +
               " (axis " + std::to_string(a) + ") cannot be proved equal";
  }
  result[axis] = SymDim::of(joined);
  return "";
}

std::string SliceOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                        function_ref<int64_t(StringAttr)> size,
                                        SymShape &result) {
  NormalizedSlice slice = getNormalizedSlice();
  result = operands[0];
  // graph.dims: sliced axes cut to a dimension's size (ONNX's Slice to
  // `x.size(1)`, Range of it): from 0, step 1, at most the axis's size.
  auto dims = (*this)->getAttrOfType<ArrayAttr>(kDimsAttrName);
  if (dims && dims.size() != result.size())
    return "its graph.dims has " + std::to_string(dims.size()) +
           " entries for " + std::to_string(result.size()) + " axes";
  for (int64_t axis : slice.axes) {
    auto text = dims ? dyn_cast<StringAttr>(dims[axis]) : StringAttr();
    if (text && !text.getValue().empty()) {
      std::optional<SymDim> d = SymDim::parse(getContext(), text.getValue());
      if (!d)
        return "its graph.dims entry " + std::to_string(axis) +
               " is not a product of sizes and dimension names";
      if (slice.starts[axis] != 0 || slice.steps[axis] != 1)
        return "it cuts axis " + std::to_string(axis) + " to " + d->str() +
               " from another start than 0 or in steps";
      // Within the axis at every size: a static axis at least the cut's
      // max, or the same dimension.
      const SymDim &in = operands[0][axis];
      if (in.isStatic() ? d->eval(size) > in.coef : in != *d)
        return "it cuts axis " + std::to_string(axis) + " (" + in.str() +
               ") to " + d->str() + ", which can be longer";
      result[axis] = *d;
      continue;
    }
    if (std::string why =
            needStatic(result[axis], "the sliced axis " + std::to_string(axis));
        !why.empty())
      return why;
    result[axis] = SymDim::of(slice.sizes[axis]);
  }
  return "";
}

std::string BatchPartOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                            function_ref<int64_t(StringAttr)>,
                                            SymShape &result) {
  result = operands[0];
  const SymDim &batch = result[0];
  if (batch.isStatic()) {
    result[0] = SymDim::of(partSize(batch.coef, getPart(), getParts()));
    return "";
  }
  if (batch.coef != 1 || batch.dims.size() != 1)
    return "dimension 0 (" + batch.str() +
           ") is not one dimension, which a part of the batch needs";
  result[0] = SymDim::named(
      StringAttr::get(getContext(), dimPartName(batch.dims[0].getValue(),
                                                getPart(), getParts())));
  return "";
}

std::string GatherOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                         function_ref<int64_t(StringAttr)>,
                                         SymShape &result) {
  const SymShape &data = operands[0], &indices = operands[1];
  int64_t axis = getNormalizedAxis();
  if (std::string why = needStatic(data[axis], "the gathered axis");
      !why.empty())
    return why;
  result.assign(data.begin(), data.begin() + axis);
  result.append(indices.begin(), indices.end());
  result.append(data.begin() + axis + 1, data.end());
  return "";
}

namespace {
/// A reduction's result: the kept axes, the reduced ones dropped or 1.
template <typename ReduceOpTy>
std::string reduceSymbolic(ReduceOpTy op, ArrayRef<SymShape> operands,
                           SymShape &result) {
  llvm::SmallBitVector reduced = op.getReducedDims();
  result.clear();
  for (auto [axis, dim] : llvm::enumerate(operands[0]))
    if (!reduced[axis])
      result.push_back(dim);
    else if (op.getKeepdims())
      result.push_back(SymDim::of(1));
  return "";
}
} // namespace

std::string ReduceSumOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                            function_ref<int64_t(StringAttr)>,
                                            SymShape &result) {
  return reduceSymbolic(*this, operands, result);
}
std::string ReduceMeanOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                             function_ref<int64_t(StringAttr)>,
                                             SymShape &result) {
  return reduceSymbolic(*this, operands, result);
}
std::string ReduceMaxOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                            function_ref<int64_t(StringAttr)>,
                                            SymShape &result) {
  return reduceSymbolic(*this, operands, result);
}
std::string ReduceProdOp::inferSymbolicShape(ArrayRef<SymShape> operands,
                                             function_ref<int64_t(StringAttr)>,
                                             SymShape &result) {
  return reduceSymbolic(*this, operands, result);
}

//===----------------------------------------------------------------------===//
// inferSymbolicShapes
//===----------------------------------------------------------------------===//

namespace {

struct Inference {
  SymbolicShapes &state;
  std::optional<LeadingCheck> leading;
  bool emitErrors;

  SymShape shapeOf(Value v) const {
    if (const SymShape *shape = state.lookup(v))
      return *shape;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type ? staticShape(type.getShape()) : SymShape();
  }

  LogicalResult fail(Operation *op, const Twine &why) {
    if (emitErrors)
      op->emitError(why);
    return failure();
  }

  /// Records `shape` for `v` after checking it against v's type.
  LogicalResult record(Operation *op, Value v, const SymShape &shape) {
    auto type = cast<RankedTensorType>(v.getType());
    auto size = [&](StringAttr d) { return state.sizeOf(d); };
    bool agrees = static_cast<int64_t>(shape.size()) == type.getRank();
    for (size_t a = 0; agrees && a < shape.size(); ++a)
      agrees = shape[a].eval(size) == type.getDimSize(a);
    if (!agrees)
      return fail(op, "internal error: the symbolic shape " + describe(shape) +
                          " of a result of '" + op->getName().getStringRef() +
                          "' disagrees with its type");
    if (hasSymbols(shape))
      state.shapes[v] = shape;
    return success();
  }

  LogicalResult visitBlock(Block &block) {
    for (Operation &op : block)
      if (failed(visit(&op)))
        return failure();
    return success();
  }

  LogicalResult visit(Operation *op) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      return success();
    // The operands read by the op or inside its regions.
    bool symbolic = false, leadingOnly = true;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (const SymShape *shape = state.lookup(v)) {
          symbolic = true;
          leadingOnly &= onlyLeading(*shape);
        }
    });
    // (A slice to a dimension's size, graph.dims, may read a static value:
    // a positions table cut to the sequence.)
    if (!symbolic && !(isa<SliceOp>(op) && op->hasAttr(kDimsAttrName)))
      return success();
    auto size = [&](StringAttr d) { return state.sizeOf(d); };
    std::string what = "dynamic dimensions cannot flow through '" +
                       op->getName().getStringRef().str() + "': ";
    std::optional<SymDim> leadingDim;
    if (leadingOnly)
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (const SymShape *shape = state.lookup(v); shape && !leadingDim)
            leadingDim = (*shape)[0];
      });
    if (leadingDim)
      what = "dynamic dimension '" + leadingDim->str() + "' (axis 0, up to " +
             std::to_string(leadingDim->eval(size)) +
             ") cannot flow through '" + op->getName().getStringRef().str() +
             "': ";
    if (op->getNumRegions() == 1 && op->getNumResults() == 1 &&
        op->getRegion(0).hasOneBlock()) {
      // A group of ops (sched.fused, sched.gemm, ...): its body's values,
      // its block's arguments being its operands.
      Block &body = op->getRegion(0).front();
      if (body.getNumArguments() == op->getNumOperands())
        for (auto [arg, operand] :
             llvm::zip(body.getArguments(), op->getOperands()))
          if (const SymShape *shape = state.lookup(operand))
            state.shapes[arg] = *shape;
      if (failed(visitBlock(body)))
        return failure();
      Operation *yield = body.getTerminator();
      if (yield->getNumOperands() != 1)
        return fail(op, what + "its body does not yield one value");
      return record(op, op->getResult(0), shapeOf(yield->getOperand(0)));
    }
    if (op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return fail(op, what + "it does not have exactly one tensor result");
    auto carries = [&](Value v) { return state.lookup(v) != nullptr; };
    SmallVector<SymShape> operands;
    for (Value v : op->getOperands())
      operands.push_back(shapeOf(v));
    // Where only dimensions 0 flow in and out, the first back ends'
    // condition holds too: the op keeps samples apart (its reasons name
    // the batch, and come first where the op's rule fails as well).
    auto leadingCheck = [&]() -> std::string {
      // A reshape is a view: whatever product of dimensions its dimension
      // 0 becomes, every size of it stays proportional to that. A batch
      // part's dimension 0 is a dimension of its own (its rule).
      if (!leadingDim || !leading || isa<ReshapeOp, BatchPartOp>(op))
        return "";
      // Neither are the parts of a batch, joined in order.
      if (auto concat = dyn_cast<ConcatOp>(op);
          concat && joinedParts(operands, concat.getNormalizedAxis()))
        return "";
      return (*leading)(op, *leadingDim, carries);
    };
    auto ruleFailed = [&](const std::string &why) {
      std::string first = leadingCheck();
      return fail(op,
                  what + (first.empty() ? why : first) + "; not supported yet");
    };
    SymShape result;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    bool ruled = true;
    if (auto rule = dyn_cast<SymbolicShapeOpInterface>(op)) {
      if (std::string why = rule.inferSymbolicShape(operands, size, result);
          !why.empty())
        return ruleFailed(why);
    } else if (op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
               op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
               op->hasTrait<Elementwise>()) {
      // (Elementwise ops; device.transfer and unary ops share their
      // operands' shape.)
      if (std::string why = broadcastSymbolic(operands, result); !why.empty())
        return ruleFailed(why);
    } else {
      ruled = false;
    }
    if (ruled) {
      // A result with a dimension beyond axis 0 is computed at the run's
      // sizes throughout (the back ends' second path).
      if (onlyLeading(result))
        if (std::string why = leadingCheck(); !why.empty())
          return fail(op, what + why + "; not supported yet");
    } else {
      if (std::string why = leadingCheck(); !why.empty())
        return fail(op, what + why + "; not supported yet");
      // No rule: only a dimension 0, carried to the result's.
      std::optional<SymDim> dim;
      for (const SymShape &shape : operands)
        if (hasSymbols(shape)) {
          if (!onlyLeading(shape) || (dim && *dim != shape[0]))
            return fail(op, what + "modelc does not know how it treats "
                                   "dimensions beyond axis 0 yet; not "
                                   "supported yet");
          dim = shape[0];
        }
      if (!dim)
        return fail(op, what + "it reads them inside a region; not supported "
                               "yet");
      if (type.getRank() == 0 || type.getDimSize(0) != dim->eval(size))
        return fail(op, what + "its result does not keep the dimension as its "
                               "dimension 0; not supported yet");
      result = staticShape(type.getShape());
      result[0] = *dim;
      return record(op, op->getResult(0), result);
    }
    return record(op, op->getResult(0), result);
  }
};

} // namespace

FailureOr<SymbolicShapes>
inferSymbolicShapes(func::FuncOp function, bool emitErrors,
                    std::optional<LeadingCheck> leading) {
  SymbolicShapes state;
  if (function.isExternal())
    return state;
  for (auto [index, arg] : llvm::enumerate(function.getArguments())) {
    auto dims = function.getArgAttrOfType<ArrayAttr>(index, kDimsAttrName);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!dims || !type || static_cast<int64_t>(dims.size()) != type.getRank())
      continue;
    SymShape shape = staticShape(type.getShape());
    for (auto [axis, attr] : llvm::enumerate(dims)) {
      auto name = dyn_cast<StringAttr>(attr);
      if (!name || name.getValue().empty())
        continue;
      shape[axis] = SymDim::named(name);
      auto [it, inserted] =
          state.sizes.try_emplace(name, type.getDimSize(axis));
      if (!inserted && it->second != type.getDimSize(axis)) {
        if (emitErrors)
          emitError(arg.getLoc())
              << "argument #" << index << " of '" << function.getSymName()
              << "' has dimension '" << name.getValue() << "' of size "
              << type.getDimSize(axis) << " at axis " << axis
              << ", another argument " << it->second;
        return failure();
      }
    }
    if (hasSymbols(shape))
      state.shapes[arg] = shape;
  }
  if (state.shapes.empty())
    return state;
  Inference inference{state, leading, emitErrors};
  if (failed(inference.visitBlock(function.getBody().front())))
    return failure();
  return state;
}

LogicalResult specializeDims(ModuleOp module,
                             ArrayRef<std::pair<StringRef, int64_t>> sizes) {
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal())
      continue;
    FailureOr<SymbolicShapes> shapes = inferSymbolicShapes(function);
    if (failed(shapes))
      return failure();
    if (shapes->shapes.empty())
      continue;
    std::function<int64_t(StringAttr)> size = [&](StringAttr dim) {
      for (auto [name, value] : sizes)
        if (name == dim.getValue())
          return value;
      if (std::optional<DimPart> part = parseDimPart(dim.getValue()))
        return partSize(size(StringAttr::get(module.getContext(), part->base)),
                        part->index, part->parts);
      return shapes->sizeOf(dim);
    };
    Builder builder(module.getContext());
    auto retype = [&](Value v, const SymShape &shape) {
      SmallVector<int64_t> dims;
      for (const SymDim &d : shape)
        dims.push_back(d.eval(size));
      auto type = cast<RankedTensorType>(v.getType());
      v.setType(RankedTensorType::get(dims, type.getElementType()));
    };
    function.walk([&](Operation *op) {
      for (Value result : op->getResults())
        if (const SymShape *shape = shapes->lookup(result)) {
          if (auto reshape = dyn_cast<ReshapeOp>(op)) {
            SmallVector<Attribute> dims;
            for (const SymDim &d : *shape)
              dims.push_back(
                  builder.getStringAttr(d.isStatic() ? "" : d.str()));
            reshape->setAttr(kDimsAttrName, builder.getArrayAttr(dims));
          }
          if (auto slice = dyn_cast<SliceOp>(op);
              slice && slice->hasAttr(kDimsAttrName)) {
            // Its cut axes end at their new size.
            NormalizedSlice window = slice.getNormalizedSlice();
            SmallVector<int64_t> ends(slice.getEnds());
            auto dims = slice->getAttrOfType<ArrayAttr>(kDimsAttrName);
            for (auto [i, axis] : llvm::enumerate(window.axes))
              if (!cast<StringAttr>(dims[axis]).getValue().empty())
                ends[i] = (*shape)[axis].eval(size);
            slice.setEnds(ends);
          }
          retype(result, *shape);
          if (auto reshape = dyn_cast<ReshapeOp>(op))
            reshape.setShape(reshape.getResult().getType().getShape());
        }
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (const SymShape *shape = shapes->lookup(arg))
              retype(arg, *shape);
    });
    for (BlockArgument arg : function.getArguments())
      if (const SymShape *shape = shapes->lookup(arg))
        retype(arg, *shape);
    function.setType(FunctionType::get(
        module.getContext(), function.getBody().getArgumentTypes(),
        function.getBody().front().getTerminator()->getOperandTypes()));
  }
  return success();
}

} // namespace modelc::graph
