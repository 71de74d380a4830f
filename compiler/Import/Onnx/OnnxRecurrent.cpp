//===- OnnxRecurrent.cpp - RNN, GRU, LSTM unrolled over the sequence ------===//
//
// ONNX's recurrent ops, unrolled over the (static) sequence length into graph
// ops. The input projection of every step is one graph.linear over the whole
// sequence ([T, B, I] x W^T + Wb); each step then adds the recurrent
// projection (graph.linear of the hidden state, + Rb) and applies the gate
// equations of the ONNX spec elementwise (which fuse into a loop per step).
// Forward, reverse and bidirectional; layout 0 and 1; initial states;
// LSTM peepholes; GRU's linear_before_reset. Not supported yet (an error):
// activations other than Sigmoid, Tanh and Relu, `clip`, LSTM's
// input_forget, sequence_lens shorter than the sequence, more than 1024
// steps.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

#include "llvm/Support/InterleavedRange.h"

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

enum class Cell { Rnn, Gru, Lstm };

/// Gates per cell: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c).
int64_t gateCount(Cell cell) {
  return cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
}

/// Activations per direction: RNN 1, GRU 2 (f, g), LSTM 3 (f, g, h).
SmallVector<std::string> defaultActivations(Cell cell) {
  if (cell == Cell::Rnn)
    return {"Tanh"};
  if (cell == Cell::Gru)
    return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

/// x[begin:end] along `axis`.
Value slice(At &at, Value x, int64_t axis, int64_t begin, int64_t end) {
  if (!x)
    return x;
  Builder &b = at.im.builder;
  return at.op<SliceOp>(
      {x}, {b.getNamedAttr("starts", b.getDenseI64ArrayAttr(begin)),
            b.getNamedAttr("ends", b.getDenseI64ArrayAttr(end)),
            b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axis))});
}

/// Direction `d` of a per-direction operand [num_directions, rest...],
/// as [rest...].
Value direction(At &at, Value x, int64_t d) {
  if (!x)
    return x;
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  return at.reshape(slice(at, x, 0, d, d + 1), shape.drop_front());
}

struct Recurrence {
  Cell cell;
  int64_t steps, batch, hidden;
  SmallVector<std::string> activations; // for this direction
  bool linearBeforeReset = false;
};

Value activate(At &at, StringRef name, Value x) {
  if (name == "Sigmoid")
    return at.op<SigmoidOp>({x});
  if (name == "Tanh")
    return at.op<TanhOp>({x});
  return at.op<ReluOp>({x});
}

/// One direction: the hidden state after each step ([T] values [B, H], in
/// sequence order), the last hidden state and (LSTM) the last cell state.
struct DirectionResult {
  SmallVector<Value> outputs;
  Value lastH, lastC;
};

