//===- Assign.h - writing a weight back in an entry point -------*- C++ -*-===//

#ifndef MODELC_COMPILER_TRANSFORMS_ASSIGN_H
#define MODELC_COMPILER_TRANSFORMS_ASSIGN_H

#include "dialects/Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace modelc {

/// The weight (an i64 scalar, zeros at the start) that train_step counts
/// up by one per call: the `step` of every graph.dropout in training mode
/// (modelc-training-mode reads it; modelc-build-optimizer writes it), so
/// each step draws new masks and a checkpoint resumes the sequence.
inline constexpr llvm::StringLiteral kRngStepWeight = "rng_step";

/// Makes `weight` writable and writes `value` into it with graph.assign at
/// the builder's point in `function`, after every op of `function` that
/// reads the weight's old value (directly or through a view) and is not on
/// the way to `value`.
void buildAssign(mlir::OpBuilder &builder, mlir::func::FuncOp function,
                 graph::WeightOp weight, mlir::Value value);

/// The training state `name` of `type` (a frozen, writable weight of zeros
/// at the start), declared after the last weight unless the module has it
/// already; an error at any other symbol of that name, which says it is
/// `what` ("the optimizer state modelc declares").
mlir::FailureOr<graph::WeightOp>
declareTrainingState(mlir::ModuleOp module, llvm::StringRef name,
                     mlir::RankedTensorType type, llvm::StringRef what);

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_ASSIGN_H
