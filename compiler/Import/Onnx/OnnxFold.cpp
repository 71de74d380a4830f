//===- OnnxFold.cpp - shape computations folded at import -----------------===//
//
// torch.onnx.export writes the shapes it reshapes to as small integer
// computations (Shape -> Gather -> Unsqueeze -> Concat -> Reshape). With
// static shapes they are constants: this file evaluates them while
// importing, so the ops that take a shape (Reshape, Slice, Expand, ...) see
// constants. A node is folded only when all its inputs are integer
// constants (or, for Shape, a value of static shape); anything else goes to
// its converter.
//
// Any other node whose inputs are all constants is converted as usual and
// then evaluated by the reference interpreter (foldConverted): its outputs
// become constants and the ops it made are erased. So whatever depends only
// on constants is a constant, whatever the ops that computed it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/Importer.h"
#include "compiler/Reference/Interpreter.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace mlir;
using namespace modelc;
using namespace modelc::onnx_import;
using onnx::NodeProto;
using IntTensor = Importer::IntTensor;

const llvm::StringSet<> &modelc::onnx_import::foldOnlyOps() {
  static const llvm::StringSet<> ops = {"Shape", "Size", "ConstantOfShape",
                                        "Range"};
  return ops;
}

namespace {

int64_t count(const IntTensor &t) {
  int64_t n = 1;
  for (int64_t d : t.dims)
    n *= d;
  return n;
}

std::optional<IntTensor> shapeOf(Importer &im, const NodeProto &n) {
  SmallVector<int64_t> dims;
  if (RankedTensorType type = im.valueType(n.input(0))) {
    dims.assign(type.getShape().begin(), type.getShape().end());
  } else if (const onnx::TensorProto *c = im.constantTensor(n.input(0))) {
    // A constant of any type (a folded float mask among them).
    dims.assign(c->dims().begin(), c->dims().end());
  } else {
    return std::nullopt;
  }
  int64_t rank = dims.size();
  auto clampAxis = [&](int64_t a) {
    a = a < 0 ? a + rank : a;
    return std::clamp<int64_t>(a, 0, rank);
  };
  int64_t start = clampAxis(Importer::intAttr(n, "start", 0));
  int64_t end = clampAxis(Importer::intAttr(n, "end", rank));
  IntTensor out;
  for (int64_t d = start; d < end; ++d)
    out.data.push_back(dims[d]);
  out.dims = {static_cast<int64_t>(out.data.size())};
  return out;
}

/// Numpy broadcasting of two integer tensors when one is a single element
/// or both have the same shape (what shape arithmetic needs).
std::optional<IntTensor> arithmetic(const IntTensor &a, const IntTensor &b,
                                    StringRef op) {
  if (a.dims != b.dims && count(a) != 1 && count(b) != 1)
    return std::nullopt;
  IntTensor out = count(a) == 1 && count(b) != 1 ? b : a;
  for (size_t i = 0; i < out.data.size(); ++i) {
    int64_t x = a.data[count(a) == 1 ? 0 : i];
    int64_t y = b.data[count(b) == 1 ? 0 : i];
    // Overflow or a division by zero (or of INT64_MIN by -1): not folded,
    // the converter builds the op.
    bool overflow = false;
    if (op == "Add")
      overflow = __builtin_add_overflow(x, y, &out.data[i]);
    else if (op == "Sub")
      overflow = __builtin_sub_overflow(x, y, &out.data[i]);
    else if (op == "Mul")
      overflow = __builtin_mul_overflow(x, y, &out.data[i]);
    else if (y == 0 || (y == -1 && x == INT64_MIN))
      overflow = true;
    else
      out.data[i] = x / y;
    if (overflow)
      return std::nullopt;
  }
  return out;
}

std::optional<IntTensor> gather(const IntTensor &data,
                                const IntTensor &indices) {
  if (data.dims.size() != 1)
    return std::nullopt;
  IntTensor out;
  out.dims = indices.dims;
  for (int64_t i : indices.data) {
    int64_t at = i < 0 ? i + data.dims[0] : i;
    if (at < 0 || at >= data.dims[0])
      return std::nullopt;
    out.data.push_back(data.data[at]);
  }
  return out;
}

std::optional<IntTensor> unsqueeze(IntTensor t, ArrayRef<int64_t> axes,
                                   bool insert) {
  if (insert) {
    int64_t rank = t.dims.size() + axes.size();
    SmallVector<int64_t> sorted;
    for (int64_t a : axes)
      sorted.push_back(a < 0 ? a + rank : a);
    llvm::sort(sorted);
    for (int64_t a : sorted) {
      if (a < 0 || a > static_cast<int64_t>(t.dims.size()))
        return std::nullopt;
      t.dims.insert(t.dims.begin() + a, 1);
    }
    return t;
  }
  SmallVector<int64_t> dims;
  int64_t rank = t.dims.size();
  for (int64_t d = 0; d < rank; ++d) {
    bool listed = axes.empty() || llvm::any_of(axes, [&](int64_t a) {
                    return (a < 0 ? a + rank : a) == d;
                  });
    if (!(listed && t.dims[d] == 1))
      dims.push_back(t.dims[d]);
  }
  t.dims = dims;
  return t;
}

/// Slice of an N-D integer constant (ONNX Slice: per listed axis, start,
/// end and a non-zero step, clamped as ONNX clamps them).
std::optional<IntTensor> sliceNd(const IntTensor &t, ArrayRef<int64_t> starts,
                                 ArrayRef<int64_t> ends, ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> steps) {
  int64_t rank = t.dims.size();
  SmallVector<int64_t> begin(rank, 0), step(rank, 1), size(t.dims);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes.empty() ? k : axes[k];
    axis = axis < 0 ? axis + rank : axis;
    int64_t st = steps.empty() ? 1 : steps[k];
    if (axis < 0 || axis >= rank || st == 0)
      return std::nullopt;
    int64_t n = t.dims[axis];
    // A step beyond the size takes one element at most; clamped so that
    // nothing below overflows.
    st = std::clamp<int64_t>(st, -(n + 1), n + 1);
    auto clampIndex = [&](int64_t i, int64_t lo, int64_t hi) {
      i = i < 0 ? i + n : i;
      return std::clamp(i, lo, hi);
    };
    // A negative step's start is clamped to [0, n - 1], its end to
    // [-1, n - 1] (ONNX).
    int64_t first =
        st > 0 ? clampIndex(starts[k], 0, n) : clampIndex(starts[k], 0, n - 1);
    int64_t last =
        st > 0 ? clampIndex(ends[k], 0, n) : clampIndex(ends[k], -1, n - 1);
    int64_t count =
        st > 0 ? (last - first + st - 1) / st : (first - last - st - 1) / -st;
    begin[axis] = first;
    step[axis] = st;
    size[axis] = std::max<int64_t>(count, 0);
  }
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * t.dims[d + 1];
  IntTensor out;
  out.dims = size;
  int64_t total = 1;
  for (int64_t d : size)
    total *= d;
  SmallVector<int64_t> at(rank, 0);
  for (int64_t k = 0; k < total; ++k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += (begin[d] + at[d] * step[d]) * strides[d];
    out.data.push_back(t.data[offset]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[d] < size[d])
        break;
      at[d] = 0;
    }
  }
  return out;
}

