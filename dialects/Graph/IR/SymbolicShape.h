//===- SymbolicShape.h - sizes as products of dynamic dimensions -*- C++
//-*-===//
//
// A model with dynamic dimensions (docs/dynamic.md) holds every one at its
// max in the IR's types; what a size *is* in terms of the dimensions is a
// symbolic shape: per axis a product of a constant and dimensions
// ("batch", "batch*8", "batch*seq", "512"). Each op says how its result's
// symbolic shape follows from its operands' (SymbolicShapeOpInterface in
// GraphInterfaces.td); inferSymbolicShapes follows a function from its
// arguments' graph.dims. modelc-check-dynamic-dims reports what cannot be
// inferred, specializeDims evaluates the shapes at other sizes, and the
// back ends print each size as an expression of the run's dimensions.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_DIALECTS_GRAPH_IR_SYMBOLICSHAPE_H
#define MODELC_DIALECTS_GRAPH_IR_SYMBOLICSHAPE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace modelc::graph {

/// One axis's size: `coef` times the product of `dims` (sorted by name; a
/// dimension appears once per power). No dims: a static size.
struct SymDim {
  int64_t coef = 1;
  llvm::SmallVector<mlir::StringAttr, 2> dims;

  static SymDim of(int64_t size) { return SymDim{size, {}}; }
  static SymDim named(mlir::StringAttr dim) { return SymDim{1, {dim}}; }
  bool isStatic() const { return dims.empty(); }
  SymDim operator*(const SymDim &other) const;
  bool operator==(const SymDim &other) const {
    return coef == other.coef && dims == other.dims;
  }
  bool operator!=(const SymDim &other) const { return !(*this == other); }
  /// The size when each dimension has size(dim).
  int64_t eval(llvm::function_ref<int64_t(mlir::StringAttr)> size) const;
  /// "batch", "batch*8", "batch*seq", "512".
  std::string str() const;
  /// The inverse of str(); nullopt when `text` is not a product of
  /// positive integers and names.
  static std::optional<SymDim> parse(mlir::MLIRContext *context,
                                     llvm::StringRef text);
};

using SymShape = llvm::SmallVector<SymDim, 4>;

/// A dimension split over replicas (modelc-data-parallel of a dynamic
/// batch): "batch[1/2]" is the second of two balanced parts of `batch`,
/// a dimension of its own whose size follows from the run's `batch`.
struct DimPart {
  llvm::StringRef base;
  int64_t index = 0, parts = 1;
};
/// "batch[1/2]" for part 1 of 2 of `batch`.
std::string dimPartName(llvm::StringRef base, int64_t index, int64_t parts);
/// The part `name` names, or nullopt for a dimension of its own.
std::optional<DimPart> parseDimPart(llvm::StringRef name);
/// The balanced split of `size` into `parts`: the first size % parts
/// parts have one more element than the others; partOffset is where part
/// `index` starts.
int64_t partSize(int64_t size, int64_t index, int64_t parts);
int64_t partOffset(int64_t size, int64_t index, int64_t parts);

/// A static shape as a symbolic one.
SymShape staticShape(llvm::ArrayRef<int64_t> shape);
/// Whether any axis of `shape` has a dimension.
bool hasSymbols(llvm::ArrayRef<SymDim> shape);
/// Whether only axis 0 of `shape` (if any) has dimensions: the case the
/// first back ends handled (docs/dynamic.md).
bool onlyLeading(llvm::ArrayRef<SymDim> shape);
/// "[batch, seq, 512]".
std::string describe(llvm::ArrayRef<SymDim> shape);

/// Numpy broadcasting of symbolic shapes (right-aligned; a static 1
/// broadcasts). Empty string, or why the shapes cannot be proved to
/// broadcast (a dimension against a different one or a static size).
std::string broadcastSymbolic(llvm::ArrayRef<SymShape> operands,
                              SymShape &result);

/// A reshape's result: the operand's symbolic shape `input` regrouped into
/// `shape` (static sizes at the current sizes of the dimensions, `size`).
/// The dimensions of a group of axes go to the first output axis of the
/// group each divides. Empty string or why not.
std::string reshapeSymbolic(llvm::ArrayRef<SymDim> input,
                            llvm::ArrayRef<int64_t> shape,
                            llvm::function_ref<int64_t(mlir::StringAttr)> size,
                            SymShape &result);

/// The symbolic shapes of a function's values that have dimensions.
struct SymbolicShapes {
  llvm::DenseMap<mlir::Value, SymShape> shapes;
  /// The current size of each dimension (from the arguments' types).
  llvm::DenseMap<mlir::StringAttr, int64_t> sizes;

  /// The value's shape, or null when it is static.
  const SymShape *lookup(mlir::Value v) const {
    auto it = shapes.find(v);
    return it == shapes.end() ? nullptr : &it->second;
  }
  /// The current size of `dim` (a part's from its base's).
  int64_t sizeOf(mlir::StringAttr dim) const;
};

/// Why an op whose operands have dimensions only at axis 0 and that has
/// no rule of its own may not carry the dimension (modelc-check-dynamic-
/// dims passes BatchValues.h's mixesSamples); "" when it may.
using LeadingCheck = llvm::function_ref<std::string(
    mlir::Operation *op, const SymDim &dim,
    llvm::function_ref<bool(mlir::Value)> carries)>;

/// Follows `function` from its arguments' graph.dims: each op's result
/// from its rule (SymbolicShapeOpInterface, the Elementwise trait, a
/// region's yield; otherwise a dimension 0 carried to the result's
/// dimension 0, if `leading` agrees), checked against the result's type.
/// On failure, the error is emitted at the op (`emitErrors`) and the
/// result is failure.
llvm::FailureOr<SymbolicShapes>
inferSymbolicShapes(mlir::func::FuncOp function, bool emitErrors = true,
                    std::optional<LeadingCheck> leading = std::nullopt);

/// Rewrites every entry point of `module` for `sizes` of its dynamic
/// dimensions: each value's type is its symbolic shape evaluated there, a
/// reshape's shape too (its `graph.dims` written, so that its grouping
/// stays exact at any size). The graph.dim ops keep their ranges. Fails
/// after an error when a function's shapes cannot be inferred.
mlir::LogicalResult
specializeDims(mlir::ModuleOp module,
               llvm::ArrayRef<std::pair<llvm::StringRef, int64_t>> sizes);

} // namespace modelc::graph

#endif // MODELC_DIALECTS_GRAPH_IR_SYMBOLICSHAPE_H
