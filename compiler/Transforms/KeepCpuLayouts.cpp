//===- KeepCpuLayouts.cpp - convolution chains in oneDNN's layout ---------===//
//
// Decides which packed convolutions leave their output in the layout
// oneDNN computed it in, because the next packed convolution alone reads
// it, and writes the decision down as `keep_layout`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace modelc {
#define GEN_PASS_DEF_KEEPCPULAYOUTSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

struct KeepCpuLayoutsPass
    : modelc::impl::KeepCpuLayoutsPassBase<KeepCpuLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([](sched::PackedProductOp packed) {
      // Only f32: an f16 or bf16 product may run in f32 on CPUs that lack
      // those types, and its buffer holds half the bytes.
      if (isa<graph::Conv2dOp>(packed.getProduct()) &&
          packed.getType().getElementType().isF32() &&
          sched::readsKeptLayout(packed.getResult()))
        packed.setKeepLayout(true);
    });
  }
};

} // namespace
