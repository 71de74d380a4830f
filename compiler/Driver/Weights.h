//===- Weights.h - the weights a model is compiled with ---------*- C++ -*-===//
//
// Reads them from a safetensors file or generates them deterministically,
// checks them against the module's graph.weight declarations, and lays them
// out in the blob that model.so embeds.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_DRIVER_WEIGHTS_H
#define MODELC_COMPILER_DRIVER_WEIGHTS_H

#include "compiler/Codegen/HostPrinter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace modelc {

/// The weights of a model, in the order of its graph.weight declarations.
struct WeightSet {
  struct Weight {
    std::string name;
    mlir::RankedTensorType type;
    const unsigned char *data = nullptr; ///< into `storage` or `file`
    uint64_t nbytes = 0;
  };
  std::vector<Weight> weights;
  std::unique_ptr<llvm::MemoryBuffer> file;
  std::vector<std::vector<unsigned char>> storage;
};

/// Reads `path` (safetensors) and matches it to the declarations: a missing,
/// extra, mis-shaped or mis-typed weight is an error naming it (at the
/// declaration when there is one). A weight declared `from f32` is read as
/// f32 and rounded to its declared type.
mlir::FailureOr<WeightSet> readSafetensorsWeights(mlir::ModuleOp module,
                                                  llvm::StringRef path);

/// Deterministic weights from `seed`: uniform in +-1/sqrt(fan_in) as
/// PyTorch initializes layers, in [0.5, 1.5] for a batch_norm's variance,
/// and independent of declaration order (each weight's stream is seeded by
/// its name).
WeightSet randomWeights(mlir::ModuleOp module, uint64_t seed);

/// Writes the weights randomWeights makes, byte for byte, as a safetensors
/// file, made and written 64 MB at a time: weights larger than memory.
mlir::LogicalResult writeRandomSafetensors(mlir::ModuleOp module, uint64_t seed,
                                           llvm::StringRef path);

/// The module's declarations with no data (for --external-weights); with
/// `sourceTypes`, the types the model's weights hold them in (f32 for a
/// weight `modelc-lower-precision` declared f16 or bf16).
WeightSet declaredWeights(mlir::ModuleOp module, bool sourceTypes = false);

/// Rounds each weight whose data holds f32 for an f16 or bf16 declaration
/// (`graph.weight ... from f32`, `modelc --precision`) to the declared type,
/// to nearest even. `set` is in declaration order.
void roundToDeclared(WeightSet &set, mlir::ModuleOp module);

/// Writes the weights one after another at 64-byte aligned offsets and
/// returns their slots; `totalBytes` receives the file size.
mlir::FailureOr<std::vector<WeightSlot>>
writeWeightBlob(const WeightSet &weights, llvm::StringRef path,
                uint64_t &totalBytes,
                const llvm::StringSet<> &writable = llvm::StringSet<>());

/// Writes the weights as a safetensors file.
mlir::LogicalResult writeSafetensors(const WeightSet &weights,
                                     llvm::StringRef path);

} // namespace modelc

#endif // MODELC_COMPILER_DRIVER_WEIGHTS_H
