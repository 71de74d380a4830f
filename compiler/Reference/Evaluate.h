//===- Evaluate.h - per-op evaluation in the reference interpreter -*- C++ -*-//
//
// Private to compiler/Reference: the tensor helpers that the evaluation of
// every op shares, and one evaluation function per op (or per family of
// elementwise ops). Each reads its operands from the values computed so far
// and returns its result; each file registers its functions in the
// Evaluators table, which Interpreter.cpp dispatches through.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_REFERENCE_EVALUATE_H
#define MODELC_COMPILER_REFERENCE_EVALUATE_H

#include "compiler/Reference/Interpreter.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/DenseMap.h"

#include <cassert>
#include <cstdint>
#include <functional>
#include <vector>

namespace modelc::reference {

using Shape = std::vector<int64_t>;

/// The tensors computed so far, by SSA value.
class Values {
public:
  /// The tensor of `value`, which was computed earlier.
  const RefTensor &get(mlir::Value value) const {
    auto it = tensors.find(value);
    assert(it != tensors.end() && "a value used before it is computed");
    return it->second;
  }
  /// Whether `value` has been computed.
  bool contains(mlir::Value value) const { return tensors.count(value); }
  void set(mlir::Value value, RefTensor tensor) {
    tensors[value] = std::move(tensor);
  }

private:
  llvm::DenseMap<mlir::Value, RefTensor> tensors;
};

//===----------------------------------------------------------------------===//
// Tensor helpers (Interpreter.cpp)
//===----------------------------------------------------------------------===//

/// Maximum and minimum propagating a NaN in either operand (torch.maximum,
/// ONNX Max, reduce_max, max pooling): std::max would drop one in `b`.
inline double maxOrNaN(double a, double b) { return (a < b || b != b) ? b : a; }
inline double minOrNaN(double a, double b) { return (b < a || b != b) ? b : a; }

/// The static shape of a tensor value.
Shape shapeOf(mlir::Value value);
/// The element type of a tensor value.
mlir::Type elementOf(mlir::Value value);
/// A tensor of `shape` filled with zeros.
RefTensor make(const Shape &shape);
/// Row-major strides of `shape`, in elements.
Shape stridesOf(const Shape &shape);
/// Coordinates of linear index `i` in `shape`.
Shape coordsOf(int64_t i, const Shape &shape);
/// The product of dimensions [begin, end) of `shape`.
int64_t product(const Shape &shape, size_t begin, size_t end);
/// The stride of a tensor of `shape` along each of `rank` output
/// dimensions under numpy broadcasting (its shape aligned at the right):
/// 0 where it is broadcast (a dimension of 1, or one it lacks).
Shape broadcastStrides(const Shape &shape, size_t rank);

/// Integer arithmetic as the kernels do it, exactly: in uint64_t (modulo
/// 2^64), where doubles would round. `x` (a whole double: an integer
/// element, an i64 rounded up to 2^63 included) modulo 2^64.
uint64_t wrappedBits(double x);
/// `bits` as an integer of `type` (i32 or i64: modulo its width), as the
/// interpreter holds it.
double wrappedValue(uint64_t bits, mlir::Type type);

//===----------------------------------------------------------------------===//
// The evaluation functions, by op
//===----------------------------------------------------------------------===//

/// The evaluation function of each op other than the elementwise ones,
/// filled by the Evaluate*.cpp files: each registers its functions next to
/// their definitions, so adding an op touches only the file that evaluates
/// it.
class Evaluators {
public:
  using Function = std::function<mlir::FailureOr<RefTensor>(mlir::Operation *,
                                                            const Values &)>;

  /// Registers the evaluation of OpT (the overload of `fn` taking OpT).
  template <typename OpT> void add(RefTensor (*fn)(OpT, const Values &)) {
    table[mlir::TypeID::get<OpT>()] = [fn](mlir::Operation *op,
                                           const Values &values) {
      return mlir::FailureOr<RefTensor>(fn(llvm::cast<OpT>(op), values));
    };
  }
  /// As above, for an evaluation that can fail with an error at the op
  /// (an index out of range).
  template <typename OpT>
  void add(mlir::FailureOr<RefTensor> (*fn)(OpT, const Values &)) {
    table[mlir::TypeID::get<OpT>()] = [fn](mlir::Operation *op,
                                           const Values &values) {
      return fn(llvm::cast<OpT>(op), values);
    };
  }
  /// The evaluation of `op`, or null when no file registered one.
  const Function *lookup(mlir::Operation *op) const {
    auto it = table.find(op->getName().getTypeID());
    return it == table.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<mlir::TypeID, Function> table;
};

/// Registers the constant (EvaluateElementwise.cpp).
void addElementwiseEvaluators(Evaluators &evaluators);
/// Registers products, normalization, convolution, pooling and losses
/// (EvaluateNN.cpp).
void addNNEvaluators(Evaluators &evaluators);
/// Registers shape ops, data movement and reductions (EvaluateShape.cpp).
void addShapeEvaluators(Evaluators &evaluators);

/// The one-operand elementwise ops (the graph dialect's Elementwise trait):
/// neg, abs, relu, leaky_relu, exp, log, sqrt, rsqrt, tanh, sigmoid, silu,
/// erf, the trigonometric and hyperbolic functions and their inverses,
/// floor, ceil, round, gelu, cast; an error for one it does not know.
mlir::FailureOr<RefTensor> evaluateUnary(mlir::Operation *op,
                                         const Values &values);
/// The elementwise ops with numpy broadcasting: add, sub, mul, div, mod,
/// max, min, pow, compare, select; an error for one it does not know.
mlir::FailureOr<RefTensor> evaluateBroadcast(mlir::Operation *op,
                                             const Values &values);
/// The error for an op the interpreter has no evaluation of.
mlir::LogicalResult unknownOp(mlir::Operation *op);

} // namespace modelc::reference

#endif // MODELC_COMPILER_REFERENCE_EVALUATE_H
