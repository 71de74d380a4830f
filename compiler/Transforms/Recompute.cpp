//===- Recompute.cpp - recompute cheap forward ops in the backward --------===//
//
// In a training step the backward reads values the forward computed long
// before, and each such value is live across the whole forward/backward
// gap. An elementwise op is cheap to compute again: when every value it
// reads is live at its first backward reader anyway (or is an input, a
// constant, a weight not yet written, or itself recomputed from such
// values: a chain of up to four ops), a copy of the op placed right before
// that reader takes the backward's uses, and the forward value dies after
// its last forward reader. No value lives longer; a chain's copies are
// live together for a moment, so a copy that would raise the peak of live
// memory is undone. (PyTorch's AOTAutograd reaches the same kind of
// choice for pointwise ops with a min-cut; this is a greedy form.)
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

namespace modelc {
#define GEN_PASS_DEF_RECOMPUTEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// Program-order positions and lifetimes of one entry point's values, as
/// the memory planner sees them: a value is live from its op to its last
/// reader (a view's readers count; an output lives to the end); the
/// `after` operands of a graph.assign only order the write, they read
/// nothing.
class Lifetimes {
public:
  explicit Lifetimes(Block &block) : block(block) { renumber(); }

  void renumber() {
    position.clear();
    for (Operation &op : block)
      position[&op] = static_cast<int64_t>(position.size());
    end = static_cast<int64_t>(position.size());
  }

  int64_t at(Operation *op) const { return position.lookup(op); }

  /// The position of the last op that reads `v` (through views too).
  int64_t lastUse(Value v) const {
    int64_t last = v.getDefiningOp() ? at(v.getDefiningOp()) : 0;
    for (OpOperand &use : v.getUses()) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      if (auto assign = dyn_cast<AssignOp>(user);
          assign && &use != &assign.getValueMutable())
        continue;
      if (isa<func::ReturnOp>(user))
        last = end;
      else if (isView(user))
        last = std::max(last, lastUse(user->getResult(0)));
      else
        last = std::max(last, at(user));
    }
    return last;
  }

  /// The most bytes of op results live at once.
  uint64_t peakBytes() const {
    std::vector<int64_t> delta(end + 2, 0);
    for (Operation &op : block) {
      if (isa<WeightRefOp, ConstantOp>(op) || isView(&op))
        continue;
      for (Value r : op.getResults()) {
        auto bytes = static_cast<int64_t>(valueBytes(r));
        delta[at(&op)] += bytes;
        delta[lastUse(r) + 1] -= bytes;
      }
    }
    int64_t live = 0, peak = 0;
    for (int64_t d : delta)
      peak = std::max(peak, live += d);
    return static_cast<uint64_t>(peak);
  }

private:
  Block &block;
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t end = 0;
};

