//===- FoldGemm.cpp - what cuBLASLt computes with a matrix product --------===//
//
// On GPUs, decides which neighbours of a matrix product one cuBLASLt call
// computes with it (a relu epilogue, alpha, a residual add as C, operands
// read in place as strided views) and which slices a transpose's kernel
// computes, and writes each decision down as sched.gemm and
// sched.sliced_transpose ops. On the host (CPU, sim), an f32 matmul's
// operands read in place as strided views (the transposed K of attention)
// become a sched.gemm too: the host's sgemm takes the transpose and the
// leading dimension instead of a copy.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/EmitHelpers.h"
#include "compiler/Codegen/StridedView.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/PlacedOn.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sched/IR/SchedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <array>

namespace modelc {
#define GEN_PASS_DEF_FOLDGEMMPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using modelc::codegen::tensorType;

namespace {

bool sameGpu(Operation *a, Operation *b) {
  return onGpu(a) && deviceOf(a) == deviceOf(b);
}

/// When `op` is a sched.fused computing one `OpTy`, its operands as values
/// outside the body; empty otherwise.
template <typename OpTy> SmallVector<Value> singleFused(Operation *op) {
  SmallVector<Value> operands;
  auto fused = dyn_cast<sched::FusedOp>(op);
  Operation *single = fused ? fused.getSingleOp() : nullptr;
  if (!single || !isa<OpTy>(single))
    return operands;
  for (Value operand : single->getOperands())
    operands.push_back(fused.getOutsideValue(operand));
  return operands;
}

/// What one matrix product's call computes besides the product.
struct GemmFolds {
  /// The sched.fused (a single relu, mul or add) the call computes after
  /// the product.
  Operation *after = nullptr;
  bool relu = false;
  double alpha = 1.0;
  bool residual = false;
  std::array<std::optional<StridedOperand>, 2> views;
};

class GemmFolder {
public:
  GemmFolder(func::FuncOp function, bool checked, bool reluEpilogue)
      : function(function), checked(checked), reluEpilogue(reluEpilogue) {
    for (Operation &op : function.getBody().front())
      position[&op] = static_cast<int64_t>(position.size());
    // (modelc-check-dynamic-dims reported any shape that does not follow.)
    FailureOr<graph::SymbolicShapes> shapes =
        graph::inferSymbolicShapes(function, /*emitErrors=*/false);
    if (succeeded(shapes))
      symbolic = std::move(*shapes);
  }

  void run() {
    findResidualAdds();
    findStridedOperands();
    findSlicedTransposes();
    findEpilogues();
    for (auto &[product, found] : folds)
      buildGemm(product, found);
    for (auto &[transpose, slice] : slicedTransposes)
      buildSlicedTranspose(transpose, slice);
  }

private:
  graph::SymbolicShapes symbolic;

  /// A residual connection after a linear layer (x + linear(h)): cuBLASLt
  /// adds x (C, beta 1) while it writes the sum, when x is there before the
  /// linear runs. Not in checked plans, whose check callback sees each
  /// op's own buffers.
  void findResidualAdds() {
    if (checked)
      return;
    for (Operation &op : function.getBody().front()) {
      SmallVector<Value> operands = singleFused<AddOp>(&op);
      if (operands.size() != 2 || !onGpu(&op) ||
          !isa<FloatType>(tensorType(op.getResult(0)).getElementType()))
        continue;
      for (unsigned i = 0; i < 2; ++i) {
        Value sum = operands[i], other = operands[1 - i];
        auto linear = sum.getDefiningOp<LinearOp>();
        Operation *otherDef = other.getDefiningOp();
        if (!linear || !sum.hasOneUse() || !sameGpu(linear, &op) || !otherDef ||
            isa<ConstantOp>(otherDef) ||
            position[otherDef] >= position[linear] ||
            tensorType(other) != tensorType(sum) ||
            tensorType(sum) != tensorType(op.getResult(0)))
          continue;
        GemmFolds &found = folds[linear];
        found.after = &op;
        found.residual = true;
        break;
      }
    }
  }

