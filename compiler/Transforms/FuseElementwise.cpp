//===- FuseElementwise.cpp - elementwise groups as sched.fused ------------===//
//
// Decides which elementwise ops share one loop (one GPU kernel) and writes
// the decision down as `sched.fused` ops, so the printers only spell it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacedOn.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <functional>

namespace modelc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

bool isElementwise(Operation *op) { return op->hasTrait<graph::Elementwise>(); }

/// The attributes of the group's root that say where the loop runs: its
/// device, and the rank that runs it (graph.shard: every op of a group
/// serves its root alone, so they share the root's). The body's ops need
/// neither.
void moveWhere(Operation *root, Operation *fused) {
  if (Attribute device = root->getAttr(graph::kDeviceAttrName))
    fused->setAttr(graph::kDeviceAttrName, device);
  keepShardGuard(root, fused);
}
void dropWhere(Operation *op) {
  op->removeAttr(graph::kDeviceAttrName);
  op->removeAttr(graph::GraphDialect::kShardAttrName);
}

/// Whether elementwise `op` is computed inside its only user's loop: the
/// user is elementwise with the same result shape, so element i of the user
/// reads element i of `op`, and is an op of the function's body (not a
/// post-op inside a sched.packed_product, which reads `op` from memory).
bool joinsUser(Operation *op) {
  if (!isElementwise(op) || !op->getResult(0).hasOneUse())
    return false;
  Operation *user = *op->getResult(0).getUsers().begin();
  return user->getBlock() == op->getBlock() && isElementwise(user) &&
         cast<ShapedType>(user->getResult(0).getType()).getShape() ==
             cast<ShapedType>(op->getResult(0).getType()).getShape();
}

/// Whether `constant` is computed inside the loops that read it: a splat
/// of more than one element (a one-element constant is read as one
/// element anyway, and matrix-product folds look for it as an input).
bool isComputedSplat(graph::ConstantOp constant) {
  auto values = dyn_cast<DenseElementsAttr>(constant.getValue());
  return values && values.isSplat() && constant.getType().getNumElements() > 1;
}

/// The ops of the group `root` ends, operands before users, `root` last: at
/// most `maxOps` of them. A producer that would join but does not fit goes
/// to `cut` and ends a group of its own.
void collectGroup(Operation *root, unsigned maxOps,
                  SmallVectorImpl<Operation *> &group,
                  SmallVectorImpl<Operation *> &cut) {
  llvm::SmallPtrSet<Operation *, 16> seen = {root};
  unsigned budget = std::max(1u, maxOps) - 1; // the root takes one
  // Depth first, each op after the producers that join it: the depth is
  // bounded by maxOps, not by the length of a chain.
  std::function<void(Operation *)> visit = [&](Operation *op) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !joinsUser(def) || !seen.insert(def).second)
        continue;
      if (budget == 0) {
        cut.push_back(def);
        continue;
      }
      --budget;
      visit(def);
    }
    group.push_back(op);
  };
  visit(root);
}

/// Replaces the group ending at `root` with one sched.fused; the producers
/// left out by the cap go to `cut`.
void fuseGroup(Operation *root, unsigned maxOps,
               SmallVectorImpl<Operation *> &cut) {
  SmallVector<Operation *> group;
  collectGroup(root, maxOps, group, cut);
  llvm::DenseSet<Operation *> members(group.begin(), group.end());
  // The values read from outside, in the order the group first reads them,
  // but for splat constants of more than one element: the loop computes
  // those (a copy in the body) instead of reading them from memory. A
  // gradient's broadcast (a select on an all-true mask the shape of the
  // activations) would otherwise be a constant as large as the activations
  // in the library, read once per element.
  SmallVector<Value> inputs;
  SmallVector<graph::ConstantOp> splats;
  for (Operation *op : group)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && members.contains(def))
        continue;
      if (auto constant = dyn_cast_or_null<graph::ConstantOp>(def);
          constant && isComputedSplat(constant)) {
        if (!llvm::is_contained(splats, constant))
          splats.push_back(constant);
        continue;
      }
      if (!llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
    }

  OpBuilder builder(root);
  auto fused = sched::FusedOp::create(builder, root->getLoc(),
                                      root->getResult(0).getType(), inputs);
  moveWhere(root, fused);
  Block *body = builder.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (graph::ConstantOp constant : splats)
    dropWhere(builder.clone(*constant, mapping));
  for (Operation *op : group)
    dropWhere(builder.clone(*op, mapping));
  sched::YieldOp::create(builder, root->getLoc(),
                         mapping.lookup(root->getResult(0)));
  root->getResult(0).replaceAllUsesWith(fused.getResult());
  for (Operation *op : llvm::reverse(group))
    op->erase();
  for (graph::ConstantOp constant : splats)
    if (constant->use_empty())
      constant->erase();
}

