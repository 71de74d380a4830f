//===- BuildLibrary.h - compile generated sources into model.so -*- C++ -*-===//

#ifndef MODELC_COMPILER_DRIVER_BUILDLIBRARY_H
#define MODELC_COMPILER_DRIVER_BUILDLIBRARY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc {

/// Include folders generated code needs: the runtime's ABI header and the
/// kernel templates. Taken from $MODELC_INCLUDE_DIR (one folder holding
/// both `modelc/abi.h` and `cpu/kernels.h`) when set, else from the source
/// tree modelc was built from.
std::vector<std::string> generatedCodeIncludeDirs();

/// Finds nvcc, which GPU plans need: $MODELC_NVCC when set (it must be an
/// executable), else `nvcc` on PATH, else /usr/local/cuda/bin/nvcc. On
/// failure `why` says where it looked.
std::optional<std::string> findNvcc(std::string &why);

/// Runs the system C++ compiler ($CXX, else c++) on `sources` to produce
/// the shared library `output` (-O3, PIC, hidden visibility but for the
/// entry symbol, no link-time dependency). One source compiles and links in
/// one command; several compile to objects next to them (their output in
/// SOURCE.log), up to `jobs` at a time (0: one per hardware thread), then
/// link. The link's output (or the single command's) goes to `logPath`; on
/// failure an error says where to look. `emulatedKernels`: a CUDA source to
/// compile as host code into the library (--cuda-emulation).
mlir::LogicalResult
buildSharedLibrary(llvm::ArrayRef<std::string> sources, llvm::StringRef output,
                   llvm::StringRef logPath,
                   llvm::StringRef emulatedKernels = llvm::StringRef(),
                   unsigned jobs = 0);

/// Compiles CUDA source `source` with `nvcc` into a fatbin at `output`: SASS
/// for sm_80 and sm_90 and PTX for later GPUs. Its output goes to logPath,
/// and the first part of it to stderr on failure.
mlir::LogicalResult buildFatbin(llvm::StringRef nvcc, llvm::StringRef source,
                                llvm::StringRef output,
                                llvm::StringRef logPath);

} // namespace modelc

#endif // MODELC_COMPILER_DRIVER_BUILDLIBRARY_H
