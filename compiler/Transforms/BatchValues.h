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

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_BATCHVALUES_H
