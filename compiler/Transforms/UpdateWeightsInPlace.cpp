//===- UpdateWeightsInPlace.cpp - new weight values written in place ------===//
//
// Decides which weight updates of a training step write the new value
// straight into the weight's storage, instead of into a buffer of the arena
// that graph.assign then copies over the weight, and writes the decision
// down as `sched.writes_weight` on the loop that computes the value.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacedOn.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace modelc {
#define GEN_PASS_DEF_UPDATEWEIGHTSINPLACEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// Whether every op of `function` runs on the CPU: its ops then run one
/// after the other in the order of the body (the CPU plan), so "before" in
/// the block is "before" in time.
bool runsOnCpuAlone(func::FuncOp function) {
  bool cpu = true;
  function.getBody().front().walk([&](Operation *op) {
    if (sched::runsOnCopyStream(op) ||
        (op->hasAttr(kDeviceAttrName) &&
         sched::runningDevice(op).getKind() != device::DeviceKind::cpu)) {
      cpu = false;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return cpu;
}

/// Whether writing the new value of weight `name` into its storage while
/// `update` runs leaves every read of its old value in `body` intact: each
/// op that reads the old value (through views too) runs before `update`,
/// or is `update` itself reading element i of it for element i of the
/// result (the input's shape is the result's, through views that keep the
/// order of the elements from the first).
bool oldValueReadBefore(Block &body, StringRef name, sched::FusedOp update) {
  ArrayRef<int64_t> shape = update.getResult().getType().getShape();
  // The values that stand for the old value; `inOrder`: element i of the
  // value is element i of the weight.
  SmallVector<std::pair<Value, bool>> work;
  body.walk([&](WeightRefOp ref) {
    if (ref.getName() == name)
      work.push_back({ref.getResult(), true});
  });
  while (!work.empty()) {
    auto [value, inOrder] = work.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *reader = body.findAncestorOpInBlock(*use.getOwner());
      if (!reader)
        return false;
      if (reader == use.getOwner() && isView(reader)) {
        std::optional<int64_t> offset = getViewOffset(reader);
        work.push_back(
            {reader->getResult(0), inOrder && offset && *offset == 0});
        continue;
      }
      if (reader == update.getOperation()) {
        if (!inOrder || cast<ShapedType>(value.getType()).getShape() != shape)
          return false;
        continue;
      }
      if (!reader->isBeforeInBlock(update))
        return false;
    }
  }
  return true;
}

struct UpdateWeightsInPlacePass
    : modelc::impl::UpdateWeightsInPlacePassBase<UpdateWeightsInPlacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A plan with other devices runs even its CPU-only entry points on
    // streams, where the assign's `after` orders the write.
    if (!planIsCpuAlone(module))
      return;
    module.walk([&](func::FuncOp function) {
      if (function.isExternal() || !runsOnCpuAlone(function))
        return;
      Block &body = function.getBody().front();
      llvm::StringMap<SmallVector<AssignOp>> assigns;
      for (AssignOp assign : body.getOps<AssignOp>())
        assigns[assign.getName()].push_back(assign);
      for (auto &[name, list] : assigns) {
        if (list.size() != 1)
          continue;
        AssignOp assign = list.front();
        // ZeRO-1 across ranks: the owner's update, then the broadcast of it
        // (modelc-shard-optimizer-state). Both write into the parameter:
        // the owner's loop, then the broadcast in place, which the other
        // ranks receive there (nothing reads the old value after the loop,
        // nor in between on the ranks that skip it).
        auto broadcast = assign.getValue().getDefiningOp<OwnerBroadcastOp>();
        Value value = broadcast ? broadcast.getInput() : assign.getValue();
        auto update = value.getDefiningOp<sched::FusedOp>();
        auto weight = module.lookupSymbol<WeightOp>(assign.getNameAttr());
        // Without a broadcast, the loop and the assign run on the same
        // ranks (graph.shard): a loop every rank runs must not write state
        // that one rank holds.
        auto guard = [](Operation *op) {
          return op->getAttr(GraphDialect::kShardAttrName);
        };
        if (!update || update->getBlock() != &body || !weight ||
            weight.getType() != update.getResult().getType() ||
            update->hasAttr(sched::kWritesWeightAttrName) ||
            (!broadcast && guard(update) != guard(assign)) ||
            (broadcast &&
             (!broadcast->hasOneUse() || !update.getResult().hasOneUse() ||
              broadcast->getBlock() != &body)) ||
            !oldValueReadBefore(body, name, update))
          continue;
        update->setAttr(sched::kWritesWeightAttrName, assign.getNameAttr());
        if (broadcast)
          broadcast->setAttr(sched::kWritesWeightAttrName,
                             assign.getNameAttr());
      }
    });
  }
};

} // namespace
