//===- OnnxResize.cpp - Resize, Upsample, Pad modes, depth/space moves ----===//
//
// ONNX ops that read each output element from input positions fixed by the
// shapes alone. Those positions are computed here, at import, and become
// i64 constants for graph.gather along one axis at a time:
//   * Resize/Upsample (nearest, linear, cubic): per resized axis, the source
//     index (nearest), or the two (linear) or four (cubic) neighbours and
//     constant weights (n-linear and n-cubic interpolation are separable,
//     as ONNX's reference computes them);
//   * Pad in reflect and edge mode: per padded axis, the mirrored or clamped
//     source index;
//   * DepthToSpace/SpaceToDepth: reshape, transpose, reshape.
// GridSample reads positions given at run time (its grid): they are
// computed by graph ops (the coordinate arithmetic, floor/round, the
// padding mode's clamp or reflection), and each tap is one graph.gather of
// the flattened input at a computed i64 index.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

/// The input coordinate that output coordinate `x` maps to along an axis
/// resized from `in` to `out` with `scale`, by ONNX's
/// coordinate_transformation_mode.
double sourceCoordinate(StringRef mode, double x, int64_t in, int64_t out,
                        double scale) {
  if (mode == "align_corners")
    return out == 1 ? 0 : x * (in - 1) / static_cast<double>(out - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  return (x + 0.5) / scale - 0.5; // half_pixel
}

/// The input index nearest to `x` by ONNX's nearest_mode, within [0, in).
int64_t nearestIndex(StringRef mode, double x, int64_t in) {
  double whole = std::floor(x), ratio = x - whole;
  int64_t index = static_cast<int64_t>(whole);
  if (ratio != 0) {
    bool up = mode == "ceil"                ? true
              : mode == "floor"             ? false
              : mode == "round_prefer_ceil" ? ratio >= 0.5
                                            : ratio > 0.5;
    index += up ? 1 : 0;
  }
  return std::clamp<int64_t>(index, 0, in - 1);
}

struct ResizeSpec {
  std::string mode, coordinates, nearest;
  SmallVector<int64_t> sizes;
  SmallVector<double> scales;
  double cubicA = -0.75;       ///< cubic_coeff_a
  bool excludeOutside = false; ///< exclude_outside
};

/// Resamples `x` along `axis` to spec.sizes[axis].
Value resizeAxis(At &at, Value x, int64_t axis, const ResizeSpec &spec) {
  int64_t in = typeOf(x).getDimSize(axis), out = spec.sizes[axis];
  double scale = spec.scales[axis];
  int64_t rank = typeOf(x).getRank();
  if (spec.mode == "nearest") {
    SmallVector<int64_t> index(out);
    for (int64_t i = 0; i < out; ++i)
      index[i] = nearestIndex(
          spec.nearest, sourceCoordinate(spec.coordinates, i, in, out, scale),
          in);
    return at.gather(x, at.indices({out}, index), axis);
  }
  if (spec.mode == "cubic") {
    // Four taps floor(c) - 1 .. floor(c) + 2, clamped into [0, in) (ONNX
    // pads the edges), weighted by Keys' cubic convolution with
    // coefficient A at r = c - floor(c); with exclude_outside, taps outside
    // the input weigh 0 and the rest are renormalised (ONNX's reference).
    const double a = spec.cubicA;
    SmallVector<SmallVector<int64_t>> taps(4, SmallVector<int64_t>(out));
    SmallVector<SmallVector<double>> weights(4, SmallVector<double>(out));
    for (int64_t i = 0; i < out; ++i) {
      double c = sourceCoordinate(spec.coordinates, i, in, out, scale);
      double whole = std::floor(c), r = c - whole;
      double w[4] = {
          ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
          ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a};
      double total = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t at = static_cast<int64_t>(whole) - 1 + k;
        if (spec.excludeOutside && (at < 0 || at >= in))
          w[k] = 0;
        total += w[k];
        taps[k][i] = std::clamp<int64_t>(at, 0, in - 1);
      }
      for (int k = 0; k < 4; ++k)
        weights[k][i] = spec.excludeOutside && total != 0 ? w[k] / total : w[k];
    }
    SmallVector<int64_t> shape(rank, 1);
    shape[axis] = out;
    Value sum;
    for (int k = 0; k < 4; ++k) {
      Value term =
          at.mul(at.gather(x, at.indices({out}, taps[k]), axis),
                 at.constant(typeOf(x).getElementType(), shape, weights[k]));
      sum = sum ? at.add(sum, term) : term;
    }
    return sum;
  }
  // linear: (1 - r) * x[lo] + r * x[hi], lo = floor(c), hi = lo + 1, both
  // clamped into [0, in) (ONNX pads the edges), r = c - lo.
  SmallVector<int64_t> lo(out), hi(out);
  SmallVector<double> ratio(out);
  for (int64_t i = 0; i < out; ++i) {
    double c = sourceCoordinate(spec.coordinates, i, in, out, scale);
    double whole = std::floor(c);
    ratio[i] = c - whole;
    lo[i] = std::clamp<int64_t>(static_cast<int64_t>(whole), 0, in - 1);
    hi[i] = std::clamp<int64_t>(static_cast<int64_t>(whole) + 1, 0, in - 1);
  }
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = out;
  Value r = at.constant(typeOf(x).getElementType(), shape, ratio);
  Value low = at.gather(x, at.indices({out}, lo), axis);
  Value high = at.gather(x, at.indices({out}, hi), axis);
  return at.add(low, at.mul(at.sub(high, low), r));
}

