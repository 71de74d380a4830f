//===- GraphOps.td - graph dialect operations --------------*- tablegen -*-===//

#ifndef MODELC_GRAPH_OPS_TD
#define MODELC_GRAPH_OPS_TD

include "dialects/Graph/IR/GraphBase.td"
include "dialects/Graph/IR/GraphInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Weights and constants
//===----------------------------------------------------------------------===//

def Graph_WeightOp : Op<Graph_Dialect, "weight",
    [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "Declares a weight of the model.";
  let description = [{
    A module-level declaration of a weight. Its name is the weight's key in a
    safetensors file, so a PyTorch `state_dict` maps to the declarations one
    to one. Names that are not bare identifiers are quoted: `@"0.weight"`.

    `from` (set by `modelc-lower-precision`, `modelc --precision`): the
    weights a model is compiled with (a safetensors file,
    `--random-weights`, an ONNX model's initializers) hold this weight in
    that element type, f32; modelc rounds it to the declared f16 or bf16
    (to nearest even) when it builds model.so, which stores it rounded.

    Training (docs/training.md): `writable` lets entry points write the
    weight with `graph.assign`; the runtime keeps a writable copy of it on
    the one device that holds it, and no pass treats it as a constant. `frozen` keeps a weight out of the
    parameters modelc-differentiate takes gradients for. `zeros`: the
    weight starts as zeros when the model's weights do not hold it (the
    optimizer's state, made by modelc-build-optimizer). `shard` (set by
    modelc-shard-optimizer-state on optimizer state): only the rank that
    owns shard `shard` of a distributed run (`modelc_shard_owner` of
    runtime/include/modelc/abi.h) holds the weight; the ops that read or write it carry
    `graph.shard` with the same value (docs/training.md, ZeRO-1).

    Verifier: the type is a statically shaped tensor of a supported element
    type; the name is unique in the module; with `from`, the declared type
    is f16 or bf16 and `from` is f32; `shard` is non-negative, on a
    `writable` `zeros` weight.

    ```mlir
    graph.weight @fc1.weight : tensor<1024x784xf32>
    graph.weight @fc2.weight : tensor<10x1024xbf16> from f32
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
                       OptionalAttr<TypeAttr>:$source_dtype,
                       UnitAttr:$frozen, UnitAttr:$zeros, UnitAttr:$writable,
                       OptionalAttr<I64Attr>:$shard);
  let assemblyFormat = "$sym_name attr-dict `:` $type (`from` $source_dtype^)?";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    /// The type the model's weights hold this weight in: the declared type
    /// with the `from` element type, if any.
    ::mlir::RankedTensorType getSourceTensorType() {
      if (auto source = getSourceDtype())
        return getTensorType().clone(*source);
      return getTensorType();
    }
  }];
}

def Graph_DimOp : Op<Graph_Dialect, "dim",
    [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "Declares a dynamic dimension and its range.";
  let description = [{
    A module-level declaration of a named dimension whose size is chosen
    per run, between `min` and `max` (both included); `opt` is the size
    placement and kernel choices aim at (TensorRT's opt; `modelc --dim
    batch=1..64@8` sets all three). An entry point's argument takes the
    name at an axis with `graph.dims` (below); every tensor type in the IR
    holds the dimension at `max`, the size memory is planned for, and a run
    gives the actual size through its inputs (docs/dynamic.md).

    ```mlir
    graph.dim @batch 1 to 64 at 8
    func.func @forward(%x: tensor<64x784xf32> {graph.dims = ["batch", ""]})
    ```

    `graph.dims` on an argument has one string per axis: a declared name,
    or "" for a static axis. modelc-verify-model checks that each name is
    declared and that the argument's size there is the dimension's `max`;
    modelc-check-dynamic-dims derives the outputs' `graph.dims` and rejects
    what is not supported yet (a dynamic axis other than the first, ops
    that mix the samples of the dimension).

    Verifier: 1 <= min <= opt <= max.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$min, I64Attr:$max,
                       I64Attr:$opt);
  let assemblyFormat = "$sym_name $min `to` $max `at` $opt attr-dict";
  let hasVerifier = 1;
}

def Graph_WeightRefOp : Graph_Op<"weight_ref",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads a declared weight inside a function.";
  let description = [{
    The value of the weight `name`. Weights are immutable; a weight used on
    several devices is resident on each of them, copied once at load.

    Verifier: `name` is a `graph.weight` of the enclosing module and the
    result type equals its declared type.

    ```mlir
    %w = graph.weight_ref @fc1.weight : tensor<1024x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Graph_AssignOp : Graph_Op<"assign",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "Writes a new value into a declared weight (a training step).";
  let description = [{
    Stores `value` into the weight `name`: the next run of any entry point
    reads the new value. Made by modelc-build-optimizer for parameters and
    optimizer state; the weight must be declared `writable` (see
    `graph.weight`), so no pass treats it as a constant (packed products,
    resident copies on several devices).

    `after` lists values whose producers read the weight: the write waits
    for them (in a multi-device plan, their events), so no op reads a half-
    updated weight. The assign itself has no result.

    Verifier: `name` is a `writable` `graph.weight` of the enclosing module
    and `value` has its declared type.

    ```mlir
    graph.assign @fc1.weight, %new after(%h, %dx) : tensor<1024x784xf32>, tensor<64x1024xf32>, tensor<64x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Graph_Tensor:$value,
                       Variadic<Graph_Tensor>:$after);
  let assemblyFormat = [{
    $name `,` $value (`after` `(` $after^ `)`)? attr-dict `:` type($value)
      (`,` type($after)^)?
  }];
}

def Graph_ConstantOp : Graph_Op<"constant",
    [ConstantLike, Pure, Graph_InferTypeFromProperties]> {
  let summary = "A constant tensor.";
  let description = [{
    The result has the value's type.

    ```mlir
    %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_UnaryOp<string mnemonic, Type operandType, string semantics,
                    list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                              Graph_Elementwise])> {
  let summary = "Elementwise " # semantics # ".";
  let description = [{
    Elementwise; the result has the operand's type.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_NegOp : Graph_UnaryOp<"neg", Graph_NumericTensor, "negation, -x",
    [Graph_OwnGradient]> {
  let hasCanonicalizer = 1;
}
def Graph_AbsOp : Graph_UnaryOp<"abs", Graph_NumericTensor, "absolute value, |x|",
    [Graph_OwnGradient]>;
def Graph_ReluOp : Graph_UnaryOp<"relu", Graph_NumericTensor, "rectifier, max(x, 0)",
    [Graph_OwnGradient]>;
def Graph_ExpOp : Graph_UnaryOp<"exp", Graph_FloatTensor, "exponential, e^x",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_LogOp : Graph_UnaryOp<"log", Graph_FloatTensor, "natural logarithm",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", Graph_FloatTensor, "square root",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", Graph_FloatTensor, "reciprocal square root, 1/sqrt(x)",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_TanhOp : Graph_UnaryOp<"tanh", Graph_FloatTensor, "hyperbolic tangent",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", Graph_FloatTensor, "logistic sigmoid, 1/(1+e^-x)",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_SiluOp : Graph_UnaryOp<"silu", Graph_FloatTensor, "SiLU (swish), x*sigmoid(x)",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_ErfOp : Graph_UnaryOp<"erf", Graph_FloatTensor, "Gauss error function",
    [Graph_Transcendental, Graph_OwnGradient]>;
def Graph_SinOp : Graph_UnaryOp<"sin", Graph_FloatTensor, "sine",
    [Graph_Transcendental]>;
def Graph_CosOp : Graph_UnaryOp<"cos", Graph_FloatTensor, "cosine",
    [Graph_Transcendental]>;
def Graph_TanOp : Graph_UnaryOp<"tan", Graph_FloatTensor, "tangent",
    [Graph_Transcendental]>;
def Graph_AsinOp : Graph_UnaryOp<"asin", Graph_FloatTensor, "arcsine, defined on [-1, 1]",
    [Graph_Transcendental]>;
def Graph_AcosOp : Graph_UnaryOp<"acos", Graph_FloatTensor, "arccosine, defined on [-1, 1]",
    [Graph_Transcendental]>;
def Graph_AtanOp : Graph_UnaryOp<"atan", Graph_FloatTensor, "arctangent",
    [Graph_Transcendental]>;
def Graph_SinhOp : Graph_UnaryOp<"sinh", Graph_FloatTensor, "hyperbolic sine",
    [Graph_Transcendental]>;
def Graph_CoshOp : Graph_UnaryOp<"cosh", Graph_FloatTensor, "hyperbolic cosine",
    [Graph_Transcendental]>;
def Graph_AsinhOp : Graph_UnaryOp<"asinh", Graph_FloatTensor, "inverse hyperbolic sine",
    [Graph_Transcendental]>;
def Graph_AcoshOp : Graph_UnaryOp<"acosh", Graph_FloatTensor, "inverse hyperbolic cosine, defined on [1, inf)",
    [Graph_Transcendental]>;
def Graph_AtanhOp : Graph_UnaryOp<"atanh", Graph_FloatTensor, "inverse hyperbolic tangent, defined on (-1, 1)",
    [Graph_Transcendental]>;
def Graph_FloorOp : Graph_UnaryOp<"floor", Graph_FloatTensor,
    "rounding down, the largest integer not above x">;
def Graph_CeilOp : Graph_UnaryOp<"ceil", Graph_FloatTensor,
    "rounding up, the smallest integer not below x">;
def Graph_RoundOp : Graph_UnaryOp<"round", Graph_FloatTensor,
    "rounding to the nearest integer, halves to even (as torch.round and ONNX Round)">;

def Graph_GeluOp : Graph_Op<"gelu", [Pure, SameOperandsAndResultType,
                                     Graph_Elementwise, Graph_Transcendental,
                                     Graph_OwnGradient]> {
  let summary = "Elementwise GELU, exact (erf) or tanh-approximated.";
  let description = [{
    `approximate = none` (default): x/2 * (1 + erf(x/sqrt(2))).
    `approximate = tanh`: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))),
    as `torch.nn.GELU(approximate="tanh")`.

    ```mlir
    %y = graph.gelu %x : tensor<128x2048xf32>
    %z = graph.gelu %x approximate tanh : tensor<128x2048xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
      DefaultValuedAttr<Graph_GeluApproximation,
                        "::modelc::graph::GeluApproximation::none">:$approximate);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate` $approximate^)? attr-dict `:` type($input)
  }];
}

def Graph_LeakyReluOp : Graph_Op<"leaky_relu", [Pure, SameOperandsAndResultType,
                                             Graph_Elementwise, Graph_OwnGradient]> {
  let summary = "Elementwise leaky rectifier, x if x >= 0 else alpha * x.";
  let description = [{
    As `torch.nn.LeakyReLU(negative_slope=alpha)` and ONNX `LeakyRelu`;
    `alpha` defaults to 0.01. The result has the operand's type.

    ```mlir
    %y = graph.leaky_relu %x : tensor<64x256xf32>
    %z = graph.leaky_relu %x alpha 2.000000e-01 : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "0.01">:$alpha);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`alpha` $alpha^)? attr-dict `:` type($input)
  }];
}

def Graph_DropoutOp : Graph_Op<"dropout", [Pure, Graph_OwnGradient,
    Graph_OwnCost, Graph_SplitWhen, AllTypesMatch<["input", "result"]>]> {
  let summary = "Dropout: zeroes elements at random, scales the rest by 1 / (1 - ratio).";
  let description = [{
    As `torch.nn.Dropout(p=ratio)`. Without `step` it is the identity (eval
    mode: what a model's own entry points compute): a view of its input,
    with no code (it does not fold away, so that `modelc-training-mode`
    can still make it drop in the trained entry point). With
    `step` (an `i64` scalar, the number of training steps taken:
    `modelc-training-mode` adds it in the trained entry point, reading the
    weight `rng_step` that `train_step` counts up), element `i` of the
    result is `input[i] * (keep ? 1 / (1 - ratio) : 0)`, with `keep` drawn
    by the counter-based generator Philox4x32-10
    (`compiler/kernels/common/philox.h`): the uniform number of word `i %
    4` of the block at counter `(i / 4, step, site)`, keyed by `seed`, is
    at least `ratio`. So the mask is the same on every plan, device and
    thread split, new at each step, and independent between dropout ops
    of different `site`s. With `offset`, element `i` draws as element `i +
    offset` would: modelc-replicate gives replica `r` of a data-parallel
    step the offset of its rows in the whole batch (`r` times its element
    count), so that the replicas draw the masks of one device on the whole
    batch. With `rank_stride`, rank `r` of a distributed run (the run's
    rank, `modelc_run_ctx::rank`; 0 in one process) adds `r *
    rank_stride`: modelc-all-reduce-gradients gives every dropout of a
    value computed from the batch the elements of one rank's part, so that
    the ranks draw the masks of one process on the whole batch (dropout of
    anything else draws the same mask on every rank, as one process
    does). A ratio of 0 folds away. The gradient is the same dropout of
    the result's gradient (the same mask).

    Verifier: `0 <= ratio <= 1`; `site` fits 32 bits; `offset >= 0`;
    `rank_stride >= 0`.

    ```mlir
    %y = graph.dropout %x {ratio = 1.000000e-01} : tensor<64x256xf32>
    %z = graph.dropout %x, %step {ratio = 1.000000e-01, site = 2} : tensor<64x256xf32>, tensor<i64>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Optional<0DTensorOf<[I64]>>:$step,
                       F64Attr:$ratio,
                       DefaultValuedAttr<I64Attr, "0">:$seed,
                       DefaultValuedAttr<I64Attr, "0">:$site,
                       DefaultValuedAttr<I64Attr, "0">:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$rank_stride);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $step^)? attr-dict `:` type($input) (`,` type($step)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_AllReduceOp : Graph_Op<"all_reduce", [Graph_OwnGradient,
    Graph_OwnCost, AllTypesMatch<["input", "result"]>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "The sum of a tensor over the ranks of a distributed run.";
  let description = [{
    Element `i` of the result is the sum of element `i` of `input` over
    every rank (process) of the run, as the backend's all-reduce computes
    it (MPI_Allreduce: every rank gets the same result). A run of one rank
    (no distributed run, or `mpirun -np 1`) gives the input itself. Every rank must run the same
    all-reduces in the same order: the op has side effects (it is never
    removed, merged or moved past another). On the host (`cpu`) the
    runtime hands it to the communication backend
    (`modelc_runtime_api::all_reduce`, ABI 9); on a GPU it runs on the
    GPU's copy stream (`rank_all_reduce`, ABI 17: NCCL's all-reduce across
    the processes, or through the host and the backend), and
    modelc-place-devices puts every sum of an entry point on one device,
    so that one stream meets them in program order on every rank. Its
    gradient is the
    all-reduce of the result's gradient. modelc-all-reduce-gradients,
    modelc-attach-loss (distributed) and modelc-training-mode
    (sync-batchnorm) insert it; f32 only.

    ```mlir
    %sum = graph.all_reduce %bucket : tensor<1024xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_OwnerBroadcastOp : Graph_Op<"owner_broadcast", [Graph_OwnCost,
    AllTypesMatch<["input", "result"]>, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "The value one rank of a distributed run computed, on every "
                "rank.";
  let description = [{
    ZeRO stage 1 across processes (`modelc --train --distributed
    --shard-optimizer-state`): the result on every rank is `input` as the
    rank that owns shard `shard` computed it, that rank being `shard` mod
    the number of ranks (the backend's broadcast from that rank); the other
    ranks' `input` is not read (their ops guarded by `graph.shard` did not
    compute it). A run of one rank gives the input itself.
    modelc-shard-optimizer-state inserts it between a parameter's update,
    computed by its owner alone, and the `graph.assign` that writes the new
    value on every rank. Like `graph.all_reduce` it runs on the host and
    has side effects (every rank meets the same broadcasts in the same
    order); it has no gradient (it is made after differentiation).

    Verifier: `shard` is non-negative.

    ```mlir
    %new = graph.owner_broadcast %update {shard = 1 : i64} : tensor<32x20xf32>
    graph.assign @"0.weight", %new : tensor<32x20xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$shard);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_ReplicaAllReduceOp : Graph_Op<"replica_all_reduce", [Graph_OwnCost,
    AllTypesMatch<["input", "result"]>, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "One replica's part of a sum over the replicas of one process.";
  let description = [{
    Data-parallel training in one process (`modelc --train --data-parallel`)
    on accelerators: `members` ops with the same `group`, one per replica
    (`member` 0 to `members` - 1), each on its replica's device, together
    sum their inputs; each one's result, on its own device, is that sum.
    modelc-replicate inserts them, one group per gradient bucket or other
    all-reduce of the step, the members of a group next to each other and
    in member order. modelc-schedule-streams checks that members come in
    member order, each on a device of its own, one group after the other
    (every device must meet the groups in the same order), every input
    computed before the group's first member (where the group sums: the
    reference interpreter evaluates it there). Each member runs on its device's
    copy stream, so the sum overlaps the backward that remains.

    The runtime (`modelc_runtime_api::replica_all_reduce`, ABI 10) sums
    with NCCL when every member is a CUDA device and libnccl.so.2 loads,
    else through host memory in member order (sim devices, or GPUs without
    NCCL): `((x0 + x1) + x2) + ...`, the same bits as the host's sum of
    the replicas. Never removed, merged or moved past another (it has side
    effects); it has no gradient (it is inserted after differentiation);
    f32 only.

    Verifier: `members` is at least 2 and `member` lies in [0, members).

    ```mlir
    %sum = graph.replica_all_reduce %bucket {group = 3 : i64, member = 1 : i64, members = 2 : i64} : tensor<1024xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input, I64Attr:$group,
                       I64Attr:$member, I64Attr:$members);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class Graph_BinaryOp<string mnemonic, string semantics, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
                                              Graph_Elementwise])> {
  let summary = "Elementwise " # semantics # " with numpy broadcasting.";
  let description = [{
    Elementwise with numpy broadcasting: shapes are aligned at the right and
    each pair of dimensions is equal or one of them is 1.

    Verifier: both operands have the same element type; the shapes
    broadcast.

    ```mlir
    %y = graph.}] # mnemonic # [{ %a, %b : tensor<64x10xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::modelc::graph::inferElementwiseBinary(
          location, getOperationName(), adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), /*resultElementType=*/nullptr, inferred);
    }
  }];
}

