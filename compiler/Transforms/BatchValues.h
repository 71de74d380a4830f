//===- BatchValues.h - values that differ between parts of a batch -*- C++
//-*-===//
//
// Data-parallel training splits the batch into parts (replicas, ranks):
// modelc-replicate and modelc-all-reduce-gradients ask which values of a
// step differ between the parts. One answer for both.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_TRANSFORMS_BATCHVALUES_H
#define MODELC_COMPILER_TRANSFORMS_BATCHVALUES_H

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <string>

namespace modelc {

/// The values of `function` that differ between the parts of its batch:
/// its arguments of rank 1 or more (a scalar, such as `lr`, goes to every
/// part whole) and what ops compute from them, except through a
/// graph.all_reduce (whose result every part shares).
inline llvm::DenseSet<mlir::Value>
valuesOfTheBatch(mlir::func::FuncOp function) {
  llvm::DenseSet<mlir::Value> varies;
  for (mlir::BlockArgument arg : function.getArguments())
    if (llvm::cast<mlir::RankedTensorType>(arg.getType()).getRank() > 0)
      varies.insert(arg);
  for (mlir::Operation &op : function.getBody().front().without_terminator())
    if (!llvm::isa<graph::AllReduceOp>(op) &&
        llvm::any_of(op.getOperands(),
                     [&](mlir::Value v) { return varies.contains(v); }))
      varies.insert(op.result_begin(), op.result_end());
  return varies;
}

/// Checks that `op` keeps samples apart, given which operands carry the
/// batch (as dimension 0) and its size: why it does not, or "". Data
/// parallelism splits the batch only through such ops; a dynamic
/// dimension (modelc-check-dynamic-dims) flows only through them.
inline std::string mixesSamples(mlir::Operation *op,
                                const llvm::DenseSet<mlir::Value> &batched,
                                int64_t batch) {
  using namespace mlir;
  auto isBatched = [&](Value v) { return batched.contains(v); };
  auto rank = [](Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getRank();
  };
  auto dim0 = [](Value v) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    return type.getRank() ? type.getDimSize(0) : 1;
  };
  Value result = op->getResult(0);
  if (rank(result) == 0 || dim0(result) != batch)
    return "its result does not keep the batch as dimension 0";
  // Operands without the batch must broadcast along it.
  for (Value operand : op->getOperands())
    if (!isBatched(operand) && rank(operand) == rank(result) &&
        dim0(operand) != 1 && op->hasTrait<graph::Elementwise>())
      return "it combines the batch with a full-size operand that is not "
             "split";
  // Elementwise ops keep samples apart (given the check above); any other
  // op says how it treats the batch, or is not split.
  if (op->hasTrait<graph::Elementwise>())
    return "";
  if (auto split = llvm::dyn_cast<graph::BatchSplitOpInterface>(op))
    return split.whyNotSplit(isBatched, batch);
  return "modelc does not know how '" + op->getName().getStringRef().str() +
         "' treats the batch yet";
}

/// Gives `op`'s result, which carries the batch, dimension 0 `size` (a
/// reshape's target shape too).
inline void setBatchSize(mlir::Operation *op, int64_t size) {
  using namespace mlir;
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = size;
  op->getResult(0).setType(RankedTensorType::get(shape, type.getElementType()));
  if (auto reshape = llvm::dyn_cast<graph::ReshapeOp>(op)) {
    SmallVector<int64_t> target(reshape.getShape());
    target[0] = size;
    reshape.setShape(target);
  }
}

/// Rewrites every entry point of `module` for size `size` of the dynamic
/// dimension `name` (docs/dynamic.md; graph::specializeDims for several):
/// every value's type is its symbolic shape at that size. The graph.dim
/// keeps its name; its range is the caller's to set. Used for a model's new
/// max (modelc --dim), placement at OPT, size regimes and to evaluate one
/// size in the reference interpreter. Fails after an error when the
/// shapes cannot be inferred.
inline mlir::LogicalResult specializeDim(mlir::ModuleOp module,
                                         llvm::StringRef name, int64_t size) {
  return graph::specializeDims(module, {{name, size}});
}

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_BATCHVALUES_H