/// Reads Resize's (opset 10+) or Upsample's inputs and attributes into
/// `spec`; false after an error.
bool readResize(Importer &im, const NodeProto &n, Value x, ResizeSpec &spec) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  int64_t rank = shape.size();
  bool legacy = n.op_type() == "Upsample" || im.opset() < 11;
  spec.mode = Importer::stringAttr(n, "mode", "nearest");
  spec.coordinates =
      legacy ? "asymmetric"
             : Importer::stringAttr(n, "coordinate_transformation_mode",
                                    "half_pixel");
  spec.nearest =
      legacy ? "floor"
             : Importer::stringAttr(n, "nearest_mode", "round_prefer_floor");
  if (Importer::intAttr(n, "antialias", 0) != 0 ||
      Importer::stringAttr(n, "keep_aspect_ratio_policy", "stretch") !=
          "stretch" ||
      Importer::attribute(n, "axes")) {
    im.error(n) << "antialias, keep_aspect_ratio_policy and axes (opset 18) "
                   "are not supported yet";
    return false;
  }
  if (spec.mode != "nearest" && spec.mode != "linear" && spec.mode != "cubic") {
    im.error(n) << "mode '" << spec.mode
                << "' is not supported (nearest, linear and cubic are)";
    return false;
  }
  if (spec.mode == "cubic" && legacy) {
    im.error(n) << "mode 'cubic' is defined from opset 11 on";
    return false;
  }
  spec.cubicA = Importer::floatAttr(n, "cubic_coeff_a", -0.75f);
  spec.excludeOutside = Importer::intAttr(n, "exclude_outside", 0) != 0;
  if (spec.coordinates == "tf_crop_and_resize") {
    im.error(n) << "coordinate_transformation_mode 'tf_crop_and_resize' is "
                   "not supported yet";
    return false;
  }
  static const char *known[] = {"half_pixel", "pytorch_half_pixel",
                                "align_corners", "asymmetric",
                                "tf_half_pixel_for_nn"};
  if (!llvm::is_contained(known, spec.coordinates)) {
    im.error(n) << "coordinate_transformation_mode '" << spec.coordinates
                << "' is not supported";
    return false;
  }
  if (!llvm::is_contained({StringRef("round_prefer_floor"),
                           StringRef("round_prefer_ceil"), StringRef("floor"),
                           StringRef("ceil")},
                          spec.nearest)) {
    im.error(n) << "nearest_mode '" << spec.nearest << "' is not supported";
    return false;
  }
  // Scales: Upsample's attribute (opset 7) or input 1 (opset 9), Resize's
  // input 1 (opset 10) or 2; sizes: Resize's input 3 (opset 11+).
  int scalesInput = n.op_type() == "Upsample" || im.opset() < 11 ? 1 : 2;
  std::optional<SmallVector<double>> scales;
  if (n.op_type() == "Upsample" && !Importer::hasInput(n, 1)) {
    if (const onnx::AttributeProto *a = Importer::attribute(n, "scales"))
      scales = SmallVector<double>(a->floats().begin(), a->floats().end());
  } else {
    scales = im.constantNumbers(n, scalesInput);
  }
  std::optional<SmallVector<int64_t>> sizes =
      scalesInput == 2 ? im.constantInts(n, 3) : std::nullopt;
  if (scales && scales->empty())
    scales.reset();
  if (sizes && sizes->empty())
    sizes.reset();
  bool runtime = (Importer::hasInput(n, scalesInput) && !scales &&
                  !im.constantNumbers(n, scalesInput)) ||
                 (scalesInput == 2 && Importer::hasInput(n, 3) && !sizes &&
                  !im.constantInts(n, 3));
  if (runtime) {
    im.error(n) << "scales or sizes given at run time are not supported "
                   "(they must be constant)";
    return false;
  }
  if (!scales == !sizes) {
    im.error(n) << "exactly one of scales and sizes must be given";
    return false;
  }
  if (static_cast<int64_t>((scales ? scales->size() : sizes->size())) != rank) {
    im.error(n) << "scales or sizes must have one entry per dimension (" << rank
                << ")";
    return false;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (scales) {
      if (!((*scales)[d] > 0)) {
        im.error(n) << "scale " << (*scales)[d] << " is not positive";
        return false;
      }
      double size = std::floor(shape[d] * (*scales)[d]);
      if (!(size >= 1 && size <= double(int64_t(1) << 24))) {
        im.error(n) << "scale " << (*scales)[d] << " of dimension " << d
                    << " gives an output size that is not supported (1 to "
                       "2^24)";
        return false;
      }
      spec.scales.push_back((*scales)[d]);
      spec.sizes.push_back(static_cast<int64_t>(size));
    } else {
      spec.sizes.push_back((*sizes)[d]);
      spec.scales.push_back(static_cast<double>((*sizes)[d]) / shape[d]);
    }
    if (spec.sizes[d] < 1 || spec.sizes[d] > (int64_t(1) << 24)) {
      im.error(n) << "output size " << spec.sizes[d] << " of dimension " << d
                  << " is not supported (1 to 2^24)";
      return false;
    }
  }
  return true;
}