/// Transpose of an integer constant (default: dimensions reversed).
std::optional<IntTensor> transposeOf(const IntTensor &t,
                                     std::optional<SmallVector<int64_t>> perm) {
  int64_t rank = t.dims.size();
  if (!perm) {
    perm = SmallVector<int64_t>();
    for (int64_t d = rank - 1; d >= 0; --d)
      perm->push_back(d);
  }
  if (static_cast<int64_t>(perm->size()) != rank)
    return std::nullopt;
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * t.dims[d + 1];
  IntTensor out;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= rank || seen[p])
      return std::nullopt; // not a permutation: the converter reports it
    seen[p] = true;
    out.dims.push_back(t.dims[p]);
  }
  SmallVector<int64_t> at(rank, 0);
  for (size_t k = 0; k < t.data.size(); ++k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += at[d] * strides[(*perm)[d]];
    out.data.push_back(t.data[offset]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[d] < out.dims[d])
        break;
      at[d] = 0;
    }
  }
  return out;
}

/// ConstantOfShape: a tensor of the given shape filled with `value`'s one
/// element (a float 0 by default).
bool constantOfShape(Importer &im, const NodeProto &n, const IntTensor &shape) {
  onnx::TensorProto filled;
  const onnx::AttributeProto *value = Importer::attribute(n, "value");
  std::vector<unsigned char> element;
  int32_t dataType = onnx::TensorProto::FLOAT;
  if (value && value->has_t()) {
    std::string why;
    if (!tensorBytes(value->t(), element, why) || element.empty())
      return false;
    dataType = value->t().data_type();
  } else {
    element.assign(4, 0);
  }
  // At most 2^24 elements are made at import (a shape computation's
  // constant, not a tensor of data).
  int64_t total = 1;
  for (int64_t d : shape.data) {
    if (d < 0 || (d > 0 && total > (int64_t(1) << 24) / d))
      return false;
    total *= d;
  }
  std::string raw;
  raw.reserve(total * element.size());
  for (int64_t i = 0; i < total; ++i)
    raw.append(reinterpret_cast<const char *>(element.data()), element.size());
  filled.set_data_type(dataType);
  for (int64_t d : shape.data)
    filled.add_dims(d);
  filled.set_raw_data(raw);
  im.defineConstant(n, filled);
  return true;
}

} // namespace