def Graph_AddOp : Graph_BinaryOp<"add", "addition, a + b", [Graph_OwnGradient]>;
def Graph_SubOp : Graph_BinaryOp<"sub", "subtraction, a - b", [Graph_OwnGradient]>;
def Graph_MulOp : Graph_BinaryOp<"mul", "multiplication, a * b", [Graph_OwnGradient]>;
def Graph_DivOp : Graph_BinaryOp<"div", "division, a / b (integers truncate toward zero)", [Graph_OwnGradient]>;
def Graph_MaxOp : Graph_BinaryOp<"max", "maximum", [Graph_OwnGradient]>;
def Graph_MinOp : Graph_BinaryOp<"min", "minimum", [Graph_OwnGradient]>;
def Graph_PowOp : Graph_BinaryOp<"pow", "power, a ^ b", [Graph_Transcendental,
    Graph_OwnGradient]>;

def Graph_ModOp : Graph_Op<"mod", [Pure, Graph_InferTypeFromProperties,
    Graph_Elementwise]> {
  let summary = "Elementwise remainder with numpy broadcasting (ONNX Mod).";
  let description = [{
    `fmod = false` (default): the remainder takes the divisor's sign, as
    Python's `%`, `torch.remainder` and ONNX `Mod` with `fmod = 0`; integers
    only. `fmod = true`: the remainder takes the dividend's sign, as C
    `fmod`, `torch.fmod` and ONNX `Mod` with `fmod = 1`; floats and
    integers. An integer remainder by zero is 0 (as integer `div`), never a
    trap.

    Verifier: both operands have the same element type; the shapes
    broadcast; float operands need `fmod = true` (as ONNX requires).

    ```mlir
    %r = graph.mod %a, %b : tensor<4x8xi32>, tensor<8xi32>
    %f = graph.mod %x, %y {fmod = true} : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Graph_BitShiftOp : Graph_Op<"bit_shift", [Pure,
    Graph_InferTypeFromProperties, Graph_Elementwise]> {
  let summary = "Elementwise bit shift of integers with numpy broadcasting "
                "(ONNX BitShift).";
  let description = [{
    `lhs` shifted by `rhs` bits, to the left (`right = false`, the default)
    or to the right. Integers only, both operands of one type. A left shift
    drops the bits shifted out (it wraps around as a product by 2^rhs); a
    right shift is logical for unsigned types and arithmetic (the sign
    kept) for signed ones. An amount of at least the type's width shifts
    every bit out (0; -1 for a negative signed value shifted right); a
    negative amount shifts nothing out and is treated as 0 (numpy's and
    C's are undefined there).

    ```mlir
    %y = graph.bit_shift %x, %n : tensor<3xui8>, tensor<3xui8>
    %z = graph.bit_shift %x, %n {right = true} : tensor<3xui8>, tensor<3xui8>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$right);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Graph_CompareOp : Graph_Op<"compare", [Pure, Graph_InferTypeFromProperties,
    Graph_Elementwise]> {
  let summary = "Elementwise comparison with numpy broadcasting.";
  let description = [{
    `predicate` is one of `eq`, `ne`, `lt`, `le`, `gt`, `ge`; the result is
    `i1` with the broadcast shape.

    Verifier: both operands have the same element type; the shapes
    broadcast.

    ```mlir
    %m = graph.compare lt, %a, %b : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Graph_ComparePredicate:$predicate, Graph_Tensor:$lhs,
                       Graph_Tensor:$rhs);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def Graph_SelectOp : Graph_Op<"select", [Pure, InferTypeOpAdaptor,
    Graph_Elementwise, Graph_OwnGradient]> {
  let summary = "Elementwise choice, `where(condition, a, b)`.";
  let description = [{
    `condition ? a : b` elementwise, the three shapes broadcast together.

    Verifier: `condition` is `i1`; `a` and `b` have the same element type;
    the shapes broadcast.

    ```mlir
    %y = graph.select %m, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$true_value,
                       Graph_Tensor:$false_value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
      type($condition) `,` type($true_value) `,` type($false_value)
  }];
}

def Graph_CastOp : Graph_Op<"cast", [Pure, Graph_InferTypeFromProperties,
    Graph_Elementwise,
    Graph_OwnCost, Graph_OwnGradient]> {
  let summary = "Elementwise conversion to another element type.";
  let description = [{
    Float to integer truncates toward zero; anything to `i1` is `x != 0`;
    `i1` to a number is 0 or 1.

    ```mlir
    %h = graph.cast %x : tensor<64x784xf32> to f16
    ```

    Folds away when the element type does not change.
  }];
  let arguments = (ins Graph_Tensor:$input, TypeAttrOf<Graph_ElementType>:$dtype);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` $dtype";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_Op<"matmul", [Pure, InferTypeOpAdaptor,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Matrix product with broadcast batch dimensions (numpy matmul).";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`; the batch dimensions
    broadcast as in numpy. Both operands have rank >= 2 (a vector is a
    reshape away). Integer operands (i32, i64) accumulate in their own
    type, wrapping around on overflow.

    Verifier: same element type; rank >= 2; inner dimensions agree; batch
    dimensions broadcast.

    ```mlir
    %y = graph.matmul %a, %b : tensor<8x128x64xf32>, tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Graph_LinearOp : Graph_Op<"linear", [Pure, InferTypeOpAdaptor,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitPerSample, Graph_OwnGradient]> {
  let summary = "Affine map y = x W^T + b, as torch.nn.Linear.";
  let description = [{
    `x: [..., K]`, `weight: [N, K]`, optional `bias: [N]`; the result is
    `[..., N]`.

    Verifier: same element type; `x` has rank >= 1; `weight` has rank 2 and
    its second dimension equals the last of `x`; `bias` has shape `[N]`.

    ```mlir
    %y = graph.linear %x, %w, %b : tensor<64x784xf32>, tensor<1024x784xf32>, tensor<1024xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Optional<Graph_FloatTensor>:$bias);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type(operands)
  }];
}

