//===- Assign.h - writing a weight back in an entry point -------*- C++ -*-===//

#ifndef MODELC_COMPILER_TRANSFORMS_ASSIGN_H
#define MODELC_COMPILER_TRANSFORMS_ASSIGN_H

#include "dialects/Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace modelc {

/// Makes `weight` writable and writes `value` into it with graph.assign at
/// the builder's point in `function`, after every op of `function` that
/// reads the weight's old value (directly or through a view) and is not on
/// the way to `value`.
void buildAssign(mlir::OpBuilder &builder, mlir::func::FuncOp function,
                 graph::WeightOp weight, mlir::Value value);

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_ASSIGN_H
