//===- PlanMemory.cpp - arena offsets of every buffer ---------------------===//
//
// Decides where each buffer of an entry point lives: one arena per device,
// buffers whose lifetimes overlap never overlap in memory, but for a packed
// product that adds its result to a residual dying there, which is written
// over in place. Writes the plan
// down as sched.buffer / sched.scratch on the ops and sched.arenas /
// sched.error_words on the function, which the printers only read.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CudaPrinter.h"
#include "compiler/Codegen/HostPrinter.h"
#include "compiler/Codegen/MemoryPlan.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <functional>

namespace modelc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// One request of a device's arena and the attribute it becomes.
struct Request {
  BufferRequest request;
  Operation *op; ///< the op that owns it (null: an error word)
  bool isScratch;
};

class MemoryPlanner {
public:
  MemoryPlanner(func::FuncOp function,
                ArrayRef<device::DeviceAttr> targetDevices)
      : function(function),
        host(device::DeviceAttr::get(function.getContext(),
                                     device::DeviceKind::cpu, 0)) {
    for (device::DeviceAttr device : targetDevices)
      requests[device];
    for (Operation &op : function.getBody().front())
      position[&op] = static_cast<int64_t>(position.size());
    end = static_cast<int64_t>(position.size());
  }

  void run() {
    requestBuffers();
    requestErrorWords();
    assignOffsets();
  }

private:
  /// The position of the last op that reads `v` (or its views). A copy to
  /// another device runs on another stream whenever its producer is done,
  /// so its source, like an output, stays untouched for the whole run (and
  /// so does a replica's part of a sum over the replicas, on its copy
  /// stream). A
  /// value read inside a group (sched.gemm's body) is read when the group
  /// runs. A graph.assign's `after` operands only order its write after
  /// their ops (which read the weight's old value); their memory is not
  /// read.
  int64_t lastUse(Value v) {
    Block &block = function.getBody().front();
    int64_t last = position[v.getDefiningOp()];
    for (OpOperand &use : v.getUses()) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      if (auto assign = dyn_cast<AssignOp>(user);
          assign && &use != &assign.getValueMutable())
        continue;
      if (isa<func::ReturnOp>(user) || sched::runsOnCopyStream(user))
        last = end;
      else if (isView(user) || isa<sched::AllReduceWaitOp>(user))
        last = std::max(last, lastUse(user->getResult(0)));
      else if (auto start = dyn_cast<sched::AllReduceStartOp>(user))
        last = std::max(last, position[start.getWait()]);
      else
        last = std::max(last, position[user]);
    }
    return last;
  }

  /// The bytes of `op`'s result buffer: a convolution's output kept in
  /// oneDNN's layout pads its channels to whole blocks.
  static uint64_t resultBytes(Operation *op) {
    Value result = op->getResult(0);
    auto packed = dyn_cast<sched::PackedProductOp>(op);
    if (!packed || !packed.getKeepLayout())
      return valueBytes(result);
    ArrayRef<int64_t> y = cast<ShapedType>(result.getType()).getShape();
    int64_t block = sched::kKeptLayoutChannelBlock;
    int64_t channels = (y[1] + block - 1) / block * block;
    return static_cast<uint64_t>(y[0] * channels * y[2] * y[3]) * 4;
  }

  /// The op whose buffer `op`'s result takes (the one that requested it),
  /// or null: `op` is a packed
  /// product (oneDNN, on the CPU or a simulated device) whose sum adds (in
  /// oneDNN, to what the output buffer holds) a value of its own type that dies
  /// at `op`, written by an op with a buffer of its own on the same device (a
  /// residual). The product then adds to the value where it lies, not to a copy
  /// of it. The value must reach `op` only as the sum's operand: the product
  /// writes its output while reading its other inputs.
  Operation *inPlaceSumBuffer(Operation &op, device::DeviceAttr device) {
    auto packed = dyn_cast<sched::PackedProductOp>(op);
    if (!packed)
      return nullptr;
    Value sum = packed.getSumOperand();
    if (!sum || sum.getType() != packed.getResult().getType())
      return nullptr;
    Operation *source = sum.getDefiningOp();
    Block &block = function.getBody().front();
    if (!source || source->getBlock() != &block || !lifetime.count(source) ||
        sched::runsOnCopyStream(source) ||
        sched::runningDevice(source) != device || lastUse(sum) != position[&op])
      return nullptr;
    unsigned reads = 0;
    for (OpOperand &use : sum.getUses()) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      if (user == &op)
        ++reads;
      else if (isView(user))
        return nullptr; // a view of it may reach `op` too
    }
    Operation *root = bufferOwner(source);
    assert(resultRequest.count(root) && "a buffer owner without a request");
    uint64_t bytes = requests[device][resultRequest[root]].request.bytes;
    return reads == 1 && bytes == resultBytes(&op) ? root : nullptr;
  }

  /// The op that requested the buffer `op`'s result lives in.
  Operation *bufferOwner(Operation *op) {
    auto it = takesBufferOf.find(op);
    return it == takesBufferOf.end() ? op : it->second;
  }

  /// A buffer per result of every op but views (which share their source's
  /// memory), weights and constants; then the op's scratch, alive while it
  /// runs, as its device's printer needs it. A transfer's buffer (and a
  /// replica sum's, a GPU's sum over the ranks) is written by a copy stream
  /// whenever the source is ready: reserved for the run. A product that
  /// sums in place (inPlaceSumBuffer) takes its operand's buffer, which
  /// then lives as long as the product's result.
  void requestBuffers() {
    for (Operation &op : function.getBody().front()) {
      if (sched::runsOnCopyStream(&op)) {
        lifetime[&op] = {valueBytes(op.getResult(0)), 0, end};
        requests[sched::runningDevice(&op)].push_back(
            {lifetime[&op], &op, false});
        continue;
      }
      // A loop that writes a weight's new value into the weight
      // (modelc-update-weights-in-place) needs no buffer either.
      if (op.getNumResults() == 0 || isView(&op) ||
          isa<WeightRefOp, ConstantOp, sched::AllReduceWaitOp>(op) ||
          op.hasAttr(sched::kWritesWeightAttrName))
        continue;
      device::DeviceAttr device = sched::runningDevice(&op);
      Value result = op.getResult(0);
      BufferRequest own{resultBytes(&op), position[&op], lastUse(result)};
      lifetime[&op] = own;
      if (Operation *root = inPlaceSumBuffer(op, device)) {
        takesBufferOf[&op] = root;
        BufferRequest &shared = requests[device][resultRequest[root]].request;
        shared.lastUse = std::max(shared.lastUse, own.lastUse);
      } else {
        resultRequest[&op] = requests[device].size();
        requests[device].push_back({own, &op, false});
      }
      bool gpu = device.getKind() == device::DeviceKind::cuda;
      for (uint64_t bytes : gpu ? gpuScratchBytes(&op) : cpuScratchBytes(&op))
        requests[device].push_back(
            {{bytes, position[&op], position[&op]}, &op, true});
    }
  }

  /// Per GPU whose kernels check indices: its error word and the host copy
  /// read after the run, reserved for the whole run.
  void requestErrorWords() {
    for (auto &[device, list] : requests) {
      if (device.getKind() != device::DeviceKind::cuda)
        continue;
      bool checks = false;
      for (Operation &op : function.getBody().front())
        checks |= op.getNumResults() && sched::runningDevice(&op) == device &&
                  gpuOpChecksIndices(&op);
      if (!checks)
        continue;
      wordDevices.push_back(device);
      list.push_back({{16, 0, end}, nullptr, false});
      requests[host].push_back({{16, 0, end}, nullptr, false});
    }
  }

  void assignOffsets() {
    Builder builder(function.getContext());
    auto attr = [&](const BufferRequest &r, uint64_t offset) {
      return sched::BufferAttr::get(function.getContext(), offset, r.bytes,
                                    r.firstUse, r.lastUse);
    };
    SmallVector<NamedAttribute> arenas;
    llvm::DenseMap<device::DeviceAttr, SmallVector<uint64_t>> words;
    llvm::DenseMap<Operation *, SmallVector<Attribute>> scratch;
    for (auto &[device, list] : requests) {
      std::vector<BufferRequest> plain;
      for (const Request &r : list)
        plain.push_back(r.request);
      MemoryPlan memory = planMemory(plain);
      for (auto [index, r] : llvm::enumerate(list)) {
        uint64_t offset = memory.offsets[index];
        if (!r.op)
          words[device].push_back(offset);
        else if (r.isScratch)
          scratch[r.op].push_back(attr(r.request, offset));
        else
          r.op->setAttr("sched.buffer", attr(lifetime[r.op], offset));
      }
      arenas.push_back(builder.getNamedAttr(
          device.str(), builder.getI64IntegerAttr(memory.peakBytes)));
    }
    // A product summing in place: its operand's offset, its own lifetime.
    for (auto &[op, root] : takesBufferOf)
      op->setAttr("sched.buffer",
                  attr(lifetime[op],
                       root->getAttrOfType<sched::BufferAttr>("sched.buffer")
                           .getOffset()));
    for (auto &[op, list] : scratch)
      op->setAttr("sched.scratch", builder.getArrayAttr(list));
    // Each GPU's word, and its host copy in the order the GPUs asked.
    SmallVector<Attribute> errorWords;
    for (auto [index, device] : llvm::enumerate(wordDevices))
      errorWords.push_back(
          sched::ErrorWordAttr::get(function.getContext(), device,
                                    words[device].front(), words[host][index]));
    if (!errorWords.empty())
      function->setAttr("sched.error_words", builder.getArrayAttr(errorWords));
    function->setAttr("sched.arenas", builder.getDictionaryAttr(arenas));
  }

  func::FuncOp function;
  device::DeviceAttr host;
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t end = 0;
  /// Per device of the target (in its order), the requests in op order.
  llvm::MapVector<device::DeviceAttr, SmallVector<Request>> requests;
  SmallVector<device::DeviceAttr> wordDevices;
  /// Each result buffer's own lifetime, and the request of each op that
  /// asked for one (indices into its device's list).
  llvm::DenseMap<Operation *, BufferRequest> lifetime;
  llvm::DenseMap<Operation *, size_t> resultRequest;
  /// The products that sum in place, and the op whose buffer each takes.
  llvm::MapVector<Operation *, Operation *> takesBufferOf;
};

struct PlanMemoryPass : modelc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The arenas of the target's devices, the host first; a module not
    // placed for a target has the host alone.
    SmallVector<device::DeviceAttr> devices;
    if (auto target =
            module->getAttrOfType<device::TargetAttr>("device.target"))
      for (Attribute spec : target.getDevices())
        devices.push_back(cast<device::DeviceSpecAttr>(spec).getDevice());
    else
      devices.push_back(
          device::DeviceAttr::get(&getContext(), device::DeviceKind::cpu, 0));
    module.walk([&](func::FuncOp function) {
      if (!function.isExternal())
        MemoryPlanner(function, devices).run();
    });
  }
};

} // namespace
