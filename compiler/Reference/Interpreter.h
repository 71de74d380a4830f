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

} // namespace modelc

#endif // MODELC_COMPILER_REFERENCE_INTERPRETER_H
