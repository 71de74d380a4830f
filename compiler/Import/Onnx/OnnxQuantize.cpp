//===- OnnxQuantize.cpp - linear quantization as graph ops ----------------===//
//
// ONNX's linear quantization, spelled with ops modelc has, as the spec
// defines it (so the pieces run wherever they have kernels and the
// elementwise ones fuse into one loop):
//   * QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//     in the zero point's type (uint8 by default, or int8);
//   * DequantizeLinear: y = (x - zero_point) * scale, in f32;
//   * DynamicQuantizeLinear: uint8 with a scale and zero point computed
//     from the input's range (widened to include 0), as the spec's function
//     body does;
//   * MatMulInteger: (a - a_zero_point) x (b - b_zero_point) in i32,
//     exact (integer products wrap around, as ONNX Runtime's);
//   * QLinearMatMul: that i32 product requantized by a_scale * b_scale /
//     y_scale into y's zero point and type.
// Scales and zero points may be run-time values; per-axis ones (1-D, one
// per slice of `axis`) are reshaped to broadcast along that axis.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

/// The range of a quantized type: uint8 [0, 255], int8 [-128, 127].
std::optional<std::pair<double, double>> quantizedRange(Type element) {
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer || integer.getWidth() != 8)
    return std::nullopt;
  if (integer.isUnsigned())
    return std::make_pair(0.0, 255.0);
  return std::make_pair(-128.0, 127.0);
}

/// `param` (a scale or zero point of `x`) shaped to broadcast against `x`:
/// a scalar or one-element tensor as it is, a 1-D per-axis one as
/// [1, ..., C, ..., 1] with C at `axis`. Null after an error.
Value perAxis(At &at, Value param, Value x, int64_t axis, StringRef what) {
  if (!param || !x)
    return nullptr;
  RankedTensorType p = typeOf(param), t = typeOf(x);
  if (p.getNumElements() == 1 && p.getRank() <= 1)
    return param;
  int64_t rank = t.getRank();
  if (axis < -rank || axis >= rank) {
    at.im.error(at.node) << "axis " << axis << " is out of range for rank "
                         << rank;
    return nullptr;
  }
  if (axis < 0)
    axis += rank;
  if (p.getRank() != 1 || p.getDimSize(0) != t.getDimSize(axis)) {
    at.im.error(at.node) << what << " must be a scalar or have one entry per "
                         << "slice of axis " << axis << " ("
                         << t.getDimSize(axis) << "), got " << p;
    return nullptr;
  }
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = t.getDimSize(axis);
  return at.reshape(param, shape);
}

/// Input `i` of `n`, or null where it is absent; `failed` is set where it
/// is present but could not be read.
Value optionalInput(Importer &im, const NodeProto &n, int i, bool &failed) {
  if (!Importer::hasInput(n, i))
    return nullptr;
  Value v = im.input(n, i);
  failed |= !v;
  return v;
}

/// A (De)QuantizeLinear's scale and zero point (`zero` may be null) shaped
/// per its `axis` against x (perAxis), named `prefix`_scale and
/// `prefix`_zero_point in errors; false after an error.
bool perAxisParams(At &at, Value x, Value &scale, Value &zero,
                   StringRef prefix) {
  int64_t axis = Importer::intAttr(at.node, "axis", 1);
  scale = perAxis(at, scale, x, axis, (prefix + "_scale").str());
  if (zero)
    zero = perAxis(at, zero, x, axis, (prefix + "_zero_point").str());
  return scale && (!Importer::hasInput(at.node, 2) || zero);
}

/// saturate(round(x / scale) + zero) in `element` (f32 arithmetic).
Value quantize(At &at, Value x, Value scale, Value zero, Type element) {
  std::pair<double, double> range = *quantizedRange(element);
  Type f32 = at.im.builder.getF32Type();
  Value q = at.op<RoundOp>({at.div(x, scale)});
  if (zero)
    q = at.add(q, at.cast(zero, f32));
  q = at.min(at.max(q, at.scalar(q, range.first)), at.scalar(q, range.second));
  return at.cast(q, element);
}

LogicalResult quantizeLinear(Importer &im, const NodeProto &n) {
  At at{im, n};
  bool failed = false;
  Value x = im.input(n, 0), scale = im.input(n, 1);
  Value zero = optionalInput(im, n, 2, failed);
  if (!x || !scale || failed)
    return failure();
  Type element = zero ? typeOf(zero).getElementType()
                      : IntegerType::get(&im.context, 8, IntegerType::Unsigned);
  if (!quantizedRange(element)) {
    im.error(n) << "a zero point of type " << element
                << " is not supported (ui8 and i8 are)";
    return failure();
  }
  Type f32 = im.builder.getF32Type();
  if (typeOf(x).getElementType() != f32 ||
      typeOf(scale).getElementType() != f32) {
    im.error(n) << "x and its scale must be f32";
    return failure();
  }
  if (!perAxisParams(at, x, scale, zero, "y"))
    return failure();
  return at.define(quantize(at, x, scale, zero, element));
}

