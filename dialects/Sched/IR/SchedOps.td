//===- SchedOps.td - sched dialect operations --------------*- tablegen -*-===//

#ifndef MODELC_SCHED_OPS_TD
#define MODELC_SCHED_OPS_TD

include "dialects/Sched/IR/SchedBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Sched_FusedOp : Sched_Op<"fused", [IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "Elementwise ops computed together, one element at a time.";
  let description = [{
    The body computes element `i` of the result from element `i` of each
    input (broadcast as numpy does): one loop on the CPU, one kernel on a
    GPU, no buffer between the ops of the body. The block's arguments are
    the inputs; `sched.yield` names the result. `modelc-fuse-elementwise`
    builds it; its `device` attribute is that of the ops it holds.

    ```mlir
    %y = sched.fused (%x, %b) : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32> {
    ^bb0(%a: tensor<64x10xf32>, %c: tensor<10xf32>):
      %s = graph.add %a, %c : tensor<64x10xf32>, tensor<10xf32>
      %r = graph.relu %s : tensor<64x10xf32>
      sched.yield %r : tensor<64x10xf32>
    }
    ```

    A splat `graph.constant` in the body is computed in the loop (its value
    is a literal), not read from memory.

    Verifier: one block whose arguments have the inputs' types; every op of
    the body but the terminator is an elementwise graph op or a splat
    `graph.constant`; the yielded value has the result's type.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ops of the body in order, without the terminator.
    ::llvm::SmallVector<::mlir::Operation *> getBodyOps();
    /// The op whose value the body yields.
    ::mlir::Operation *getRoot();
    /// The body's op when the body holds exactly one, else null.
    ::mlir::Operation *getSingleOp();
    /// The input a block argument stands for; any other value unchanged.
    ::mlir::Value getOutsideValue(::mlir::Value value);
  }];
}

def Sched_FusedReduceOp : Sched_Op<"fused_reduce", [IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A sum or mean over axes of elementwise ops computed in its loop.";
  let description = [{
    The body's elementwise ops compute each element of the value that its
    last op, a `graph.reduce_sum` or `graph.reduce_mean`, reduces, as it
    reads it: the value is never written to memory (one loop on the CPU).
    The block's arguments are the inputs; `sched.yield` names the
    reduction's result. `modelc-fuse-elementwise` builds it on host
    devices; its `device` attribute is that of the ops it holds.

    ```mlir
    %v = sched.fused_reduce (%x, %mu) : (tensor<8x64x56x56xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x1x1xf32> {
    ^bb0(%a: tensor<8x64x56x56xf32>, %m: tensor<1x64x1x1xf32>):
      %c = graph.sub %a, %m : tensor<8x64x56x56xf32>, tensor<1x64x1x1xf32>
      %s = graph.mul %c, %c : tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>
      %r = graph.reduce_mean %s {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<8x64x56x56xf32>
      sched.yield %r : tensor<1x64x1x1xf32>
    }
    ```

    Verifier: one block whose arguments have the inputs' types; the body
    is elementwise graph ops and splat `graph.constant`s, then one
    `graph.reduce_sum` or `graph.reduce_mean` of a value the body computes,
    then the yield of its result, which has the op's result type.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The reduction: the body's last op before the terminator.
    ::mlir::Operation *getReduce();
    /// The elementwise ops (and splat constants) of the body in order.
    ::llvm::SmallVector<::mlir::Operation *> getElementOps();
  }];
}

