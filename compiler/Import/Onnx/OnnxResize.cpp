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
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

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

} // namespace

void modelc::onnx_import::addResizeConverters(
    llvm::StringMap<NodeConverter> &t) {
  t["Resize"] = resize;
  t["Upsample"] = resize;
  t["DepthToSpace"] = depthSpace<true>;
  t["SpaceToDepth"] = depthSpace<false>;
}
