//===- GraphNNOps.cpp - normalization, convolution, pooling, losses -------===//

#include "dialects/Graph/IR/GraphOpUtils.h"
#include "dialects/Graph/IR/GraphOps.h"

#include <limits>

using namespace mlir;
using namespace modelc::graph;

//===----------------------------------------------------------------------===//
// Softmax, normalization
//===----------------------------------------------------------------------===//

template <typename SoftmaxLikeOp>
static LogicalResult verifySoftmaxLike(SoftmaxLikeOp op) {
  OpDiagnostics diag(op.getLoc(), op.getOperationName());
  return diag.axis(static_cast<int64_t>(op.getAxis()),
                   op.getInput().getType().getRank());
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxLike(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxLike(*this); }

/// A per-channel or per-feature parameter: expected shape and element type.
static LogicalResult checkParameter(const OpDiagnostics &diag, Value value,
                                    StringRef name, RankedTensorType input,
                                    ArrayRef<int64_t> expectedShape) {
  FailureOr<RankedTensorType> type = diag.floatTensor(value.getType(), name);
  if (failed(type) || failed(diag.sameElementType(input, "input", *type, name)))
    return failure();
  if (type->getShape() != expectedShape)
    return diag.fail(name, " must have shape ", formatShape(expectedShape),
                     ", got ", formatShape(type->getShape()));
  return success();
}

static LogicalResult checkEpsilon(const OpDiagnostics &diag, APFloat epsilon) {
  if (!(epsilon.convertToFloat() > 0.0f))
    return diag.fail("epsilon must be > 0, got ", epsilon.convertToFloat());
  return success();
}

LogicalResult
LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.floatTensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  FailureOr<int64_t> axis =
      diag.axis(static_cast<int64_t>(adaptor.getAxis()), input->getRank());
  if (failed(axis) || failed(checkEpsilon(diag, adaptor.getEpsilon())))
    return failure();
  ArrayRef<int64_t> normalized = input->getShape().drop_front(*axis);
  if (Value scale = adaptor.getScale())
    if (failed(checkParameter(diag, scale, "scale", *input, normalized)))
      return failure();
  if (Value bias = adaptor.getBias())
    if (failed(checkParameter(diag, bias, "bias", *input, normalized)))
      return failure();
  return inferred(inferredTypes, *input);
}

LogicalResult
BatchNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  // Its syntax is a plain operand list, so the parser may hand over any
  // number of them (the operand accessors assume all five).
  if (adaptor.getOperands().size() != 5)
    return diag.fail("takes 5 operands (input, scale, bias, mean, var), got ",
                     adaptor.getOperands().size());
  FailureOr<RankedTensorType> input =
      diag.floatTensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  if (input->getRank() < 2)
    return diag.fail("input must have rank >= 2 ([N, C, ...]), got ",
                     formatShape(input->getShape()));
  if (failed(checkEpsilon(diag, adaptor.getEpsilon())))
    return failure();
  if (std::optional<APFloat> momentum = adaptor.getMomentum()) {
    double m = momentum->convertToDouble();
    if (!(m >= 0.0 && m <= 1.0))
      return diag.fail("momentum must be in [0, 1], got ", m);
  }
  int64_t channels = input->getDimSize(1);
  for (auto [value, name] : {std::pair{adaptor.getScale(), "scale"},
                             {adaptor.getBias(), "bias"},
                             {adaptor.getMean(), "mean"},
                             {adaptor.getVariance(), "variance"}})
    if (failed(checkParameter(diag, value, name, *input, {channels})))
      return failure();
  return inferred(inferredTypes, *input);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Checks that `values` has `count` entries, each at least `minimum`.
static LogicalResult checkArray(const OpDiagnostics &diag, StringRef name,
                                ArrayRef<int64_t> values, size_t count,
                                int64_t minimum) {
  if (values.size() != count)
    return diag.fail(name, " must have ", count, " entries, got ",
                     values.size());
  for (int64_t value : values)
    if (value < minimum)
      return diag.fail(name, " entries must be >= ", minimum, ", got ",
                       formatShape(values));
  return success();
}

