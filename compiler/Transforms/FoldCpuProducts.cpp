//===- FoldCpuProducts.cpp - oneDNN calls of constant-weight products -----===//
//
// On CPU and sim devices, decides which matrix products and convolutions
// the runtime computes with a weight packed once (oneDNN), and which ops
// after each one its call applies as post-ops, and writes each decision
// down as a sched.packed_product.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacedOn.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/CpuPostOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace modelc {
#define GEN_PASS_DEF_FOLDCPUPRODUCTSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

/// The product and the ops its call applies after it, in order.
SmallVector<Operation *> chainFrom(Operation *product) {
  SmallVector<Operation *> chain = {product};
  bool conv = isa<graph::Conv2dOp>(product);
  Value value = product->getResult(0);
  bool summed = false; // oneDNN takes one sum per product
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (user->getBlock() != product->getBlock() ||
        deviceOf(user) != deviceOf(product))
      break;
    if (sched::isF32OutputCast(user, value)) {
      chain.push_back(user); // the last op: oneDNN writes f32
      break;
    }
    std::optional<sched::CpuPostOp> post = sched::cpuPostOp(user, value, conv);
    if (!post || (post->isSum() && summed))
      break;
    summed |= post->isSum();
    chain.push_back(user);
    value = user->getResult(0);
  }
  return chain;
}

/// Replaces `chain` with one sched.packed_product where its last op was:
/// every value it reads from above is computed before that point.
void pack(ArrayRef<Operation *> chain) {
  Operation *last = chain.back();
  OpBuilder builder(last);
  Value result = last->getResult(0);
  auto packed = sched::PackedProductOp::create(builder, chain.front()->getLoc(),
                                               result.getType());
  packed->setAttr(graph::kDeviceAttrName, deviceOf(chain.front()));
  keepShardGuard(last, packed);
  builder.createBlock(&packed.getBody());
  IRMapping mapping;
  for (Operation *op : chain)
    builder.clone(*op, mapping)->removeAttr(graph::kDeviceAttrName);
  sched::YieldOp::create(builder, last->getLoc(), mapping.lookup(result));
  result.replaceAllUsesWith(packed.getResult());
  for (Operation *op : llvm::reverse(chain))
    op->erase();
}

struct FoldCpuProductsPass
    : modelc::impl::FoldCpuProductsPassBase<FoldCpuProductsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp function) {
      if (function.isExternal())
        return;
      SmallVector<Operation *> products;
      for (Operation &op : function.getBody().front())
        if (onHost(&op) && sched::isPackableProduct(&op))
          products.push_back(&op);
      // A chain ends at a product or earlier (a product is no post-op), so
      // chains never overlap.
      for (Operation *product : products)
        pack(chainFrom(product));
    });
  }
};

} // namespace
