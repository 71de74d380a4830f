//===- CpuPostOps.h - ops oneDNN applies after a CPU product ----*- C++ -*-===//
//
// The one table of which graph ops can follow a matrix product or a
// convolution inside a `sched.packed_product`, and how each is spelled as
// a oneDNN post-op through the runtime ABI (modelc/abi.h's
// modelc_post_op). modelc-fold-cpu-products asks it what to fold, the
// verifier what is valid, the host printer how to spell it.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_DIALECTS_SCHED_IR_CPUPOSTOPS_H
#define MODELC_DIALECTS_SCHED_IR_CPUPOSTOPS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace modelc::sched {

/// How one op applies to the product's value `y` (ABI modelc_post_op).
struct CpuPostOp {
  /// MODELC_POST_ELTWISE (y = f(y)), MODELC_POST_BINARY (y = y op v), or
  /// MODELC_POST_SUM (a convolution's y = y + alpha * v, v of y's shape;
  /// at most one per product: isSum).
  const char *kind;
  /// MODELC_ELTWISE_* or MODELC_BINARY_*.
  const char *alg;
  /// Eltwise parameters (leaky_relu's slope).
  float alpha = 0.0f, beta = 0.0f;
  /// Binary: the value from above and how it broadcasts to `y`
  /// (MODELC_BROADCAST_FULL, _CHANNEL: one value per output column of a
  /// matrix product or per output channel of a convolution, _SCALAR, or
  /// _CONSTANT: a graph.constant of one element, its value also in
  /// `alpha`).
  mlir::Value operand;
  const char *broadcast = "";
  bool isSum() const { return llvm::StringRef(kind) == "MODELC_POST_SUM"; }
};

/// The post-op `op` is when it reads `chain`, the product's value so far
/// (`conv`: the product is a convolution, NCHW), or nullopt when oneDNN
/// cannot apply it after the product.
std::optional<CpuPostOp> cpuPostOp(mlir::Operation *op, mlir::Value chain,
                                   bool conv);

/// Whether `op` casts `chain`, an f16 or bf16 product's value, to f32: the
/// last op a sched.packed_product may hold (oneDNN writes its result in
/// f32; `modelc --precision` casts every output so).
bool isF32OutputCast(mlir::Operation *op, mlir::Value chain);

/// Whether `op` is a product a sched.packed_product can start with: a
/// linear, matmul, gemm or conv2d whose operands and result are all f32,
/// all f16 or all bf16 (accumulated in f32), whose weight is a constant
/// (graph.weight_ref or graph.constant), in the forms the runtime's packed
/// kernels take.
bool isPackableProduct(mlir::Operation *op);

} // namespace modelc::sched

#endif // MODELC_DIALECTS_SCHED_IR_CPUPOSTOPS_H