DirectionResult runDirection(At &at, const Recurrence &rec, Value x, Value w,
                             Value r, Value bias, Value h, Value c,
                             Value peephole, bool reverse) {
  int64_t H = rec.hidden, G = gateCount(rec.cell), T = rec.steps;
  Value wb = bias ? slice(at, bias, 0, 0, G * H) : Value();
  Value rb = bias ? slice(at, bias, 0, G * H, 2 * G * H) : Value();
  auto linear = [&](Value in, Value weight, Value b) {
    SmallVector<Value> operands = {in, weight};
    if (b)
      operands.push_back(b);
    return at.op<LinearOp>(operands);
  };
  Value projected = linear(x, w, wb); // [T, B, G*H]
  auto gate = [&](Value v, int64_t i) {
    return slice(at, v, 1, i * H, (i + 1) * H);
  };
  ArrayRef<std::string> act = rec.activations;
  DirectionResult result;
  result.outputs.assign(T, Value());
  for (int64_t k = 0; k < T; ++k) {
    int64_t t = reverse ? T - 1 - k : k;
    Value xt =
        at.reshape(slice(at, projected, 0, t, t + 1), {rec.batch, G * H});
    Value hr = linear(h, r, rb); // [B, G*H]
    if (rec.cell == Cell::Rnn) {
      h = activate(at, act[0], at.add(xt, hr));
    } else if (rec.cell == Cell::Gru) {
      Value z = activate(at, act[0], at.add(gate(xt, 0), gate(hr, 0)));
      Value reset = activate(at, act[0], at.add(gate(xt, 1), gate(hr, 1)));
      Value candidate;
      if (rec.linearBeforeReset) {
        candidate = at.add(gate(xt, 2), at.mul(reset, gate(hr, 2)));
      } else {
        Value rh = slice(at, r, 0, 2 * H, 3 * H);
        Value rbh = rb ? slice(at, rb, 0, 2 * H, 3 * H) : Value();
        candidate = at.add(gate(xt, 2), linear(at.mul(reset, h), rh, rbh));
      }
      Value hh = activate(at, act[1], candidate);
      // (1 - z) * hh + z * h
      h = at.add(at.mul(at.sub(at.scalar(z, 1), z), hh), at.mul(z, h));
    } else {
      Value pi, po, pf;
      if (peephole) {
        pi = slice(at, peephole, 0, 0, H);
        po = slice(at, peephole, 0, H, 2 * H);
        pf = slice(at, peephole, 0, 2 * H, 3 * H);
      }
      auto withPeephole = [&](Value pre, Value p, Value state) {
        return p ? at.add(pre, at.mul(p, state)) : pre;
      };
      Value i = activate(at, act[0],
                         withPeephole(at.add(gate(xt, 0), gate(hr, 0)), pi, c));
      Value f = activate(at, act[0],
                         withPeephole(at.add(gate(xt, 2), gate(hr, 2)), pf, c));
      Value cc = activate(at, act[1], at.add(gate(xt, 3), gate(hr, 3)));
      c = at.add(at.mul(f, c), at.mul(i, cc));
      Value o = activate(at, act[0],
                         withPeephole(at.add(gate(xt, 1), gate(hr, 1)), po, c));
      h = at.mul(o, activate(at, act[2], c));
    }
    if (!h)
      return result;
    result.outputs[t] = h;
  }
  result.lastH = h;
  result.lastC = c;
  return result;
}

