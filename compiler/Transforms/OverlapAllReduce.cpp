//===- OverlapAllReduce.cpp - all-reduces beside the backward -------------===//
//
// Splits each graph.all_reduce of a CPU plan into sched.all_reduce_start
// and sched.all_reduce_wait, the wait right before the first op that reads
// the sum, so that the runtime's communication thread sums while the ops
// between run (docs/training.md, "Data parallel (across processes)").
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacedOn.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace modelc {
#define GEN_PASS_DEF_OVERLAPALLREDUCEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// Whether `op` prints no code: a view, a weight or a constant.
bool printsNoCode(Operation *op) {
  return isView(op) || isa<WeightRefOp, ConstantOp>(op);
}

/// The ops of `body` that read `sum`: the views of it (transitively) and
/// the ops that read it or one of them (the ancestors in `body` of the
/// users), each once.
void readersOf(Block &body, Value sum, SmallVectorImpl<Operation *> &views,
               SmallVectorImpl<Operation *> &readers) {
  SmallVector<Value> work = {sum};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *op = body.findAncestorOpInBlock(*user);
      if (!op)
        continue;
      if (op == user && isView(op)) {
        if (!llvm::is_contained(views, op)) {
          views.push_back(op);
          work.push_back(op->getResult(0));
        }
      } else if (!llvm::is_contained(readers, op)) {
        readers.push_back(op);
      }
    }
  }
}

struct OverlapAllReducePass
    : modelc::impl::OverlapAllReducePassBase<OverlapAllReducePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Plans with other devices run their all-reduces on the host's stream
    // beside the replicas already.
    if (!planIsCpuAlone(module))
      return;
    module.walk([&](func::FuncOp function) {
      if (function.isExternal())
        return;
      Block &body = function.getBody().front();
      SmallVector<AllReduceOp> reduces(body.getOps<AllReduceOp>());
      int64_t slot = 0;
      for (AllReduceOp reduce : reduces)
        if (split(body, reduce, slot))
          ++slot;
    });
  }

  /// Splits `reduce` when an op that prints code runs between it and the
  /// first op that reads its sum; true when it did.
  bool split(Block &body, AllReduceOp reduce, int64_t slot) {
    // A weight's memory may be written in place (graph.assign,
    // sched.writes_weight) while the communication thread reads it: such a
    // sum stays whole.
    Value root = reduce.getInput();
    while (root.getDefiningOp() && isView(root.getDefiningOp()))
      root = root.getDefiningOp()->getOperand(0);
    if (root.getDefiningOp<WeightRefOp>())
      return false;
    SmallVector<Operation *> views, readers;
    readersOf(body, reduce.getResult(), views, readers);
    if (readers.empty())
      return false;
    Operation *first = readers.front();
    for (Operation *reader : readers)
      if (reader->isBeforeInBlock(first))
        first = reader;
    // The next op that prints code: the first reader means nothing to
    // overlap.
    Operation *next = reduce->getNextNode();
    while (next && next != first && printsNoCode(next))
      next = next->getNextNode();
    if (!next || next == first)
      return false;

    OpBuilder builder(reduce);
    auto start = sched::AllReduceStartOp::create(
        builder, reduce.getLoc(), reduce.getType(), reduce.getInput(),
        builder.getI64IntegerAttr(slot));
    for (NamedAttribute attr : reduce->getDiscardableAttrs())
      start->setAttr(attr.getName(), attr.getValue());
    builder.setInsertionPoint(first);
    auto wait = sched::AllReduceWaitOp::create(
        builder, reduce.getLoc(), reduce.getType(), start.getResult());
    if (Attribute device = reduce->getAttr(kDeviceAttrName))
      wait->setAttr(kDeviceAttrName, device);
    reduce.getResult().replaceAllUsesWith(wait.getResult());
    reduce.erase();
    // The views of the sum print no code: they move after the wait, in
    // their order.
    llvm::sort(views, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *view : views)
      if (view->isBeforeInBlock(wait))
        view->moveBefore(first);
    return true;
  }
};

} // namespace
