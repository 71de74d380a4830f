//===- Evaluate.h - per-op evaluation in the reference interpreter -*- C++ -*-//
//
// Private to compiler/Reference: the tensor helpers that the evaluation of
// every op shares, and one evaluation function per op (or per family of
// elementwise ops). Each reads its operands from the values computed so far
// and returns its result; Interpreter.cpp dispatches to them.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_REFERENCE_EVALUATE_H
#define MODELC_COMPILER_REFERENCE_EVALUATE_H

#include "compiler/Reference/Interpreter.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/DenseMap.h"

#include <cassert>
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
  void set(mlir::Value value, RefTensor tensor) {
    tensors[value] = std::move(tensor);
  }

private:
  llvm::DenseMap<mlir::Value, RefTensor> tensors;
};

//===----------------------------------------------------------------------===//
// Tensor helpers (Interpreter.cpp)
//===----------------------------------------------------------------------===//

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
/// Element of `t` read at output coordinates `coords` under numpy
/// broadcasting (t's shape aligned at the right).
double broadcastRead(const RefTensor &t, const Shape &coords);

//===----------------------------------------------------------------------===//
// Elementwise (EvaluateElementwise.cpp)
//===----------------------------------------------------------------------===//

RefTensor evaluate(graph::ConstantOp op, const Values &values);
/// The one-operand elementwise ops (the graph dialect's Elementwise trait):
/// neg, abs, relu, leaky_relu, exp, log, sqrt, rsqrt, tanh, sigmoid, silu,
/// erf, gelu, cast; an error for one it does not know.
mlir::FailureOr<RefTensor> evaluateUnary(mlir::Operation *op,
                                         const Values &values);
/// The elementwise ops with numpy broadcasting: add, sub, mul, div, max,
/// min, pow, compare, select; an error for one it does not know.
mlir::FailureOr<RefTensor> evaluateBroadcast(mlir::Operation *op,
                                             const Values &values);
/// The error for an op the interpreter has no evaluation of.
mlir::LogicalResult unknownOp(mlir::Operation *op);

//===----------------------------------------------------------------------===//
// Products, normalization, convolution, pooling, losses (EvaluateNN.cpp)
//===----------------------------------------------------------------------===//

RefTensor evaluate(graph::MatmulOp op, const Values &values);
RefTensor evaluate(graph::LinearOp op, const Values &values);
RefTensor evaluate(graph::GemmOp op, const Values &values);
RefTensor evaluate(graph::SoftmaxOp op, const Values &values);
RefTensor evaluate(graph::LogSoftmaxOp op, const Values &values);
RefTensor evaluate(graph::LayerNormOp op, const Values &values);
RefTensor evaluate(graph::BatchNormOp op, const Values &values);
RefTensor evaluate(graph::Conv2dOp op, const Values &values);
RefTensor evaluate(graph::MaxPool2dOp op, const Values &values);
RefTensor evaluate(graph::AvgPool2dOp op, const Values &values);
RefTensor evaluate(graph::GlobalAvgPoolOp op, const Values &values);
/// Fails, with an error at the op, on a target out of range.
mlir::FailureOr<RefTensor> evaluate(graph::CrossEntropyOp op,
                                    const Values &values);

//===----------------------------------------------------------------------===//
// Shapes, data movement, reductions (EvaluateShape.cpp)
//===----------------------------------------------------------------------===//

RefTensor evaluate(graph::ReshapeOp op, const Values &values);
RefTensor evaluate(graph::FlattenOp op, const Values &values);
RefTensor evaluate(graph::TransposeOp op, const Values &values);
RefTensor evaluate(graph::ConcatOp op, const Values &values);
RefTensor evaluate(graph::SliceOp op, const Values &values);
/// Fails, with an error at the op, on an index out of range.
mlir::FailureOr<RefTensor> evaluate(graph::GatherOp op, const Values &values);
RefTensor evaluate(graph::ReduceSumOp op, const Values &values);
RefTensor evaluate(graph::ReduceMeanOp op, const Values &values);
RefTensor evaluate(graph::ReduceMaxOp op, const Values &values);

} // namespace modelc::reference

#endif // MODELC_COMPILER_REFERENCE_EVALUATE_H
