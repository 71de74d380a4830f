#include "cublaslt.hpp"
#include "dl_symbol.hpp"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace modelc::detail {
namespace {

// Values of cublasLt.h, cublas_api.h and library_types.h (CUDA 12, 13).
constexpr int kComputeF32 = 68;         // CUBLAS_COMPUTE_32F
constexpr int kComputeF32FastTf32 = 77; // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kR32F = 0, kR16F = 2, kR16BF = 14;
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7,
              kDescBiasPointer = 8;
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;
constexpr int kPrefMaxWorkspace = 1;
constexpr int kPrefMinAlignmentA = 5; // then B, C, D: 6, 7, 8
constexpr int kEpilogueDefault = 1, kEpilogueRelu = 2, kEpilogueBias = 4;
constexpr size_t kWorkspaceBytes = 32u << 20;

std::string statusName(cublasStatus s) {
  switch (s) {
  case 1:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case 3:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case 7:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case 8:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case 11:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case 13:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case 14:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case 15:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "cuBLAS status " + std::to_string(s);
  }
}

struct Loaded {
  CublasLtApi api{};
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded result;
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("MODELC_CUBLASLT"); env && *env)
    candidates = {env};
  else
    candidates = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  void *handle = nullptr;
  std::string errors;
  for (const std::string &name : candidates) {
    handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      result.api.library = name;
      break;
    }
    const char *why = ::dlerror();
    errors += (errors.empty() ? "" : "; ") + name +
              (why ? std::string(": ") + why : std::string());
  }
  if (!handle) {
    result.why = "cannot load cuBLASLt (" + errors +
                 "); install the CUDA toolkit's libcublasLt or set "
                 "MODELC_CUBLASLT";
    return result;
  }
  CublasLtApi &a = result.api;
  std::string missing;
  resolveSymbol(handle, "cublasLtCreate", a.create, missing);
  resolveSymbol(handle, "cublasLtDestroy", a.destroy, missing);
  resolveSymbol(handle, "cublasLtMatmulDescCreate", a.descCreate, missing);
  resolveSymbol(handle, "cublasLtMatmulDescDestroy", a.descDestroy, missing);
  resolveSymbol(handle, "cublasLtMatmulDescSetAttribute", a.descSetAttribute,
                missing);
  resolveSymbol(handle, "cublasLtMatrixLayoutCreate", a.layoutCreate, missing);
  resolveSymbol(handle, "cublasLtMatrixLayoutDestroy", a.layoutDestroy,
                missing);
  resolveSymbol(handle, "cublasLtMatrixLayoutSetAttribute",
                a.layoutSetAttribute, missing);
  resolveSymbol(handle, "cublasLtMatmulPreferenceCreate", a.preferenceCreate,
                missing);
  resolveSymbol(handle, "cublasLtMatmulPreferenceDestroy", a.preferenceDestroy,
                missing);
  resolveSymbol(handle, "cublasLtMatmulPreferenceSetAttribute",
                a.preferenceSetAttribute, missing);
  resolveSymbol(handle, "cublasLtMatmulAlgoGetHeuristic", a.algoGetHeuristic,
                missing);
  resolveSymbol(handle, "cublasLtMatmul", a.matmul, missing);
  if (!missing.empty()) {
    result.why = a.library + " is not a usable cuBLASLt: it has no " + missing;
    return result;
  }
  result.ok = true;
  return result;
}

/// The largest power of two (up to 256) dividing the address of every
/// matrix of a batch: cuBLASLt's heuristic assumes 256 unless told.
uint32_t alignment(const void *p, int64_t stride, uint32_t elementBytes,
                   int64_t batch) {
  uint64_t bits =
      reinterpret_cast<uintptr_t>(p) |
      (batch > 1 ? static_cast<uint64_t>(stride) * elementBytes : 0) | 256u;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

int dataType(uint32_t dtype) {
  return dtype == MODELC_DTYPE_F16    ? kR16F
         : dtype == MODELC_DTYPE_BF16 ? kR16BF
                                      : kR32F;
}

void destroyPlan(const CublasLtApi &lt, GemmPlan &plan) {
  lt.layoutDestroy(plan.a);
  lt.layoutDestroy(plan.b);
  lt.layoutDestroy(plan.c);
  lt.descDestroy(plan.desc);
}

} // namespace