/// Output size of a sliding window over one spatial dimension.
static int64_t windowOutputSize(int64_t in, int64_t padBegin, int64_t padEnd,
                                int64_t kernel, int64_t stride,
                                int64_t dilation, bool ceilMode) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // As PyTorch: the last window must start inside the input or left padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

/// What conv2d and conv_transpose2d check alike: float input and weight of
/// one element type, both of rank 4 (the weight laid out as `weightLayout`),
/// two strides and dilations >= 1, four paddings >= 0, groups >= 1.
static LogicalResult
checkConvOperands(const OpDiagnostics &diag, Type inputType, Type weightType,
                  StringRef weightLayout, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                  uint64_t groups, RankedTensorType &input,
                  RankedTensorType &weight) {
  if (failed(diag.inputAndWeight(inputType, weightType, input, weight)))
    return failure();
  if (input.getRank() != 4)
    return diag.fail("input must have rank 4 ([N, C, H, W]), got ",
                     formatShape(input.getShape()));
  if (weight.getRank() != 4)
    return diag.fail("weight must have rank 4 (", weightLayout, "), got ",
                     formatShape(weight.getShape()));
  if (failed(checkArray(diag, "strides", strides, 2, 1)) ||
      failed(checkArray(diag, "padding", padding, 4, 0)) ||
      failed(checkArray(diag, "dilations", dilations, 2, 1)))
    return failure();
  if (static_cast<int64_t>(groups) < 1)
    return diag.fail("groups must be >= 1, got ", static_cast<int64_t>(groups));
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  RankedTensorType input, weight;
  ArrayRef<int64_t> strides = adaptor.getStrides();
  ArrayRef<int64_t> padding = adaptor.getPadding();
  ArrayRef<int64_t> dilations = adaptor.getDilations();
  if (failed(checkConvOperands(diag, adaptor.getInput().getType(),
                               adaptor.getWeight().getType(),
                               "[O, C/groups, KH, KW]", strides, padding,
                               dilations, adaptor.getGroups(), input, weight)))
    return failure();
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  ArrayRef<int64_t> x = input.getShape(), w = weight.getShape();
  if (x[1] % groups != 0 || w[0] % groups != 0)
    return diag.fail("input channels (", x[1], ") and output channels (", w[0],
                     ") must be divisible by groups (", groups, ")");
  if (w[1] * groups != x[1])
    return diag.fail("weight ", formatShape(w), " expects ", w[1] * groups,
                     " input channels (", w[1], " per group x ", groups,
                     " groups), input ", formatShape(x), " has ", x[1]);
  if (Value bias = adaptor.getBias())
    if (failed(checkParameter(diag, bias, "bias", input, {w[0]})))
      return failure();
  int64_t outH = windowOutputSize(x[2], padding[0], padding[2], w[2],
                                  strides[0], dilations[0], false);
  int64_t outW = windowOutputSize(x[3], padding[1], padding[3], w[3],
                                  strides[1], dilations[1], false);
  if (outH < 1 || outW < 1)
    return diag.fail("the kernel ", formatShape(w.drop_front(2)),
                     " (dilated) does not fit the padded input ",
                     formatShape(x.drop_front(2)));
  return inferred(inferredTypes, RankedTensorType::get({x[0], w[0], outH, outW},
                                                       input.getElementType()));
}

bool Conv2dOp::isPointwise() {
  ArrayRef<int64_t> x = getInput().getType().getShape();
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  ArrayRef<int64_t> y = getResult().getType().getShape();
  return w[2] == 1 && w[3] == 1 && y[2] == x[2] && y[3] == x[3] &&
         getStrides()[0] == 1 && getStrides()[1] == 1 && getPadding()[0] == 0 &&
         getPadding()[1] == 0;
}

