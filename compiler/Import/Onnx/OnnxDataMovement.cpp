//===- OnnxDataMovement.cpp - Expand, Tile, Split, Pad, logic ops ---------===//
//
// ONNX ops that move or replicate elements, built from graph ops that
// already do (select broadcasts, concat, slice), and the boolean ops as
// selects. Shapes, repeats, splits and pads must be constants.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/NodeBuilder.h"

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;
using namespace modelc::onnx_import;
using onnx::NodeProto;

namespace {

/// A constant of `type` with every element `value` (a bool, or a number).
Value splat(At &at, RankedTensorType type, double value) {
  Type e = type.getElementType();
  Attribute one =
      e.isInteger(1) ? Attribute(BoolAttr::get(&at.im.context, value != 0))
      : isa<FloatType>(e)
          ? Attribute(FloatAttr::get(e, value))
          : Attribute(IntegerAttr::get(e, static_cast<int64_t>(value)));
  return ConstantOp::create(at.im.builder, at.loc(),
                            DenseElementsAttr::get(type, one));
}

Value boolScalar(At &at, bool value) {
  return splat(at, RankedTensorType::get({}, at.im.builder.getI1Type()), value);
}

/// Expand(x, shape): x broadcast with `shape` (numpy rules), as a select of
/// x under an all-true condition of that shape.
LogicalResult expand(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  std::optional<SmallVector<int64_t>> shape = im.constantInts(n, 1);
  if (!x)
    return failure();
  if (!shape) {
    im.error(n) << "a shape given at run time is not supported (it must be "
                   "constant)";
    return failure();
  }
  for (int64_t &d : *shape)
    if (d < 1)
      d = 1; // ONNX: a 1 (or 0 broadcast) keeps x's size there
  Value all =
      splat(at, RankedTensorType::get(*shape, im.builder.getI1Type()), 1);
  return at.define(at.select(all, x, x));
}

/// Tile(x, repeats): each dimension repeated by concatenation.
LogicalResult tile(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  std::optional<SmallVector<int64_t>> repeats = im.constantInts(n, 1);
  if (!x)
    return failure();
  if (!repeats) {
    im.error(n) << "repeats given at run time are not supported (they must "
                   "be constant)";
    return failure();
  }
  if (static_cast<int64_t>(repeats->size()) != typeOf(x).getRank()) {
    im.error(n) << "repeats must have one entry per dimension";
    return failure();
  }
  for (auto [axis, r] : llvm::enumerate(*repeats)) {
    if (r < 1) {
      im.error(n) << "a repeat of " << r << " (an empty result) is not "
                  << "supported";
      return failure();
    }
    if (r == 1)
      continue;
    if (r > 4096) {
      im.error(n) << "a repeat of " << r << " is not supported (at most 4096)";
      return failure();
    }
    SmallVector<Value> copies(r, x);
    x = at.op<ConcatOp>(
        copies,
        {im.builder.getNamedAttr("axis", im.builder.getI64IntegerAttr(axis))});
    if (!x)
      return failure();
  }
  return at.define(x);
}

/// Split(x, split, axis): one slice per output.
LogicalResult split(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  int64_t rank = typeOf(x).getRank();
  int64_t axis = normalizeAxis(Importer::intAttr(n, "axis", 0), rank);
  if (axis < 0 || axis >= rank) {
    im.error(n) << "axis out of range";
    return failure();
  }
  int64_t size = typeOf(x).getDimSize(axis);
  std::optional<SmallVector<int64_t>> sizes =
      im.opset() < 13 ? Importer::intsAttr(n, "split") : im.constantInts(n, 1);
  if (Importer::hasInput(n, 1) && !sizes) {
    im.error(n) << "split sizes given at run time are not supported (they "
                   "must be constant)";
    return failure();
  }
  int64_t outputs = n.output_size();
  if (!sizes) {
    // Equal parts, the last smaller when the size does not divide.
    int64_t part = (size + outputs - 1) / outputs;
    sizes = SmallVector<int64_t>();
    for (int64_t begin = 0; begin < size; begin += part)
      sizes->push_back(std::min(part, size - begin));
  }
  if (static_cast<int64_t>(sizes->size()) != outputs ||
      llvm::any_of(*sizes, [](int64_t s) { return s < 1; })) {
    im.error(n) << "split sizes must be " << outputs
                << " positive numbers (empty parts are not supported)";
    return failure();
  }
  int64_t begin = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    Value part = at.op<SliceOp>(
        {x}, {im.builder.getNamedAttr("starts",
                                      im.builder.getDenseI64ArrayAttr({begin})),
              im.builder.getNamedAttr("ends", im.builder.getDenseI64ArrayAttr(
                                                  {begin + (*sizes)[i]})),
              im.builder.getNamedAttr(
                  "axes", im.builder.getDenseI64ArrayAttr({axis}))});
    if (!part)
      return failure();
    im.define(n, part, i);
    begin += (*sizes)[i];
  }
  return success();
}

