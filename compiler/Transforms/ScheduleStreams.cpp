//===- ScheduleStreams.cpp - streams and events of multi-device plans -----===//
//
// Decides, for a plan with devices besides the host, which stream runs each
// task and copy, which values get an event, and which events each stream
// waits for before it runs an op; writes it down as sched.stream,
// sched.record and sched.waits on the ops and sched.events on the function.
// The host printer enqueues exactly that.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/EmitHelpers.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacedOn.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace modelc {
#define GEN_PASS_DEF_SCHEDULESTREAMSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

class StreamScheduler {
public:
  explicit StreamScheduler(func::FuncOp function)
      : function(function), builder(function.getContext()),
        host(device::DeviceAttr::get(function.getContext(),
                                     device::DeviceKind::cpu, 0)) {}

  /// The members of each graph.replica_all_reduce group: in member order,
  /// each on a device of its own, every input computed before the first
  /// member, and one group's members all before the next group's first
  /// (other ops may lie between them). Every device's
  /// copy stream then meets the groups in the same order, which the
  /// runtime's sums (NCCL's, or the host's meeting) need not to wait
  /// forever.
  LogicalResult checkReplicaGroups() {
    ReplicaAllReduceOp first;
    llvm::DenseSet<Attribute> devices;
    llvm::DenseSet<int64_t> groups;
    uint64_t next = 0;
    for (Operation &op : function.getBody().front()) {
      auto member = dyn_cast<ReplicaAllReduceOp>(op);
      if (!member)
        continue;
      if (first) {
        if (member.getGroup() != first.getGroup())
          return member.emitError("replica_all_reduce group ")
                 << member.getGroup() << " starts before group "
                 << first.getGroup() << " has all its " << first.getMembers()
                 << " members (it has " << next << ")";
        if (member.getMember() != next ||
            member.getMembers() != first.getMembers())
          return member.emitError("replica_all_reduce group ")
                 << first.getGroup() << ": member " << member.getMember()
                 << " of " << member.getMembers() << " where member " << next
                 << " of " << first.getMembers() << " was due";
        if (!devices.insert(member->getAttr(kDeviceAttrName)).second)
          return member.emitError("replica_all_reduce group ")
                 << first.getGroup()
                 << ": two members on one device; each replica needs its own";
        if (Operation *def = member.getInput().getDefiningOp();
            def && first->isBeforeInBlock(def))
          return member.emitError("replica_all_reduce group ")
                 << first.getGroup() << ": member " << member.getMember()
                 << "'s input is computed after the group's first member "
                    "(the group sums where it starts: compute every "
                    "member's input first)";
        if (++next == first.getMembers())
          first = nullptr;
        continue;
      }
      if (member.getMember() != 0)
        return member.emitError("replica_all_reduce group ")
               << member.getGroup() << " starts with member "
               << member.getMember() << " instead of member 0";
      if (!groups.insert(member.getGroup()).second)
        return member.emitError("replica_all_reduce group ")
               << member.getGroup() << " appears twice";
      first = member;
      devices.clear();
      devices.insert(member->getAttr(kDeviceAttrName));
      next = 1;
    }
    if (first)
      return first.emitError("replica_all_reduce group ")
             << first.getGroup() << " has " << next << " of its "
             << first.getMembers() << " members";
    return success();
  }

  LogicalResult run() {
    if (failed(checkReplicaGroups()))
      return failure();
    assignEvents();
    for (Operation &op : function.getBody().front())
      scheduleOp(&op);
    function->setAttr("sched.events", builder.getI64IntegerAttr(numEvents));
    return success();
  }

private:
  /// The value whose memory a view (reshape) shares.
  static Value viewRoot(Value v) {
    while (v.getDefiningOp() && isView(v.getDefiningOp()))
      v = v.getDefiningOp()->getOperand(0);
    return v;
  }

  std::optional<int64_t> eventOf(Value v) {
    auto it = events.find(viewRoot(v));
    if (it == events.end())
      return std::nullopt;
    return it->second;
  }