LogicalResult ConvTranspose2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  RankedTensorType input, weight;
  ArrayRef<int64_t> strides = adaptor.getStrides();
  ArrayRef<int64_t> padding = adaptor.getPadding();
  ArrayRef<int64_t> outputPadding = adaptor.getOutputPadding();
  ArrayRef<int64_t> dilations = adaptor.getDilations();
  if (failed(checkConvOperands(
          diag, adaptor.getInput().getType(), adaptor.getWeight().getType(),
          "[C, O/groups, KH, KW]", strides, padding, dilations,
          adaptor.getGroups(), input, weight)) ||
      failed(checkArray(diag, "output_padding", outputPadding, 2, 0)))
    return failure();
  for (int d = 0; d < 2; ++d)
    if (outputPadding[d] >= strides[d] && outputPadding[d] >= dilations[d])
      return diag.fail("output_padding ", formatShape(outputPadding),
                       " must be smaller than the stride or the dilation in "
                       "each dimension (strides ",
                       formatShape(strides), ", dilations ",
                       formatShape(dilations), ")");
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  ArrayRef<int64_t> x = input.getShape(), w = weight.getShape();
  if (w[0] != x[1])
    return diag.fail("weight ", formatShape(w), " expects ", w[0],
                     " input channels, input ", formatShape(x), " has ", x[1]);
  if (x[1] % groups != 0)
    return diag.fail("input channels (", x[1],
                     ") must be divisible by groups (", groups, ")");
  int64_t outChannels = w[1] * groups;
  if (Value bias = adaptor.getBias())
    if (failed(checkParameter(diag, bias, "bias", input, {outChannels})))
      return failure();
  int64_t out[2];
  for (int d = 0; d < 2; ++d)
    out[d] = (x[2 + d] - 1) * strides[d] - padding[d] - padding[2 + d] +
             dilations[d] * (w[2 + d] - 1) + outputPadding[d] + 1;
  if (out[0] < 1 || out[1] < 1)
    return diag.fail("the padding ", formatShape(padding),
                     " removes the whole output (", out[0], "x", out[1], ")");
  return inferred(inferredTypes,
                  RankedTensorType::get({x[0], outChannels, out[0], out[1]},
                                        input.getElementType()));
}

/// Shared by max and average pooling.
template <typename Adaptor>
static LogicalResult inferPool2d(std::optional<Location> location,
                                 StringRef opName, Adaptor adaptor,
                                 SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, opName);
  FailureOr<RankedTensorType> input =
      diag.floatTensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  if (input->getRank() != 4)
    return diag.fail("input must have rank 4 ([N, C, H, W]), got ",
                     formatShape(input->getShape()));
  if (failed(diag.required(adaptor.getKernelAttr(), "kernel")))
    return failure();
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  ArrayRef<int64_t> strides = adaptor.getStrides().value_or(kernel);
  ArrayRef<int64_t> padding = adaptor.getPadding();
  if (failed(checkArray(diag, "kernel", kernel, 2, 1)) ||
      failed(checkArray(diag, "strides", strides, 2, 1)) ||
      failed(checkArray(diag, "padding", padding, 4, 0)))
    return failure();
  for (int i = 0; i < 4; ++i)
    if (padding[i] * 2 > kernel[i % 2])
      return diag.fail("padding ", formatShape(padding),
                       " must be at most half the kernel ",
                       formatShape(kernel));
  ArrayRef<int64_t> x = input->getShape();
  bool ceilMode = adaptor.getCeilMode();
  int64_t outH = windowOutputSize(x[2], padding[0], padding[2], kernel[0],
                                  strides[0], 1, ceilMode);
  int64_t outW = windowOutputSize(x[3], padding[1], padding[3], kernel[1],
                                  strides[1], 1, ceilMode);
  if (outH < 1 || outW < 1)
    return diag.fail("the kernel ", formatShape(kernel),
                     " does not fit the padded input ",
                     formatShape(x.drop_front(2)));
  return inferred(
      inferredTypes,
      RankedTensorType::get({x[0], x[1], outH, outW}, input->getElementType()));
}

LogicalResult
MaxPool2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  return inferPool2d(location, getOperationName(), adaptor, inferredTypes);
}

