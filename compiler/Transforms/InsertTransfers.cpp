//===- InsertTransfers.cpp - device.transfer on cut edges -----------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace modelc {
#define GEN_PASS_DEF_INSERTTRANSFERSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct InsertTransfersPass
    : modelc::impl::InsertTransfersPassBase<InsertTransfersPass> {
  using InsertTransfersPassBase::InsertTransfersPassBase;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto host = device::DeviceAttr::get(context, device::DeviceKind::cpu, 0);
    auto deviceOf = [&](Operation *op) {
      return op ? op->getAttrOfType<device::DeviceAttr>(kDeviceAttrName)
                : device::DeviceAttr();
    };
    WalkResult walk = getOperation().walk([&](func::FuncOp function) {
      if (function.isExternal())
        return WalkResult::advance();
      // Every graph op must have been placed.
      for (Operation &op : function.getBody().front())
        if (op.getDialect() && op.getDialect()->getNamespace() == "graph" &&
            !deviceOf(&op)) {
          op.emitError("has no device: run modelc-place first");
          return WalkResult::interrupt();
        }

      OpBuilder builder(context);
      int transfersMade = 0;
      // (value, destination) -> the value there.
      llvm::DenseMap<std::pair<Value, Attribute>, Value> copies;
      auto valueOn = [&](Value v, device::DeviceAttr where) -> Value {
        Operation *def = v.getDefiningOp();
        device::DeviceAttr from = def ? deviceOf(def) : host;
        if (from == where)
          return v;
        auto key = std::make_pair(v, Attribute(where));
        if (Value existing = copies.lookup(key))
          return existing;
        Value copy;
        auto ref = dyn_cast_or_null<WeightRefOp>(def);
        if (def && (isa<ConstantOp>(def) || (ref && !isWritableWeight(ref)))) {
          // Resident on every device that reads it: a copy of the source op.
          builder.setInsertionPointAfter(def);
          Operation *clone = builder.clone(*def);
          clone->setAttr(kDeviceAttrName, where);
          copy = clone->getResult(0);
        } else {
          if (transfersMade++ == dropTransfer)
            return v; // debugging: the transfer that is left out
          if (def)
            builder.setInsertionPointAfter(def);
          else
            builder.setInsertionPointToStart(&function.getBody().front());
          copy =
              device::TransferOp::create(builder, v.getLoc(), v, from, where);
        }
        copies[key] = copy;
        return copy;
      };
      for (Operation &op :
           llvm::make_early_inc_range(function.getBody().front())) {
        if (isa<device::TransferOp>(op))
          continue;
        device::DeviceAttr where =
            isa<func::ReturnOp>(op) ? host : deviceOf(&op);
        if (!where)
          continue;
        if (auto assign = dyn_cast<AssignOp>(op)) {
          // `after` only orders the write; a read on another device would
          // need a cross-device wait that is not supported yet.
          for (Value v : assign.getAfter())
            if (Operation *d = v.getDefiningOp(); d && deviceOf(d) != where) {
              assign.emitError("training: weight '")
                  << assign.getName() << "' is written on " << where.str()
                  << " but read on " << deviceOf(d).str()
                  << "; a parameter read on several devices of a plan is "
                     "not supported yet";
              return WalkResult::interrupt();
            }
          assign.getValueMutable().set(valueOn(assign.getValue(), where));
          continue;
        }
        if (auto reduce = dyn_cast<AllReduceOp>(op);
            reduce && where.getKind() != device::DeviceKind::cpu) {
          // A sum over the ranks on a GPU reads its input by pointer from
          // the GPU's memory, where a constant (the host's code; kernels
          // read their own copies) is not: the host's constant is
          // transferred there.
          if (auto constant = reduce.getInput().getDefiningOp<ConstantOp>()) {
            Value onHost = constant.getResult();
            if (deviceOf(constant) != host) {
              builder.setInsertionPointAfter(constant);
              Operation *clone = builder.clone(*constant);
              clone->setAttr(kDeviceAttrName, host);
              onHost = clone->getResult(0);
            }
            builder.setInsertionPointAfter(onHost.getDefiningOp());
            reduce.getInputMutable().set(device::TransferOp::create(
                builder, reduce.getLoc(), onHost, host, where));
            continue;
          }
        }
        for (OpOperand &operand : op.getOpOperands())
          operand.set(valueOn(operand.get(), where));
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