  /// A matmul reads an operand made by slices, reshapes and transposes
  /// (single use, same device) straight from their first buffer, when
  /// cuBLASLt (on a GPU) or the host's sgemm (an f32 matmul on the CPU or a
  /// sim device: attention's Q.K^T of a transposed K) can and it saves a
  /// copy. Not in checked plans, whose check sees each op's own buffers.
  void findStridedOperands() {
    if (checked)
      return;
    for (Operation &op : function.getBody().front()) {
      // Integer products are generated kernels, not cuBLASLt calls; on the
      // host, f16/bf16 products convert one batch at a time instead.
      if (!isa<MatmulOp>(op))
        continue;
      Type element = tensorType(op.getResult(0)).getElementType();
      bool gpu = onGpu(&op), host = onHost(&op);
      if (!(gpu ? isa<FloatType>(element) : host && element.isF32()))
        continue;
      // A view's strides are sizes at the max: right at every size only
      // while no axis beyond 0 is dynamic (docs/dynamic.md).
      if (llvm::any_of(op.getOperands(), [&](Value v) {
            const graph::SymShape *shape = symbolic.lookup(v);
            return shape && !graph::onlyLeading(*shape);
          }))
        continue;
      auto foldable = [&](Operation *o) {
        return deviceOf(o) == deviceOf(&op) && !folded.count(o);
      };
      for (unsigned i = 0; i < 2; ++i) {
        std::optional<StridedOperand> view =
            stridedMatmulOperand(&op, i, foldable);
        if (!view || llvm::none_of(view->chain, [&](Operation *o) {
              return isa<TransposeOp>(o) ||
                     (isa<SliceOp>(o) && !getViewOffset(o));
            }))
          continue;
        for (Operation *o : view->chain)
          folded.insert(o);
        folds[&op].views[i] = std::move(view);
      }
    }
  }

  /// A slice read (through reshapes) only by a transpose on the same GPU is
  /// computed by the transpose's kernel. Not in checked plans.
  void findSlicedTransposes() {
    if (checked)
      return;
    for (Operation &op : function.getBody().front()) {
      auto transpose = dyn_cast<TransposeOp>(op);
      if (!transpose || !onGpu(&op) || folded.count(&op))
        continue;
      Value v = transpose.getInput();
      while (Operation *def = v.getDefiningOp()) {
        if (!v.hasOneUse() || !getViewOffset(def) || *getViewOffset(def) != 0)
          break;
        v = def->getOperand(0);
      }
      auto slice = v.getDefiningOp<SliceOp>();
      if (slice && v.hasOneUse() && !getViewOffset(slice) &&
          sameGpu(slice, &op)) {
        folded.insert(slice);
        slicedTransposes.insert({&op, slice});
      }
    }
  }

  /// The only user of a matrix product on the same GPU that cuBLASLt
  /// computes: a relu (its epilogue), or a product with a one-element
  /// constant after a matmul (alpha; not after linear or conv2d, whose
  /// bias alpha would not scale).
  void findEpilogues() {
    auto soleProducer = [&](Operation *op, Value operand) -> Operation * {
      Operation *producer = operand.getDefiningOp();
      if (producer && isa<LinearOp, MatmulOp, Conv2dOp>(producer) &&
          producer->getResult(0).hasOneUse() && sameGpu(producer, op))
        return producer;
      return nullptr;
    };
    for (Operation &op : function.getBody().front()) {
      SmallVector<Value> relu = singleFused<ReluOp>(&op);
      SmallVector<Value> mul = singleFused<MulOp>(&op);
      if ((relu.empty() && mul.size() != 2) || !onGpu(&op) ||
          !isa<FloatType>(tensorType(op.getResult(0)).getElementType()))
        continue;
      if (!relu.empty()) {
        // cuBLASLt's relu epilogue may be fmaxf (NaN becomes 0): only when
        // asked for; the relu kernel keeps NaN.
        Operation *producer =
            reluEpilogue ? soleProducer(&op, relu[0]) : nullptr;
        if (producer) {
          folds[producer].after = &op;
          folds[producer].relu = true;
        }
        continue;
      }
      for (unsigned i = 0; i < 2; ++i) {
        Operation *producer = soleProducer(&op, mul[i]);
        auto scale = mul[1 - i].getDefiningOp<ConstantOp>();
        if (!producer || !isa<MatmulOp>(producer) || !scale ||
            scale.getType().getNumElements() != 1 ||
            tensorType(op.getResult(0)) != tensorType(producer->getResult(0)))
          continue;
        folds[producer].after = &op;
        folds[producer].alpha = (*cast<DenseElementsAttr>(scale.getValue())
                                      .getValues<APFloat>()
                                      .begin())
                                    .convertToDouble();
        break;
      }
    }
  }

