// dnnl_conv.hpp - CPU convolutions whose weights change between runs (a
// training step's forward convolution, its input and weight gradients)
// through oneDNN's convolution primitives (modelc_runtime_api::conv, ABI
// 14). Constant weights go through packed_product.hpp instead, packed once.
#ifndef MODELC_RUNTIME_DNNL_CONV_HPP
#define MODELC_RUNTIME_DNNL_CONV_HPP

#include "modelc/abi.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace modelc::detail {

/// The convolution sites of one model: per call site (its static
/// modelc_conv) oneDNN's primitive, chosen on first use (Winograd where
/// asked and oneDNN has it, else direct) in the layouts oneDNN prefers,
/// with reorders from and to the model's plain NCHW and OIHW buffers.
class DnnlConvs {
public:
  DnnlConvs();
  ~DnnlConvs();
  DnnlConvs(const DnnlConvs &) = delete;
  DnnlConvs &operator=(const DnnlConvs &) = delete;

  /// Runs `conv` (a, b, bias into out) on `threads` OpenMP threads; false
  /// with `error` when oneDNN refuses it. One call per site at a time (a
  /// site's blocked buffers are its own): concurrent runs of one site
  /// take turns.
  bool run(const modelc_conv &conv, const float *a, const float *b,
           const float *bias, float *out, int threads, std::string &error);

  /// The algorithm a site runs ("jit_wino_4x3:avx512_core", ...), or
  /// empty before its first run; for tests.
  std::string implementation(const modelc_conv &conv);

private:
  struct Site;
  struct Engine;
  std::unique_ptr<Engine> engine_;
  std::mutex mutex_;
  std::unordered_map<const modelc_conv *, std::unique_ptr<Site>> sites_;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DNNL_CONV_HPP