def Graph_GemmOp : Graph_Op<"gemm", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "General matrix product, Y = alpha op(A) op(B) + beta C (ONNX Gemm).";
  let description = [{
    `op(A)` is `A` or `A^T` (`transpose_a`), `op(B)` likewise; `op(A)` is
    `[M, K]` and `op(B)` is `[K, N]`; the optional `c` broadcasts to `[M, N]`.
    `alpha` and `beta` default to 1. Integer operands (i32, i64) compute
    in their own type, wrapping around on overflow; `alpha` and `beta` are
    then whole numbers.

    Verifier: same element type; `a` and `b` have rank 2; inner dimensions
    agree; `c` broadcasts to `[M, N]`; whole `alpha` and `beta` for
    integers.

    ```mlir
    %y = graph.gemm %a, %b, %c {transpose_b = true} : tensor<64x784xf32>, tensor<1024x784xf32>, tensor<1024xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$a, Graph_NumericTensor:$b,
                       Optional<Graph_NumericTensor>:$c,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` type(operands)";
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

class Graph_SoftmaxLikeOp<string mnemonic, string formula>
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultType,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = formula # " along one axis.";
  let description = [{
    Computed along `axis` (default -1, the last; negative counts from the
    end), in a numerically stable way (the maximum is subtracted first).

    Verifier: `axis` is in [-rank, rank).

    ```mlir
    %p = graph.}] # mnemonic # [{ %x {axis = 1} : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `axis` made non-negative.
    int64_t getNormalizedAxis() {
      return ::modelc::graph::normalizeAxis(static_cast<int64_t>(getAxis()),
                                            getInput().getType().getRank());
    }
  }];
}

def Graph_SoftmaxOp : Graph_SoftmaxLikeOp<"softmax", "Softmax, exp(x) / sum exp(x),">;
def Graph_LogSoftmaxOp : Graph_SoftmaxLikeOp<"log_softmax", "Log of softmax">;

def Graph_LayerNormOp : Graph_Op<"layer_norm",
    [Pure, Graph_InferTypeFromProperties, AttrSizedOperandSegments,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Layer normalization over the trailing dimensions.";
  let description = [{
    Normalizes over dimensions `[axis, rank)` (default `axis = -1`):
    `(x - mean) / sqrt(var + epsilon) * scale + bias` with the biased
    variance, as `torch.nn.LayerNorm` and ONNX `LayerNormalization`. `scale`
    and `bias` are optional and have shape `x.shape[axis:]`.

    Verifier: `axis` in [-rank, rank); `scale`/`bias` shapes and element
    types match; `epsilon` > 0.

    ```mlir
    %y = graph.layer_norm %x scale %g bias %b : tensor<1x128x512xf32>, tensor<512xf32>, tensor<512xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Optional<Graph_FloatTensor>:$scale,
                       Optional<Graph_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:` type(operands)
  }];
  let extraClassDeclaration = [{
    /// `axis` made non-negative.
    int64_t getNormalizedAxis() {
      return ::modelc::graph::normalizeAxis(static_cast<int64_t>(getAxis()),
                                            getInput().getType().getRank());
    }
  }];
}

def Graph_BatchNormOp : Graph_Op<"batch_norm", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnCost, Graph_SplitPerSample, Graph_OwnGradient]> {
  let summary = "Batch normalization, inference form.";
  let description = [{
    `x: [N, C, ...]`; `scale`, `bias`, `mean`, `variance` are `[C]`:
    `(x - mean[c]) / sqrt(variance[c] + epsilon) * scale[c] + bias[c]`.

    `momentum` (PyTorch's: the weight of a batch's statistics in the
    running ones) marks a BatchNorm exported in training mode: in the loss
    entry point of a training build, modelc-training-mode rewrites it to
    normalise with the batch's statistics and update `mean` and `variance`;
    everywhere else (inference, the `forward` entry point) it is this
    inference form.

    Verifier: `x` has rank >= 2; the four parameters have shape `[C]` and
    the element type of `x`; `epsilon` > 0; `momentum` in [0, 1].

    ```mlir
    %y = graph.batch_norm %x, %s, %b, %m, %v : tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                       Graph_FloatTensor:$bias, Graph_FloatTensor:$mean,
                       Graph_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       OptionalAttr<F32Attr>:$momentum);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW)
//===----------------------------------------------------------------------===//

def Graph_Conv2dOp : Graph_Op<"conv2d", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnCost, Graph_SplitPerSample, Graph_OwnGradient]> {
  let summary = "2-D convolution, NCHW, as torch.nn.Conv2d.";
  let description = [{
    `x: [N, C, H, W]`, `weight: [O, C/groups, KH, KW]`, optional `bias: [O]`.
    `strides` (default `[1, 1]`), `padding` as `[top, left, bottom, right]`
    (default zeros), `dilations` (default `[1, 1]`), `groups` (default 1).
    Output size per spatial dimension:
    `(in + pad_begin + pad_end - dilation * (k - 1) - 1) / stride + 1`.

    Verifier: ranks; `C` divisible by `groups` and equal to
    `groups * weight[1]`; `O` divisible by `groups`; bias `[O]`; attribute
    lengths; strides and dilations >= 1; padding >= 0; output size >= 1.

    ```mlir
    %y = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>}
        : tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Optional<Graph_FloatTensor>:$bias,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type(operands)
  }];
  let extraClassDeclaration = [{
    /// True for a 1x1 kernel with stride 1 and no padding, which keeps the
    /// spatial size: per image a matrix product of the weight with the
    /// input, which needs no im2col columns.
    bool isPointwise();
  }];
}

def Graph_ConvTranspose2dOp : Graph_Op<"conv_transpose2d",
    [Pure, Graph_InferTypeFromProperties, Graph_OwnCost, Graph_SplitPerSample,
    Graph_OwnGradient]> {
  let summary = "2-D transposed convolution, NCHW, as torch.nn.ConvTranspose2d.";
  let description = [{
    The gradient of `conv2d` with respect to its input (ONNX ConvTranspose):
    each input pixel scatters its kernel-weighted values into the output.
    `x: [N, C, H, W]`, `weight: [C, O/groups, KH, KW]` (input channels
    first, as PyTorch), optional `bias: [O]`. `strides` (default `[1, 1]`),
    `padding` as `[top, left, bottom, right]` (default zeros; PyTorch's
    `padding=(ph, pw)` is `[ph, pw, ph, pw]`), `output_padding` (default
    `[0, 0]`, added at the bottom and right), `dilations` (default
    `[1, 1]`), `groups` (default 1). Output size per spatial dimension:
    `(in - 1) * stride - pad_begin - pad_end + dilation * (k - 1) +
    output_padding + 1`.

    Verifier: ranks; `C` and `O` divisible by `groups`, `C` equal to
    `weight[0]`; bias `[O]`; attribute lengths; strides and dilations >= 1;
    padding >= 0; each output padding smaller than its stride or its
    dilation (as PyTorch); output size >= 1.

    ```mlir
    %y = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>}
        : tensor<1x64x28x28xf32>, tensor<64x32x3x3xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Optional<Graph_FloatTensor>:$bias,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$output_padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type(operands)
  }];
}

