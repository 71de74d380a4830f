//===- AnnotateEstimates.cpp - the cost model's time of each op -----------===//

#include "compiler/Analysis/CostModel.h"
#include "compiler/Target/Target.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace modelc {
#define GEN_PASS_DEF_ANNOTATEESTIMATESPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

struct AnnotateEstimatesPass
    : modelc::impl::AnnotateEstimatesPassBase<AnnotateEstimatesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto attr = module->getAttrOfType<device::TargetAttr>("device.target");
    if (!attr)
      return;
    TargetDescription target = TargetDescription::fromAttr(attr);
    Type f64 = Float64Type::get(&getContext());
    for (auto function : module.getOps<func::FuncOp>()) {
      for (Operation &op : function.getBody().getOps()) {
        auto device =
            op.getAttrOfType<device::DeviceAttr>(graph::kDeviceAttrName);
        if (!device ||
            isa<device::TransferOp, graph::WeightRefOp, graph::ConstantOp>(op))
          continue;
        std::optional<unsigned> index = target.find(device);
        if (!index)
          continue;
        // The op itself, or the graph ops a lowered group holds.
        double seconds = 0;
        bool any = false;
        op.walk([&](Operation *inner) {
          if (!isa<graph::GraphDialect>(inner->getDialect()) ||
              isa<graph::WeightRefOp, graph::ConstantOp>(inner))
            return;
          seconds += estimateOpTime(inner, target.devices[*index]);
          any = true;
        });
        if (any)
          op.setAttr("device.estimated_us", FloatAttr::get(f64, seconds * 1e6));
      }
    }
  }
};

} // namespace
