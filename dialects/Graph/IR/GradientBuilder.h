//===- GradientBuilder.h - graph ops built by gradient rules ----*- C++ -*-===//
//
// What an op's reverse-mode rule (GradientOpInterface::buildGradients) uses
// to spell its derivative as graph ops: each op is located at the op being
// differentiated and gets its type from the op's own type inference; a
// failed inference is an error there and makes the value null, which every
// method passes on (so a rule checks once, at the end).
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_DIALECTS_GRAPH_IR_GRADIENTBUILDER_H
#define MODELC_DIALECTS_GRAPH_IR_GRADIENTBUILDER_H

#include "dialects/Graph/IR/GraphOps.h"
#include "mlir/IR/Builders.h"

namespace modelc::graph {

class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return loc; }
  void setLoc(mlir::Location l) { loc = l; }

  /// An op of kind OpT with its inferred result type; null when an operand
  /// is null or inference fails (an error at the location).
  template <typename OpT>
  mlir::Value op(mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    return build(OpT::getOperationName(), operands, attributes,
                 &OpT::inferReturnTypes);
  }

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value);

  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value neg(mlir::Value a);
  mlir::Value exp(mlir::Value a);
  mlir::Value tanh(mlir::Value a);
  mlir::Value sigmoid(mlir::Value a);
  mlir::Value erf(mlir::Value a);
  /// `a` scaled by the number `c`.
  mlir::Value scale(mlir::Value a, double c);
  mlir::Value compare(ComparePredicate predicate, mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value condition, mlir::Value a, mlir::Value b);
  mlir::Value cast(mlir::Value a, mlir::Type element);

  /// A rank-0 constant `value` of `like`'s element type.
  mlir::Value scalar(mlir::Value like, double value);
  /// A constant of `type` holding `value` everywhere.
  mlir::Value splat(mlir::RankedTensorType type, double value);

  mlir::Value reshape(mlir::Value a, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value a, llvm::ArrayRef<int64_t> perm);
  mlir::Value reduceSum(mlir::Value a, llvm::ArrayRef<int64_t> axes,
                        bool keepdims);
  /// `op(a) * op(b)` scaled by alpha (graph.gemm; rank-2 operands).
  mlir::Value gemm(mlir::Value a, mlir::Value b, bool transposeA,
                   bool transposeB, double alpha = 1.0);
  mlir::Value matmul(mlir::Value a, mlir::Value b);

  /// `g`, the gradient of a value broadcast from `target`'s shape, summed
  /// back to that shape (over the leading dimensions `target` lacks and
  /// over those where it has 1).
  mlir::Value sumToShape(mlir::Value g, mlir::Type target);
  /// `a` broadcast to `shape` (numpy rules).
  mlir::Value broadcastTo(mlir::Value a, llvm::ArrayRef<int64_t> shape);

  /// Reports that the rule does not cover a case of `op` yet; fails.
  mlir::LogicalResult notSupported(mlir::Operation *op,
                                   const llvm::Twine &what);

private:
  using Infer = llvm::LogicalResult (*)(mlir::MLIRContext *,
                                        std::optional<mlir::Location>,
                                        mlir::ValueRange, mlir::DictionaryAttr,
                                        mlir::OpaqueProperties,
                                        mlir::RegionRange,
                                        llvm::SmallVectorImpl<mlir::Type> &);
  mlir::Value build(llvm::StringRef name, mlir::ValueRange operands,
                    llvm::ArrayRef<mlir::NamedAttribute> attributes,
                    Infer infer);

  mlir::OpBuilder &builder;
  mlir::Location loc;
};

/// Fails when a rule's value is null (an error was already reported where
/// it was built); rules check their gradients once, at the end.
inline mlir::LogicalResult allBuilt(llvm::ArrayRef<mlir::Value> values) {
  for (mlir::Value v : values)
    if (!v)
      return mlir::failure();
  return mlir::success();
}

/// The ranked tensor type of a graph value.
inline mlir::RankedTensorType tensorTypeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

} // namespace modelc::graph

#endif // MODELC_DIALECTS_GRAPH_IR_GRADIENTBUILDER_H