LogicalResult recurrent(Importer &im, const NodeProto &n, Cell cell) {
  At at{im, n};
  Value x = im.input(n, 0), w = im.input(n, 1), r = im.input(n, 2);
  if (!x || !w || !r)
    return failure();
  bool missing = false;
  auto optional = [&](int i) {
    if (!Importer::hasInput(n, i))
      return Value();
    Value v = im.input(n, i);
    missing |= !v;
    return v;
  };
  Value bias = optional(3), initialH = optional(5);
  Value initialC = cell == Cell::Lstm ? optional(6) : Value();
  Value peephole = cell == Cell::Lstm ? optional(7) : Value();
  if (missing)
    return failure();
  std::string dir = Importer::stringAttr(n, "direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") {
    im.error(n) << "direction '" << dir << "' is not supported";
    return failure();
  }
  if (Importer::attribute(n, "clip")) {
    im.error(n) << "clip is not supported yet";
    return failure();
  }
  if (cell == Cell::Lstm && Importer::intAttr(n, "input_forget", 0) != 0) {
    im.error(n) << "input_forget is not supported yet";
    return failure();
  }
  int64_t directions = dir == "bidirectional" ? 2 : 1;
  bool batchFirst = Importer::intAttr(n, "layout", 0) != 0;
  if (typeOf(x).getRank() != 3) {
    im.error(n) << "X must have rank 3";
    return failure();
  }
  if (batchFirst) {
    x = at.transpose(x, {1, 0, 2});
    if (initialH)
      initialH = at.transpose(initialH, {1, 0, 2});
    if (initialC)
      initialC = at.transpose(initialC, {1, 0, 2});
  }
  ArrayRef<int64_t> xs = typeOf(x).getShape();
  int64_t T = xs[0], B = xs[1], I = xs[2], G = gateCount(cell);
  int64_t H = Importer::intAttr(
      n, "hidden_size",
      typeOf(r).getRank() == 3 ? typeOf(r).getDimSize(2) : -1);
  auto expect = [&](Value v, ArrayRef<int64_t> shape, StringRef what) {
    if (!v || typeOf(v).getShape() == shape)
      return true;
    im.error(n) << what << " must have shape ["
                << llvm::interleaved(shape, ", ") << "]";
    return false;
  };
  if (H < 1) {
    im.error(n) << "hidden_size must be at least 1, got " << H;
    return failure();
  }
  if (!expect(w, {directions, G * H, I}, "W") ||
      !expect(r, {directions, G * H, H}, "R") ||
      !expect(bias, {directions, 2 * G * H}, "B") ||
      !expect(initialH, {directions, B, H}, "initial_h") ||
      !expect(initialC, {directions, B, H}, "initial_c") ||
      !expect(peephole, {directions, 3 * H}, "P"))
    return failure();
  if (T > 1024) {
    im.error(n) << "sequences of " << T
                << " steps are not supported yet (at most 1024; the "
                   "recurrence is unrolled)";
    return failure();
  }
  if (Importer::hasInput(n, 4)) {
    std::optional<SmallVector<int64_t>> lengths = im.constantInts(n, 4);
    if (!lengths || llvm::any_of(*lengths, [&](int64_t l) { return l != T; })) {
      im.error(n) << "sequence_lens other than the full sequence length are "
                     "not supported yet";
      return failure();
    }
  }
  SmallVector<std::string> activations;
  if (const onnx::AttributeProto *a = Importer::attribute(n, "activations"))
    activations.assign(a->strings().begin(), a->strings().end());
  size_t perDirection = defaultActivations(cell).size();
  if (activations.empty())
    for (int64_t d = 0; d < directions; ++d)
      llvm::append_range(activations, defaultActivations(cell));
  if (activations.size() != perDirection * directions) {
    im.error(n) << "activations must list " << perDirection * directions
                << " functions";
    return failure();
  }
  for (const std::string &a : activations)
    if (a != "Sigmoid" && a != "Tanh" && a != "Relu") {
      im.error(n) << "activation '" << a
                  << "' is not supported yet (Sigmoid, Tanh, Relu are)";
      return failure();
    }
  Value zeros = at.fits(B * H) ? at.constant(typeOf(x).getElementType(), {B, H},
                                             SmallVector<double>(B * H, 0.0))
                               : Value();
  if (!zeros)
    return failure();
  SmallVector<Value> ys, lastH, lastC;
  for (int64_t d = 0; d < directions; ++d) {
    Recurrence rec{cell, T, B, H, {}, false};
    rec.activations.assign(activations.begin() + d * perDirection,
                           activations.begin() + (d + 1) * perDirection);
    rec.linearBeforeReset =
        cell == Cell::Gru && Importer::intAttr(n, "linear_before_reset", 0);
    DirectionResult out = runDirection(
        at, rec, x, direction(at, w, d), direction(at, r, d),
        direction(at, bias, d), initialH ? direction(at, initialH, d) : zeros,
        initialC ? direction(at, initialC, d) : zeros,
        direction(at, peephole, d), dir == "reverse" || d == 1);
    if (!out.lastH)
      return failure();
    SmallVector<Value> steps;
    for (Value h : out.outputs)
      steps.push_back(at.reshape(h, {1, 1, B, H}));
    ys.push_back(steps.size() == 1 ? steps[0] : at.concat(steps, 0));
    lastH.push_back(at.reshape(out.lastH, {1, B, H}));
    if (out.lastC)
      lastC.push_back(at.reshape(out.lastC, {1, B, H}));
  }
  Value y = ys.size() == 1 ? ys[0] : at.concat(ys, 1);           // [T, D, B, H]
  Value yh = lastH.size() == 1 ? lastH[0] : at.concat(lastH, 0); // [D, B, H]
  Value yc = lastC.empty()       ? Value()
             : lastC.size() == 1 ? lastC[0]
                                 : at.concat(lastC, 0);
  if (batchFirst) {
    y = at.transpose(y, {2, 0, 1, 3});
    yh = at.transpose(yh, {1, 0, 2});
    if (yc)
      yc = at.transpose(yc, {1, 0, 2});
  }
  if (!y || !yh || (cell == Cell::Lstm && !yc))
    return failure();
  im.define(n, y, 0);
  im.define(n, yh, 1);
  if (yc)
    im.define(n, yc, 2);
  return success();
}

} // namespace

void modelc::onnx_import::addRecurrentConverters(
    llvm::StringMap<NodeConverter> &t) {
  t["RNN"] = [](Importer &im, const NodeProto &n) {
    return recurrent(im, n, Cell::Rnn);
  };
  t["GRU"] = [](Importer &im, const NodeProto &n) {
    return recurrent(im, n, Cell::Gru);
  };
  t["LSTM"] = [](Importer &im, const NodeProto &n) {
    return recurrent(im, n, Cell::Lstm);
  };
}