LogicalResult resize(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  if (!isa<FloatType>(typeOf(x).getElementType())) {
    im.error(n) << "integer inputs are not supported yet (float are)";
    return failure();
  }
  ResizeSpec spec;
  if (!readResize(im, n, x, spec))
    return failure();
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  for (int64_t axis = 0; x && axis < static_cast<int64_t>(shape.size());
       ++axis) {
    // An axis that keeps its size under a scale of 1 maps each index to
    // itself in every mode.
    if (spec.sizes[axis] == shape[axis] && spec.scales[axis] == 1.0)
      continue;
    x = resizeAxis(at, x, axis, spec);
  }
  return at.define(x);
}

/// The source index of output index `i` along an axis of size `in` padded
/// by `before`, in reflect (mirror without repeating the edge) or edge
/// (repeat the edge) mode. Pads wider than the dimension reflect again, as
/// numpy.pad does.
int64_t paddedSource(bool reflect, int64_t i, int64_t before, int64_t in) {
  int64_t j = i - before;
  if (!reflect || in == 1)
    return std::clamp<int64_t>(j, 0, in - 1);
  int64_t period = 2 * (in - 1);
  j = ((j % period) + period) % period;
  return j < in ? j : period - j;
}

} // namespace

/// Pad in reflect or edge mode: one gather per padded axis (OnnxDataMovement
/// handles constant mode and calls this for the others).
LogicalResult modelc::onnx_import::padByGather(Importer &im, const NodeProto &n,
                                               Value x, ArrayRef<int64_t> pads,
                                               bool reflect) {
  At at{im, n};
  int64_t rank = typeOf(x).getRank();
  for (int64_t axis = 0; x && axis < rank; ++axis) {
    int64_t before = pads[axis], after = pads[axis + rank];
    if (before == 0 && after == 0)
      continue;
    int64_t in = typeOf(x).getDimSize(axis), out = in + before + after;
    if (out < 1) {
      im.error(n) << "pads that remove a whole dimension are not supported";
      return failure();
    }
    if (!at.fits(out))
      return failure();
    SmallVector<int64_t> index(out);
    for (int64_t i = 0; i < out; ++i)
      index[i] = paddedSource(reflect, i, before, in);
    x = at.gather(x, at.indices({out}, index), axis);
  }
  return at.define(x);
}

