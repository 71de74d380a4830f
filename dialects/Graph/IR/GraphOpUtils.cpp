//===- GraphOpUtils.cpp - shared checks for graph op verifiers --*- C++ -*-===//

#include "dialects/Graph/IR/GraphOpUtils.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace modelc::graph;

std::string modelc::graph::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

uint64_t modelc::graph::elementBytes(Type type) {
  if (type.isSignlessInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

uint64_t modelc::graph::valueBytes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return static_cast<uint64_t>(type.getNumElements()) *
         elementBytes(type.getElementType());
}

bool modelc::graph::isSupportedElementType(Type type) {
  if (type.isF32() || type.isF16() || type.isBF16() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return false;
  unsigned width = integer.getWidth();
  if (integer.isSignless())
    return width == 1 || width == 8 || width == 16 || width == 32 ||
           width == 64;
  return integer.isUnsigned() &&
         (width == 8 || width == 16 || width == 32 || width == 64);
}

FailureOr<RankedTensorType> OpDiagnostics::tensor(Type type,
                                                  StringRef what) const {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return fail(what, " must be a ranked tensor, got ", type);
  if (!tensorType.hasStaticShape())
    return fail(what, " has a dynamic dimension (", type,
                "); dynamic shapes are not supported yet");
  if (!isSupportedElementType(tensorType.getElementType()))
    return fail(what, " has element type ", tensorType.getElementType(),
                "; expected one of ", kElementTypeNames);
  return tensorType;
}

FailureOr<RankedTensorType> OpDiagnostics::floatTensor(Type type,
                                                       StringRef what) const {
  FailureOr<RankedTensorType> tensorType = tensor(type, what);
  if (failed(tensorType))
    return failure();
  if (!isa<FloatType>(tensorType->getElementType()))
    return fail(what,
                " must have a floating-point element type (f32, f16, "
                "bf16, f64): ",
                tensorType->getElementType(), " is not supported");
  return tensorType;
}

FailureOr<RankedTensorType> OpDiagnostics::numericTensor(Type type,
                                                         StringRef what) const {
  FailureOr<RankedTensorType> tensorType = tensor(type, what);
  if (failed(tensorType))
    return failure();
  if (tensorType->getElementType().isSignlessInteger(1))
    return fail(what, " must have a numeric element type (not i1), got i1");
  return tensorType;
}

FailureOr<RankedTensorType> OpDiagnostics::indexTensor(Type type,
                                                       StringRef what) const {
  FailureOr<RankedTensorType> tensorType = tensor(type, what);
  if (failed(tensorType))
    return failure();
  Type element = tensorType->getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return fail(what, " must have element type i32 or i64, got ", element);
  return tensorType;
}

FailureOr<int64_t> OpDiagnostics::axis(int64_t axis, int64_t rank,
                                       StringRef what) const {
  if (rank == 0 || axis < -rank || axis >= rank)
    return fail(what, " ", axis, " is out of range for rank ", rank,
                rank == 0 ? std::string("; a scalar has no axes")
                          : "; expected a value in [" + std::to_string(-rank) +
                                ", " + std::to_string(rank - 1) + "]");
  return axis < 0 ? axis + rank : axis;
}

LogicalResult OpDiagnostics::sameElementType(RankedTensorType a,
                                             StringRef aName,
                                             RankedTensorType b,
                                             StringRef bName) const {
  if (a.getElementType() != b.getElementType())
    return fail("element types differ: ", aName, " is ", a.getElementType(),
                ", ", bName, " is ", b.getElementType());
  return success();
}

FailureOr<SmallVector<int64_t>>
OpDiagnostics::broadcast(ArrayRef<int64_t> a, ArrayRef<int64_t> b) const {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align at the right: i counts from the last dimension.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return fail("shapes ", formatShape(a), " and ", formatShape(b),
                  " do not broadcast: dimension -", i + 1, " is ", da, " vs ",
                  db);
    result[rank - 1 - i] = da == 1 ? db : da;
  }
  return result;
}

LogicalResult
OpDiagnostics::inputAndWeight(Type input, Type weight,
                              RankedTensorType &inputType,
                              RankedTensorType &weightType) const {
  FailureOr<RankedTensorType> x = floatTensor(input, "input");
  if (failed(x))
    return failure();
  FailureOr<RankedTensorType> w = floatTensor(weight, "weight");
  if (failed(w) || failed(sameElementType(*x, "input", *w, "weight")))
    return failure();
  inputType = *x;
  weightType = *w;
  return success();
}