/// Pad(x, pads, value) in constant mode: constant blocks concatenated on
/// each side of each padded dimension. Reflect and edge modes gather
/// (padByGather, OnnxResize.cpp).
LogicalResult pad(Importer &im, const NodeProto &n) {
  At at{im, n};
  Value x = im.input(n, 0);
  if (!x)
    return failure();
  std::string mode = Importer::stringAttr(n, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    im.error(n) << "mode '" << mode << "' is not supported";
    return failure();
  }
  int64_t rank = typeOf(x).getRank();
  std::optional<SmallVector<int64_t>> pads =
      im.opset() < 11 ? Importer::intsAttr(n, "pads") : im.constantInts(n, 1);
  if (!pads) {
    im.error(n) << "pads given at run time are not supported (they must be "
                   "constant)";
    return failure();
  }
  if (static_cast<int64_t>(pads->size()) != 2 * rank) {
    im.error(n) << "pads must have 2 entries per dimension";
    return failure();
  }
  if (Importer::hasInput(n, 3)) {
    im.error(n) << "the axes input (opset 18) is not supported";
    return failure();
  }
  if (mode != "constant")
    return padByGather(im, n, x, *pads, mode == "reflect");
  double value = im.opset() < 11 ? Importer::floatAttr(n, "value", 0) : 0;
  if (im.opset() >= 11 && Importer::hasInput(n, 2)) {
    std::optional<double> given = im.constantScalar(n, 2);
    if (!given) {
      im.error(n) << "the pad value must be a constant scalar";
      return failure();
    }
    value = *given;
  }
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t before = (*pads)[axis], after = (*pads)[axis + rank];
    if (before < 0 || after < 0) {
      im.error(n) << "negative pads (cropping) are not supported yet";
      return failure();
    }
    SmallVector<Value> parts;
    for (int64_t extent : {before, int64_t(-1), after}) {
      if (extent == -1) {
        parts.push_back(x);
        continue;
      }
      if (extent == 0)
        continue;
      SmallVector<int64_t> shape(typeOf(x).getShape());
      shape[axis] = extent;
      parts.push_back(splat(
          at, RankedTensorType::get(shape, typeOf(x).getElementType()), value));
    }
    if (parts.size() > 1)
      x = at.op<ConcatOp>(
          parts, {im.builder.getNamedAttr("axis",
                                          im.builder.getI64IntegerAttr(axis))});
    if (!x)
      return failure();
  }
  return at.define(x);
}

} // namespace

void modelc::onnx_import::addDataMovementConverters(
    llvm::StringMap<NodeConverter> &t) {
  t["Expand"] = expand;
  t["Tile"] = tile;
  t["Split"] = split;
  t["Pad"] = pad;
  t["Not"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value x = im.input(n, 0);
    return at.define(
        x ? at.select(x, boolScalar(at, false), boolScalar(at, true))
          : Value());
  };
  t["And"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value a = im.input(n, 0), b = im.input(n, 1);
    return at.define(a && b ? at.select(a, b, boolScalar(at, false)) : Value());
  };
  t["Or"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value a = im.input(n, 0), b = im.input(n, 1);
    return at.define(a && b ? at.select(a, boolScalar(at, true), b) : Value());
  };
  t["Xor"] = [](Importer &im, const NodeProto &n) {
    At at{im, n};
    Value a = im.input(n, 0), b = im.input(n, 1);
    if (!a || !b)
      return failure();
    Value notB = at.select(b, boolScalar(at, false), boolScalar(at, true));
    return at.define(at.select(a, notB, b));
  };
}