/// The value whose memory a view shares.
Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Whether `op` may be computed a second time: elementwise (or a dropout,
/// whose mask is a function of its step and site), free of side effects,
/// one tensor result of its own memory, no regions.
bool isRecomputable(Operation *op) {
  if (!(op->hasTrait<graph::Elementwise>() || isa<DropoutOp>(op)))
    return false;
  return op->getNumResults() == 1 && op->getNumRegions() == 0 && isPure(op) &&
         !isView(op) && !isa<ConstantOp>(op) &&
         valueBytes(op->getResult(0)) > 0;
}

struct RecomputePass : modelc::impl::RecomputePassBase<RecomputePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (StringRef name : {"gradients", "train_step"})
      if (auto function = module.lookupSymbol<func::FuncOp>(name);
          function && !function.isExternal())
        recompute(function);
  }

  /// The op that computes the result named `loss`: the forward ends there.
  static Operation *lossOp(func::FuncOp function) {
    auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      if (auto name = function.getResultAttrOfType<StringAttr>(i, "graph.name");
          name && name.getValue() == "loss")
        return ret.getOperand(i).getDefiningOp();
    return nullptr;
  }

  void recompute(func::FuncOp function) {
    Block &block = function.getBody().front();
    Operation *boundary = lossOp(function);
    if (!boundary)
      return;
    Lifetimes lifetimes(block);
    uint64_t before = lifetimes.peakBytes();
    // In reverse, so that an op whose copy reads an earlier op's value
    // makes that value live in the backward and may let it be recomputed.
    // Single ops first: a chain's copies cost memory at their reader.
    int64_t count = 0;
    for (unsigned chainLength : {1u, kMaxChain}) {
      maxChain = chainLength;
      SmallVector<Operation *> forward;
      for (Operation &op : block) {
        if (&op == boundary)
          break;
        forward.push_back(&op);
      }
      for (Operation *op : llvm::reverse(forward))
        if (isRecomputable(op))
          count += recomputeOne(function, op, boundary, lifetimes);
    }
    if (!count)
      return;
    OpBuilder builder(function.getContext());
    uint64_t after = lifetimes.peakBytes();
    function->setAttr(
        "graph.recompute",
        builder.getDictionaryAttr({
            builder.getNamedAttr("ops", builder.getI64IntegerAttr(count)),
            builder.getNamedAttr("peak_bytes_before",
                                 builder.getI64IntegerAttr(before)),
            builder.getNamedAttr("peak_bytes_after",
                                 builder.getI64IntegerAttr(after)),
        }));
  }

  /// The longest chain of ops copied for one value.
  static constexpr unsigned kMaxChain = 4;
  unsigned maxChain = kMaxChain;

  /// Whether `v` can be read at `first` without any value living longer:
  /// an input, a constant, a weight the step writes only after `first`
  /// (those writes go to `writes`), a value read at or after `first`
  /// anyway, or the result of a recomputable forward op whose inputs are
  /// (then the op joins `chain`, inputs first).
  bool available(func::FuncOp function, Value v, Operation *first,
                 int64_t limit, const Lifetimes &lifetimes, unsigned depth,
                 llvm::SetVector<Operation *> &chain,
                 SmallVectorImpl<AssignOp> &writes) {
    Operation *def = viewRoot(v).getDefiningOp();
    if (!def || isa<ConstantOp>(def))
      return true;
    if (auto ref = dyn_cast<WeightRefOp>(def)) {
      for (AssignOp assign : function.getOps<AssignOp>()) {
        if (assign.getName() != ref.getName())
          continue;
        if (lifetimes.at(assign) < lifetimes.at(first))
          return false;
        writes.push_back(assign);
      }
      return true;
    }
    if (lifetimes.lastUse(viewRoot(v)) >= lifetimes.at(first) ||
        chain.contains(def))
      return true;
    def = v.getDefiningOp(); // not a view's source through the view
    if (depth >= maxChain || !isRecomputable(def) || lifetimes.at(def) >= limit)
      return false;
    for (Value operand : def->getOperands())
      if (!available(function, operand, first, limit, lifetimes, depth + 1,
                     chain, writes))
        return false;
    chain.insert(def);
    return true;
  }

  /// Gives `op`'s readers after the loss a copy of `op` (and of the ops it
  /// needs, see available()) placed before the first of them. Returns the
  /// ops copied.
  int64_t recomputeOne(func::FuncOp function, Operation *op,
                       Operation *boundary, Lifetimes &lifetimes) {
    Block &block = function.getBody().front();
    int64_t limit = lifetimes.at(boundary);
    SmallVector<OpOperand *> late;
    Operation *first = nullptr;
    for (OpOperand &use : op->getResult(0).getUses()) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      // An output, a weight written, or a view (whose readers would have
      // to follow): the value stays.
      if (isa<func::ReturnOp, AssignOp>(user) || isView(user))
        return 0;
      if (lifetimes.at(user) <= limit)
        continue;
      late.push_back(&use);
      if (!first || lifetimes.at(user) < lifetimes.at(first))
        first = user;
    }
    if (late.empty())
      return 0;
    llvm::SetVector<Operation *> chain;
    SmallVector<AssignOp> writes;
    for (Value operand : op->getOperands())
      if (!available(function, operand, first, limit, lifetimes, 1, chain,
                     writes))
        return 0;
    chain.insert(op);

    uint64_t peak = lifetimes.peakBytes();
    OpBuilder builder(first);
    IRMapping copies;
    SmallVector<Operation *> made;
    for (Operation *original : chain)
      made.push_back(builder.clone(*original, copies));
    Value copy = made.back()->getResult(0);
    for (OpOperand *use : late)
      use->set(copy);
    // The write of a weight a copy reads waits for the copy too.
    SmallVector<AssignOp> waiting;
    for (AssignOp assign : writes)
      for (Operation *original : chain)
        if (llvm::any_of(original->getOperands(), [&](Value operand) {
              auto ref = viewRoot(operand).getDefiningOp<WeightRefOp>();
              return ref && ref.getName() == assign.getName();
            })) {
          assign.getAfterMutable().append(
              copies.lookup(original->getResult(0)));
          waiting.push_back(assign);
        }
    lifetimes.renumber();
    // A chain's copies are live together at `first`: where that is the
    // peak, keeping the values costs less.
    if (lifetimes.peakBytes() > peak) {
      for (AssignOp assign : llvm::reverse(waiting))
        assign.getAfterMutable().erase(assign.getAfter().size() - 1);
      for (OpOperand *use : late)
        use->set(op->getResult(0));
      for (Operation *c : llvm::reverse(made))
        c->erase();
      lifetimes.renumber();
      return 0;
    }
    if (op->use_empty()) {
      op->erase();
      lifetimes.renumber();
    }
    return static_cast<int64_t>(chain.size());
  }
};

} // namespace