/// The folds of integer tensors (shape computations) on `in`, the
/// inputs of `n` as constants.
std::optional<IntTensor> Importer::foldInts(const NodeProto &n,
                                            const SmallVector<IntTensor> &in) {
  const std::string &type = n.op_type();
  std::optional<IntTensor> out;
  if (type == "Identity") {
    out = in[0];
  } else if (type == "Cast") {
    int64_t to = intAttr(n, "to", 0);
    if (to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32) {
      out = in[0];
      out->int32 = to == onnx::TensorProto::INT32;
    }
  } else if (type == "Unsqueeze" || type == "Squeeze") {
    std::optional<SmallVector<int64_t>> axes =
        opset() < 13 ? intsAttr(n, "axes")
                     : (in.size() > 1 && hasInput(n, 1)
                            ? std::optional<SmallVector<int64_t>>(in[1].data)
                            : std::nullopt);
    if (type == "Squeeze" || axes)
      out = unsqueeze(in[0], axes.value_or(SmallVector<int64_t>{}),
                      type == "Unsqueeze");
  } else if (type == "Concat") {
    if (llvm::all_of(in,
                     [](const IntTensor &t) { return t.dims.size() == 1; })) {
      out = IntTensor{};
      for (const IntTensor &t : in)
        out->data.append(t.data.begin(), t.data.end());
      out->dims = {static_cast<int64_t>(out->data.size())};
    }
  } else if (type == "Gather") {
    if (intAttr(n, "axis", 0) == 0 && in.size() == 2)
      out = gather(in[0], in[1]);
  } else if (type == "Slice" && opset() >= 10 && in.size() >= 3) {
    ArrayRef<int64_t> axes, steps;
    if (in.size() > 3 && hasInput(n, 3))
      axes = in[3].data;
    if (in.size() > 4 && hasInput(n, 4))
      steps = in[4].data;
    size_t k = in[1].data.size();
    if (in[2].data.size() == k && (axes.empty() || axes.size() == k) &&
        (steps.empty() || steps.size() == k))
      out = sliceNd(in[0], in[1].data, in[2].data, axes, steps);
  } else if (type == "Neg" || type == "Abs") {
    out = in[0];
    for (int64_t &v : out->data) {
      if (v == std::numeric_limits<int64_t>::min()) {
        out.reset(); // its negation overflows: left to the converter
        break;
      }
      v = type == "Neg" || v < 0 ? -v : v;
    }
  } else if (type == "Transpose") {
    out = transposeOf(in[0], intsAttr(n, "perm"));
  } else if ((type == "Add" || type == "Sub" || type == "Mul" ||
              type == "Div") &&
             in.size() == 2) {
    out = arithmetic(in[0], in[1], type);
  } else if (type == "Range" && in.size() == 3) {
    int64_t start = in[0].data[0], limit = in[1].data[0], delta = in[2].data[0];
    // At most 2^24 values, and no overflow on the way.
    __int128 steps =
        delta == 0
            ? 0
            : ((__int128)limit - start + delta - (delta > 0 ? 1 : -1)) / delta;
    if (delta != 0 && steps <= (int64_t(1) << 24)) {
      out = IntTensor{};
      for (int64_t v = start; delta > 0 ? v < limit : v > limit; v += delta)
        out->data.push_back(v);
      out->dims = {static_cast<int64_t>(out->data.size())};
    }
  } else if (type == "ConstantOfShape") {
    return std::nullopt; // folded before (constantOfShape)
  } else if (type == "Reshape" && in.size() == 2) {
    SmallVector<int64_t> dims = in[1].data;
    int64_t known = 1, unknown = -1;
    bool valid = true;
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (d == 0 && i < in[0].dims.size())
        d = in[0].dims[i];
      if (d == -1)
        unknown = i;
      else if (d < 0 || __builtin_mul_overflow(known, d, &known))
        valid = false;
    }
    if (!valid)
      return std::nullopt;
    if (unknown >= 0 && known > 0)
      dims[unknown] = count(in[0]) / known;
    out = IntTensor{dims, in[0].data};
    if (count(*out) != count(in[0]))
      out.reset();
  }
  return out;
}