const CublasLtApi *cublasLtApi(std::string &why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

void runGemm(const CublasLtApi &lt, const CudaApi &cuda, GemmState &state,
             CUstream stream, const modelc_gemm &g, const std::string &device) {
  // Named only when something fails: this runs for every product of a run.
  auto where = [&] {
    return (g.what ? std::string(g.what) + ", " : std::string()) + "site " +
           std::to_string(g.site);
  };
  auto check = [&](cublasStatus s, const char *call) {
    if (s != 0)
      throw Error(std::string(call) + " failed on " + device + " (" + where() +
                  "): " + statusName(s));
  };
  if (g.dtype != MODELC_DTYPE_F32 && g.dtype != MODELC_DTYPE_F16 &&
      g.dtype != MODELC_DTYPE_BF16)
    throw Error("gemm on " + device + " (" + where() + "): element type code " +
                std::to_string(g.dtype) + " is not f32, f16 or bf16");
  if (!state.handle)
    check(lt.create(&state.handle), "cublasLtCreate");
  if (!state.workspace) {
    cudaCheck(cuda.cuMemAlloc(&state.workspace, kWorkspaceBytes), "cuMemAlloc",
              device, "the cuBLASLt workspace");
    state.workspaceBytes = kWorkspaceBytes;
  }
  uint32_t elementBytes = g.dtype == MODELC_DTYPE_F32 ? 4 : 2;
  // cuBLASLt's A is our B, its B our A (below).
  const void *cIn = g.c_in ? g.c_in : g.c;
  uint32_t aligned[4] = {alignment(g.b, g.stride_b, elementBytes, g.batch),
                         alignment(g.a, g.stride_a, elementBytes, g.batch),
                         alignment(cIn, g.stride_c, elementBytes, g.batch),
                         alignment(g.c, g.stride_c, elementBytes, g.batch)};
  GemmPlanKey key(g.site, g.m, g.n, g.k, g.batch, g.lda, g.ldb, g.ldc,
                  g.stride_a, g.stride_b, g.stride_c);
  auto found = state.plans.find(key);
  if (found != state.plans.end() &&
      std::memcmp(found->second.alignment, aligned, sizeof aligned) != 0) {
    // The same site with less aligned data: plan again.
    destroyPlan(lt, found->second);
    state.plans.erase(found);
    found = state.plans.end();
  }
  if (found == state.plans.end()) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
    // cuBLASLt's A is our B and its B our A; its result has n rows.
    GemmPlan plan;
    int type = dataType(g.dtype);
    bool tf32 =
        g.dtype == MODELC_DTYPE_F32 && (g.flags & MODELC_GEMM_ALLOW_TF32);
    check(lt.descCreate(&plan.desc, tf32 ? kComputeF32FastTf32 : kComputeF32,
                        kR32F),
          "cublasLtMatmulDescCreate");
    int opA = g.trans_b ? 1 : 0, opB = g.trans_a ? 1 : 0;
    check(lt.descSetAttribute(plan.desc, kDescTransA, &opA, sizeof opA),
          "cublasLtMatmulDescSetAttribute");
    check(lt.descSetAttribute(plan.desc, kDescTransB, &opB, sizeof opB),
          "cublasLtMatmulDescSetAttribute");
    bool relu = g.flags & MODELC_GEMM_RELU;
    plan.epilogue = g.bias
                        ? (relu ? kEpilogueRelu | kEpilogueBias : kEpilogueBias)
                        : (relu ? kEpilogueRelu : kEpilogueDefault);
    uint32_t epilogue = static_cast<uint32_t>(plan.epilogue);
    check(lt.descSetAttribute(plan.desc, kDescEpilogue, &epilogue,
                              sizeof epilogue),
          "cublasLtMatmulDescSetAttribute");
    auto layout = [&](cublasLtMatrixLayout &l, uint64_t rows, uint64_t cols,
                      int64_t ld, int64_t stride) {
      check(lt.layoutCreate(&l, type, rows, cols, ld),
            "cublasLtMatrixLayoutCreate");
      if (g.batch > 1) {
        int32_t count = static_cast<int32_t>(g.batch);
        check(lt.layoutSetAttribute(l, kLayoutBatchCount, &count, sizeof count),
              "cublasLtMatrixLayoutSetAttribute");
        check(lt.layoutSetAttribute(l, kLayoutBatchStride, &stride,
                                    sizeof stride),
              "cublasLtMatrixLayoutSetAttribute");
      }
    };
    uint64_t m = g.m, n = g.n, k = g.k;
    layout(plan.a, g.trans_b ? k : n, g.trans_b ? n : k, g.ldb, g.stride_b);
    layout(plan.b, g.trans_a ? m : k, g.trans_a ? k : m, g.lda, g.stride_a);
    layout(plan.c, n, m, g.ldc, g.stride_c);
    cublasLtMatmulPreference preference = nullptr;
    check(lt.preferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    uint64_t workspace = state.workspaceBytes;
    check(lt.preferenceSetAttribute(preference, kPrefMaxWorkspace, &workspace,
                                    sizeof workspace),
          "cublasLtMatmulPreferenceSetAttribute");
    for (int i = 0; i < 4; ++i)
      check(lt.preferenceSetAttribute(preference, kPrefMinAlignmentA + i,
                                      &aligned[i], sizeof aligned[i]),
            "cublasLtMatmulPreferenceSetAttribute");
    std::memcpy(plan.alignment, aligned, sizeof aligned);
    if (g.bias)
      check(lt.descSetAttribute(plan.desc, kDescBiasPointer, &g.bias,
                                sizeof g.bias),
            "cublasLtMatmulDescSetAttribute");
    cublasLtMatmulHeuristicResult result{};
    int count = 0;
    cublasStatus s =
        lt.algoGetHeuristic(state.handle, plan.desc, plan.a, plan.b, plan.c,
                            plan.c, preference, 1, &result, &count);
    lt.preferenceDestroy(preference);
    check(s, "cublasLtMatmulAlgoGetHeuristic");
    if (count == 0)
      throw Error("cuBLASLt has no algorithm for the matrix product on " +
                  device + " (" + where() + ": m " + std::to_string(g.m) +
                  ", n " + std::to_string(g.n) + ", k " + std::to_string(g.k) +
                  ", batch " + std::to_string(g.batch) + ")");
    plan.algo = result.algo;
    plan.workspace = result.workspaceSize;
    found = state.plans.emplace(key, plan).first;
  }
  GemmPlan &plan = found->second;
  if (g.bias)
    check(lt.descSetAttribute(plan.desc, kDescBiasPointer, &g.bias,
                              sizeof g.bias),
          "cublasLtMatmulDescSetAttribute");
  float alpha = g.alpha, beta = g.beta;
  check(lt.matmul(
            state.handle, plan.desc, &alpha, g.b, plan.a, g.a, plan.b, &beta,
            cIn, plan.c, g.c, plan.c, &plan.algo,
            reinterpret_cast<void *>(static_cast<uintptr_t>(state.workspace)),
            plan.workspace, stream),
        "cublasLtMatmul");
}

void releaseGemmState(const CublasLtApi &lt, const CudaApi &cuda,
                      GemmState &state) {
  for (auto &[site, plan] : state.plans)
    destroyPlan(lt, plan);
  state.plans.clear();
  if (state.handle)
    lt.destroy(state.handle);
  state.handle = nullptr;
  if (state.workspace)
    cuda.cuMemFree(state.workspace);
  state.workspace = 0;
}

} // namespace modelc::detail