def Sched_StridedViewAttr : Sched_Attr<"StridedView", "view"> {
  let summary = "A matrix operand read in place from an earlier buffer.";
  let description = [{
    cuBLASLt reads the operand straight from the buffer its chain of body
    ops (slices, reshapes, transposes) starts from (`GemmOp::getViewBase`):
    the matrix starts `offset` elements in, its stored rows
    are `ld` elements apart, consecutive matrices of the batch
    `batch_stride` apart (0: one matrix), and `transposed` says it is stored
    as its transpose.

    ```mlir
    #sched.view<offset = 64, ld = 1536, batch_stride = 192, transposed = true>
    ```
  }];
  let parameters = (ins "int64_t":$offset, "int64_t":$ld,
                        "int64_t":$batch_stride, "bool":$transposed);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Sched_BufferAttr : Sched_Attr<"Buffer", "buffer"> {
  let summary = "Where a buffer lives in its device's arena, and when.";
  let description = [{
    `modelc-plan-memory` puts one on every op that writes a buffer (as the
    `sched.buffer` attribute; its scratch as the `sched.scratch` array):
    `bytes` at `offset` in the arena of the op's device, alive from the op at
    position `first` of its function's body to the op at position `last`
    (both included). The function's `sched.arenas` verifier checks that no
    two buffers of one device alive at the same time overlap.

    ```mlir
    #sched.buffer<offset = 4096, bytes = 2048, first = 3, last = 7>
    ```
  }];
  let parameters = (ins "uint64_t":$offset, "uint64_t":$bytes,
                        "int64_t":$first, "int64_t":$last);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Sched_ErrorWordAttr : Sched_Attr<"ErrorWord", "error_word"> {
  let summary = "A GPU's error word and its copy on the host.";
  let description = [{
    Kernels that check indices (gather, cross_entropy) on `device` store an
    error code in the word at `offset` of its arena; the run copies it to
    `host_offset` of the host arena and reports it. Both are 16-byte
    buffers alive for the whole run.

    ```mlir
    #sched.error_word<device = <cuda:0>, offset = 0, host_offset = 64>
    ```
  }];
  let parameters = (ins "::modelc::device::DeviceAttr":$device,
                        "uint64_t":$offset, "uint64_t":$host_offset);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Sched_GemmOp : Sched_Op<"gemm", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A matrix product and what cuBLASLt computes with it.";
  let description = [{
    One cuBLASLt call (per group of a convolution) computes the body: a
    `graph.linear`, `graph.matmul` or `graph.conv2d` (the product), the
    slices, reshapes and transposes its operands are read through, and the
    ops after it that the call applies. `modelc-fold-gemm` builds it on
    GPUs and writes down each decision: `relu` (the epilogue), `alpha` (a
    one-element constant the matmul's result is multiplied by), `beta = 1`
    with the residual value the body adds to a linear's result (cuBLASLt's
    C), and `lhs_view`/`rhs_view` (a matmul operand read in place as a
    strided matrix). The body reads values from above; its result is the
    only buffer it writes.

    ```mlir
    %y = sched.gemm {device = #device.dev<cuda:0>, relu} : tensor<64x1024xf32> {
      %p = graph.linear %x, %w, %b : tensor<64x784xf32>, tensor<1024x784xf32>, tensor<1024xf32>
      %r = graph.relu %p : tensor<64x1024xf32>
      sched.yield %r : tensor<64x1024xf32>
    }
    ```

    Verifier: the body holds one product; a `relu` after it exactly when
    `relu` is set, a multiplication exactly when `alpha` is not 1, an
    addition exactly when `beta` is 1 (and only after a linear); views only
    on a matmul's operands, reading inputs of the body.
  }];
  let arguments = (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F64Attr, "0.0">:$beta,
                       UnitAttr:$relu,
                       OptionalAttr<Sched_StridedViewAttr>:$lhs_view,
                       OptionalAttr<Sched_StridedViewAttr>:$rhs_view);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict `:` type($result) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The linear, matmul or conv2d of the body.
    ::mlir::Operation *getProduct();
    /// The addition after the product (beta = 1), or null.
    ::mlir::Operation *getResidualAdd();
    /// The value the residual addition adds to the product (cuBLASLt's C).
    ::mlir::Value getResidualValue();
    /// The buffer the view of operand `index` (0 lhs, 1 rhs) reads: the
    /// first value from above its chain of body ops starts from.
    ::mlir::Value getViewBase(unsigned index);
  }];
}

def Sched_SlicedTransposeOp : Sched_Op<"sliced_transpose",
    [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A transpose whose kernel also computes the slice it reads.";
  let description = [{
    The body is a `graph.slice`, reshapes of its result, and a
    `graph.transpose` of them: one kernel reads the slice's input with the
    composed offsets and strides, and the slice has no buffer of its own.
    `modelc-fold-gemm` builds it on GPUs (attention's q, k and v heads).

    ```mlir
    %t = sched.sliced_transpose {device = #device.dev<cuda:0>} : tensor<4x8x16xf32> {
      %s = graph.slice %qkv {starts = array<i64: 0>, ends = array<i64: 512>, axes = array<i64: 1>} : tensor<8x1536xf32>
      %r = graph.reshape %s {shape = array<i64: 8, 4, 16>} : tensor<8x512xf32>
      %t = graph.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<8x4x16xf32>
      sched.yield %t : tensor<4x8x16xf32>
    }
    ```

    Verifier: the body is one slice, views of it that keep its row-major
    order from the start (reshape, flatten, a leading contiguous slice),
    and the transpose whose value it yields, each reading the one before.
  }];
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict `:` type($result) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::modelc::graph::SliceOp getSlice();
    ::modelc::graph::TransposeOp getTranspose();
  }];
}