  /// An event for every copy, and for each compute result a copy reads
  /// (a view shares its source's event), in program order. Inputs,
  /// constants and weights (and views of them) are ready before the run:
  /// no op records them.
  void assignEvents() {
    for (Operation &op : function.getBody().front())
      if (isCopyStreamOp(&op)) {
        Value source = viewRoot(op.getOperand(0));
        Operation *def = source.getDefiningOp();
        if (def && !isa<WeightRefOp, ConstantOp>(def) && !events.count(source))
          events[source] = numEvents++;
        events[op.getResult(0)] = numEvents++;
      }
  }

  /// Ops that run on a copy stream: copies, the members of a sum over the
  /// replicas and a GPU's sums over the ranks (so that they overlap the
  /// compute that remains).
  static bool isCopyStreamOp(Operation *op) {
    return sched::runsOnCopyStream(op);
  }

  /// The event compute stream of device `d` must wait for before reading
  /// `v`: none when `v` was made on that stream (ordered already) or has no
  /// event, nor when the stream waited for it before.
  std::optional<int64_t> computeWait(device::DeviceAttr d, Value v) {
    std::optional<int64_t> e = eventOf(v);
    Value root = viewRoot(v);
    Operation *def = root.getDefiningOp();
    bool byCopy = def && isCopyStreamOp(def);
    if (!e || (!byCopy && def && sched::runningDevice(def) == d))
      return std::nullopt;
    if (!waited.insert({d, *e}).second)
      return std::nullopt;
    return e;
  }

  void setWaits(Operation *op, ArrayRef<int64_t> waits) {
    if (!waits.empty())
      op->setAttr("sched.waits", builder.getDenseI64ArrayAttr(waits));
  }

  void scheduleOp(Operation *op) {
    SmallVector<int64_t> waits;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // The outputs task runs on the host's compute stream.
      for (Value v : ret.getOperands())
        if (std::optional<int64_t> e = computeWait(host, v))
          waits.push_back(*e);
      setWaits(op, waits);
      return;
    }
    if ((op->getNumResults() != 1 && !isa<AssignOp>(op)) ||
        isa<WeightRefOp, ConstantOp>(op) || isView(op))
      return; // no code of its own
    if (isCopyStreamOp(op)) {
      // A copy runs on the destination's copy stream once its source is
      // ready (an input needs no wait); so does a replica's part of a sum,
      // and a sum over the ranks, on its device's (one stream: the sums
      // over the ranks meet in program order on every rank).
      op->setAttr("sched.stream", builder.getStringAttr("copy"));
      Value input = op->getOperand(0);
      if (std::optional<int64_t> e = eventOf(input);
          e && viewRoot(input).getDefiningOp())
        waits.push_back(*e);
      setWaits(op, waits);
      op->setAttr("sched.record",
                  builder.getI64IntegerAttr(*eventOf(op->getResult(0))));
      return;
    }
    op->setAttr("sched.stream", builder.getStringAttr("compute"));
    device::DeviceAttr d = sched::runningDevice(op);
    for (Value v : codegen::valuesRead(op))
      if (std::optional<int64_t> e = computeWait(d, v))
        waits.push_back(*e);
    setWaits(op, waits);
    if (op->getNumResults() == 0)
      return; // a graph.assign: nothing reads its result
    if (std::optional<int64_t> e = eventOf(op->getResult(0)))
      op->setAttr("sched.record", builder.getI64IntegerAttr(*e));
  }

  func::FuncOp function;
  Builder builder;
  device::DeviceAttr host;
  llvm::DenseMap<Value, int64_t> events;
  int64_t numEvents = 0;
  /// (device, event) pairs a compute stream has waited for.
  llvm::DenseSet<std::pair<Attribute, int64_t>> waited;
};

struct ScheduleStreamsPass
    : modelc::impl::ScheduleStreamsPassBase<ScheduleStreamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Plans on the host alone run straight-line code: nothing to schedule.
    if (planIsCpuAlone(module))
      return;
    module.walk([&](func::FuncOp function) {
      if (!function.isExternal() && failed(StreamScheduler(function).run()))
        signalPassFailure();
    });
  }
};

} // namespace
