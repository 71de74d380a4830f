//===- StridedView.h - matmul operands read in place as views ---*- C++ -*-===//
//
// Whether cuBLASLt can read a matmul operand made by slices, reshapes and
// transposes straight from the buffer they start from, as a strided matrix
// (attention's q, k^T and v from one qkv buffer). modelc-fold-gemm asks it;
// the GEMM printer only spells the view it recorded.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_STRIDEDVIEW_H
#define MODELC_COMPILER_CODEGEN_STRIDEDVIEW_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace modelc {

/// A matmul operand read straight from the buffer a chain of slices,
/// reshapes and transposes started from, as cuBLASLt's strided matrices.
struct StridedOperand {
  mlir::Value base;        ///< the buffer read
  int64_t offset = 0;      ///< elements from its start
  bool transposed = false; ///< stored as the transpose, row-major
  int64_t ld = 0;          ///< elements between stored rows
  int64_t batchStride = 0; ///< elements between matrices (0: one matrix)
  /// The ops computed by reading the buffer this way (operand first).
  llvm::SmallVector<mlir::Operation *> chain;
};

/// Operand `index` of a matmul as a strided view of an earlier buffer, when
/// its producers up to that buffer are slices, reshapes and transposes that
/// `foldable` allows (single use, same GPU) and the result is a matrix
/// cuBLASLt can read (a unit stride in one of its last two dimensions, one
/// stride across its batch); otherwise nothing (the operand is read as is).
std::optional<StridedOperand>
stridedMatmulOperand(mlir::Operation *matmul, unsigned index,
                     llvm::function_ref<bool(mlir::Operation *)> foldable);

/// The batch stride (elements) of a matmul operand of `shape`, for output
/// batch dimensions `batch`: 0 for one matrix, a matrix for one per output
/// matrix; none for other broadcasts.
std::optional<int64_t> uniformBatchStride(llvm::ArrayRef<int64_t> shape,
                                          llvm::ArrayRef<int64_t> batch);

} // namespace modelc

#endif // MODELC_COMPILER_CODEGEN_STRIDEDVIEW_H
