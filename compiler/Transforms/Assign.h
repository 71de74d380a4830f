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

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_ASSIGN_H
