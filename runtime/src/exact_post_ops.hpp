// exact_post_ops.hpp - when a packed product's fused post-ops keep NaN, and
// the post-ops computed here, NaN kept, when they may not.
//
// oneDNN's relu (slope 0), max and min post-ops compute with maxps/minps,
// which give their second operand where either is NaN: a fused relu turns
// the NaN a product makes into 0, where PyTorch, numpy and ONNX give NaN
// (measured on this runtime's oneDNN, 2.6: matmul and direct convolution
// drop it, its other eltwise post-ops keep it). A product whose chain
// holds one of them checks, on every run, that no NaN can reach one: the
// magnitudes of x, the bias and the operands (one vectorised pass over
// each; the weight's once, when the site is made) bound every value of the
// product and of the chain below kProductBound, so nothing in them is NaN
// or overflows (oneDNN's CPU products accumulate f16 and bf16 data in f32,
// and apply post-ops in f32: the bound holds for them too). Then oneDNN's fused
// result is exact. Otherwise the run takes the exact path (packed_product.cpp):
// the product alone through oneDNN, in f32 and plain layout, then applyPostOps
// here.
//
// A product whose x (or sum operand) is the output of a product that ran
// fused earlier in the same run need not scan it: that run's chain bound
// its values (packed_product.cpp keeps the bound per site and run), so the
// bound stands in for the scan, and a scan is made only where the bound
// is too loose to decide.
#ifndef MODELC_RUNTIME_EXACT_POST_OPS_HPP
#define MODELC_RUNTIME_EXACT_POST_OPS_HPP

#include "modelc/abi.h"

#include <cstdint>

namespace modelc {

/// How a product's values are stored.
enum class Storage { F32, F16, BF16 };

/// The largest and smallest magnitude among n values: `max` is +inf where
/// one is infinite and NaN where one is NaN.
struct Magnitudes {
  float max = 0.0f, min = 0.0f;
};
Magnitudes magnitudesOf(const void *data, int64_t n, Storage storage);

/// Whether oneDNN may drop a NaN in `p`'s post-op chain: it holds a relu of
/// slope 0, a max or a min.
bool chainMayDropNaN(const modelc_product &p);

/// The bound below which every value of a product and its chain must stay
/// for the fused result to be trusted: finite inputs whose product and
/// chain stay below it make no NaN and no infinity, with room for Winograd's
/// transforms and for GELU's cube.
constexpr double kProductBound = 1099511627776.0; // 2^40

/// What bounds the values of one run of a product: the magnitudes of x,
/// the weight, the bias (max 0 without one), and of each post-op's operand
/// (unused for eltwise post-ops); `reduction` is how many terms each output
/// sums (k, or c/groups * kh * kw).
struct ProductMagnitudes {
  Magnitudes x, w, bias;
  const Magnitudes *operands = nullptr;
  int64_t reduction = 0;
};

/// Whether every value of the product and of each step of `p`'s chain is
/// bounded by kProductBound: false where an input holds a NaN or an
/// infinity, a division's operand may be 0, or the magnitudes may overflow.
/// Where true and `result` is not null, *result bounds the magnitude of
/// every value the chain ends with (each step's values kept as an interval,
/// so that a clamp, as ReLU6's max and min, bounds them again).
bool fusedChainIsExact(const modelc_product &p, const ProductMagnitudes &m,
                       double *result = nullptr);

/// Applies `p`'s post-ops, in order, to the n values z of a product in
/// plain layout (row-major [m, n], or NCHW), with NaN kept as PyTorch keeps
/// it: `operands[i]` is post-op i's operand in f32, plain layout
/// (unused for eltwise post-ops); `channels` and `plane` place an element's
/// column or channel (element e is in channel (e / plane) % channels; plane
/// 1 for a matmul).
void applyPostOps(const modelc_product &p, float *z, int64_t n,
                  int64_t channels, int64_t plane,
                  const float *const *operands);

} // namespace modelc

#endif // MODELC_RUNTIME_EXACT_POST_OPS_HPP
