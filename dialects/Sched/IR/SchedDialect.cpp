//===- SchedDialect.cpp - the sched dialect ---------------------*- C++ -*-===//

#include "dialects/Sched/IR/SchedDialect.h"
#include "dialects/Device/IR/DeviceDialect.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace modelc::sched;

#include "dialects/Sched/IR/SchedDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Sched/IR/SchedAttrs.cpp.inc"

void SchedDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Sched/IR/SchedAttrs.cpp.inc"
      >();
}

void SchedDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/Sched/IR/SchedOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// The memory plan's attributes
//===----------------------------------------------------------------------===//

namespace {

/// A buffer of the plan: its device and where and when it lives.
struct PlannedBuffer {
  modelc::device::DeviceAttr device;
  uint64_t offset, bytes;
  int64_t first, last;
  Operation *owner;
  bool isResult = false; ///< the owner's result (not scratch, not a word)
};

/// Whether `b` is the result buffer of a packed product that sums in place
/// into `a`, its sum's operand's buffer (modelc-plan-memory): the same
/// memory, `a` read last by the product that writes `b`.
bool sumsInPlace(const PlannedBuffer &a, const PlannedBuffer &b) {
  auto packed = dyn_cast<PackedProductOp>(b.owner);
  if (!packed || !a.isResult || !b.isResult || a.offset != b.offset ||
      a.bytes != b.bytes || a.last != b.first)
    return false;
  Value sum = packed.getSumOperand();
  return sum && sum.getDefiningOp() == a.owner;
}

/// Checks a function's memory plan: every buffer inside its device's arena,
/// no two of one device alive at once overlapping (but for a product's sum
/// in place).
LogicalResult verifyArenas(Operation *function, DictionaryAttr arenas) {
  SmallVector<PlannedBuffer> buffers;
  int64_t end = 0;
  function->walk([&](Operation *op) {
    if (op->getParentOp() == function)
      ++end;
    if (auto buffer = op->getAttrOfType<BufferAttr>("sched.buffer"))
      buffers.push_back({runningDevice(op), buffer.getOffset(),
                         buffer.getBytes(), buffer.getFirst(), buffer.getLast(),
                         op, true});
    if (auto scratch = op->getAttrOfType<ArrayAttr>("sched.scratch"))
      for (auto buffer : scratch.getAsRange<BufferAttr>())
        buffers.push_back({runningDevice(op), buffer.getOffset(),
                           buffer.getBytes(), buffer.getFirst(),
                           buffer.getLast(), op});
  });
  if (auto words = function->getAttrOfType<ArrayAttr>("sched.error_words"))
    for (auto word : words.getAsRange<ErrorWordAttr>()) {
      buffers.push_back(
          {word.getDevice(), word.getOffset(), 16, 0, end, function});
      buffers.push_back(
          {modelc::device::DeviceAttr::get(function->getContext(),
                                           modelc::device::DeviceKind::cpu, 0),
           word.getHostOffset(), 16, 0, end, function});
    }
  for (const PlannedBuffer &b : buffers) {
    auto size = arenas.getAs<IntegerAttr>(b.device.str());
    if (!size || b.offset + b.bytes > size.getValue().getZExtValue())
      return b.owner->emitOpError("has a buffer [")
             << b.offset << ", " << b.offset + b.bytes
             << ") outside the arena of " << b.device.str() << " ("
             << (size ? size.getValue().getZExtValue() : 0) << " bytes)";
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlannedBuffer &a = buffers[i], &b = buffers[j];
      if (a.device != b.device || a.last < b.first || b.last < a.first ||
          a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset ||
          !a.bytes || !b.bytes || sumsInPlace(a, b) || sumsInPlace(b, a))
        continue;
      InFlightDiagnostic diag =
          b.owner->emitOpError("has a buffer [")
          << b.offset << ", " << b.offset + b.bytes << ") on " << b.device.str()
          << " that overlaps a buffer [" << a.offset << ", "
          << a.offset + a.bytes << ") alive at the same time (ops " << a.first
          << "-" << a.last << " and " << b.first << "-" << b.last << ")";
      diag.attachNote(a.owner->getLoc()) << "the other buffer's op";
      return diag;
    }
  return success();
}

/// Checks a function's stream schedule: each event recorded once, and
/// waited for only after an earlier op recorded it.
LogicalResult verifyEvents(Operation *function, int64_t numEvents) {
  llvm::SmallDenseSet<int64_t> recorded;
  for (Region &region : function->getRegions())
    for (Block &block : region)
      for (Operation &op : block) {
        if (auto waits = op.getAttrOfType<DenseI64ArrayAttr>("sched.waits"))
          for (int64_t e : waits.asArrayRef())
            if (!recorded.contains(e))
              return op.emitOpError("waits for event ")
                     << e << ", which no op before it records";
        auto record = op.getAttrOfType<IntegerAttr>("sched.record");
        if (!record)
          continue;
        int64_t e = record.getInt();
        if (e < 0 || e >= numEvents)
          return op.emitOpError("records event ")
                 << e << " of a function with " << numEvents << " events";
        if (!recorded.insert(e).second)
          return op.emitOpError("records event ")
                 << e << ", which an op before it records too";
      }
  return success();
}

} // namespace

