// cuBLASLt, opened lazily with dlopen like the driver (cuda_driver.hpp):
// matrix products of GPU plans (the ABI's `gemm`). Only the calls and
// constants the runtime uses are declared, with the values of CUDA 12/13's
// cublasLt.h and library_types.h; the library's C ABI is stable across
// those versions.
#ifndef MODELC_RUNTIME_CUBLASLT_HPP
#define MODELC_RUNTIME_CUBLASLT_HPP

#include "cuda_driver.hpp"
#include "modelc/abi.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

namespace modelc::detail {

using cublasStatus = int;
using cublasLtHandle = struct cublasLtContext *;
using cublasLtMatmulDesc = struct cublasLtMatmulDescOpaque *;
using cublasLtMatrixLayout = struct cublasLtMatrixLayoutOpaque *;
using cublasLtMatmulPreference = struct cublasLtMatmulPreferenceOpaque *;
struct cublasLtMatmulAlgo {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult {
  cublasLtMatmulAlgo algo;
  size_t workspaceSize;
  cublasStatus state;
  float wavesCount;
  int reserved[4];
};

struct CublasLtApi {
  cublasStatus (*create)(cublasLtHandle *);
  cublasStatus (*destroy)(cublasLtHandle);
  cublasStatus (*descCreate)(cublasLtMatmulDesc *, int computeType,
                             int scaleType);
  cublasStatus (*descDestroy)(cublasLtMatmulDesc);
  cublasStatus (*descSetAttribute)(cublasLtMatmulDesc, int, const void *,
                                   size_t);
  cublasStatus (*layoutCreate)(cublasLtMatrixLayout *, int type, uint64_t rows,
                               uint64_t cols, int64_t ld);
  cublasStatus (*layoutDestroy)(cublasLtMatrixLayout);
  cublasStatus (*layoutSetAttribute)(cublasLtMatrixLayout, int, const void *,
                                     size_t);
  cublasStatus (*preferenceCreate)(cublasLtMatmulPreference *);
  cublasStatus (*preferenceDestroy)(cublasLtMatmulPreference);
  cublasStatus (*preferenceSetAttribute)(cublasLtMatmulPreference, int,
                                         const void *, size_t);
  cublasStatus (*algoGetHeuristic)(cublasLtHandle, cublasLtMatmulDesc,
                                   cublasLtMatrixLayout, cublasLtMatrixLayout,
                                   cublasLtMatrixLayout, cublasLtMatrixLayout,
                                   cublasLtMatmulPreference, int,
                                   cublasLtMatmulHeuristicResult *, int *);
  cublasStatus (*matmul)(cublasLtHandle, cublasLtMatmulDesc, const void *alpha,
                         const void *a, cublasLtMatrixLayout, const void *b,
                         cublasLtMatrixLayout, const void *beta, const void *c,
                         cublasLtMatrixLayout, void *d, cublasLtMatrixLayout,
                         const cublasLtMatmulAlgo *, void *workspace,
                         size_t workspaceBytes, CUstream);
  std::string library;
};

/// cuBLASLt, opened on first use: $MODELC_CUBLASLT names the library file,
/// else libcublasLt.so.13, .so.12, .so. Null with `why` set when none
/// opens or one lacks a call.
const CublasLtApi *cublasLtApi(std::string &why);

/// One call site's cuBLASLt plan: descriptors and the chosen algorithm,
/// made on its first call in a run's resources.
struct GemmPlan {
  cublasLtMatmulDesc desc = nullptr;
  cublasLtMatrixLayout a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo algo{};
  size_t workspace = 0;
  int epilogue = 0;
  uint32_t alignment[4] = {}; // of cuBLASLt's A, B, C, D, as planned
};

/// What a cuBLASLt plan is made for: a call site and its matrices' layout.
using GemmPlanKey =
    std::tuple<uint32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t>;

/// Per GPU of a run: the cuBLASLt handle, its workspace and the plans.
struct GemmState {
  cublasLtHandle handle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  /// Per call site and size: a dynamic dimension gives one site several
  /// m or batch counts (docs/dynamic.md), each its own plan.
  /// Per call site and layout (the sizes, leading dimensions and batch
  /// strides: a dynamic dimension changes them between runs).
  std::map<GemmPlanKey, GemmPlan> plans;
};

/// Issues `g` on `stream` of GPU `device` (its context is current). Throws
/// modelc::Error naming the call, the device and the site.
void runGemm(const CublasLtApi &lt, const CudaApi &cuda, GemmState &state,
             CUstream stream, const modelc_gemm &g, const std::string &device);

/// Frees what runGemm made (the device's context is current).
void releaseGemmState(const CublasLtApi &lt, const CudaApi &cuda,
                      GemmState &state);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_CUBLASLT_HPP