/// Elements that are the size of a dynamic dimension (symbolicInts): data
/// movement takes them along (the same fold on their names' indices);
/// anything that computes with them is an error at `n` (false, foldError).
bool Importer::moveSymbols(const NodeProto &n, const SmallVector<IntTensor> &in,
                           bool folded) {
  std::string dim = symbolicInput(n);
  if (dim.empty())
    return true;
  const std::string &type = n.op_type();
  if ((type == "Mul" || type == "Div") && in.size() == 2)
    return multiplySymbols(n, in, folded);
  static const llvm::StringSet<> moves = {"Identity", "Cast",      "Unsqueeze",
                                          "Squeeze",  "Concat",    "Gather",
                                          "Slice",    "Transpose", "Reshape"};
  bool onlyData = true;
  for (int i = 1; i < n.input_size(); ++i)
    onlyData &=
        type == "Concat" || !hasInput(n, i) || symbolsOf(n.input(i)).empty();
  if (!moves.contains(type) || !onlyData) {
    error(n) << "computes with the size of dynamic dimension '" << dim
             << "' (from a Shape node); not supported yet (give "
                "--input-shape for a static build)";
    foldError = true;
    return false;
  }
  std::vector<std::string> names = {""};
  SmallVector<IntTensor> marks = in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (i > 0 && type != "Concat")
      break;
    ArrayRef<std::string> symbols = symbolsOf(n.input(i));
    for (size_t k = 0; k < marks[i].data.size(); ++k) {
      std::string name = symbols.empty() ? "" : symbols[k];
      auto at = llvm::find(names, name);
      marks[i].data[k] = at - names.begin();
      if (at == names.end())
        names.push_back(name);
    }
  }
  std::optional<IntTensor> moved = foldInts(n, marks);
  if (folded && moved) {
    SmallVector<std::string> symbols;
    for (int64_t index : moved->data)
      symbols.push_back(names[index]);
    if (llvm::any_of(symbols, [](const std::string &s) { return !s.empty(); }))
      symbolicInts[n.output(0)] = symbols;
  }
  return true;
}

/// Mul and Div of sizes (symbolicInts): a product of dimensions and
/// constants stays one (`batch * 8`, `batch*8 / 2`); a division that
/// does not come out exact in every size is an error at `n`.
bool Importer::multiplySymbols(const NodeProto &n,
                               const SmallVector<IntTensor> &in, bool folded) {
  auto symbolAt = [&](int input, size_t k) {
    ArrayRef<std::string> symbols = symbolsOf(n.input(input));
    const IntTensor &t = in[input];
    size_t at = t.data.size() == 1 ? 0 : k;
    if (!symbols.empty() && !symbols[at].empty())
      return graph::SymDim::parse(&context, symbols[at]);
    return std::optional<graph::SymDim>(graph::SymDim::of(t.data[at]));
  };
  size_t count = std::max(in[0].data.size(), in[1].data.size());
  bool div = n.op_type() == "Div";
  SmallVector<std::string> symbols;
  for (size_t k = 0; k < count && folded; ++k) {
    std::optional<graph::SymDim> a = symbolAt(0, k), b = symbolAt(1, k);
    std::optional<graph::SymDim> r;
    if (a && b && !div && a->coef > 0 && b->coef > 0) {
      r = *a * *b;
    } else if (a && b && div && b->coef > 0 && a->coef % b->coef == 0) {
      // Exact when b's dimensions are among a's.
      graph::SymDim q = graph::SymDim::of(a->coef / b->coef);
      SmallVector<StringAttr, 2> left(a->dims.begin(), a->dims.end());
      bool exact = true;
      for (StringAttr d : b->dims) {
        auto *it = llvm::find(left, d);
        if (it == left.end())
          exact = false;
        else
          left.erase(it);
      }
      if (exact) {
        q.dims.assign(left.begin(), left.end());
        r = q;
      }
    }
    if (!r) {
      error(n) << "computes with the size of dynamic dimension '"
               << symbolicInput(n) << "' (from a Shape node): "
               << (div ? "a division that is not exact at every size"
                       : "a product of a size that is not positive")
               << "; not supported yet (give --input-shape for a static "
                  "build)";
      foldError = true;
      return false;
    }
    symbols.push_back(r->isStatic() ? "" : r->str());
  }
  if (folded &&
      llvm::any_of(symbols, [](const std::string &s) { return !s.empty(); }))
    symbolicInts[n.output(0)] = symbols;
  return true;
}