def Sched_PackedProductOp : Sched_Op<"packed_product",
    [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A CPU product of a constant weight and the ops oneDNN applies after it.";
  let description = [{
    One call into the runtime (`api->product`, oneDNN) computes the body:
    a `graph.linear`, `graph.matmul`, `graph.gemm` or `graph.conv2d` whose
    weight is a constant tensor (the runtime packs it once into oneDNN's
    layout and keeps it across runs), of f32, f16 or bf16 tensors (one type
    throughout; f16 and bf16 accumulate in f32, and run in that type where
    oneDNN has it for the CPU, bf16 on AVX-512, else in f32 with the data
    converted on the way in and out), then a chain of post-ops,
    each reading the value before it: elementwise functions (relu, gelu,
    sigmoid, ...) and binary ops with one value from above (a bias, a
    residual, a scalar). `modelc-fold-cpu-products` builds it on CPU
    devices; which ops can follow a product, and how each is spelled for
    oneDNN, is the table in `dialects/Sched/IR/CpuPostOps.h`.

    ```mlir
    %y = sched.packed_product {device = #device.dev<cpu>} : tensor<128x2048xf32> {
      %p = graph.matmul %x, %w : tensor<128x512xf32>, tensor<512x2048xf32>
      %b = graph.add %p, %bias : tensor<128x2048xf32>, tensor<2048xf32>
      %g = graph.gelu %b : tensor<128x2048xf32>
      sched.yield %g : tensor<128x2048xf32>
    }
    ```

    `keep_layout` (set by `modelc-keep-cpu-layouts`): the product is an f32
    convolution whose result only packed convolutions read, as their input
    or as the operand of their sum (a residual). The result's buffer then
    holds the layout oneDNN chose for the convolution's output (NHWC, or
    channels blocked by up to 16 and padded), and the readers take it as
    it is, with no reorders to NCHW and back in between; the buffer is
    sized for 16-channel blocks.

    An f16 or bf16 product may end in a `graph.cast` of its value to f32
    (`modelc --precision` casts the outputs so): oneDNN then writes the
    result in f32, and no f16/bf16 copy of it is stored.

    `winograd` (set by `modelc-select-conv-algorithms`): the product is a
    3x3 convolution with stride 1, dilation 1 and one group, of a multiple
    of 16 channels in and out, which the runtime computes with Winograd's
    algorithm where oneDNN has it for the CPU at hand (AVX-512), directly
    elsewhere.

    Verifier: the body starts with one product; every later op reads the
    value before it and is a post-op the table accepts; the body yields
    the last value; a cast is only the last op, of an f16/bf16 value to f32;
    with `keep_layout`, the product is an f32 convolution and
    every reader of the result is the input or the sum's operand of the
    convolution of another `sched.packed_product`; with `winograd`, the
    product is a convolution Winograd's algorithm applies to
    (`sched::suitsWinograd`).
  }];
  let arguments = (ins UnitAttr:$keep_layout, UnitAttr:$winograd);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict `:` type($result) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The linear, matmul, gemm or conv2d the body starts with.
    ::mlir::Operation *getProduct();
    /// The ops oneDNN applies after the product, in order (not the output
    /// cast).
    ::llvm::SmallVector<::mlir::Operation *> getPostOps();
    /// The cast of an f16/bf16 result to f32 the body ends in, or null:
    /// oneDNN writes the result in f32.
    ::mlir::Operation *getOutputCast();
    /// The value from above a sum post-op adds to the product (a
    /// residual), or null.
    ::mlir::Value getSumOperand();
  }];
}

def Sched_AllReduceStartOp : Sched_Op<"all_reduce_start", [
    AllTypesMatch<["input", "result"]>, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Begins a graph.all_reduce; the ops after it run meanwhile.";
  let description = [{
    The first half of a `graph.all_reduce` on the CPU plan, which
    `modelc-overlap-all-reduce` splits in two: the runtime's communication
    thread sums `input` over the ranks into the result's buffer
    (`modelc_runtime_api::all_reduce_start`, ABI 15) while the ops between
    this op and its `sched.all_reduce_wait` run (a gradient bucket's sum
    beside the backward that remains, as DDP's). The runtime runs the
    all-reduces of a process in the order they start, so every rank meets
    them in the same order. `slot` numbers the started sums of the
    function, for the wait. Until the wait, nothing reads the result and
    the input stays untouched (modelc-plan-memory keeps the input's
    buffer alive up to the wait).

    Verifier: its one use is a `sched.all_reduce_wait` later in its block;
    no earlier start of the block has its slot.

    ```mlir
    %s = sched.all_reduce_start %bucket {slot = 0 : i64} : tensor<1024xf32>
    ...
    %sum = sched.all_reduce_wait %s : tensor<1024xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input, I64Attr:$slot);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The wait that ends it.
    AllReduceWaitOp getWait();
  }];
}

def Sched_AllReduceWaitOp : Sched_Op<"all_reduce_wait", [
    AllTypesMatch<["started", "result"]>, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits for a sched.all_reduce_start: its result is the sum.";
  let description = [{
    Returns once the sum its `sched.all_reduce_start` began is done
    (`modelc_runtime_api::all_reduce_wait`); its result is that sum, in the
    start's buffer (a view: no buffer of its own). `modelc-overlap-all-reduce`
    puts it right before the first op that reads the sum.

    Verifier: `started` is the result of a `sched.all_reduce_start`.
  }];
  let arguments = (ins TensorOf<[F32]>:$started);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = "$started attr-dict `:` type($started)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The start whose sum it waits for.
    AllReduceStartOp getStart();
  }];
}

def Sched_YieldOp : Sched_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["FusedOp", "FusedReduceOp", "GemmOp", "SlicedTransposeOp",
                "PackedProductOp"]>]> {
  let summary = "The value a `sched` group's body computes.";
  let description = [{
    ```mlir
    sched.yield %r : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // MODELC_SCHED_OPS_TD
