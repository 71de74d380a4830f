// pick_implementation.hpp - which of oneDNN's implementations computes a
// packed convolution.
//
// oneDNN lists the implementations that can compute a primitive in the
// order it prefers them and takes the first. The order is fixed per
// version, not per CPU, and the first is not always the fastest on the CPU
// at hand: on an AMD EPYC with AVX-512 (2 threads), oneDNN 2.6's first
// choice for MobileNetV2's depthwise convolutions in NHWC
// (brdgmm_dw:avx512_core) takes 1.2-1.7x the time of its direct depthwise
// kernel (jit_dw:avx512_core) at 28x28 and above, and ties below; its
// first choice for the 1x1 convolutions of the first blocks takes up to
// 1.3x that of another. (On aarch64 oneDNN's maintainers moved the
// direct depthwise kernel ahead of the batch-reduce one for f32 and left
// the remaining cases to a heuristic not written yet,
// uxlfoundation/oneDNN#4159; x86's order is unchanged in their current
// sources.)
//
// By default a site takes oneDNN's first choice, except where modelc's
// table of measured exceptions (`preferredImplementation`) names another
// for the CPU at hand: on AMD family 25 (Zen 3 and Zen 4; only Zen 4 has
// the AVX-512 that brdgmm_dw:avx512_core needs) an f32 depthwise
// convolution whose first choice is brdgmm_dw:avx512_core takes
// jit_dw:avx512_core where oneDNN has it for the same layouts
// (MobileNetV2's seventeen depthwise convolutions, NHWC, 2 threads, on the
// AMD EPYC of bench/RESULTS.md: 1.0-1.7x faster each, none slower; more
// threads were not measured). Intel CPUs, for which oneDNN's order is
// tuned, and CPUs not measured keep oneDNN's order. The choice is fixed per
// CPU, so two processes on one machine compute the same bits.
//
// On request (MODELC_CONV_IMPLEMENTATION=fastest, as PyTorch's
// cudnn.benchmark) a site measures at its first run: the implementations
// that read and write the layouts oneDNN's first choice does (the
// neighbouring sites' layouts stay as they are), but the reference,
// GEMM-based and SSE4.1 ones, each run a few times on zeros, and takes the
// fastest where it beats the first by more than the noise (10%). That
// costs the first run time (MobileNetV2: about 0.15 s on 2 cores) and, as
// timings vary, two processes may pick differently (their results then
// differ in rounding); on the 2-core host of bench/RESULTS.md it gained
// MobileNetV2 0-3%, within that host's noise, which is why it is not the
// default. MODELC_CONV_IMPLEMENTATION=first takes oneDNN's order without
// the exceptions.
#ifndef MODELC_RUNTIME_PICK_IMPLEMENTATION_HPP
#define MODELC_RUNTIME_PICK_IMPLEMENTATION_HPP

#include <oneapi/dnnl/dnnl.h>

#include <string>
#include <vector>

namespace modelc {

/// How a convolution site picks its implementation
/// (MODELC_CONV_IMPLEMENTATION=tuned, first, fastest or last).
enum class ImplementationChoice {
  Tuned,   ///< oneDNN's first choice but the measured exceptions (default)
  First,   ///< oneDNN's first choice
  Fastest, ///< measured at the site's first run
  Last     ///< the last of the candidates (tests: another than the first
           ///< wherever there is one)
};

/// MODELC_CONV_IMPLEMENTATION's choice; an unknown value is `error` (and
/// Tuned).
ImplementationChoice implementationChoice(std::string &error);

/// The CPU as the table of exceptions knows it.
struct CpuIdentity {
  bool amd = false; ///< vendor "AuthenticAMD"
  int family = 0;   ///< the display family (base plus extended)
};
/// The CPU this process runs on (cpuid, read once; zeros off x86).
CpuIdentity hostCpu();

/// Whether `op` is depthwise: one input and one output channel per group,
/// as many groups as channels.
bool isDepthwise(const dnnl_convolution_desc_t &op);

/// The implementation modelc's table prefers over `firstName` (oneDNN's
/// first choice) for a convolution of `type` on `cpu`, `depthwise` or not,
/// or empty for oneDNN's own.
std::string preferredImplementation(const std::string &firstName,
                                    dnnl_data_type_t type, bool depthwise,
                                    const CpuIdentity &cpu);

/// The convolution implementation to run: `first` (oneDNN's first choice
/// for `op` with `attr`, whose source and destination layouts are
/// decided) or another that reads and writes those layouts, by `choice`.
/// `operands`: the descriptions of the binary post-ops' operands (ndims
/// 0 for the other post-ops), `bias`: whether the convolution has one.
/// `cpu`: the CPU the table of exceptions is read for (Tuned).
/// The result is `first` or a new primitive description (then `first` is
/// destroyed); on any failure of the measurement, `first`.
dnnl_primitive_desc_t
pickConvolution(dnnl_primitive_desc_t first, const dnnl_convolution_desc_t &op,
                const_dnnl_primitive_attr_t attr, bool bias,
                const std::vector<dnnl_memory_desc_t> &operands,
                dnnl_engine_t engine, ImplementationChoice choice,
                const CpuIdentity &cpu = hostCpu());

/// The implementation `pd` is ("brgconv:avx512_core", ...).
std::string implementationName(const_dnnl_primitive_desc_t pd);

} // namespace modelc

#endif // MODELC_RUNTIME_PICK_IMPLEMENTATION_HPP