bool Importer::tryFold(const NodeProto &n) {
  const std::string &type = n.op_type();
  std::optional<IntTensor> out;
  if (type == "Shape") {
    out = shapeOf(*this, n);
    // The sizes of a value with dynamic dimensions are their symbolic
    // sizes (the IR holds each at its max; SymbolicShape.h).
    RankedTensorType type = valueType(n.input(0));
    std::optional<graph::SymShape> shape = symbolicShapeOf(n.input(0));
    if (type && !shape) {
      error(n) << "reads the shape of a value whose sizes do not follow "
                  "from the dynamic dimensions (an op before it takes them "
                  "in a way not supported yet: a dynamic axis it contracts, "
                  "normalizes or compares with a fixed size); not supported "
                  "yet (give --input-shape for a static build)";
      foldError = true;
      return true;
    }
    int64_t rank = type ? type.getRank() : 0;
    int64_t start = intAttr(n, "start", 0);
    if (start < 0) // shapeOf's normalisation
      start = std::max<int64_t>(0, start + rank);
    start = std::min(start, rank);
    if (out && shape && graph::hasSymbols(*shape)) {
      SmallVector<std::string> symbols;
      for (size_t k = 0; k < out->data.size(); ++k) {
        const graph::SymDim &d = (*shape)[start + k];
        symbols.push_back(d.isStatic() ? "" : d.str());
      }
      if (llvm::any_of(symbols,
                       [](const std::string &s) { return !s.empty(); }))
        symbolicInts[n.output(0)] = symbols;
    }
  } else if (type == "Size") {
    if (std::string dim = dynamicDimOf(n.input(0)); !dim.empty()) {
      // (The element count is a product of sizes; an output of it would
      // be the max's.)
      error(n) << "counts the elements of a value with dynamic dimension '"
               << dim
               << "'; not supported yet (give --input-shape for a static "
                  "build)";
      foldError = true;
      return true;
    }
    // The element count of a value of static shape: a scalar.
    RankedTensorType t = valueType(n.input(0));
    const onnx::TensorProto *c = t ? nullptr : constants.lookup(n.input(0));
    if (!t && !c)
      return false;
    int64_t elements = 1;
    if (c)
      for (int64_t d : c->dims())
        if (d < 0 || __builtin_mul_overflow(elements, d, &elements))
          return false;
    out = IntTensor{{}, {t ? t.getNumElements() : elements}};
  } else {
    SmallVector<IntTensor> in;
    for (int i = 0; i < n.input_size(); ++i) {
      if (!hasInput(n, i)) {
        in.push_back({});
        continue;
      }
      std::optional<IntTensor> c = intConstant(n.input(i));
      if (!c)
        return false;
      in.push_back(*c);
    }
    if (in.empty())
      return false;
    if (type == "ConstantOfShape") {
      if (!symbolsOf(n.input(0)).empty()) {
        error(n) << "makes a tensor of the shape of dynamic dimension '"
                 << symbolicInput(n)
                 << "' (from a Shape node); not supported yet (give "
                    "--input-shape for a static build)";
        foldError = true;
        return true;
      }
      return constantOfShape(*this, n, in[0]);
    }
    out = foldInts(n, in);
    if (!moveSymbols(n, in, out.has_value()))
      return true; // an error at the node (foldError)
  }
  if (!out)
    return false;
  // The result keeps the type of the data it came from (Shape, Size and
  // Cast set theirs above); an INT32 result that does not fit is left to
  // the converter.
  if (type != "Shape" && type != "Size" && type != "Cast") {
    std::optional<IntTensor> first = intConstant(n.input(0));
    out->int32 = first && first->int32;
  }
  if (out->int32 && llvm::any_of(out->data, [](int64_t v) {
        return v < std::numeric_limits<int32_t>::min() ||
               v > std::numeric_limits<int32_t>::max();
      }))
    return false;
  defineIntConstant(n, 0, *out);
  return true;
}

