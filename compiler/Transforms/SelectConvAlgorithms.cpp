//===- SelectConvAlgorithms.cpp - Winograd for 3x3 CPU convolutions -------===//
//
// Decides which packed CPU convolutions the runtime computes with
// Winograd's algorithm, and writes the decision down as `winograd`; which
// CPU convolutions of changing weights (training) run through oneDNN's
// primitives, and with which algorithm (`sched.dnnl_conv`); and which
// other CPU transposed convolutions run as a GEMM and col2im
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
    // Sizes known at run time only keep the generated kernels: oneDNN's
    // primitives are made for one size.
    bool dynamic = !getOperation().getOps<graph::DimOp>().empty();
    getOperation().walk([&](Operation *op) {
      if (!isa<graph::Conv2dOp, graph::ConvTranspose2dOp,
               graph::Conv2dWeightGradOp>(op) ||
          isa<sched::PackedProductOp>(op->getParentOp()))
        return;
      device::DeviceAttr device = sched::runningDevice(op);
      if (device && device.getKind() == device::DeviceKind::cuda)
        return;
      // A training step's convolutions (a weight that changes, the input
      // and weight gradients) through oneDNN's primitives.
      if (!dynamic)
        if (std::optional<std::array<int64_t, 18>> shape =
                sched::dnnlConvShape(op);
            shape && paysInOneDnn(*shape)) {
          op->setAttr(
              sched::kDnnlConvAttrName,
              StringAttr::get(op->getContext(), winograd && winogradPays(*shape)
                                                    ? "winograd"
                                                    : "direct"));
          return;
        }
      // Transposed convolutions (a convolution's input gradient) on host
      // devices: a GEMM and col2im when each output sums 4 or more input
      // channels, tap by tap below that (average pooling's gradient: 1).
      if (auto conv = dyn_cast<graph::ConvTranspose2dOp>(op)) {
        int64_t channels = conv.getInput().getType().getDimSize(1);
        if (channels / static_cast<int64_t>(conv.getGroups()) >= 4)
          conv->setAttr(sched::kCol2imAttrName,
                        UnitAttr::get(conv.getContext()));
      }
    });
  }

  /// Whether oneDNN's primitives pay for a convolution of `shape`: 16 or
  /// more channels in and out per group (oneDNN's blocked layouts pad the
  /// channels to 16; a first layer of 3 channels would also need buffers
  /// for its large output in that layout: ResNet-18's conv1, 26 MB at
  /// batch 8, where im2col and a GEMM are about as fast).
  static bool paysInOneDnn(const std::array<int64_t, 18> &s) {
    return s[1] / s[17] >= 16 && s[4] / s[17] >= 16;
  }

  /// Whether oneDNN's Winograd F(4x4, 3x3) pays for a convolution of
  /// `shape` (modelc_conv's): 3x3, stride 1, dilation 1, one group, a
  /// multiple of 16 channels in and out, and an output of 14x14 or more
  /// (measured on a 2-core AVX-512 machine, ResNet-18's layers at batch 8:
  /// 2.2x direct's speed at 56x56 and 28x28, 1.6x at 14x14, none at 7x7,
  /// where the 4x4 output tiles mostly overhang).
  static bool winogradPays(const std::array<int64_t, 18> &s) {
    return s[5] == 3 && s[6] == 3 && s[9] == 1 && s[10] == 1 && s[15] == 1 &&
           s[16] == 1 && s[17] == 1 && s[1] % 16 == 0 && s[4] % 16 == 0 &&
           s[7] * s[8] >= 14 * 14;
  }
};

} // namespace
