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
#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

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
  /// The devices in order of their first replica, and that replica.
  llvm::SetVector<StringAttr> used;
  llvm::DenseMap<StringAttr, int64_t> firstReplica;
  /// The trained parameters (`gradients`' graph.parameters) and, with
  /// shard-optimizer-state, the device that updates each.
  llvm::StringSet<> parameters;
  llvm::StringMap<StringAttr> owner;
  /// Per optimizer state or other written weight that is not a parameter:
  /// the devices that read it (where its copy is written).
  llvm::StringMap<llvm::SetVector<StringAttr>> readOn;

  /// What one entry point's replication needs to know.
  struct Entry {
    func::FuncOp function;
    SmallVector<Operation *> original;
    /// Values that may differ between replicas: computed from the batch
    /// other than through an all-reduce. Weights are the same on every
    /// replica (each device's copy receives the same writes).
    llvm::DenseSet<Value> varies;
    /// The devices an op that is the same on every replica is computed
    /// on (once per device): where something reads it.
    llvm::DenseMap<Operation *, llvm::SetVector<StringAttr>> needed;
  };

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<TargetDescription> t = loadTarget(target, module);
    if (!t)
      return signalPassFailure();
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
    for (auto [r, device] : llvm::enumerate(devices))
      if (used.insert(device))
        firstReplica[device] = r;
    if (failed(chooseOwners(module)))
      return signalPassFailure();

    std::vector<Entry> entries;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal() ||
          llvm::hasSingleElement(function.getBody().front()))
        continue;
      Entry &e = entries.emplace_back();
      e.function = function;
      Block &body = function.getBody().front();
      e.varies = valuesOfTheBatch(function);
      for (Operation &op : body.without_terminator())
        e.original.push_back(&op);
    }
    // Which devices read each written weight decides where its copy is
    // written, which decides what is read: to a fixed point (it only
    // grows, and is bounded by the devices). A written weight read nowhere
    // is then written on every device.
    for (int round = 0; round < 2; ++round) {
      if (round == 1)
        for (Entry &e : entries)
          for (Operation *op : e.original)
            if (auto assign = dyn_cast<AssignOp>(op);
                assign && !parameters.contains(assign.getName()) &&
                readOn[assign.getName()].empty())
              readOn[assign.getName()].insert(used.begin(), used.end());
      fixedPoint(entries);
    }
    for (Entry &e : entries)
      if (failed(replicate(e)))
        return signalPassFailure();
  }

  void fixedPoint(std::vector<Entry> &entries) {
    for (bool changed = true; changed;) {
      changed = false;
      for (Entry &e : entries)
        computeNeeds(e);
      for (Entry &e : entries)
        for (Operation *op : e.original)
          if (auto ref = dyn_cast<WeightRefOp>(op);
              ref && isWritableWeight(ref) &&
              !parameters.contains(ref.getName()))
            if (auto it = e.needed.find(op); it != e.needed.end())
              for (StringAttr d : it->second)
                changed |= readOn[ref.getName()].insert(d);
    }
  }

  /// With shard-optimizer-state, each parameter's update (and so its
  /// optimizer state) goes to one device: the largest parameters first,
  /// each to the device with the fewest bytes so far.
  LogicalResult chooseOwners(ModuleOp module) {
    auto gradients = module.lookupSymbol<func::FuncOp>("gradients");
    auto list = gradients
                    ? gradients->getAttrOfType<ArrayAttr>("graph.parameters")
                    : ArrayAttr();
    SmallVector<std::pair<int64_t, StringRef>> sizes;
    if (list)
      for (Attribute a : list) {
        StringRef name = cast<FlatSymbolRefAttr>(a).getValue();
        parameters.insert(name);
        auto weight = module.lookupSymbol<WeightOp>(name);
        int64_t bytes =
            weight ? static_cast<int64_t>(
                         weight.getTensorType().getNumElements() *
                         weight.getTensorType().getElementTypeBitWidth() / 8)
                   : 0;
        sizes.push_back({bytes, name});
      }
    // Without parameters (not a training build) there is no state to
    // shard.
    if (!shardOptimizerState || !list)
      return success();
    llvm::stable_sort(sizes,
                      [](auto &a, auto &b) { return a.first > b.first; });
    llvm::DenseMap<StringAttr, int64_t> load;
    for (auto [bytes, name] : sizes) {
      StringAttr best = used.front();
      for (StringAttr d : used)
        if (load[d] < load[best])
          best = d;
      load[best] += bytes;
      owner[name] = best;
    }
    return success();
  }

  /// The devices whose copy of weight `name` a write stores: every device
  /// for a parameter; where it is read for anything else.
  SmallVector<StringAttr> writers(StringRef name) {
    if (parameters.contains(name))
      return SmallVector<StringAttr>(used.begin(), used.end());
    auto it = readOn.find(name);
    if (it == readOn.end())
      return {};
    return SmallVector<StringAttr>(it->second.begin(), it->second.end());
  }

  /// Where the value device `d` writes for `assign` is computed: replica
  /// 0's device when it differs between replicas (BatchNorm's running
  /// statistics); the parameter's owner with shard-optimizer-state;
  /// otherwise `d` itself.
  StringAttr source(Entry &e, AssignOp assign, StringAttr d) {
    if (e.varies.contains(assign.getValue()))
      return devices.front();
    if (auto it = owner.find(assign.getName()); it != owner.end())
      return it->second;
    return d;
  }

  void computeNeeds(Entry &e) {
    e.needed.clear();
    auto need = [&](Value v, StringAttr d) {
      if (Operation *def = v.getDefiningOp(); def && !e.varies.contains(v))
        e.needed[def].insert(d);
    };
    auto ret = e.function.getBody().front().getTerminator();
    for (Value v : ret->getOperands())
      need(v, devices.front());
    for (Operation *op : llvm::reverse(e.original)) {
      if (auto assign = dyn_cast<AssignOp>(op)) {
        // `after` only orders the write after the reads there are.
        for (StringAttr d : writers(assign.getName()))
          need(assign.getValue(), source(e, assign, d));
        continue;
      }
      bool perReplica = isa<AllReduceOp>(op) || op->getNumResults() == 0 ||
                        e.varies.contains(op->getResult(0));
      if (perReplica) {
        for (Value v : op->getOperands())
          for (StringAttr d : used)
            need(v, d);
        continue;
      }
      auto it = e.needed.find(op);
      if (it == e.needed.end())
        continue;
      SmallVector<StringAttr> where(it->second.begin(), it->second.end());
      for (StringAttr d : where)
        for (Value v : op->getOperands())
          need(v, d);
    }
  }

  /// The replicas' inputs: slices of dimension 0 on the host (the input
  /// now takes the whole batch); a scalar whole.
  void sliceInputs(func::FuncOp function, OpBuilder &builder,
                   SmallVectorImpl<IRMapping> &mappings) {
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
  }

  /// Whether the replicas sum on their own devices (graph.
  /// replica_all_reduce): each has an accelerator of its own and the sum
  /// goes over no ranks. Otherwise (replicas sharing a device, the CPU
  /// plan, --distributed) the host sums them.
  bool onDevices() const {
    if (distributed)
      return false;
    llvm::DenseSet<StringAttr> seen;
    for (StringAttr d : devices)
      if (d == host || !seen.insert(d).second)
        return false;
    return true;
  }

  /// All-reduce number `index`: the replicas' sum, on their devices
  /// (onDevices) or on the host in replica order (then over the ranks with
  /// `distributed`), named so in traces, profiles and errors; every replica
  /// reads it.
  void sumOverReplicas(AllReduceOp reduce, int64_t index, OpBuilder &builder,
                       SmallVectorImpl<IRMapping> &mappings) {
    Location loc = NameLoc::get(
        builder.getStringAttr("replicas:all-reduce '#" + std::to_string(index) +
                              "' summed over the replicas" +
                              describeLocation(reduce.getLoc())),
        reduce.getLoc());
    if (onDevices()) {
      // One member per replica, on its device: the runtime sums them there
      // (NCCL, or through host memory in member order).
      for (int64_t r = 0; r < replicas; ++r) {
        auto member = ReplicaAllReduceOp::create(
            builder, loc, mappings[r].lookup(reduce.getInput()),
            builder.getI64IntegerAttr(index), builder.getI64IntegerAttr(r),
            builder.getI64IntegerAttr(replicas));
        member->setAttr(kDeviceAttrName, devices[r]);
        mappings[r].map(reduce.getResult(), member.getResult());
      }
      return;
    }
    Value sum = mappings[0].lookup(reduce.getInput());
    for (int64_t r = 1; r < replicas; ++r) {
      auto add = AddOp::create(builder, loc, sum,
                               mappings[r].lookup(reduce.getInput()));
      add->setAttr(kDeviceAttrName, host);
      sum = add.getResult();
    }
    if (distributed) {
      auto ranks = AllReduceOp::create(builder, loc, sum.getType(), sum);
      ranks->setAttr(kDeviceAttrName, host);
      sum = ranks.getResult();
    }
    for (IRMapping &mapping : mappings)
      mapping.map(reduce.getResult(), sum);
  }

  /// One write per device that holds a copy, of a value that is the same
  /// on every device, after the reads of that copy there.
  void writeCopies(Entry &e, AssignOp assign, OpBuilder &builder,
                   SmallVectorImpl<IRMapping> &mappings) {
    for (StringAttr device : writers(assign.getName())) {
      llvm::SetVector<Value> after;
      for (int64_t r = 0; r < replicas; ++r)
        if (devices[r] == device)
          for (Value v : assign.getAfter())
            if (Value mapped = mappings[r].lookupOrNull(v))
              after.insert(mapped);
      StringAttr from = source(e, assign, device);
      auto copy = AssignOp::create(
          builder, assign.getLoc(), assign.getNameAttr(),
          mappings[firstReplica[from]].lookup(assign.getValue()),
          after.getArrayRef());
      copy->setAttrs(assign->getDiscardableAttrDictionary());
      copy->setAttr(kDeviceAttrName, device);
      copy->setAttr(kReplicaCopyAttrName, builder.getUnitAttr());
    }
  }

  /// An op that is the same on every replica: once per device that reads
  /// it, read by every replica there.
  void cloneOncePerDevice(Entry &e, Operation *op, OpBuilder &builder,
                          SmallVectorImpl<IRMapping> &mappings) {
    auto it = e.needed.find(op);
    if (it == e.needed.end())
      return;
    auto ref = dyn_cast<WeightRefOp>(op);
    bool copyOfDevice = ref && isWritableWeight(ref);
    for (StringAttr device : used) {
      if (!it->second.contains(device))
        continue;
      Operation *clone = builder.clone(*op, mappings[firstReplica[device]]);
      clone->setAttr(kDeviceAttrName, device);
      if (copyOfDevice)
        clone->setAttr(kReplicaCopyAttrName, builder.getUnitAttr());
      for (int64_t r = 0; r < replicas; ++r)
        if (devices[r] == device)
          for (auto [from, to] :
               llvm::zip(op->getResults(), clone->getResults()))
            mappings[r].map(from, to);
    }
  }

  /// An op whose values differ between replicas: once per replica. A
  /// replica's rows start at r times its elements in the whole batch, so a
  /// training-mode dropout of them draws the whole batch's mask (and a
  /// rank's rows, with --distributed, at the rank times its replicas'
  /// elements).
  void clonePerReplica(Entry &e, Operation *op, OpBuilder &builder,
                       SmallVectorImpl<IRMapping> &mappings) {
    auto dropout = dyn_cast<DropoutOp>(op);
    bool offsetMask =
        dropout && dropout.getStep() && e.varies.contains(dropout.getInput());
    for (int64_t r = 0; r < replicas; ++r) {
      Operation *clone = builder.clone(*op, mappings[r]);
      clone->setAttr(kDeviceAttrName, devices[r]);
      if (offsetMask) {
        auto drop = cast<DropoutOp>(clone);
        drop.setOffset(
            dropout.getOffset() +
            r * cast<RankedTensorType>(clone->getOperand(0).getType())
                    .getNumElements());
        // With --distributed a rank's part is its replicas' parts.
        drop.setRankStride(dropout.getRankStrideAttr().getInt() * replicas);
      }
    }
  }

  LogicalResult replicate(Entry &e) {
    func::FuncOp function = e.function;
    Block &body = function.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder builder(ret);
    SmallVector<IRMapping> mappings(replicas);
    sliceInputs(function, builder, mappings);
    int64_t sums = 0;
    for (Operation *op : e.original) {
      if (auto reduce = dyn_cast<AllReduceOp>(op))
        sumOverReplicas(reduce, ++sums, builder, mappings);
      else if (auto assign = dyn_cast<AssignOp>(op))
        writeCopies(e, assign, builder, mappings);
      else if (op->getNumResults() != 0 && !e.varies.contains(op->getResult(0)))
        cloneOncePerDevice(e, op, builder, mappings);
      else
        clonePerReplica(e, op, builder, mappings);
    }

    // Outputs: the same on every replica (replica 0's), or the batch's
    // parts concatenated.
    SmallVector<Value> results;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (!e.varies.contains(v)) {
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
    SmallVector<NamedAttribute> summary{
        builder.getNamedAttr("devices",
                             builder.getArrayAttr(SmallVector<Attribute>(
                                 devices.begin(), devices.end()))),
        builder.getNamedAttr("host", host),
        builder.getNamedAttr("sums", builder.getI64IntegerAttr(sums))};
    if (shardOptimizerState)
      summary.push_back(builder.getNamedAttr("sharded", builder.getUnitAttr()));
    if (onDevices())
      summary.push_back(
          builder.getNamedAttr("on_devices", builder.getUnitAttr()));
    function->setAttr("graph.replicas", builder.getDictionaryAttr(summary));
    for (Operation *op : llvm::reverse(e.original)) {
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