def Graph_Conv2dWeightGradOp : Graph_Op<"conv2d_weight_grad",
    [Pure, Graph_InferTypeFromProperties, Graph_OwnCost]> {
  let summary = "The gradient of conv2d with respect to its weight.";
  let description = [{
    `input: [N, C, H, W]` is the convolution's input, `grad: [N, O, OH, OW]`
    the gradient of its output; the result `[O, C/groups, KH, KW]`
    (`kernel = [KH, KW]`) is
    `sum over n, oy, ox of input[n, g * C/groups + c, oy * stride - pad +
    ky * dilation, ...] * grad[n, o, oy, ox]`, `g` the group of `o`.
    `strides`, `padding` (`[top, left, bottom, right]`), `dilations` and
    `groups` are the convolution's. The CPU computes it per image as a
    GEMM of the gradient with the input's im2col columns.

    Verifier: ranks; `C` and `O` divisible by `groups`; attribute lengths;
    the convolution of `input` with such a kernel has `grad`'s spatial size.

    ```mlir
    %dw = graph.conv2d_weight_grad %x, %dy {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>}
        : tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($input) `,` type($grad)";
}

class Graph_Pool2dOp<string mnemonic, string semantics, dag extraArgs>
    : Graph_Op<mnemonic, [Pure, Graph_InferTypeFromProperties,
    Graph_OwnCost, Graph_SplitPerSample, Graph_OwnGradient]> {
  let summary = "2-D " # semantics # " pooling, NCHW.";
  let arguments = !con((ins Graph_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel,
                       OptionalAttr<DenseI64ArrayAttr>:$strides,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode),
                       extraArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    /// `strides`, or the kernel when they are absent (as PyTorch).
    ::llvm::ArrayRef<int64_t> getNormalizedStrides() {
      return getStrides().value_or(getKernel());
    }
  }];
}

def Graph_MaxPool2dOp : Graph_Pool2dOp<"max_pool2d", "max", (ins)> {
  let description = [{
    `x: [N, C, H, W]`; `kernel = [KH, KW]`; `strides` default to the kernel
    (as PyTorch); `padding` is `[top, left, bottom, right]` (padded cells
    never win); `ceil_mode` rounds the output size up.

    Verifier: rank 4; two kernel sizes >= 1, two strides >= 1, four
    paddings >= 0 and each at most half the kernel; output size >= 1.

    ```mlir
    %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32>
    ```
  }];
}

def Graph_MaxPool2dGradOp : Graph_Op<"max_pool2d_grad", [Pure,
    Graph_InferTypeFromProperties, Graph_OwnCost, Graph_SplitPerSample]> {
  let summary = "The gradient of max_pool2d with respect to its input.";
  let description = [{
    `input: [N, C, H, W]` is max_pool2d's input, `grad: [N, C, OH, OW]` the
    gradient of its output; the result (the input's type) holds, at each
    input cell, the sum of the gradients of the windows whose maximum it is.
    A window's maximum is its first cell holding the largest value or,
    when the window holds a NaN, its last NaN (as PyTorch's CPU kernel);
    padded cells never win. `kernel`, `strides` and `padding` are the
    pooling's (strides given, never defaulted); `ceil_mode` pooling is
    described by its output size.

    Verifier: rank 4; `grad` is `[N, C, OH, OW]` of the input's element
    type; attribute lengths.

    ```mlir
    %dx = graph.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($input) `,` type($grad)";
}

def Graph_AvgPool2dOp : Graph_Pool2dOp<"avg_pool2d", "average",
    (ins DefaultValuedAttr<BoolAttr, "true">:$count_include_pad)> {
  let description = [{
    As `max_pool2d`, averaging. `count_include_pad` (default true, as
    PyTorch) counts padded cells in the divisor.

    ```mlir
    %y = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : tensor<1x64x56x56xf32>
    ```
  }];
}

def Graph_GlobalAvgPoolOp : Graph_Op<"global_avg_pool", [Pure, InferTypeOpAdaptor,
    Graph_OwnCost, Graph_SplitPerSample, Graph_OwnGradient]> {
  let summary = "Mean over all spatial dimensions, keeping them as size 1.";
  let description = [{
    `[N, C, d1, ..., dk] -> [N, C, 1, ..., 1]` (ONNX GlobalAveragePool).

    Verifier: rank >= 3.

    ```mlir
    %y = graph.global_avg_pool %x : tensor<1x512x7x7xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnSymbolicShape, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Same elements, new shape.";
  let description = [{
    Row-major reinterpretation. One entry of `shape` may be -1: it is
    inferred from the element count.

    Verifier: entries >= 1 or a single -1; element counts agree.

    ```mlir
    %y = graph.reshape %x to [64, -1] : tensor<64x16x7x7xf32>
    ```

    Folds when the shape does not change; a reshape of a reshape is one
    reshape.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `to` $shape attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_FlattenOp : Graph_Op<"flatten", [Pure, Graph_InferTypeFromProperties,
    Graph_SplitPerSample, Graph_OwnGradient]> {
  let summary = "Merges dimensions [start_dim, end_dim] into one (torch.flatten).";
  let description = [{
    `start_dim` defaults to 1 (as `torch.nn.Flatten`), `end_dim` to -1;
    negative values count from the end.

    Verifier: both in range and `start_dim <= end_dim`.

    ```mlir
    %y = graph.flatten %x : tensor<1x512x1x1xf32>
    ```

    Canonicalizes to `graph.reshape`.
  }];
  let arguments = (ins Graph_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "1">:$start_dim,
                       DefaultValuedAttr<I64Attr, "-1">:$end_dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasCanonicalizer = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Permutes dimensions.";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`.

    Verifier: `perm` is a permutation of `[0, rank)`.

    ```mlir
    %y = graph.transpose %x perm [0, 2, 1, 3] : tensor<1x128x8x64xf32>
    ```

    Folds the identity permutation; a transpose of a transpose is one.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `perm` $perm attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Joins tensors along one axis.";
  let description = [{
    Verifier: at least one input; same element type and rank; `axis` in
    [-rank, rank); all other dimensions equal.

    ```mlir
    %y = graph.concat %a, %b {axis = 1} : tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>
    ```

    A concat of one input folds to it.
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// `axis` made non-negative.
    int64_t getNormalizedAxis() {
      return ::modelc::graph::normalizeAxis(static_cast<int64_t>(getAxis()),
                                            getResult().getType().getRank());
    }
  }];
}

def Graph_SliceOp : Graph_Op<"slice", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "A strided window of a tensor (ONNX Slice).";
  let description = [{
    For each listed axis (default: all, in order) take `starts[i]` up to but
    excluding `ends[i]` in steps of `steps[i]` (default 1). Negative starts
    and ends count from the end; both are clamped to the dimension, as in
    ONNX and Python.

    Verifier: `starts`, `ends` (and `axes`, `steps` when given) have equal
    lengths; axes in range and distinct; steps >= 1 (negative steps are
    not supported yet).

    ```mlir
    %y = graph.slice %x {axes = array<i64: 2>, starts = array<i64: 0>, ends = array<i64: 64>} : tensor<1x128x1536xf32>
    ```

    Folds when it takes everything.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       OptionalAttr<DenseI64ArrayAttr>:$steps);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The window per input dimension: clamped starts, steps, result
    /// extents, and the sliced axes made non-negative.
    ::modelc::graph::NormalizedSlice getNormalizedSlice();
  }];
}

def Graph_BatchPartOp : Graph_Op<"batch_part", [Pure,
    Graph_InferTypeFromProperties, Graph_OwnSymbolicShape]> {
  let summary = "One replica's share of the batch (data parallelism).";
  let description = [{
    Part `part` of `parts` balanced parts of dimension 0: the rows from
    `part * (n / parts) + min(part, n % parts)`, `n / parts` of them plus
    one for the first `n % parts` parts, where `n` is the input's dimension
    0 (a split of 7 rows in 3 is 3, 2, 2). modelc-data-parallel writes it
    where a dynamic batch is split over accelerators: the input's dimension
    0 is the dimension `batch`, the result's is the dimension
    `batch[part/parts]`, whose size follows from the run's (docs/dynamic.md);
    the result type holds the part at the input's size.

    ```mlir
    %p = graph.batch_part %x {part = 1, parts = 2} : tensor<63x784xf32>
    // %p : tensor<31x784xf32>
    ```

    Verifier: a ranked input of rank >= 1; 0 <= part < parts.
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$part, I64Attr:$parts);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_GatherOp : Graph_Op<"gather", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnSymbolicShape, Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Takes slices along an axis at given indices (embedding lookup).";
  let description = [{
    Result shape: `data.shape[:axis] + indices.shape + data.shape[axis+1:]`
    (ONNX Gather). With `axis = 0` and a `[vocab, dim]` table this is an
    embedding lookup. Negative indices count from the end; an index out of
    range is a run-time error.

    Verifier: `axis` in [-rank, rank); `indices` are `i32` or `i64`.

    ```mlir
    %e = graph.gather %table, %ids : tensor<32000x512xf32>, tensor<1x128xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices)
  }];
  let extraClassDeclaration = [{
    /// `axis` made non-negative.
    int64_t getNormalizedAxis() {
      return ::modelc::graph::normalizeAxis(static_cast<int64_t>(getAxis()),
                                            getData().getType().getRank());
    }
  }];
}

def Graph_GatherGradOp : Graph_Op<"gather_grad", [Pure,
    Graph_InferTypeFromProperties, Graph_OwnCost]> {
  let summary = "The gradient of gather with respect to its data (a scatter-add).";
  let description = [{
    `grad` is the gradient of a `graph.gather` along `axis` of data whose
    dimension `axis` has `size` entries, by `indices`. The result (the
    data's shape: `grad.shape[:axis] + [size] + grad.shape[axis +
    rank(indices):]`) holds, at each data slice, the sum of the gradients
    of the places that read it (an embedding table's gradient: the rows
    of the tokens seen, summed per token). Negative indices count from the
    end, as gather's. Each element sums in the order of the indices: the
    result does not depend on threads.

    Verifier: `indices` are `i32` or `i64`; `axis` and `size` fit `grad`.

    ```mlir
    %dt = graph.gather_grad %dy, %ids {size = 32000} : tensor<1x128x512xf32>, tensor<1x128xi64>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis, I64Attr:$size);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices)
  }];
}

def Graph_ScatterNdOp : Graph_Op<"scatter_nd", [Pure,
    Graph_InferTypeFromProperties, Graph_OwnCost]> {
  let summary = "Writes slices of `updates` into a copy of `data` at index tuples (ONNX ScatterND).";
  let description = [{
    `indices` has shape `[..., k]` (`k` at most the rank of `data`): each of
    its `n` rows of `k` numbers addresses a slice of `data` of shape
    `data.shape[k:]`; `updates` has shape `indices.shape[:-1] +
    data.shape[k:]`, one slice per row. The result is `data` with, for
    each row in order, its slice replaced by the update (`reduction =
    none`) or combined with it (`add`, `mul`, `max`, `min`), as ONNX
    ScatterND (and `tensor[index] = value` in PyTorch's exports). Rows
    are applied in the order of `indices`, so when two rows address the
    same slice the later one wins (`none`) and the combinations run in
    that order: the result does not depend on threads. Negative indices
    count from the end; an index out of range is a run-time error.

    Verifier: `indices` are `i32` or `i64` of rank at least 1, their last
    dimension at most the rank of `data`; `updates` has the shape above and
    the element type of `data`.

    ```mlir
    %y = graph.scatter_nd %data, %idx, %upd : tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>
    %z = graph.scatter_nd %data, %idx, %upd reduction add : tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                       Graph_Tensor:$updates,
                       DefaultValuedAttr<Graph_ScatterReduction,
                           "::modelc::graph::ScatterReduction::none">:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates (`reduction` $reduction^)? attr-dict `:`
      type($data) `,` type($indices) `,` type($updates)
  }];
  let extraClassDeclaration = [{
    /// The number of index rows (`n`), the length of each (`k`) and the
    /// elements of one slice (the product of `data.shape[k:]`).
    int64_t getNumRows();
    int64_t getIndexLength();
    int64_t getSliceElements();
  }];
}


//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, string semantics,
                     list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure,
    Graph_InferTypeFromProperties, Graph_OwnSymbolicShape, Graph_OwnCost,
    Graph_SplitWhen])> {
  let summary = semantics # " over the given axes.";
  let description = [{
    Reduces over `axes` (default: all); `keepdims` (default false, as
    PyTorch) keeps reduced dimensions as size 1.

    Verifier: `axes`, when given, is non-empty, in range and without
    repeats.

    ```mlir
    %s = graph.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    /// The input dimensions reduced over (dropped, or kept as size 1 with
    /// `keepdims`): those in `axes`, or all of them when it is absent.
    ::llvm::SmallBitVector getReducedDims() {
      return ::modelc::graph::reducedDimensions(
          getAxes(), getInput().getType().getRank());
    }
  }];
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "Sum", [Graph_OwnGradient]>;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "Mean", [Graph_OwnGradient]>;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "Maximum">;
// Integers multiply in their own type, wrapping around on overflow.
def Graph_ReduceProdOp : Graph_ReduceOp<"reduce_prod", "Product">;

def Graph_CumsumOp : Graph_Op<"cumsum", [Pure, SameOperandsAndResultType,
    Graph_OwnCost, Graph_SplitWhen]> {
  let summary = "Cumulative sum along one axis (ONNX CumSum, torch.cumsum).";
  let description = [{
    Element `j` along `axis` is the sum of the elements `0..j` (inclusive);
    `exclusive` leaves element `j` itself out (the first is 0), `reverse`
    sums from the end instead (`j..n-1`). Integers add in their own type,
    wrapping around on overflow.

    Verifier: `axis` is in [-rank, rank).

    ```mlir
    %s = graph.cumsum %x {axis = 1, exclusive = true} : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `axis` made non-negative.
    int64_t getNormalizedAxis() {
      return ::modelc::graph::normalizeAxis(static_cast<int64_t>(getAxis()),
                                            getInput().getType().getRank());
    }
  }];
}

def Graph_CrossEntropyOp : Graph_Op<"cross_entropy", [Pure, Graph_InferTypeFromProperties,
    Graph_OwnCost, Graph_SplitWhen, Graph_OwnGradient]> {
  let summary = "Cross-entropy loss of logits against class indices.";
  let description = [{
    As `torch.nn.CrossEntropyLoss`: `logits: [N, C]`, integer `targets: [N]`,
    optional class weights `weight: [C]` (a buffer that follows the op to its
    device). Per sample: `-weight[t] * log_softmax(logits)[t]`; samples whose
    target is `ignore_index` (default -100) contribute nothing. `reduction`
    is `mean` (default; divides by the sum of the weights used), `sum` or
    `none` (result `[N]`); otherwise the result is a scalar.

    Verifier: `logits` rank 2; `targets` `[N]` of `i32`/`i64`; `weight`
    `[C]` of the logits' element type.

    ```mlir
    %l = graph.cross_entropy %logits, %t weight %w : tensor<64x10xf32>, tensor<64xi64>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IndexTensor:$targets,
                       Optional<Graph_FloatTensor>:$weight,
                       DefaultValuedAttr<Graph_Reduction,
                           "::modelc::graph::Reduction::mean">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets (`weight` $weight^)? (`reduction` $reduction^)?
      attr-dict `:` type(operands)
  }];
}

#endif // MODELC_GRAPH_OPS_TD