/// The sched.fused whose value `reduce` (a sum or mean) computes in its own
/// loop, or null: the loop's only reader is `reduce`, both run on one host
/// device (the CPU printer spells the pair as one loop), the reduction is
/// of f32 values of static shape (the module has no dynamic dimension:
/// the caller checks), and it sums over the last axis (of 2 or
/// more elements), so each output adds runs of consecutive elements as
/// modelc_cpu::reduce would.
sched::FusedOp reductionProducer(Operation *reduce) {
  Value input = reduce->getOperand(0);
  auto producer = input.getDefiningOp<sched::FusedOp>();
  if (!producer || producer->getBlock() != reduce->getBlock() ||
      !input.hasOneUse() || deviceOf(producer) != deviceOf(reduce) ||
      onGpu(reduce))
    return {};
  auto type = cast<RankedTensorType>(input.getType());
  auto result = cast<RankedTensorType>(reduce->getResult(0).getType());
  if (!type.hasStaticShape() || type.getRank() == 0 ||
      !type.getElementType().isF32() || !result.getElementType().isF32())
    return {};
  llvm::SmallBitVector reduced =
      isa<graph::ReduceSumOp>(reduce)
          ? cast<graph::ReduceSumOp>(reduce).getReducedDims()
          : cast<graph::ReduceMeanOp>(reduce).getReducedDims();
  if (!reduced.test(type.getRank() - 1) || type.getShape().back() < 2)
    return {};
  return producer;
}

/// Replaces `reduce` and the loop `producer` that computes its input with
/// one sched.fused_reduce.
void fuseReduction(Operation *reduce, sched::FusedOp producer) {
  OpBuilder builder(reduce);
  auto fused = sched::FusedReduceOp::create(builder, reduce->getLoc(),
                                            reduce->getResult(0).getType(),
                                            producer.getInputs());
  moveWhere(reduce, fused);
  Block *body = builder.createBlock(&fused.getBody());
  IRMapping mapping;
  for (BlockArgument argument : producer.getBody().getArguments())
    mapping.map(argument,
                body->addArgument(argument.getType(), argument.getLoc()));
  for (Operation *op : producer.getBodyOps())
    builder.clone(*op, mapping);
  auto yield = cast<sched::YieldOp>(producer.getBody().front().getTerminator());
  mapping.map(producer.getResult(), mapping.lookup(yield.getValue()));
  Operation *inner = builder.clone(*reduce, mapping);
  dropWhere(inner);
  sched::YieldOp::create(builder, reduce->getLoc(), inner->getResult(0));
  reduce->getResult(0).replaceAllUsesWith(fused.getResult());
  reduce->erase();
  producer->erase();
}

struct FuseElementwisePass
    : modelc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using FuseElementwisePassBase::FuseElementwisePassBase;

  void runOnOperation() override {
    bool dynamic = !getOperation().getOps<graph::DimOp>().empty();
    getOperation().walk([&](func::FuncOp function) {
      if (function.isExternal())
        return;
      SmallVector<Operation *> roots;
      for (Operation &op : function.getBody().front())
        if (isElementwise(&op) && !joinsUser(&op))
          roots.push_back(&op);
      // A group cut by the cap continues as the group its cut producer ends.
      for (size_t i = 0; i < roots.size(); ++i) {
        SmallVector<Operation *> cut;
        fuseGroup(roots[i], maxOps, cut);
        llvm::append_range(roots, cut);
      }
      // Sizes known at run time keep the reduction apart: its kernel sizes
      // itself from the run (the fused loop is printed for static sizes).
      if (!fuseReductions || dynamic)
        return;
      SmallVector<std::pair<Operation *, sched::FusedOp>> reductions;
      for (Operation &op : function.getBody().front())
        if (isa<graph::ReduceSumOp, graph::ReduceMeanOp>(op))
          if (sched::FusedOp producer = reductionProducer(&op))
            reductions.push_back({&op, producer});
      for (auto [reduce, producer] : reductions)
        fuseReduction(reduce, producer);
    });
  }
};

} // namespace