namespace {

/// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW: a reshape to six
/// dimensions, a transpose, a reshape back.
template <bool ToSpace>
LogicalResult depthSpace(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  ArrayRef<int64_t> s = typeOf(x).getShape();
  int64_t b = Importer::intAttr(n, "blocksize", 0);
  if (s.size() != 4) {
    im.error(n) << "the input must be NCHW (rank 4)";
    return failure();
  }
  if (b < 1) {
    im.error(n) << "blocksize must be positive";
    return failure();
  }
  int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  if (ToSpace) {
    if (b > C || C % b != 0 || (C / b) % b != 0) {
      im.error(n) << "channels (" << C << ") must be a multiple of blocksize^2";
      return failure();
    }
    bool crd = Importer::stringAttr(n, "mode", "DCR") == "CRD";
    int64_t c = C / (b * b);
    Value y = crd ? at.transpose(at.reshape(x, {N, c, b, b, H, W}),
                                 {0, 1, 4, 2, 5, 3})
                  : at.transpose(at.reshape(x, {N, b, b, c, H, W}),
                                 {0, 3, 4, 1, 5, 2});
    return at.define(at.reshape(y, {N, c, H * b, W * b}));
  }
  if (b > H || b > W || H % b != 0 || W % b != 0 ||
      C > std::numeric_limits<int64_t>::max() / b / b) {
    im.error(n) << "height and width must be multiples of blocksize";
    return failure();
  }
  Value y = at.transpose(at.reshape(x, {N, C, H / b, b, W / b, b}),
                         {0, 3, 5, 1, 2, 4});
  return at.define(at.reshape(y, {N, C * b * b, H / b, W / b}));
}

/// GridSample's sampler over one spatial axis of size `size`: the padding
/// mode applied to a float coordinate (as PyTorch's compute_coordinates:
/// border clamps to [0, size - 1]; reflection mirrors about the edges
/// (about the centres of the edge pixels with align_corners, else their
/// outer borders), then clamps; zeros leaves it, out-of-range taps read 0).
struct GridAxis {
  At &at;
  int64_t size;
  bool alignCorners;
  StringRef padding;

  Value f(Value like, double v) { return at.scalar(like, v); }

  /// The pixel coordinate of the normalised coordinate g in [-1, 1].
  Value unnormalize(Value g) {
    Value one = f(g, 1.0);
    if (alignCorners)
      return at.mul(at.add(g, one), f(g, 0.5 * static_cast<double>(size - 1)));
    // ((g + 1) * size - 1) / 2
    return at.mul(at.sub(at.mul(at.add(g, one), f(g, double(size))), one),
                  f(g, 0.5));
  }

  Value clamp(Value c) {
    return at.min(at.max(c, f(c, 0.0)), f(c, double(size - 1)));
  }

  /// c reflected into [low, high] (twice each bound given, as PyTorch's
  /// reflect_coordinates), before the clamp.
  Value reflect(Value c, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return at.mul(c, f(c, 0.0));
    double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value d = at.op<AbsOp>({at.sub(c, f(c, low))});
    Value flips = at.op<FloorOp>({at.div(d, f(c, span))});
    Value extra = at.sub(d, at.mul(flips, f(c, span)));
    // flips even: low + extra; odd: low + span - extra.
    Value half = at.mul(flips, f(c, 0.5));
    Value even = at.compare(half, at.op<FloorOp>({half}), ComparePredicate::eq);
    return at.select(even, at.add(extra, f(c, low)),
                     at.sub(f(c, span + low), extra));
  }