LogicalResult
AvgPool2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredTypes) {
  return inferPool2d(location, getOperationName(), adaptor, inferredTypes);
}

LogicalResult
GatherGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                               Adaptor adaptor,
                               SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> grad =
      diag.floatTensor(adaptor.getGrad().getType(), "grad");
  FailureOr<RankedTensorType> indices =
      diag.indexTensor(adaptor.getIndices().getType(), "indices");
  if (failed(grad) || failed(indices))
    return failure();
  int64_t axis = adaptor.getAxis(), rank = indices->getRank();
  int64_t dataRank = grad->getRank() - rank + 1;
  if (dataRank < 1 || axis < 0 || axis >= dataRank)
    return diag.fail("axis ", axis, " does not fit grad ",
                     formatShape(grad->getShape()), " of a gather by ",
                     formatShape(indices->getShape()));
  ArrayRef<int64_t> g = grad->getShape();
  if (g.slice(axis, rank) != indices->getShape())
    return diag.fail("grad ", formatShape(g), " must hold the indices' shape ",
                     formatShape(indices->getShape()), " at axis ", axis);
  if (adaptor.getSize() < 1)
    return diag.fail("size must be >= 1, got ", adaptor.getSize());
  SmallVector<int64_t> shape(g.take_front(axis));
  shape.push_back(adaptor.getSize());
  llvm::append_range(shape, g.drop_front(axis + rank));
  return inferred(inferredTypes, grad->clone(shape));
}

/// What the gradient ops of 2-D windows check alike: `input` (the forward
/// op's input) and `grad` (its output's gradient) are float tensors of rank
/// 4 and one element type.
static FailureOr<std::pair<RankedTensorType, RankedTensorType>>
checkInputAndGrad(const OpDiagnostics &diag, Value inputValue,
                  Value gradValue) {
  FailureOr<RankedTensorType> input =
      diag.floatTensor(inputValue.getType(), "input");
  FailureOr<RankedTensorType> grad =
      diag.floatTensor(gradValue.getType(), "grad");
  if (failed(input) || failed(grad))
    return failure();
  if (input->getRank() != 4 || grad->getRank() != 4)
    return diag.fail("input and grad must have rank 4 ([N, C, H, W]), got ",
                     formatShape(input->getShape()), " and ",
                     formatShape(grad->getShape()));
  if (input->getElementType() != grad->getElementType())
    return diag.fail("input and grad must have one element type");
  return std::make_pair(*input, *grad);
}

LogicalResult Conv2dWeightGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<std::pair<RankedTensorType, RankedTensorType>> types =
      checkInputAndGrad(diag, adaptor.getInput(), adaptor.getGrad());
  if (failed(types))
    return failure();
  auto [input, grad] = *types;
  if (failed(diag.required(adaptor.getKernelAttr(), "kernel")))
    return failure();
  ArrayRef<int64_t> k = adaptor.getKernel(), s = adaptor.getStrides(),
                    p = adaptor.getPadding(), d = adaptor.getDilations();
  int64_t groups = adaptor.getGroups();
  if (failed(checkArray(diag, "kernel", k, 2, 1)) ||
      failed(checkArray(diag, "strides", s, 2, 1)) ||
      failed(checkArray(diag, "padding", p, 4, 0)) ||
      failed(checkArray(diag, "dilations", d, 2, 1)))
    return failure();
  ArrayRef<int64_t> x = input.getShape(), g = grad.getShape();
  if (groups < 1 || x[1] % groups || g[1] % groups)
    return diag.fail("groups ", groups, " must divide the input's ", x[1],
                     " and the gradient's ", g[1], " channels");
  if (g[0] != x[0])
    return diag.fail("grad ", formatShape(g), " must have the input's batch ",
                     x[0]);
  for (int i = 0; i < 2; ++i)
    if (windowOutputSize(x[2 + i], p[i], p[2 + i], k[i], s[i], d[i],
                         /*ceilMode=*/false) != g[2 + i])
      return diag.fail("grad ", formatShape(g),
                       " is not the output size of a convolution of ",
                       formatShape(x), " with kernel ", formatShape(k));
  return inferred(inferredTypes,
                  input.clone({g[1], x[1] / groups, k[0], k[1]}));
}

