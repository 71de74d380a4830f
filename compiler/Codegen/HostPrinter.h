//===- HostPrinter.h - the host C++ of a model's plans ----------*- C++ -*-===//
//
// Prints the scheduled IR (after buildSchedulePipeline) as C++ (one source
// file, or a main file and part files: HostParts.h) that implements the
// model.so ABI (runtime/include/modelc/abi.h): per
// plan and entry point, straight-line code on the CPU or tasks enqueued on
// device streams, the CPU kernels' calls (compiler/kernels/cpu/kernels.h)
// and fused loops, the descriptor and the weight table. It follows the
// decisions in the IR (sched.fused, sched.gemm, sched.buffer, sched.waits,
// ...) and takes none; CudaPrinter prints the ops on GPUs.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_HOSTPRINTER_H
#define MODELC_COMPILER_CODEGEN_HOSTPRINTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace modelc {

/// The includes every generated host source starts with (after its
/// comment line): the ABI, the CPU kernels and the standard headers they
/// use. modelc precompiles exactly these (BuildLibrary.cpp).
llvm::StringRef generatedCodeIncludes();

/// Where one weight lives in the embedded weight blob.
struct WeightSlot {
  std::string name;
  mlir::RankedTensorType type;
  uint64_t offset = 0;
  uint64_t nbytes = 0;
  /// A weight the model writes that starts as zeros (optimizer state):
  /// the embedded data does not hold it (MODELC_WEIGHT_ZEROS).
  bool zeros = false;
};

struct CpuEmitOptions {
  std::string compilerVersion;
  std::string compilerFlags;
  /// The weight table, in the order of the module's graph.weight ops.
  std::vector<WeightSlot> weights;
  /// Embedded: the blob file that the generated source includes with
  /// .incbin (its size is weightBlobBytes). Empty when weights are external.
  std::string weightBlobPath;
  uint64_t weightBlobBytes = 0;
  /// External: the safetensors path recorded in the model.
  std::string externalWeightsPath;
  /// Multi-device plans check, before each task, that it touches only memory
  /// of its own device (the runtime's `check` callback).
  bool checked = false;
  /// GPU plans: cuBLASLt may use TF32 for f32 matrix products.
  bool allowTf32 = false;
  /// A CPU entry point with more ops than this that print code (kernel
  /// calls, loops) is printed as functions of at most this many such ops
  /// (its parts), called in turn: the C++ compiler's time grows faster than
  /// the size of a function, and parts can go to separate files.
  unsigned opsPerFunction = 100;
};

/// One plan to emit: a placed module (ops carry `device` attributes and
/// transfers are inserted) and the plan's devices, the host first.
struct PlanModule {
  std::string name;
  mlir::ModuleOp module;
  std::vector<std::string> devices;
  /// A size regime (docs/dynamic.md): the plan runs sizes min..max of
  /// dynamic dimension `regimeDim` (an index into the descriptor's
  /// dimensions); -1: every size.
  int32_t regimeDim = -1;
  int64_t regimeMin = 0, regimeMax = 0;
};

/// What the emitter decided, for reports and tests.
struct CpuEmitReport {
  struct Entry {
    std::string plan;
    std::string name;
    uint64_t arenaBytes = 0;
    /// Per device of the plan (its order), the arena it plans there.
    std::vector<std::pair<std::string, uint64_t>> deviceArenas;
    unsigned kernelCalls = 0;
    unsigned fusedLoops = 0;
    unsigned fusedOps = 0;
  };
  std::vector<Entry> entries;
};

/// The CUDA side of a model with GPU plans: emitModel fills `source` (the
/// kernels, for nvcc) and `kernelNames`; the host source refers to the
/// fatbin as the symbols `modelc_gpu_image` / `modelc_gpu_image_end`, which
/// the caller provides (GpuCode::imageAsm, an .incbin of the built image).
struct GpuCode {
  std::string source;
  std::vector<std::string> kernelNames;
  /// Set by the caller before emitModel: the file the fatbin will be in
  /// (embedded with .incbin), or empty to embed a placeholder (host
  /// emulation: the kernels are host functions linked into model.so).
  std::string imagePath;
};

/// Writes the C++ source of a model with one plan per element of `plans`
/// (every module has the same entry points and weights, and went through
/// the schedule pipeline: buildSchedulePipeline). A plan on the host
/// alone runs straight-line code; a plan with other devices enqueues one
/// task per op on per-device streams, with copies and events between them.
mlir::LogicalResult emitModel(llvm::ArrayRef<PlanModule> plans,
                              const CpuEmitOptions &options,
                              llvm::raw_ostream &os,
                              CpuEmitReport *report = nullptr,
                              GpuCode *gpu = nullptr);

/// The host C++ of a model as translation units that compile in parallel:
/// `main` (descriptor, embedded data, entry points) and `parts`, files with
/// the parts of long CPU entry points (CpuEmitOptions::opsPerFunction),
/// their ops balanced across at most the `files` asked for. With `files` at
/// most 1, or no long entry point, `main` is the whole model.
struct HostSources {
  std::string main;
  std::vector<std::string> parts;
};
mlir::LogicalResult emitModelSources(llvm::ArrayRef<PlanModule> plans,
                                     const CpuEmitOptions &options,
                                     unsigned files, HostSources &sources,
                                     CpuEmitReport *report = nullptr,
                                     GpuCode *gpu = nullptr);

/// Bytes of scratch `op` needs on the CPU (or a sim device) while it runs,
/// in the order the printer uses them: conv2d's im2col columns, then f32
/// copies of f16/bf16 operands, then the f32 result. modelc-plan-memory
/// places them.
std::vector<uint64_t> cpuScratchBytes(mlir::Operation *op);

/// Whether the host printer has a kernel call for `op` (not elementwise:
/// fused loops print those) with its operand types: its kernel table.
bool hostPrinterPrints(mlir::Operation *op);

/// The ABI dtype code (MODELC_DTYPE_*) of an element type.
unsigned abiDTypeCode(mlir::Type type);

/// Name of the input or output that the emitter records for argument or
/// result `index` of `function` (the `graph.name` attribute, or inputN /
/// outputN).
std::string boundaryName(mlir::Operation *function, bool isResult,
                         unsigned index);

} // namespace modelc

#endif // MODELC_COMPILER_CODEGEN_HOSTPRINTER_H