LogicalResult dequantizeLinear(Importer &im, const NodeProto &n) {
  At at{im, n};
  bool failed = false;
  Value x = im.input(n, 0), scale = im.input(n, 1);
  Value zero = optionalInput(im, n, 2, failed);
  if (!x || !scale || failed)
    return failure();
  Type element = typeOf(x).getElementType();
  if (!quantizedRange(element) && !element.isSignlessInteger(32)) {
    im.error(n) << "x of type " << element
                << " is not supported (ui8, i8 and i32 are)";
    return failure();
  }
  Type f32 = im.builder.getF32Type();
  if (typeOf(scale).getElementType() != f32) {
    im.error(n) << "x_scale must be f32";
    return failure();
  }
  if (!perAxisParams(at, x, scale, zero, "x"))
    return failure();
  Value v = at.cast(x, f32);
  if (zero)
    v = at.sub(v, at.cast(zero, f32));
  return at.define(at.mul(v, scale));
}

LogicalResult dynamicQuantizeLinear(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  if (!typeOf(x).getElementType().isF32()) {
    im.error(n) << "x must be f32";
    return failure();
  }
  Type u8 = IntegerType::get(&im.context, 8, IntegerType::Unsigned);
  // The range widened to include 0, as the spec's function body: scale =
  // (max - min) / 255, zero point = saturate(round(0 - min / scale)).
  // min(min(x), 0) = -max(max(-x), 0).
  Value zero = at.scalar(x, 0.0);
  Value lo = at.neg(at.max(at.reduce<ReduceMaxOp>(at.neg(x), {}, false), zero));
  Value hi = at.max(at.reduce<ReduceMaxOp>(x, {}, false), zero);
  Value scale = at.div(at.sub(hi, lo), at.scalar(x, 255.0));
  Value zp = at.sub(zero, at.div(lo, scale));
  zp = at.min(at.max(zp, zero), at.scalar(x, 255.0));
  zp = at.cast(at.op<RoundOp>({zp}), u8);
  if (failed(at.define(quantize(at, x, scale, zp, u8), 0)) ||
      failed(at.define(scale, 1)) || failed(at.define(zp, 2)))
    return failure();
  return success();
}

/// (a - a_zero) x (b - b_zero) in i32; a per-row a_zero ([M]) becomes
/// [M, 1]. Null after an error.
Value integerProduct(At &at, Value a, Value aZero, Value b, Value bZero) {
  Type i32 = at.im.builder.getI32Type();
  for (Value v : {a, b})
    if (!quantizedRange(typeOf(v).getElementType())) {
      at.im.error(at.node) << "operands of type " << typeOf(v).getElementType()
                           << " are not supported (ui8 and i8 are)";
      return nullptr;
    }
  Value a32 = at.cast(a, i32), b32 = at.cast(b, i32);
  if (aZero) {
    RankedTensorType z = typeOf(aZero);
    int64_t rows = typeOf(a).getDimSize(typeOf(a).getRank() - 2);
    if (z.getRank() == 1 && z.getDimSize(0) == rows && rows != 1)
      aZero = at.reshape(aZero, {rows, 1});
    a32 = at.sub(a32, at.cast(aZero, i32));
  }
  if (bZero)
    b32 = at.sub(b32, at.cast(bZero, i32));
  return at.op<MatmulOp>({a32, b32});
}

LogicalResult matMulInteger(Importer &im, const NodeProto &n) {
  At at{im, n};
  bool failed = false;
  Value a = im.input(n, 0), b = im.input(n, 1);
  Value aZero = optionalInput(im, n, 2, failed),
        bZero = optionalInput(im, n, 3, failed);
  if (!a || !b || failed)
    return failure();
  return at.define(integerProduct(at, a, aZero, b, bZero));
}

LogicalResult qLinearMatMul(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value a = im.input(n, 0), aScale = im.input(n, 1), aZero = im.input(n, 2),
        b = im.input(n, 3), bScale = im.input(n, 4), bZero = im.input(n, 5),
        yScale = im.input(n, 6), yZero = im.input(n, 7);
  for (Value v : {a, aScale, aZero, b, bScale, bZero, yScale, yZero})
    if (!v)
      return failure();
  for (Value s : {aScale, bScale, yScale})
    if (typeOf(s).getNumElements() != 1 ||
        !typeOf(s).getElementType().isF32()) {
      im.error(n) << "per-row or per-column scales are not supported yet "
                     "(each scale must be one f32)";
      return failure();
    }
  Type element = typeOf(yZero).getElementType();
  if (!quantizedRange(element)) {
    im.error(n) << "y_zero_point of type " << element
                << " is not supported (ui8 and i8 are)";
    return failure();
  }
  Value product = integerProduct(at, a, aZero, b, bZero);
  Type f32 = im.builder.getF32Type();
  // acc * (a_scale * b_scale) / y_scale, as ONNX's reference scales it.
  Value scaled =
      at.div(at.mul(at.cast(product, f32), at.mul(aScale, bScale)), yScale);
  return at.define(
      quantize(at, scaled, at.scalar(scaled, 1.0), yZero, element));
}

} // namespace

void modelc::onnx_import::addQuantizeConverters(
    llvm::StringMap<NodeConverter> &t) {
  t["QuantizeLinear"] = quantizeLinear;
  t["DequantizeLinear"] = dequantizeLinear;
  t["DynamicQuantizeLinear"] = dynamicQuantizeLinear;
  t["MatMulInteger"] = matMulInteger;
  t["QLinearMatMul"] = qLinearMatMul;
}
