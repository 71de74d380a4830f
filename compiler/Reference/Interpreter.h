//===- Interpreter.h - the reference interpreter of the graph IR -*- C++
//-*-===//
//
// Evaluates a graph entry point directly, in double precision, with plain
// loops: the oracle every numeric test compares compiled code with. It is
// written for clarity, not speed.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_REFERENCE_INTERPRETER_H
#define MODELC_COMPILER_REFERENCE_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <functional>
#include <vector>

namespace modelc {

/// A tensor of the interpreter: every element type held as double (i1 as
/// 0/1; integers exactly up to 2^53).
struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t numel() const;
};

/// The value of the weight named `name`, or failure after an error.
using WeightProvider =
    std::function<mlir::FailureOr<RefTensor>(llvm::StringRef name)>;

/// Runs `function` on `inputs`. Run-time errors (an index out of range) are
/// emitted at the op's location. Each float result is rounded to its
/// element type, as the kernels store it, unless `roundResults` is false:
/// then every value stays in double (finite differences of gradients need
/// that precision).
mlir::FailureOr<std::vector<RefTensor>>
interpret(mlir::func::FuncOp function, const std::vector<RefTensor> &inputs,
          const WeightProvider &weights, bool roundResults = true);

/// Evaluates `ops`, in order: ops of one block whose operands are results of
/// earlier ops in `ops` or of graph.constant ops. Returns the values of
/// `results` (each rounded to its element type, as `interpret` rounds).
/// Failure, after an error at the op, for an op the interpreter cannot
/// evaluate here (a weight, an op it does not know) or that fails at run
/// time (an index out of range); constant folding suppresses that error and
/// leaves the ops alone.
mlir::FailureOr<std::vector<RefTensor>>
evaluateOps(llvm::ArrayRef<mlir::Operation *> ops, mlir::ValueRange results);

/// `t` as the value of a constant of `type`; null when an element cannot be
/// held exactly (an integer beyond 2^53, whose double may have rounded, or
/// out of the type's range).
mlir::DenseElementsAttr toElementsAttr(const RefTensor &t,
                                       mlir::RankedTensorType type);

/// Whether constant folding may evaluate `op` when its operands are
/// constants: a pure graph op with one result of at most `maxElements`
/// elements and at most 2^26 operations (the cost model's count), not a
/// random one (dropout).
bool isFoldableOnConstants(mlir::Operation *op, int64_t maxElements);

/// The values of `results` of `ops` (see evaluateOps) as constants;
/// failure, with no error emitted, when they cannot be computed at compile
/// time or held exactly (the ops then stay).
mlir::FailureOr<llvm::SmallVector<mlir::DenseElementsAttr>>
foldOnConstants(llvm::ArrayRef<mlir::Operation *> ops,
                mlir::ValueRange results);

} // namespace modelc

#endif // MODELC_COMPILER_REFERENCE_INTERPRETER_H