LogicalResult MaxPool2dGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<std::pair<RankedTensorType, RankedTensorType>> types =
      checkInputAndGrad(diag, adaptor.getInput(), adaptor.getGrad());
  if (failed(types))
    return failure();
  auto [input, grad] = *types;
  if (failed(diag.required(adaptor.getKernelAttr(), "kernel")) ||
      failed(diag.required(adaptor.getStridesAttr(), "strides")))
    return failure();
  ArrayRef<int64_t> kernel = adaptor.getKernel(),
                    strides = adaptor.getStrides(),
                    padding = adaptor.getPadding();
  if (failed(checkArray(diag, "kernel", kernel, 2, 1)) ||
      failed(checkArray(diag, "strides", strides, 2, 1)) ||
      failed(checkArray(diag, "padding", padding, 4, 0)))
    return failure();
  ArrayRef<int64_t> x = input.getShape(), g = grad.getShape();
  if (g[0] != x[0] || g[1] != x[1])
    return diag.fail("grad ", formatShape(g),
                     " must have the input's batch and channels ",
                     formatShape(x));
  // Each window starts inside the input or its leading padding.
  for (int i = 0; i < 2; ++i)
    if ((g[2 + i] - 1) * strides[i] - padding[i] >= x[2 + i])
      return diag.fail("grad ", formatShape(g),
                       " has more windows than the input ", formatShape(x),
                       " holds");
  return inferred(inferredTypes, input);
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return emitOpError("ratio must be in [0, 1], got ") << ratio;
  int64_t site = getSiteAttr().getInt();
  if (site < 0 || site > std::numeric_limits<uint32_t>::max())
    return emitOpError("site must be in [0, 2^32), got ") << site;
  if (getOffsetAttr().getInt() < 0)
    return emitOpError("offset must not be negative, got ")
           << getOffsetAttr().getInt();
  if (getRankStrideAttr().getInt() < 0)
    return emitOpError("rank_stride must not be negative, got ")
           << getRankStrideAttr().getInt();
  return success();
}

LogicalResult ReplicaAllReduceOp::verify() {
  int64_t members = getMembersAttr().getInt(),
          member = getMemberAttr().getInt();
  if (members < 2)
    return emitOpError("members must be at least 2, got ") << members;
  if (member < 0 || member >= members)
    return emitOpError("member must be in [0, ")
           << members << "), got " << member;
  if (getGroupAttr().getInt() < 0)
    return emitOpError("group must not be negative, got ")
           << getGroupAttr().getInt();
  return success();
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> input =
      diag.floatTensor(adaptor.getInput().getType(), "input");
  if (failed(input))
    return failure();
  if (input->getRank() < 3)
    return diag.fail("input must have rank >= 3 ([N, C, spatial...]), got ",
                     formatShape(input->getShape()));
  SmallVector<int64_t> shape(input->getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  return inferred(inferredTypes, input->clone(shape));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredTypes) {
  OpDiagnostics diag(location, getOperationName());
  FailureOr<RankedTensorType> logits =
      diag.floatTensor(adaptor.getLogits().getType(), "logits");
  if (failed(logits))
    return failure();
  if (logits->getRank() != 2)
    return diag.fail("logits must have rank 2 ([N, C]), got ",
                     formatShape(logits->getShape()));
  FailureOr<RankedTensorType> targets =
      diag.indexTensor(adaptor.getTargets().getType(), "targets");
  if (failed(targets))
    return failure();
  int64_t batch = logits->getDimSize(0), classes = logits->getDimSize(1);
  if (targets->getShape() != ArrayRef<int64_t>{batch})
    return diag.fail("targets must have shape [", batch, "], got ",
                     formatShape(targets->getShape()));
  if (Value weight = adaptor.getWeight())
    if (failed(checkParameter(diag, weight, "weight", *logits, {classes})))
      return failure();
  if (adaptor.getReduction() == Reduction::none)
    return inferred(inferredTypes, logits->clone({batch}));
  return inferred(inferredTypes, logits->clone(ArrayRef<int64_t>{}));
}

//===----------------------------------------------------------------------===//
// Cost and batch splitting (GraphInterfaces.td)
//===----------------------------------------------------------------------===//

static const char *const kNormalizesOverBatch = "it normalizes over the batch";

// Max, subtract, exp, sum and divide per element.
double SoftmaxOp::getFlops() { return 5 * elementCount(getInput()); }
double LogSoftmaxOp::getFlops() { return 5 * elementCount(getInput()); }
double CrossEntropyOp::getFlops() { return 5 * elementCount(getLogits()); }

std::string DropoutOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  // Eval mode is the identity; a training mask is drawn by element index
  // (modelc-replicate gives each replica its rows' offset instead).
  if (getStep())
    return "a training-mode dropout draws its mask by element index in "
           "the whole tensor";
  return "";
}