  Value pad(Value c) {
    if (padding == "border")
      return clamp(c);
    if (padding == "reflection")
      return clamp(alignCorners ? reflect(c, 0, 2 * (size - 1))
                                : reflect(c, -1, 2 * size - 1));
    return c;
  }

  /// Whether the integral coordinate c lies in [0, size - 1] (i1), and c
  /// clamped into it as i64.
  std::pair<Value, Value> index(Value c) {
    Value clamped = clamp(c);
    Value inside = at.compare(clamped, c, ComparePredicate::eq);
    // A NaN coordinate is outside; its index is 0, never out of range.
    Value safe = at.select(inside, clamped, f(c, 0.0));
    return {inside, at.cast(safe, at.im.builder.getI64Type())};
  }
};

/// GridSample (opset 16; opset 20's mode names `linear` and `cubic` on the
/// same 4-D form): Y[n, c, i, j] samples X[n, c] at grid[n, i, j] = (x, y),
/// normalised to [-1, 1], by `mode` (bilinear, nearest: ties to even,
/// bicubic: A = -0.75 over 4x4 taps) and `padding_mode`; equal to
/// PyTorch's F.grid_sample. Computed in f32.
LogicalResult gridSample(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0), grid = im.input(n, 1);
  if (!x || !grid)
    return failure();
  RankedTensorType xt = typeOf(x), gt = typeOf(grid);
  if (!isa<FloatType>(xt.getElementType()) ||
      !isa<FloatType>(gt.getElementType())) {
    im.error(n) << "integer inputs are not supported yet (float are)";
    return failure();
  }
  if (xt.getRank() != 4 || gt.getRank() != 4 || gt.getDimSize(3) != 2 ||
      gt.getDimSize(0) != xt.getDimSize(0)) {
    im.error(n) << "X must be [N, C, H, W] and grid [N, H_out, W_out, 2] "
                   "(other ranks are not supported yet)";
    return failure();
  }
  std::string mode = Importer::stringAttr(n, "mode", "bilinear");
  if (mode == "linear")
    mode = "bilinear";
  else if (mode == "cubic")
    mode = "bicubic";
  std::string padding = Importer::stringAttr(n, "padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    im.error(n) << "mode '" << mode
                << "' is not supported (bilinear, nearest and bicubic are)";
    return failure();
  }
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    im.error(n) << "padding_mode '" << padding
                << "' is not supported (zeros, border and reflection are)";
    return failure();
  }
  bool align = Importer::intAttr(n, "align_corners", 0) != 0;
  int64_t N = xt.getDimSize(0), C = xt.getDimSize(1), H = xt.getDimSize(2),
          W = xt.getDimSize(3), Ho = gt.getDimSize(1), Wo = gt.getDimSize(2);
  if (!at.fits(N * C))
    return failure();
  Type f32 = im.builder.getF32Type(), i64 = im.builder.getI64Type();
  Type element = xt.getElementType();
  if (element != f32)
    x = at.cast(x, f32);
  if (gt.getElementType() != f32)
    grid = at.cast(grid, f32);
  // The flattened input, and each (n, c) plane's offset into it.
  Value flat = at.reshape(x, {N * C * H * W});
  SmallVector<int64_t> offsets;
  for (int64_t i = 0; i < N * C; ++i)
    offsets.push_back(i * H * W);
  Value base = at.indices({N, C, 1, 1}, offsets);
  // x and y, each [N, 1, H_out, W_out] (broadcast over the channels).
  auto coordinate = [&](int64_t k) {
    return at.reshape(at.gather(grid, at.indices({1}, {k}), 3), {N, 1, Ho, Wo});
  };
  GridAxis ax{at, W, align, padding}, ay{at, H, align, padding};
  Value gx = ax.unnormalize(coordinate(0)), gy = ay.unnormalize(coordinate(1));
  // X at integral coordinates (cx, cy), 0 outside the input.
  Value zero = at.scalar(x, 0.0);
  Value no = at.constant(im.builder.getI1Type(), {}, {0.0});
  auto tap = [&](Value cx, Value cy) -> std::pair<Value, Value> {
    auto [inX, ix] = ax.index(cx);
    auto [inY, iy] = ay.index(cy);
    Value index =
        at.add(base, at.add(at.mul(iy, at.scalar(iy, double(W))), ix));
    return {at.select(inX, inY, no), at.gather(flat, index, 0)};
  };
  auto weighted = [&](Value sum, Value cx, Value cy, Value weight) {
    auto [inside, v] = tap(cx, cy);
    Value term = at.select(inside, at.mul(v, weight), zero);
    return sum ? at.add(sum, term) : term;
  };
  Value y;
  if (mode == "nearest") {
    auto [inside, v] =
        tap(at.op<RoundOp>({ax.pad(gx)}), at.op<RoundOp>({ay.pad(gy)}));
    y = at.select(inside, v, zero);
  } else if (mode == "bilinear") {
    Value px = ax.pad(gx), py = ay.pad(gy);
    Value x0 = at.op<FloorOp>({px}), y0 = at.op<FloorOp>({py});
    Value one = at.scalar(px, 1.0);
    Value tx = at.sub(px, x0), ty = at.sub(py, y0);
    Value sx = at.sub(one, tx), sy = at.sub(one, ty);
    Value x1 = at.add(x0, one), y1 = at.add(y0, one);
    y = weighted(nullptr, x0, y0, at.mul(sx, sy));
    y = weighted(y, x1, y0, at.mul(tx, sy));
    y = weighted(y, x0, y1, at.mul(sx, ty));
    y = weighted(y, x1, y1, at.mul(tx, ty));
  } else {
    // Keys' cubic convolution (A = -0.75) on the unpadded coordinate; the
    // padding applies to each tap.
    const double A = -0.75;
    Value x0 = at.op<FloorOp>({gx}), y0 = at.op<FloorOp>({gy});
    auto weights = [&](Value t) {
      auto f = [&](double v) { return at.scalar(t, v); };
      Value one = f(1.0);
      Value t1 = at.add(t, one), s = at.sub(one, t),
            s1 = at.add(s, one); // distances 1 + t, t, 1 - t, 2 - t
      auto far = [&](Value d) {  // ((A d - 5A) d + 8A) d - 4A
        return at.sub(
            at.mul(
                at.add(at.mul(at.sub(at.mul(d, f(A)), f(5 * A)), d), f(8 * A)),
                d),
            f(4 * A));
      };
      auto near = [&](Value d) { // ((A + 2) d - (A + 3)) d d + 1
        return at.add(
            at.mul(at.mul(at.sub(at.mul(d, f(A + 2)), f(A + 3)), d), d), one);
      };
      return std::array<Value, 4>{far(t1), near(t), near(s), far(s1)};
    };
    std::array<Value, 4> wx = weights(at.sub(gx, x0)),
                         wy = weights(at.sub(gy, y0));
    for (int j = 0; j < 4; ++j) {
      Value cy = ay.pad(at.add(y0, at.scalar(y0, j - 1.0)));
      for (int i = 0; i < 4; ++i) {
        Value cx = ax.pad(at.add(x0, at.scalar(x0, i - 1.0)));
        y = weighted(y, cx, cy, at.mul(wx[i], wy[j]));
      }
    }
  }
  if (y && element != f32)
    y = at.cast(y, element);
  return at.define(y);
}

} // namespace

void modelc::onnx_import::addResizeConverters(
    llvm::StringMap<NodeConverter> &t) {
  t["Resize"] = resize;
  t["Upsample"] = resize;
  t["DepthToSpace"] = depthSpace<true>;
  t["SpaceToDepth"] = depthSpace<false>;
  t["GridSample"] = gridSample;
}
