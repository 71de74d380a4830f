//===- Replicate.cpp - one training step per replica, summed --------------===//
//
// Data-parallel training in one process (`modelc --train --data-parallel`).
// modelc-split-batch made the entry points take one replica's part of the
// batch and the distributed training passes built the step for it, so
// everything the replicas must share is a graph.all_reduce. This pass runs
// the step once per replica, each pinned to its accelerator, and turns each
// all-reduce into the sum of the replicas' values on the host, in replica
// order. The replicas then hold the same gradients and take the same
// optimizer step, each on its device's own copy of the parameters and
// optimizer state.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Target.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace modelc {
#define GEN_PASS_DEF_REPLICATEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct ReplicatePass : modelc::impl::ReplicatePassBase<ReplicatePass> {
  using Base::Base;

  /// Each replica's device, and the host's.
  SmallVector<StringAttr> devices;
  StringAttr host;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    std::optional<TargetDescription> t = loadTarget(target, error);
    if (!t) {
      module.emitError(error);
      return signalPassFailure();
    }
    if (replicas < 1) {
      module.emitError("modelc-replicate: replicas must be at least 1");
      return signalPassFailure();
    }
    Builder builder(&getContext());
    std::vector<std::string> accelerators;
    for (const DeviceDesc &d : t->devices) {
      if (d.isHost())
        host = builder.getStringAttr(d.name());
      else
        accelerators.push_back(d.name());
    }
    if (!host) {
      module.emitError("modelc-replicate: target '")
          << t->name << "' has no host device";
      return signalPassFailure();
    }
    for (int64_t r = 0; r < replicas; ++r)
      devices.push_back(
          accelerators.empty()
              ? host
              : builder.getStringAttr(accelerators[r % accelerators.size()]));
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && failed(replicate(function)))
        return signalPassFailure();
  }

  LogicalResult replicate(func::FuncOp function) {
    Block &body = function.getBody().front();
    if (llvm::hasSingleElement(body))
      return success();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    // Values that may differ between replicas: those computed from the
    // batch other than through an all-reduce. Weights are the same on
    // every replica (each device's copy receives the same writes).
    llvm::DenseSet<Value> varies;
    for (BlockArgument arg : function.getArguments())
      if (cast<RankedTensorType>(arg.getType()).getRank() > 0)
        varies.insert(arg);
    for (Operation &op : body.without_terminator())
      if (!isa<AllReduceOp>(op) && llvm::any_of(op.getOperands(), [&](Value v) {
            return varies.contains(v);
          }))
        varies.insert(op.result_begin(), op.result_end());

    SmallVector<Operation *> original;
    for (Operation &op : body.without_terminator())
      original.push_back(&op);

    // The replicas' inputs: slices of dimension 0; scalars whole.
    OpBuilder builder(ret);
    SmallVector<IRMapping> mappings(replicas);
    for (BlockArgument arg : function.getArguments()) {
      auto type = cast<RankedTensorType>(arg.getType());
      if (type.getRank() == 0) {
        for (IRMapping &mapping : mappings)
          mapping.map(arg, arg);
        continue;
      }
      int64_t part = type.getDimSize(0);
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = part * replicas;
      arg.setType(RankedTensorType::get(shape, type.getElementType()));
      for (int64_t r = 0; r < replicas; ++r) {
        auto slice = SliceOp::create(
            builder, arg.getLoc(), arg,
            builder.getDenseI64ArrayAttr({r * part}),
            builder.getDenseI64ArrayAttr({(r + 1) * part}),
            builder.getDenseI64ArrayAttr({0}), DenseI64ArrayAttr());
        slice->setAttr(kDeviceAttrName, host);
        mappings[r].map(arg, slice.getResult());
      }
    }

    // The replicas of one device (in replica order), devices in order of
    // their first replica.
    llvm::SetVector<StringAttr> used(devices.begin(), devices.end());
    auto replicasOn = [&](StringAttr device) {
      SmallVector<int64_t> on;
      for (int64_t r = 0; r < replicas; ++r)
        if (devices[r] == device)
          on.push_back(r);
      return on;
    };

    int64_t sums = 0;
    for (Operation *op : original) {
      if (auto reduce = dyn_cast<AllReduceOp>(op)) {
        ++sums;
        // The replicas' sum on the host, in replica order, named so in
        // traces, profiles and errors.
        Location loc =
            NameLoc::get(builder.getStringAttr(
                             "replicas:all-reduce '#" + std::to_string(sums) +
                             "' summed over the replicas" +
                             describeLocation(reduce.getLoc())),
                         reduce.getLoc());
        Value sum = mappings[0].lookup(reduce.getInput());
        for (int64_t r = 1; r < replicas; ++r) {
          auto add = AddOp::create(builder, loc, sum,
                                   mappings[r].lookup(reduce.getInput()));
          add->setAttr(kDeviceAttrName, host);
          sum = add.getResult();
        }
        if (distributed) {
          auto ranks =
              AllReduceOp::create(builder, reduce.getLoc(), sum.getType(), sum);
          ranks->setAttr(kDeviceAttrName, host);
          sum = ranks.getResult();
        }
        for (IRMapping &mapping : mappings)
          mapping.map(reduce.getResult(), sum);
        continue;
      }
      if (auto assign = dyn_cast<AssignOp>(op)) {
        // One write per device, of a value that is the same on every
        // device, after every read of that device's copy.
        for (StringAttr device : used) {
          SmallVector<int64_t> on = replicasOn(device);
          int64_t source = varies.contains(assign.getValue()) ? 0 : on.front();
          llvm::SetVector<Value> after;
          for (int64_t r : on)
            for (Value v : assign.getAfter())
              after.insert(mappings[r].lookup(v));
          auto copy = AssignOp::create(
              builder, assign.getLoc(), assign.getNameAttr(),
              mappings[source].lookup(assign.getValue()), after.getArrayRef());
          copy->setAttrs(assign->getDiscardableAttrDictionary());
          copy->setAttr(kDeviceAttrName, device);
          copy->setAttr(kReplicaCopyAttrName, builder.getUnitAttr());
        }
        continue;
      }
      auto ref = dyn_cast<WeightRefOp>(op);
      bool copyOfDevice = ref && isWritableWeight(ref);
      auto dropout = dyn_cast<DropoutOp>(op);
      bool offsetMask =
          dropout && dropout.getStep() && varies.contains(dropout.getInput());
      for (int64_t r = 0; r < replicas; ++r) {
        Operation *clone = builder.clone(*op, mappings[r]);
        clone->setAttr(kDeviceAttrName, devices[r]);
        // A replica's rows start at r times its elements in the whole
        // batch: it draws the whole batch's mask for them.
        if (offsetMask)
          cast<DropoutOp>(clone).setOffset(
              dropout.getOffset() +
              r * cast<RankedTensorType>(clone->getOperand(0).getType())
                      .getNumElements());
        if (copyOfDevice)
          clone->setAttr(kReplicaCopyAttrName, builder.getUnitAttr());
      }
    }

    // Outputs: the same on every replica (replica 0's), or the batch's
    // parts concatenated.
    SmallVector<Value> results;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (!varies.contains(v)) {
        results.push_back(mappings[0].lookup(v));
        continue;
      }
      if (cast<RankedTensorType>(v.getType()).getRank() == 0)
        return ret.emitError("data-parallel training: output #")
               << i << " of '" << function.getSymName()
               << "' differs between replicas and has no batch dimension "
                  "to concatenate";
      SmallVector<Value> parts;
      for (IRMapping &mapping : mappings)
        parts.push_back(mapping.lookup(v));
      auto concat = ConcatOp::create(builder, ret.getLoc(), parts,
                                     builder.getI64IntegerAttr(0));
      concat->setAttr(kDeviceAttrName, host);
      results.push_back(concat.getResult());
    }
    ret->setOperands(results);
    // What -v and the placement report say.
    function->setAttr(
        "graph.replicas",
        builder.getDictionaryAttr(
            {builder.getNamedAttr("devices",
                                  builder.getArrayAttr(SmallVector<Attribute>(
                                      devices.begin(), devices.end()))),
             builder.getNamedAttr("host", host),
             builder.getNamedAttr("sums", builder.getI64IntegerAttr(sums))}));
    for (Operation *op : llvm::reverse(original)) {
      if (!op->use_empty())
        return op->emitError("internal error: a replicated op is still used");
      op->erase();
    }
    function.setType(FunctionType::get(function.getContext(),
                                       body.getArgumentTypes(),
                                       ret->getOperandTypes()));
    return success();
  }
};

} // namespace
