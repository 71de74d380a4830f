//===- SelectConvAlgorithms.cpp - Winograd for 3x3 CPU convolutions -------===//
//
// Decides which packed CPU convolutions the runtime computes with
// Winograd's algorithm, and writes the decision down as `winograd`.
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
    if (!winograd)
      return;
    getOperation().walk([](sched::PackedProductOp packed) {
      auto conv = dyn_cast<graph::Conv2dOp>(packed.getProduct());
      if (conv && sched::suitsWinograd(conv))
        packed.setWinograd(true);
    });
  }
};

} // namespace