std::string SoftmaxOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return getNormalizedAxis() == 0 ? kNormalizesOverBatch : "";
}

std::string LogSoftmaxOp::whyNotSplit(llvm::function_ref<bool(Value)>,
                                      int64_t) {
  return getNormalizedAxis() == 0 ? kNormalizesOverBatch : "";
}

double LayerNormOp::getFlops() { return 8 * elementCount(getResult()); }

std::string LayerNormOp::whyNotSplit(llvm::function_ref<bool(Value)>, int64_t) {
  return getNormalizedAxis() == 0 ? kNormalizesOverBatch : "";
}

double BatchNormOp::getFlops() { return 2 * elementCount(getResult()); }

double Conv2dOp::getFlops() {
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  return 2 * elementCount(getResult()) *
         static_cast<double>(w[1] * w[2] * w[3]);
}

// Each input element meets every kernel tap of its group's output channels.
double ConvTranspose2dOp::getFlops() {
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  return 2 * elementCount(getInput()) * static_cast<double>(w[1] * w[2] * w[3]);
}

template <typename PoolOp> static double poolFlops(PoolOp pool) {
  ArrayRef<int64_t> k = pool.getKernel();
  return elementCount(pool.getResult()) * static_cast<double>(k[0] * k[1]);
}
double MaxPool2dOp::getFlops() { return poolFlops(*this); }
double AvgPool2dOp::getFlops() { return poolFlops(*this); }

double GatherGradOp::getFlops() { return elementCount(getGrad()); }
// Philox4x32-10 per element: ten rounds of two 32x32 multiplications and
// a few xors and additions, about 60 operations.
double AllReduceOp::getFlops() {
  return static_cast<double>(elementCount(getResult()));
}
// A copy of the owner's value (the backend's broadcast): no arithmetic.
double OwnerBroadcastOp::getFlops() { return 0.0; }
// The host's sum, one add per element and member after the first (NCCL's
// ring does as many).
double ReplicaAllReduceOp::getFlops() {
  return static_cast<double>(elementCount(getResult())) *
         static_cast<double>(getMembers() - 1);
}
double DropoutOp::getFlops() {
  return getStep() ? 60.0 * elementCount(getResult()) : 0.0;
}
double Conv2dWeightGradOp::getFlops() {
  ArrayRef<int64_t> w = getResult().getType().getShape();
  return 2.0 * elementCount(getGrad()) *
         static_cast<double>(w[1] * w[2] * w[3]);
}
double MaxPool2dGradOp::getFlops() {
  ArrayRef<int64_t> k = getKernel();
  return elementCount(getGrad()) * static_cast<double>(k[0] * k[1]);
}
double GlobalAvgPoolOp::getFlops() { return elementCount(getInput()); }

std::string CrossEntropyOp::whyNotSplit(llvm::function_ref<bool(Value)>,
                                        int64_t) {
  return getReduction() == Reduction::none
             ? ""
             : "its mean or sum loss reduces over the batch";
}
