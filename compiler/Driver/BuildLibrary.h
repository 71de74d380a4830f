//===- BuildLibrary.h - compile generated sources into model.so -*- C++ -*-===//

#ifndef MODELC_COMPILER_DRIVER_BUILDLIBRARY_H
#define MODELC_COMPILER_DRIVER_BUILDLIBRARY_H

#include "mlir/Support/LLVM.h"
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

/// Runs the system C++ compiler ($CXX, else c++) on `source` to produce the
/// shared library `output` (-O3, PIC, hidden visibility but for the entry
/// symbol, no link-time dependency). Its output goes to `logPath`; on
/// failure an error says where to look.
/// Finds nvcc, which GPU plans need: $MODELC_NVCC when set (it must be an
/// executable), else `nvcc` on PATH, else /usr/local/cuda/bin/nvcc. On
/// failure `why` says where it looked.
std::optional<std::string> findNvcc(std::string &why);

mlir::LogicalResult buildSharedLibrary(llvm::StringRef source,
                                       llvm::StringRef output,
                                       llvm::StringRef logPath);

} // namespace modelc

#endif // MODELC_COMPILER_DRIVER_BUILDLIBRARY_H
