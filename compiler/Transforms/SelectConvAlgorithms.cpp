//===- SelectConvAlgorithms.cpp - Winograd for 3x3 CPU convolutions -------===//
//
// Decides which packed CPU convolutions the runtime computes with
// Winograd's algorithm, and writes the decision down as `winograd`; and
// which CPU transposed convolutions run as a GEMM and col2im
// (`sched.col2im`).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

namespace modelc {
#define GEN_PASS_DEF_SELECTCONVALGORITHMSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

struct SelectConvAlgorithmsPass
    : modelc::impl::SelectConvAlgorithmsPassBase<SelectConvAlgorithmsPass> {
  using SelectConvAlgorithmsPassBase::SelectConvAlgorithmsPassBase;

  void runOnOperation() override {
    if (winograd)
      getOperation().walk([](sched::PackedProductOp packed) {
        auto conv = dyn_cast<graph::Conv2dOp>(packed.getProduct());
        if (conv && sched::suitsWinograd(conv))
          packed.setWinograd(true);
      });
    // Transposed convolutions (a convolution's input gradient) on host
    // devices: a GEMM and col2im when each output sums 4 or more input
    // channels, tap by tap below that (average pooling's gradient: 1).
    getOperation().walk([](graph::ConvTranspose2dOp conv) {
      device::DeviceAttr device = sched::runningDevice(conv);
      if (device && device.getKind() == device::DeviceKind::cuda)
        return;
      int64_t channels = conv.getInput().getType().getDimSize(1);
      if (channels / static_cast<int64_t>(conv.getGroups()) >= 4)
        conv->setAttr(sched::kCol2imAttrName, UnitAttr::get(conv.getContext()));
    });
  }
};

} // namespace