//===----------------------------------------------------------------------===//
// Any node on constants: converted, then evaluated
//===----------------------------------------------------------------------===//

namespace {

/// The largest value a node is folded to, in elements (as ConstantOfShape's
/// above).
constexpr int64_t maxFoldedElements = int64_t(1) << 24;

/// `attr` as an ONNX tensor named `name`; false for an element type ONNX
/// tensors here do not hold.
bool tensorOfAttr(DenseElementsAttr attr, const std::string &name,
                  onnx::TensorProto &out) {
  Type element = attr.getElementType();
  int32_t dataType;
  if (element.isF32())
    dataType = onnx::TensorProto::FLOAT;
  else if (element.isF16())
    dataType = onnx::TensorProto::FLOAT16;
  else if (element.isBF16())
    dataType = onnx::TensorProto::BFLOAT16;
  else if (element.isF64())
    dataType = onnx::TensorProto::DOUBLE;
  else if (element.isInteger(1))
    dataType = onnx::TensorProto::BOOL;
  else if (auto integer = dyn_cast<IntegerType>(element)) {
    bool u = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 8:
      dataType = u ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
      break;
    case 16:
      dataType = u ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
      break;
    case 32:
      dataType = u ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
      break;
    case 64:
      dataType = u ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
      break;
    default:
      return false;
    }
  } else
    return false;
  out.set_name(name);
  out.set_data_type(dataType);
  for (int64_t d : attr.getType().getShape())
    out.add_dims(d);
  std::string raw;
  if (element.isInteger(1)) {
    for (bool v : attr.getValues<bool>())
      raw.push_back(v ? 1 : 0);
  } else {
    ArrayRef<char> data = attr.getRawData();
    if (attr.isSplat())
      for (int64_t i = 0; i < attr.getNumElements(); ++i)
        raw.append(data.data(), data.size());
    else
      raw.assign(data.data(), data.size());
  }
  out.set_raw_data(raw);
  return true;
}

} // namespace

bool Importer::foldConverted(const NodeProto &node, Operation *before,
                             const llvm::StringSet<> &cachedBefore) {
  // Only a node of constants: initializers are weights (parameters a run
  // may replace), not constants, and a node without inputs is a source
  // (a random one among them).
  bool constant = false;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!hasInput(node, i))
      continue;
    if (!constants.contains(node.input(i)) ||
        initializerNames.contains(node.input(i)))
      return false;
    constant = true;
  }
  if (!constant)
    return false;
  Block &block = *builder.getInsertionBlock();
  SmallVector<Operation *> made;
  for (Operation *op = before ? before->getNextNode() : &block.front(); op;
       op = op->getNextNode())
    made.push_back(op);
  SmallVector<Operation *> evaluated;
  llvm::SmallPtrSet<Operation *, 8> inRange(made.begin(), made.end());
  SmallVector<Value> outputs;
  SmallVector<int> outputIndex;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty() || !values.lookup(node.output(i)))
      continue;
    Value v = values.lookup(node.output(i));
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    // An output that is a constant made before (Identity's): evaluated
    // first, kept.
    if (!inRange.contains(def)) {
      if (!isa<graph::ConstantOp>(def))
        return false;
      evaluated.push_back(def);
    }
    outputs.push_back(v);
    outputIndex.push_back(i);
  }
  if (outputs.empty())
    return false;
  for (Operation *op : made) {
    if (!isa<graph::ConstantOp>(op) &&
        !isFoldableOnConstants(op, maxFoldedElements))
      return false;
    evaluated.push_back(op);
  }
  FailureOr<SmallVector<DenseElementsAttr>> folded =
      foldOnConstants(evaluated, outputs);
  if (failed(folded))
    return false;
  for (auto [i, attr] : llvm::zip(outputIndex, *folded)) {
    auto tensor = std::make_unique<onnx::TensorProto>();
    if (!tensorOfAttr(attr, node.output(i), *tensor))
      return false;
    values.erase(node.output(i));
    constants[node.output(i)] = tensor.get();
    ownedConstants.push_back(std::move(tensor));
  }
  // The node's inputs that this conversion made constants of: those ops go
  // below, and a later reader makes its own.
  for (const std::string &in : node.input())
    if (!in.empty() && !cachedBefore.contains(in))
      values.erase(in);
  for (Operation *op : llvm::reverse(made))
    if (op->use_empty())
      op->erase();
  return true;
}
