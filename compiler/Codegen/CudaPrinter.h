//===- CudaPrinter.h - CUDA kernels for ops placed on GPUs ------*- C++ -*-===//
//
// An op placed on a `cuda` device becomes, in model.so, a host task that
// issues work on that device's compute stream: kernels generated here (one
// CUDA C++ source for the whole model, built by nvcc into a fatbin that
// model.so embeds) launched with the ABI's `launch_kernel`, and matrix
// products through the runtime's cuBLASLt (`gemm`). Each kernel is
// specialized to its op: sizes and strides are constants, except a dynamic
// dimension 0 (docs/dynamic.md): its kernels take the run's element or row
// count as a parameter and their grids are computed from it at launch.
// Identical kernels (repeated layers) are emitted once.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_CUDAPRINTER_H
#define MODELC_COMPILER_CODEGEN_CUDAPRINTER_H

#include "compiler/Codegen/StridedView.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace modelc {

/// The CUDA source of one model: kernels and the constants they read.
class GpuModule {
public:
  struct Param {
    std::string type; ///< "const float *"
    std::string name;
  };
  /// The index of a kernel with these parameters and body (added unless an
  /// identical one exists). `threads`: the most threads per block it is
  /// launched with; `barriers`: it calls __syncthreads; `what`: a word for
  /// its name, which error messages show ("softmax": modelc_k7_softmax).
  unsigned addKernel(const std::vector<Param> &params, const std::string &body,
                     unsigned threads, bool barriers, llvm::StringRef what);
  /// The device symbol holding a graph.constant's values.
  std::string constantSymbol(mlir::Operation *constant);

  bool empty() const { return names.empty(); }
  /// Some op's matrix products run in cuBLASLt (the ABI's gemm).
  bool usesGemm = false;
  const std::vector<std::string> &kernelNames() const { return names; }
  /// The whole .cu text (it includes cuda/kernels.cuh).
  std::string source(llvm::StringRef compilerVersion) const;

private:
  std::vector<std::string> names;
  std::string kernels, constants;
  llvm::StringMap<unsigned> byText;
  llvm::DenseMap<mlir::Operation *, std::string> constantNames;
};

/// What emitting one op's GPU task needs from the function emitter.
struct GpuOpContext {
  unsigned device = 0; ///< index into the plan's devices
  /// The op's name without the dialect ("softmax"), for kernel names.
  std::string opName;
  /// The op and its line ("graph.linear (line 12)"), for error messages.
  std::string what;
  /// A host C++ expression of a value's device address.
  std::function<std::string(mlir::Value)> pointer;
  /// A host C++ expression of `count` (elements or rows, a multiple of
  /// the value's dimension 0) at the run's size: the number itself unless
  /// the value's dimension 0 is dynamic (docs/dynamic.md). Unset: static.
  std::function<std::string(int64_t, mlir::Value)> sized;
  /// A host C++ expression of the product of axes [from, to) of a value at
  /// the run's sizes (a literal where they are static). Unset: static.
  std::function<std::string(mlir::Value, size_t, size_t)> extent;
  /// Arena offsets of the op's scratch (gpuScratchBytes), in order.
  std::vector<uint64_t> scratch;
  /// For ops that check indices (gpuOpChecksIndices): a host expression of
  /// this device's error word (int *) and the code this op stores there.
  std::string errorWord;
  int errorCode = 0;
  /// Numbers call sites of `gemm` (the runtime caches per site).
  unsigned *gemmSites = nullptr;
  /// cuBLASLt may use TF32 for f32 products (--allow-tf32).
  bool allowTf32 = false;
  /// The op's only user, a relu, is computed by its matrix products'
  /// epilogue (linear, matmul, conv2d).
  bool reluEpilogue = false;
  /// The op's only user multiplies its matmul by this constant: alpha.
  double scale = 1.0;
  /// A transpose: the slice whose result (through reshapes) it alone reads,
  /// folded into its kernel; the slice has no kernel or buffer of its own.
  mlir::Operation *foldedSlice = nullptr;
  /// A linear whose only user adds a value to it: the add's result (where
  /// the GEMM writes) and the value (C, beta 1), as host expressions.
  std::string residualOut, residualIn;
  /// A matmul: operands read as strided views of earlier buffers.
  std::optional<StridedOperand> stridedOperands[2];
  /// A graph.assign: a host expression of the weight's copy on this device
  /// (const void *), which its kernel writes.
  std::string assignTarget;
};

/// Writes into `task` (the body of a host task function) the launches of
/// `op`, adding its kernels to `module`. Errors say what is not supported
/// on a GPU yet.
mlir::LogicalResult emitGpuOp(mlir::Operation *op, GpuModule &module,
                              const GpuOpContext &context,
                              llvm::raw_ostream &task);

/// Whether the CUDA printer has kernels for `op` (not elementwise: fused
/// kernels print those) with its operand types: its kernel table.
bool cudaPrinterPrints(mlir::Operation *op);

/// Bytes of scratch `op` needs on a GPU while it runs (conv2d's columns).
std::vector<uint64_t> gpuScratchBytes(mlir::Operation *op);

/// Whether `op` may report an index error on a GPU (it needs an error word).
bool gpuOpChecksIndices(mlir::Operation *op);

} // namespace modelc

#endif // MODELC_COMPILER_CODEGEN_CUDAPRINTER_H