  sched::StridedViewAttr viewAttr(const std::optional<StridedOperand> &view) {
    if (!view)
      return nullptr;
    return sched::StridedViewAttr::get(function.getContext(), view->offset,
                                       view->ld, view->batchStride,
                                       view->transposed);
  }

  /// Replaces `product` (with its operand chains and the op after it) by a
  /// sched.gemm where the product was.
  void buildGemm(Operation *product, const GemmFolds &found) {
    OpBuilder builder(product);
    Operation *last = found.after ? found.after : product;
    auto gemm = sched::GemmOp::create(
        builder, product->getLoc(), last->getResult(0).getType(),
        builder.getF64FloatAttr(found.alpha),
        builder.getF64FloatAttr(found.residual ? 1.0 : 0.0),
        found.relu ? builder.getUnitAttr() : nullptr, viewAttr(found.views[0]),
        viewAttr(found.views[1]));
    gemm->setAttr(kDeviceAttrName, deviceOf(product));
    keepShardGuard(last, gemm);
    Block *body = builder.createBlock(&gemm.getBody());
    // The chains the views fold, in program order, then the product.
    SmallVector<Operation *> moved;
    for (const std::optional<StridedOperand> &view : found.views)
      if (view)
        llvm::append_range(moved, llvm::reverse(view->chain));
    llvm::sort(moved, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    moved.push_back(product);
    for (Operation *op : moved) {
      op->moveBefore(body, body->end());
      op->removeAttr(kDeviceAttrName);
    }
    Value result = product->getResult(0);
    builder.setInsertionPointToEnd(body);
    if (Operation *after = found.after) {
      // The one op of the sched.fused after the product, reading the
      // product and the values the fused op read.
      auto fused = cast<sched::FusedOp>(after);
      IRMapping mapping;
      for (auto [argument, input] :
           llvm::zip(fused.getBody().getArguments(), fused.getInputs())) {
        mapping.map(argument, input);
        // A constant (alpha) must be there before the call.
        if (Operation *def = input.getDefiningOp();
            def && def->getBlock() == gemm->getBlock() &&
            gemm->isBeforeInBlock(def))
          def->moveBefore(gemm);
      }
      result = builder.clone(*fused.getSingleOp(), mapping)->getResult(0);
      after->getResult(0).replaceAllUsesWith(gemm.getResult());
      after->erase();
    }
    sched::YieldOp::create(builder, product->getLoc(), result);
    if (!found.after)
      product->getResult(0).replaceUsesWithIf(
          gemm.getResult(), [&](OpOperand &use) {
            return use.getOwner()->getParentOp() != gemm;
          });
  }

  /// Replaces the slice, the reshapes after it and `transpose` by one
  /// sched.sliced_transpose where the transpose was.
  void buildSlicedTranspose(Operation *transpose, Operation *slice) {
    SmallVector<Operation *> chain;
    for (Operation *op = transpose; op != slice;
         op = op->getOperand(0).getDefiningOp())
      chain.push_back(op);
    chain.push_back(slice);
    OpBuilder builder(transpose);
    auto group = sched::SlicedTransposeOp::create(
        builder, transpose->getLoc(), transpose->getResult(0).getType());
    group->setAttr(kDeviceAttrName, deviceOf(transpose));
    keepShardGuard(transpose, group);
    Block *body = builder.createBlock(&group.getBody());
    Value result = transpose->getResult(0);
    for (Operation *op : llvm::reverse(chain)) {
      op->moveBefore(body, body->end());
      op->removeAttr(kDeviceAttrName);
    }
    builder.setInsertionPointToEnd(body);
    sched::YieldOp::create(builder, transpose->getLoc(), result);
    result.replaceUsesWithIf(group.getResult(), [&](OpOperand &use) {
      return use.getOwner()->getParentOp() != group;
    });
  }

  func::FuncOp function;
  bool checked, reluEpilogue;
  llvm::DenseMap<Operation *, int64_t> position;
  /// Per product, in program order: what its call computes with it.
  llvm::MapVector<Operation *, GemmFolds> folds;
  /// Ops computed inside a later op's call or kernel.
  llvm::DenseSet<Operation *> folded;
  llvm::MapVector<Operation *, Operation *> slicedTransposes;
};

struct FoldGemmPass : modelc::impl::FoldGemmPassBase<FoldGemmPass> {
  using FoldGemmPassBase::FoldGemmPassBase;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp function) {
      if (!function.isExternal())
        GemmFolder(function, checked, reluEpilogue).run();
    });
  }
};

} // namespace