LogicalResult SchedDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  Attribute value = attribute.getValue();
  if (name == "sched.buffer") {
    if (!isa<BufferAttr>(value))
      return op->emitOpError("'sched.buffer' must be a #sched.buffer");
    return success();
  }
  if (name == "sched.scratch") {
    auto array = dyn_cast<ArrayAttr>(value);
    if (!array || !llvm::all_of(array, llvm::IsaPred<BufferAttr>))
      return op->emitOpError("'sched.scratch' must be an array of "
                             "#sched.buffer");
    return success();
  }
  if (name == "sched.error_words") {
    auto array = dyn_cast<ArrayAttr>(value);
    if (!array || !llvm::all_of(array, llvm::IsaPred<ErrorWordAttr>))
      return op->emitOpError("'sched.error_words' must be an array of "
                             "#sched.error_word");
    return success();
  }
  if (name == "sched.stream") {
    auto stream = dyn_cast<StringAttr>(value);
    if (!stream ||
        (stream.getValue() != "compute" && stream.getValue() != "copy"))
      return op->emitOpError("'sched.stream' must be \"compute\" or "
                             "\"copy\"");
    return success();
  }
  if (name == "sched.record") {
    if (!isa<IntegerAttr>(value))
      return op->emitOpError("'sched.record' must be an event number");
    return success();
  }
  if (name == "sched.waits") {
    if (!isa<DenseI64ArrayAttr>(value))
      return op->emitOpError("'sched.waits' must be an array<i64> of events");
    return success();
  }
  if (name == "sched.events") {
    auto count = dyn_cast<IntegerAttr>(value);
    if (!count)
      return op->emitOpError("'sched.events' must be a number of events");
    return verifyEvents(op, count.getInt());
  }
  if (name == "sched.arenas") {
    auto arenas = dyn_cast<DictionaryAttr>(value);
    if (!arenas)
      return op->emitOpError("'sched.arenas' must map devices to bytes");
    return verifyArenas(op, arenas);
  }
  if (name == kCol2imAttrName) {
    if (!isa<UnitAttr>(value) || !isa<graph::ConvTranspose2dOp>(op))
      return op->emitOpError("'sched.col2im' is a unit attribute of "
                             "graph.conv_transpose2d");
    return success();
  }
  if (name == kWritesWeightAttrName) {
    auto symbol = dyn_cast<FlatSymbolRefAttr>(value);
    if (!symbol || !isa<FusedOp, graph::OwnerBroadcastOp>(op))
      return op->emitOpError("'sched.writes_weight' names the weight a "
                             "sched.fused (or a graph.owner_broadcast) "
                             "writes its value into");
    auto module = op->getParentOfType<ModuleOp>();
    auto weight = module ? module.lookupSymbol<graph::WeightOp>(symbol)
                         : graph::WeightOp();
    if (!weight || weight.getType() != op->getResult(0).getType())
      return op->emitOpError("'sched.writes_weight' names ")
             << symbol << ", which is not a weight of the result's type";
    return success();
  }
  if (name == kDnnlConvAttrName) {
    auto text = dyn_cast<StringAttr>(value);
    if (!text || (text.getValue() != "direct" && text.getValue() != "winograd"))
      return op->emitOpError("'sched.dnnl_conv' must be \"direct\" or "
                             "\"winograd\"");
    if (!dnnlConvShape(op))
      return op->emitOpError("'sched.dnnl_conv' is for f32 graph.conv2d, "
                             "graph.conv_transpose2d (without a bias) and "
                             "graph.conv2d_weight_grad of static shapes");
    return success();
  }
  return op->emitOpError("has an unknown sched attribute '") << name << "'";
}

modelc::device::DeviceAttr modelc::sched::runningDevice(Operation *op) {
  if (auto transfer = dyn_cast<modelc::device::TransferOp>(op))
    return transfer.getTarget();
  if (auto device = op->getAttrOfType<modelc::device::DeviceAttr>("device"))
    return device;
  return modelc::device::DeviceAttr::get(op->getContext(),
                                         modelc::device::DeviceKind::cpu, 0);
}

bool modelc::sched::runsOnCopyStream(Operation *op) {
  if (isa<modelc::device::TransferOp, graph::ReplicaAllReduceOp>(op))
    return true;
  return isa<graph::AllReduceOp>(op) &&
         runningDevice(op).getKind() != modelc::device::DeviceKind::cpu;
}
