//===- GraphOps.h - graph dialect operations --------------------*- C++ -*-===//

#ifndef MODELC_DIALECTS_GRAPH_IR_GRAPHOPS_H
#define MODELC_DIALECTS_GRAPH_IR_GRAPHOPS_H

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Graph/IR/SymbolicShape.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <string>

#include "dialects/Graph/IR/GraphEnums.h.inc"

namespace modelc::graph {

namespace detail {
/// Checks what every graph op guarantees: statically shaped tensors of a
/// supported element type, and a valid `device` pin when one is present.
mlir::LogicalResult verifyGraphOp(mlir::Operation *op);
/// That every attribute of `attributes` given to an op `name` is one of its
/// own, the device pin or a dialect-prefixed one; else an error (through
/// `emit`) naming the closest of its own. The parser's type inference
/// checks this before it infers a type from the attributes, so that a
/// misspelled one is reported before any type it changes.
mlir::LogicalResult
checkAttributeNames(mlir::OperationName name,
                    llvm::ArrayRef<mlir::NamedAttribute> attributes,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emit);
} // namespace detail

/// The trait behind `detail::verifyGraphOp`, attached to every graph op.
template <typename ConcreteType>
class GraphOpTrait
    : public mlir::OpTrait::TraitBase<ConcreteType, GraphOpTrait> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return detail::verifyGraphOp(op);
  }
};

/// Elementwise with numpy broadcasting (Graph_Elementwise in GraphBase.td):
/// element i of the result reads only the element of each operand that
/// broadcasts to i, so such ops may share one loop.
template <typename ConcreteType>
class Elementwise : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {
};

/// Costs several multiply-adds per element (Graph_Transcendental in
/// GraphBase.td): the cost model's default for ops that do not implement
/// CostOpInterface.
template <typename ConcreteType>
class Transcendental
    : public mlir::OpTrait::TraitBase<ConcreteType, Transcendental> {};

/// An entry point's argument (and, from modelc-check-dynamic-dims, result)
/// attribute naming its dynamic dimensions: one string per axis, a
/// graph.dim's name or "" (static).
inline constexpr llvm::StringLiteral kDimsAttrName = "graph.dims";

/// Name of the discardable attribute that pins an op to a device.
inline constexpr llvm::StringLiteral kDeviceAttrName = "device";

/// Marks a `graph.weight_ref` or `graph.assign` of a writable weight as its
/// device's own copy in a data-parallel training step (modelc-replicate):
/// every device that runs a replica holds a copy and writes it; placement
/// keeps such ops where they are pinned.
inline constexpr llvm::StringLiteral kReplicaCopyAttrName =
    "graph.replica_copy";

/// Result type of an elementwise binary op: the broadcast shape, with
/// `resultElementType` or, when null, the operands' common element type.
mlir::LogicalResult
inferElementwiseBinary(std::optional<mlir::Location> location,
                       llvm::StringRef opName, mlir::Type lhs, mlir::Type rhs,
                       mlir::Type resultElementType,
                       llvm::SmallVectorImpl<mlir::Type> &inferred);

/// When `op`'s result is its first operand's memory seen with another shape
/// (reshape, flatten, a slice of a contiguous range), the element offset of
/// the view; nullopt otherwise. Views need no copy.
std::optional<int64_t> getViewOffset(mlir::Operation *op);

/// Whether `op`'s result is its first operand's memory (no code, no
/// buffer): the views getViewOffset gives an offset for, and graph.
/// batch_part, whose rows start where the run's batch says (its printer
/// computes the offset at run time).
bool isView(mlir::Operation *op);

/// Where an op came from, as reports, profiles, traces and runtime errors
/// say it: " (line 12)" for a model.ir, " (node '/10/Gemm')" for an ONNX
/// node (its NameLoc "file:node 'NAME'"), "" when the location says
/// neither.
std::string describeLocation(mlir::Location loc);
/// "graph.linear (line 12)", "graph.gemm (node '/10/Gemm')".
std::string describeOp(mlir::Operation *op);

/// Bytes of one element of `type` in memory (i1 takes one byte).
uint64_t elementBytes(mlir::Type type);

/// Bytes of a tensor value's data.
uint64_t valueBytes(mlir::Value value);

/// An axis attribute in [-rank, rank) (as the verifiers accept it) made
/// non-negative.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// A slice written out per input dimension: where it starts (clamped into
/// the dimension), its step, and how many elements it takes (the result's
/// extent). Dimensions the slice does not list start at 0 with step 1 and
/// keep their size. `axes` lists the sliced dimensions, non-negative, in
/// the order of the attributes.
struct NormalizedSlice {
  llvm::SmallVector<int64_t> starts, steps, sizes, axes;
};

/// The slice of `shape` that graph.slice's attributes describe; the
/// attributes must be valid for `shape` (as the verifier checks).
NormalizedSlice normalizeSlice(llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<int64_t> starts,
                               llvm::ArrayRef<int64_t> ends,
                               std::optional<llvm::ArrayRef<int64_t>> axes,
                               std::optional<llvm::ArrayRef<int64_t>> steps);

/// The dimensions of a rank-`rank` input that a reduction over `axes` (all
/// of them when absent) removes; `axes` must be valid (as the verifier
/// checks).
llvm::SmallBitVector
reducedDimensions(std::optional<llvm::ArrayRef<int64_t>> axes, int64_t rank);

/// True for the element types graph tensors may have.
bool isSupportedElementType(mlir::Type type);
/// The element types isSupportedElementType accepts, for messages.
inline constexpr const char *kElementTypeNames =
    "f32, f16, bf16, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1";

class GradientBuilder;

} // namespace modelc::graph

#include "dialects/Graph/IR/GraphInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.h.inc"

namespace modelc::graph {
/// Whether the weight `ref` reads is `mutable` (a training step writes it
/// with graph.assign): its value is not a constant of the model.
bool isWritableWeight(WeightRefOp ref);
/// The value of `v` where it is a graph.constant of one floating-point
/// element, in that element's type; else nullopt.
std::optional<llvm::APFloat> floatScalar(mlir::Value v);
} // namespace modelc::graph

#endif // MODELC_DIALECTS_GRAPH_IR_GRAPHOPS_H
