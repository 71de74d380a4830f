//===- OnnxEinsum.cpp - Einsum as transposes, reshapes and a matmul -------===//
//
// Einsum with one or two operands, each label at most once per operand (no
// diagonals) and no ellipsis: the equations attention and the usual
// contractions use ("bhid,bhjd->bhij", "bij,bjk->bik", "ij->ji", "i,i").
//   * Labels of one operand that appear nowhere else are summed away first.
//   * With two operands, the labels split into batch (both and the output),
//     contracted (both, not the output), left-only and right-only. The left
//     operand is transposed to [batch, left, contracted] and reshaped to 3-D,
//     the right one to [batch, contracted, right]; one batched matmul, then
//     a reshape and a transpose give the output's label order.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

#include <cctype>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

/// One operand: its value and a label per dimension.
struct Term {
  Value value;
  std::string labels;
};

/// Sums away the dimensions of `t` whose labels are not in `keep`.
void sumAway(At &at, Term &t, StringRef keep) {
  SmallVector<int64_t> axes;
  std::string left;
  for (auto [i, c] : llvm::enumerate(t.labels)) {
    if (keep.contains(c))
      left.push_back(c);
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return;
  t.value = at.reduce<ReduceSumOp>(t.value, axes, false);
  t.labels = left;
}

/// `t` transposed so that its labels read `order` (a permutation of them).
Value permuted(At &at, const Term &t, StringRef order) {
  SmallVector<int64_t> perm;
  for (char c : order)
    perm.push_back(t.labels.find(c));
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto p) {
    return static_cast<int64_t>(p.index()) == p.value();
  });
  return identity ? t.value : at.transpose(t.value, perm);
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p *= s;
  return p;
}

LogicalResult einsum(Importer &im, const NodeProto &n) {
  At at{im, n};
  std::string equation = Importer::stringAttr(n, "equation", "");
  equation.erase(
      llvm::remove_if(
          equation,
          [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
      equation.end());
  if (StringRef(equation).contains("...")) {
    im.error(n) << "an ellipsis ('...') in the equation is not supported yet";
    return failure();
  }
  StringRef lhs = equation, output;
  bool explicitOutput = false;
  if (size_t arrow = equation.find("->"); arrow != std::string::npos) {
    lhs = StringRef(equation).take_front(arrow);
    output = StringRef(equation).drop_front(arrow + 2);
    explicitOutput = true;
  }
  SmallVector<StringRef> specs;
  lhs.split(specs, ',');
  if (specs.size() != static_cast<size_t>(n.input_size()) || specs.empty() ||
      specs.size() > 2) {
    im.error(n) << "equation '" << equation << "' with " << n.input_size()
                << " operands is not supported (one or two operands are)";
    return failure();
  }
  // Sizes per label, checked across operands.
  llvm::DenseMap<char, int64_t> size, count;
  SmallVector<Term> terms;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    Value v = im.input(n, i);
    if (!v)
      return failure();
    ArrayRef<int64_t> shape = typeOf(v).getShape();
    if (spec.size() != shape.size()) {
      im.error(n) << "operand " << i << " has rank " << shape.size() << " but '"
                  << spec << "' names " << spec.size() << " dimensions";
      return failure();
    }
    for (auto [d, c] : llvm::enumerate(spec)) {
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        im.error(n) << "label '" << c << "' in '" << equation
                    << "' is not a letter";
        return failure();
      }
      if (spec.drop_front(d + 1).contains(c)) {
        im.error(n) << "a label repeated in one operand ('" << spec
                    << "': a diagonal) is not supported yet";
        return failure();
      }
      auto [it, fresh] = size.try_emplace(c, shape[d]);
      if (!fresh && it->second != shape[d]) {
        im.error(n) << "label '" << c << "' has sizes " << it->second << " and "
                    << shape[d];
        return failure();
      }
      ++count[c];
    }
    terms.push_back({v, spec.str()});
  }
  std::string out;
  if (explicitOutput) {
    out = output.str();
    for (auto [d, c] : llvm::enumerate(out))
      if (!size.count(c) || StringRef(out).drop_front(d + 1).contains(c)) {
        im.error(n) << "output label '" << c << "' is not an input label or "
                    << "is repeated";
        return failure();
      }
  } else {
    // Implicit output: the labels seen once, in alphabetical order.
    for (char c = 'A'; c <= 'z'; ++c)
      if (count.lookup(c) == 1)
        out.push_back(c);
  }
  if (terms.size() == 1) {
    sumAway(at, terms[0], out);
    return at.define(permuted(at, terms[0], out));
  }
  Term &a = terms[0], &b = terms[1];
  // Labels only one operand has and the output lacks are summed first.
  sumAway(at, a, out + b.labels);
  sumAway(at, b, out + a.labels);
  std::string batch, left, right, contracted;
  for (char c : a.labels) {
    bool inB = b.labels.find(c) != std::string::npos;
    bool inOut = out.find(c) != std::string::npos;
    (inB ? (inOut ? batch : contracted) : left).push_back(c);
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      right.push_back(c);
  auto sizesOf = [&](StringRef labels) {
    SmallVector<int64_t> s;
    for (char c : labels)
      s.push_back(size[c]);
    return s;
  };
  int64_t B = product(sizesOf(batch)), L = product(sizesOf(left)),
          K = product(sizesOf(contracted)), R = product(sizesOf(right));
  Value lhsMatrix =
      at.reshape(permuted(at, a, batch + left + contracted), {B, L, K});
  Value rhsMatrix =
      at.reshape(permuted(at, b, batch + contracted + right), {B, K, R});
  Value product3 = at.op<MatmulOp>({lhsMatrix, rhsMatrix});
  std::string labels = batch + left + right;
  Term result{at.reshape(product3, sizesOf(labels)), labels};
  if (!result.value)
    return failure();
  return at.define(permuted(at, result, out));
}

} // namespace

void modelc::onnx_import::addEinsumConverter(
    llvm::StringMap<NodeConverter> &t) {
  t["Einsum"] = einsum;
}
