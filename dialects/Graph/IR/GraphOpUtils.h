//===- GraphOpUtils.h - shared checks for graph op verifiers ----*- C++ -*-===//
//
// Private to the graph dialect: the diagnostics and shape helpers that type
// inference and verifiers share, so every message has the same form.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_DIALECTS_GRAPH_IR_GRAPHOPUTILS_H
#define MODELC_DIALECTS_GRAPH_IR_GRAPHOPUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace modelc::graph {

/// Emits errors as "'graph.op' op <message>" at an optional location (type
/// inference may run without one, and then only reports failure).
class OpDiagnostics {
public:
  OpDiagnostics(std::optional<mlir::Location> location, llvm::StringRef opName)
      : location(location), opName(opName) {}

  template <typename... Args> mlir::LogicalResult fail(Args &&...args) const {
    if (location) {
      mlir::InFlightDiagnostic diag = mlir::emitError(*location);
      diag << "'" << opName << "' op ";
      (diag << ... << std::forward<Args>(args));
    }
    return mlir::failure();
  }

  /// `type` as a statically shaped tensor of a supported element type.
  mlir::FailureOr<mlir::RankedTensorType> tensor(mlir::Type type,
                                                 llvm::StringRef what) const;
  /// As `tensor`, and the element type is f32, f16 or bf16.
  mlir::FailureOr<mlir::RankedTensorType>
  floatTensor(mlir::Type type, llvm::StringRef what) const;
  /// As `tensor`, and the element type is not i1.
  mlir::FailureOr<mlir::RankedTensorType>
  numericTensor(mlir::Type type, llvm::StringRef what) const;
  /// As `tensor`, and the element type is i32 or i64.
  mlir::FailureOr<mlir::RankedTensorType>
  indexTensor(mlir::Type type, llvm::StringRef what) const;

  /// `input` and `weight` as float tensors of one element type (products
  /// and convolutions).
  mlir::LogicalResult inputAndWeight(mlir::Type input, mlir::Type weight,
                                     mlir::RankedTensorType &inputType,
                                     mlir::RankedTensorType &weightType) const;
  /// `axis` in [-rank, rank) made non-negative.
  mlir::FailureOr<int64_t> axis(int64_t axis, int64_t rank,
                                llvm::StringRef what = "axis") const;

  /// Fails with the verifier's own message when a required attribute is
  /// missing: type inference runs before the verifier checks for it.
  mlir::LogicalResult required(mlir::Attribute attribute,
                               llvm::StringRef name) const {
    if (attribute)
      return mlir::success();
    return fail("requires attribute '", name, "'");
  }

  /// Both element types equal.
  mlir::LogicalResult sameElementType(mlir::RankedTensorType a,
                                      llvm::StringRef aName,
                                      mlir::RankedTensorType b,
                                      llvm::StringRef bName) const;

  /// The numpy broadcast of `a` and `b`.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  broadcast(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) const;

private:
  std::optional<mlir::Location> location;
  llvm::StringRef opName;
};

/// Element count of a tensor value, as a double for cost estimates.
inline double elementCount(mlir::Value value) {
  return static_cast<double>(
      mlir::cast<mlir::RankedTensorType>(value.getType()).getNumElements());
}

/// Dimension 0 of a tensor value (1 for a scalar): where modelc-data-parallel
/// looks for the batch.
inline int64_t leadingDim(mlir::Value value) {
  auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
  return type.getRank() ? type.getDimSize(0) : 1;
}

/// "[4, 8]" for error messages.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Success with `type` appended to `inferred`.
inline mlir::LogicalResult inferred(llvm::SmallVectorImpl<mlir::Type> &types,
                                    mlir::Type type) {
  types.push_back(type);
  return mlir::success();
}

} // namespace modelc::graph

#endif // MODELC_DIALECTS_GRAPH_IR_GRAPHOPUTILS_H
