//===- Passes.td - modelc compiler passes ------------------*- tablegen -*-===//

#ifndef MODELC_COMPILER_TRANSFORMS_PASSES_TD
#define MODELC_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyModelPass : Pass<"modelc-verify-model", "::mlir::ModuleOp"> {
  let summary = "Checks that a module is a model modelc can compile.";
  let description = [{
    The op verifiers check each op; this pass checks the model as a whole:
    the module holds only `graph.weight` declarations and `func.func` entry
    points, there is at least one entry point, every entry point has a body,
    and its arguments are statically shaped tensors of a supported
    element type (so are its results, which come from arguments and graph
    ops), and its body holds only graph and device ops. Calls between
    functions are not supported yet.
    It changes nothing; errors point at the offending declaration.

    Accepted unchanged:
    ```mlir
    graph.weight @w : tensor<4x4xf32>
    func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %w = graph.weight_ref @w : tensor<4x4xf32>
      %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
      return %y : tensor<2x4xf32>
    }
    ```
    Rejected: `func.func @f(%x: tensor<?x4xf32>)` — "argument #0 of entry
    point 'f' has a dynamic dimension (tensor<?x4xf32>); dynamic shapes are
    not supported yet".
  }];
}

def CheckDynamicDimsPass
    : Pass<"modelc-check-dynamic-dims", "::mlir::ModuleOp"> {
  let summary = "Infers each value's symbolic shape from the inputs' dynamic "
                "dimensions and rejects what is not supported yet.";
  let description = [{
    An entry point whose arguments name `graph.dim`s in `graph.dims`
    (docs/dynamic.md) runs at any sizes of those dimensions in their
    ranges; the IR holds each at its max. This pass infers every value's
    symbolic shape (per axis a product of a constant and dimensions:
    `batch`, `seq`, `batch*8`; graph::inferSymbolicShapes, from each op's
    SymbolicShapeOpInterface, the Elementwise trait, or a dimension 0
    carried to the result's dimension 0). Where only dimensions 0 flow
    through an op, the op must also keep its samples apart (the condition
    modelc-data-parallel splits a batch under: BatchSplitOpInterface and
    the Elementwise trait), so that the code for the max computes any
    smaller size's samples. It writes `graph.dims` on each output that has
    a dimension, which the descriptor gives the runtime (it sizes the
    outputs from it), and on each reshape that regroups one (its grouping,
    exact at any size).

    Not supported yet, each an error at the culprit: a contracted,
    normalized, sliced or joined axis that is dynamic, sizes that cannot
    be proved equal (`seq` against a static `128`), an op that mixes the
    samples of a lone dimension 0 (a reduction over it, a transpose that
    moves it, a loss), an op with several results or none reading a
    dimension, an output axis whose size is a product (`batch*seq`),
    training entry points.

    Before:
    ```mlir
    graph.dim @batch 1 to 4 at 4
    graph.dim @seq 1 to 16 at 8
    func.func @f(%x: tensor<4x16x8xf32> {graph.dims = ["batch", "seq", ""]})
        -> tensor<4x16x8xf32> {
      %h = graph.reshape %x to [4, 16, 2, 4] : tensor<4x16x8xf32>
      %t = graph.transpose %h perm [0, 2, 1, 3] : tensor<4x16x2x4xf32>
      %s = graph.softmax %t : tensor<4x2x16x4xf32>
      %u = graph.transpose %s perm [0, 2, 1, 3] : tensor<4x2x16x4xf32>
      %y = graph.reshape %u to [4, 16, 8] : tensor<4x16x2x4xf32>
      return %y : tensor<4x16x8xf32>
    }
    ```
    After:
    ```mlir
    graph.dim @batch 1 to 4 at 4
    graph.dim @seq 1 to 16 at 8
    func.func @f(%x: tensor<4x16x8xf32> {graph.dims = ["batch", "seq", ""]})
        -> (tensor<4x16x8xf32> {graph.dims = ["batch", "seq", ""]}) {
      %h = graph.reshape %x to [4, 16, 2, 4]
          {graph.dims = ["batch", "seq", "", ""]} : tensor<4x16x8xf32>
      %t = graph.transpose %h perm [0, 2, 1, 3] : tensor<4x16x2x4xf32>
      %s = graph.softmax %t : tensor<4x2x16x4xf32>
      %u = graph.transpose %s perm [0, 2, 1, 3] : tensor<4x2x16x4xf32>
      %y = graph.reshape %u to [4, 16, 8]
          {graph.dims = ["batch", "seq", ""]} : tensor<4x16x2x4xf32>
      return %y : tensor<4x16x8xf32>
    }
    ```
  }];
}

def AttachLossPass : Pass<"modelc-attach-loss", "::mlir::ModuleOp"> {
  let summary = "Adds the loss entry point: a model's output against a target, as torch.nn's losses.";
  let description = [{
    From the entry point `entry` (default `forward`, the name the ONNX
    importer gives), which returns one output, adds the entry point `loss`:
    the same inputs plus `target`, the forward's ops, then the loss of its
    output against `target`, as a scalar (`reduction` `mean` or `sum`):

    * `cross_entropy` (torch.nn.CrossEntropyLoss): output `[N, C]` logits,
      `target` `[N]` i64 class indices; `class-weights` (`C` numbers),
      `ignore-index` and `label-smoothing` as PyTorch's (the smoothing term
      is weighted and normalised as PyTorch does). An output `[N, C, d1,
      ..., dk]` of static sizes (a class per pixel, as segmentation models
      train) takes `target` `[N, d1, ..., dk]`: the scores are transposed
      and reshaped to rows `[N * d1 * ... * dk, C]`, the targets to `[N *
      d1 * ... * dk]`, so means and weights run over every position, as
      PyTorch's K-dimensional loss.
    * `nll` (torch.nn.NLLLoss): output `[N, C]` (or `[N, C, d1, ...]`)
      log-probabilities, the same target and options except label
      smoothing.
    * `mse` (torch.nn.MSELoss) and `bce_with_logits`
      (torch.nn.BCEWithLogitsLoss, `max(x, 0) - x t + log(1 + e^-|x|)`):
      `target` has the output's type.

    The loss ops are graph ops with gradient rules; the class weights are
    a constant, placed with the ops that read it.

    Before (`loss=cross_entropy`):
    ```mlir
    func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> { ... }
    ```
    After (added):
    ```mlir
    func.func @loss(%x: tensor<2x4xf32>, %target: tensor<2xi64> {graph.name = "target"})
        -> (tensor<f32> {graph.name = "loss"}) {
      ...
      %l = graph.cross_entropy %y, %target : tensor<2x3xf32>, tensor<2xi64>
      return %l : tensor<f32>
    }
    ```

    With `distributed` (modelc --distributed), a mean divides by its
    denominator summed over the ranks, so each rank's loss is its share of
    the whole batch's (the function gets `graph.loss_share`; see
    modelc-all-reduce-gradients):
    ```mlir
    %den = graph.reduce_sum %weights_of_targets {axes = array<i64: 0, 1>} : ...
    %all = graph.all_reduce %den : tensor<f32>
    %sum = graph.cross_entropy %y, %target reduction sum : ...
    %l = graph.div %sum, %all : tensor<f32>, tensor<f32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "The function whose one output the loss compares with the target">,
    Option<"loss", "loss", "std::string", /*default=*/"\"cross_entropy\"",
           "cross_entropy, nll, mse or bce_with_logits">,
    Option<"reduction", "reduction", "std::string", /*default=*/"\"mean\"",
           "mean or sum">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "cross_entropy, nll: samples with this target count for nothing">,
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"0.0",
           "cross_entropy: PyTorch's label_smoothing, in [0, 1]">,
    ListOption<"classWeights", "class-weights", "double",
               "cross_entropy, nll: one weight per class">,
    Option<"distributed", "distributed", "bool", /*default=*/"false",
           "Divide a mean by its denominator summed over the ranks of a "
           "distributed run (graph.all_reduce), so that each rank's loss is "
           "its share of the whole batch's (function attribute "
           "graph.loss_share)">,
  ];
}

def TrainingModePass : Pass<"modelc-training-mode", "::mlir::ModuleOp"> {
  let summary = "Gives the ops of a loss entry point their training form.";
  let description = [{
    In the entry point `entry` (the loss that modelc-differentiate
    differentiates), each `graph.batch_norm` with a `momentum` (one exported
    in training mode) normalises with the batch's statistics instead of
    the running ones, spelled as reductions and elementwise ops (whose
    gradient rules give BatchNorm's backward), and updates the running
    statistics as torch.nn.BatchNorm2d does: `running_mean = (1 - m)
    running_mean + m mean`, `running_var = (1 - m) running_var + m
    var_unbiased`, written back with `graph.assign` (the two weights become
    `writable` and `frozen`: buffers, not parameters). Each
    `graph.dropout` without a step (eval mode) gets the step count, the
    weight `rng_step` (an `i64` scalar, zeros at the start, which
    `train_step` counts up), and a `site` of its own (0, 1, ... in the
    entry's order): it drops in training, a new mask each step; with
    `dropout-seed` (modelc --dropout-seed), that seed too. Other entry
    points (the model's `forward`) keep the inference form.

    Before:
    ```mlir
    %y = graph.batch_norm %x, %s, %b, %m, %v {momentum = 1.0e-01 : f32} : ...
    ```
    After (in `entry`):
    ```mlir
    %mean = graph.reduce_mean %x {axes = array<i64: 0, 2, 3>, keepdims = true} : ...
    ...
    graph.assign @"bn.running_mean", %newMean : tensor<4xf32>
    ```
    and a dropout:
    ```mlir
    %step = graph.weight_ref @rng_step : tensor<i64>
    %d = graph.dropout %h, %step {ratio = 1.0e-01, site = 0} : tensor<8x16xf32>, tensor<i64>
    ```

    With `sync-batchnorm` (modelc --sync-batchnorm), the batch statistics
    are those of every rank's batch together: sums and the element count
    are summed over the ranks (torch.nn.SyncBatchNorm), and the running
    variance's unbiased factor comes from the total count:
    ```mlir
    %n = graph.all_reduce %count : tensor<f32>
    %s = graph.reduce_sum %x {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<2x3x2x2xf32>
    %sa = graph.all_reduce %s : tensor<1x3x1x1xf32>
    %mean = graph.div %sa, %n : tensor<1x3x1x1xf32>, tensor<f32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"loss\"",
           "The loss entry point">,
    Option<"syncBatchnorm", "sync-batchnorm", "bool", /*default=*/"false",
           "Batch statistics over the ranks of a distributed run: sums and "
           "counts summed by graph.all_reduce (torch.nn.SyncBatchNorm)">,
    Option<"dropoutSeed", "dropout-seed", "int64_t", /*default=*/"-1",
           "The seed (Philox key) of every dropout that drops in training; "
           "-1 keeps each op's own (ONNX Dropout's seed attribute, else 0)">,
  ];
}

def AllReduceGradientsPass : Pass<"modelc-all-reduce-gradients",
                                  "::mlir::ModuleOp"> {
  let summary = "Sums the gradients over the ranks of a distributed run, in "
                "buckets.";
  let description = [{
    Data-parallel training across processes (`modelc --train
    --distributed`, run under `mpirun`): each rank runs the step on its
    part of the batch. In `gradients` (so also in the `train_step`
    modelc-build-optimizer makes of it), the gradients are put in buckets
    in the order the backward computes them: about `first-bucket-mb`
    megabytes in the first, `bucket-mb` in each other (as
    DistributedDataParallel's 1 MB and 25 MB). Each bucket's gradients are
    flattened into one vector, summed over the ranks by one
    `graph.all_reduce` placed right after the bucket's last gradient, and
    split back. The returned loss, in `gradients` and in the loss entry
    point `entry`, is the whole batch's. With one rank every all-reduce is
    a copy and the results are those of a build without the pass.

    How the ranks' losses add up: a loss built by modelc-attach-loss in
    distributed mode (`graph.loss_share` on the loss entry point) divides
    each mean by its denominator summed over the ranks (the batch size, or
    the weights of the targets kept), so each rank's loss is its share of
    the whole batch's and the gradients are summed: the step is that of
    one process on the whole batch, class weights and `ignore_index`
    included. Any other loss is each rank's own mean: gradients and loss
    are scaled by 1 / ranks (the all-reduce of 1) first, as DDP averages.

    Dropout in training mode of a value computed from the batch gets
    `rank_stride` (its elements per rank): rank `r` draws the masks of its
    rows' place in the whole batch, so the ranks draw those of one process
    (exactly when the batch is the value's leading dimension; otherwise
    each rank still draws masks of its own). Not with `replicated` (the
    ranks are then the replicas of one process, which modelc-replicate
    gives their rows' offsets in the whole batch, scaling the stride when
    both are used).

    Sets `graph.gradient_buckets` (the number of buckets) on `gradients`.

    Before (`gradients` returning the loss and two gradients):
    ```mlir
    return %l, %g1, %g2 : tensor<f32>, tensor<8x4xf32>, tensor<8xf32>
    ```
    After (one bucket):
    ```mlir
    %ls = graph.all_reduce %l : tensor<f32>
    ...
    %f1 = graph.reshape %g1 to [32] : tensor<8x4xf32>
    %f2 = graph.reshape %g2 to [8] : tensor<8xf32>
    %v = graph.concat %f1, %f2 {axis = 0 : i64} : ...
    %s = graph.all_reduce %v : tensor<40xf32>
    %p1 = graph.slice %s {ends = array<i64: 32>, starts = array<i64: 0>} : ...
    ...
    return %ls, %r1, %r2 : ...
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"loss\"",
           "The loss entry point">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "Megabytes of gradients per bucket">,
    Option<"firstBucketMb", "first-bucket-mb", "double", /*default=*/"1.0",
           "Megabytes of the first bucket (the last layers' gradients, "
           "summed while the backward goes on)">,
    Option<"replicated", "replicated", "bool", /*default=*/"false",
           "The ranks are modelc-replicate's replicas in one process, which "
           "offset their dropout masks: dropout is allowed">,
  ];
}

def ShardOptimizerStatePass : Pass<"modelc-shard-optimizer-state",
                                   "::mlir::ModuleOp"> {
  let summary = "ZeRO stage 1 across the ranks of a distributed run: each "
                "parameter's optimizer state and update on one rank.";
  let description = [{
    `modelc --train --distributed --shard-optimizer-state`, after
    modelc-build-optimizer. The parameters (`graph.parameters` of
    `gradients`), largest first, get shard indices 0, 1, 2, ...; at run
    time they go to the ranks back and forth (0, 1, ..., n-1, n-1, ...,
    0, 0, 1, ...: `modelc_shard_owner` in runtime/include/modelc/abi.h),
    so consecutive sizes go to different ranks and each rank's share
    evens out whatever their number (one model.so runs on any number of
    ranks, as a `--distributed` build does).

    In `train_step`, every op whose results serve only the update of one
    parameter `p` (its value, and the optimizer state only that update
    reads) gets `graph.shard` = p's shard: only the owner runs it. The
    state weights only those ops read get `shard` too, so the runtime
    allocates them on the owner alone: each rank keeps about 1/ranks of
    the momentum or Adam's moments (and of `--accumulate`'s gradient sums).
    The new value of `p` goes through `graph.owner_broadcast` from the
    owner before the `graph.assign` every rank runs; the broadcasts, with
    their assigns, go to the end of the step in their order (unless an op
    after the assign reads the parameter), so each rank computes its
    shards' updates back to back instead of waiting for each owner in
    turn (modelc-update-weights-in-place then lets the owner's update and
    the broadcast write into the parameter). What more than one
    parameter's update reads (the step count, Adam's bias corrections,
    `--clip-grad-norm`'s norm, `--accumulate`'s micro-step) and every
    collective run on every rank. The gradients are still summed whole
    (graph.all_reduce: each rank needs the sum of the shards it owns, and
    the buckets mix shards); the results are bit for bit those without
    the pass: the owner computes the update as every rank did.

    Before (SGD with momentum, one parameter):
    ```mlir
    %buf = graph.weight_ref @"w.momentum_buffer" : tensor<4xf32>
    %m = graph.mul %buf, %beta : tensor<4xf32>, tensor<f32>
    %nb = graph.add %m, %g : tensor<4xf32>, tensor<4xf32>
    graph.assign @"w.momentum_buffer", %nb : tensor<4xf32>
    %d = graph.mul %nb, %lr : tensor<4xf32>, tensor<f32>
    %new = graph.sub %w, %d : tensor<4xf32>, tensor<4xf32>
    graph.assign @w, %new : tensor<4xf32>
    ```
    After:
    ```mlir
    graph.weight @"w.momentum_buffer" {frozen, shard = 0 : i64, writable, zeros} : tensor<4xf32>
    ...
    %buf = graph.weight_ref @"w.momentum_buffer" {graph.shard = 0 : i64} : tensor<4xf32>
    %m = graph.mul %buf, %beta {graph.shard = 0 : i64} : tensor<4xf32>, tensor<f32>
    %nb = graph.add %m, %g {graph.shard = 0 : i64} : tensor<4xf32>, tensor<4xf32>
    graph.assign @"w.momentum_buffer", %nb {graph.shard = 0 : i64} : tensor<4xf32>
    %d = graph.mul %nb, %lr {graph.shard = 0 : i64} : tensor<4xf32>, tensor<f32>
    %new = graph.sub %w, %d {graph.shard = 0 : i64} : tensor<4xf32>, tensor<4xf32>
    ... (the other parameters' updates)
    %b = graph.owner_broadcast %new {shard = 0 : i64} : tensor<4xf32>
    graph.assign @w, %b : tensor<4xf32>
    return ...
    ```
    Errors: a module without `train_step` or without `graph.parameters`.
  }];
}

def RecomputePass : Pass<"modelc-recompute", "::mlir::ModuleOp"> {
  let summary = "Recomputes cheap forward ops in the backward instead of "
                "keeping their results.";
  let description = [{
    In `gradients` and `train_step` (the entry points modelc-differentiate
    and modelc-build-optimizer add), the ops before the one that computes
    the result named `loss` are the forward; the ops after it read some of
    the forward's values, which then stay live across the gap. For each
    elementwise op of the forward (or a dropout: its mask is a function of
    its step and site), last first: when each value it reads is an input, a
    constant, a weight the step writes only later, a value that is read at
    or after the op's first reader past the loss anyway, or the result of
    such an op of the forward (a chain of up to four ops is copied), a copy
    of the op goes right before that reader and takes every reader past
    the loss. The original dies after its last forward reader (or goes,
    with none). No value lives longer than before; a chain's copies are
    live together at that reader, and a copy that would raise the peak of
    live memory is undone, so the peak never grows. A copy reading a weight
    the step writes is added to the write's `after`. Each copy costs one
    more elementwise loop, which modelc-fuse-elementwise may merge into
    its reader. Views, outputs and values a `graph.assign` writes are
    kept.

    The function gets `graph.recompute = {ops, peak_bytes_before,
    peak_bytes_after}`: the ops recomputed and the most bytes of op results
    live at once (program order, all devices together) before and after;
    the placement report prints them.

    Before (a ReLU's result read by the backward's weight gradient):
    ```mlir
    %h = graph.linear %x, %w1, %b1 : ...
    %a = graph.relu %h : tensor<16x32xf32>
    %y = graph.linear %a, %w2, %b2 : ...
    %l = graph.cross_entropy %y, %t : ...
    ...
    %dw2 = graph.gemm %dy, %a {transpose_a = true} : ...
    %mask = graph.compare gt, %h, %zero : ...
    ```
    After (`%h` is read by the backward anyway; `%a` dies at `%y`):
    ```mlir
    %a = graph.relu %h : tensor<16x32xf32>
    %y = graph.linear %a, %w2, %b2 : ...
    ...
    %a2 = graph.relu %h : tensor<16x32xf32>
    %dw2 = graph.gemm %dy, %a2 {transpose_a = true} : ...
    ```
  }];
}

def DifferentiatePass : Pass<"modelc-differentiate", "::mlir::ModuleOp"> {
  let summary = "Derives the gradients of a loss entry point (reverse mode).";
  let description = [{
    `entry` names a function that returns one scalar float loss. Its
    *parameters* are the float weights it reads that are not `frozen`
    (`frozen`, a regular expression, marks more weights frozen) and that
    the loss depends on. The pass adds the entry point `gradients`: the
    same inputs, the loss's computation, then the backward, built by
    walking the ops between the parameters and the loss in reverse and
    asking each for its operands' gradients (GradientOpInterface; gradients
    of a value read twice are added). It returns the loss (`loss`) and one
    gradient per parameter (named after the parameter), in declaration
    order; `graph.parameters` on the function lists them. The entry point
    itself is left as it is.

    Every op on a parameter's path to the loss without a gradient rule is
    listed in one error, at the entry point, with a note at each op.

    Before:
    ```mlir
    graph.weight @w : tensor<3x4xf32>
    func.func @loss(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
      %w = graph.weight_ref @w : tensor<3x4xf32>
      %y = graph.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>
      %l = graph.cross_entropy %y, %t : tensor<2x3xf32>, tensor<2xi64>
      return %l : tensor<f32>
    }
    ```
    After (the added entry point; the softmax and one-hot of the
    cross-entropy's rule elided):
    ```mlir
    func.func @gradients(%x: tensor<2x4xf32>, %t: tensor<2xi64>)
        -> (tensor<f32> {graph.name = "loss"}, tensor<3x4xf32> {graph.name = "w"})
        attributes {graph.parameters = [@w]} {
      ...
      %dy = graph.mul %diff, %share : tensor<2x3xf32>, tensor<2x1xf32>
      %dw = graph.gemm %dy, %x {transpose_a = true} : tensor<2x3xf32>, tensor<2x4xf32>
      return %l, %dw : tensor<f32>, tensor<3x4xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"loss\"",
           "The function that returns the loss">,
    Option<"frozen", "frozen", "std::string", /*default=*/"\"\"",
           "A regular expression (POSIX extended, whole name): weights it "
           "matches are not trained">,
  ];
}

def BuildOptimizerPass : Pass<"modelc-build-optimizer", "::mlir::ModuleOp"> {
  let summary = "Adds the training step: gradients, then the optimizer's update of every parameter.";
  let description = [{
    From the entry point `gradients` (modelc-differentiate), adds
    `train_step`: the same inputs and a last one, `lr` (an f32 scalar whose
    default, `graph.default`, is the `lr` option: a run may leave it out or
    give each step its own rate), the loss and gradients, then the update
    of each parameter with torch.optim's formulas, written back with
    `graph.assign`; it returns the loss. The optimizer's state is declared
    as `zeros` weights named as PyTorch's state_dict names it:
    `NAME.momentum_buffer` (SGD with momentum), `NAME.exp_avg` and
    `NAME.exp_avg_sq` (Adam, AdamW), and `step` (a f32 count of steps
    taken, as torch.optim keeps it). Each assign waits (`after`) for the
    ops that read the old value.

    * `sgd`: g += weight_decay p; buf = g on the first step, else
      momentum buf + (1 - dampening) g; g = g + momentum buf (nesterov) or
      buf; p -= lr g. Without momentum no buffer is kept.
    * `adam`: g += weight_decay p; m = b1 m + (1 - b1) g; v = b2 v +
      (1 - b2) g^2; p -= lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) +
      eps), t the step count after this step.
    * `adamw`: as adam with p *= 1 - lr weight_decay first instead of the
      gradient's decay.

    With `accumulate` K > 1, each parameter's gradients are summed over K
    calls in `NAME.grad` (counted by `micro_step`); the K-th call updates
    with the sums (as K backward calls then optimizer.step() in PyTorch)
    and clears them; the other calls change no parameter, optimizer state
    or `step`.

    With `clip-grad-norm` c > 0, every gradient is first scaled by
    min(1, c / (norm + 1e-6)), norm the L2 norm of the per-parameter norms,
    as torch.nn.utils.clip_grad_norm_.

    Before: the `gradients` entry above. After (SGD, lr 0.1, no momentum):
    ```mlir
    func.func @train_step(%x: tensor<2x4xf32>, %t: tensor<2xi64>,
        %lr: tensor<f32> {graph.default = dense<1.0e-01> : tensor<f32>,
                          graph.name = "lr"})
        -> (tensor<f32> {graph.name = "loss"}) {
      ...
      %s = graph.mul %dw, %lr : tensor<3x4xf32>, tensor<f32>
      %p = graph.sub %w, %s : tensor<3x4xf32>, tensor<3x4xf32>
      graph.assign @w, %p after(%y) : tensor<3x4xf32>, tensor<2x3xf32>
      ...
      return %l : tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, adam or adamw">,
    Option<"lr", "lr", "double", /*default=*/"0.001",
           "The learning rate: the default of train_step's `lr` input">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD's momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD's dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD: Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for sgd and adam, decoupled for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam's beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam's beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam's epsilon">,
    Option<"accumulate", "accumulate", "int64_t", /*default=*/"1",
           "Sum the gradients of this many calls (micro-batches) before one "
           "update">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "Scale the gradients so that their total L2 norm is at most this "
           "(torch.nn.utils.clip_grad_norm_; 0: no clipping)">,
  ];
}

def FoldConstantsPass : Pass<"modelc-fold-constants", "::mlir::ModuleOp"> {
  let summary = "Evaluates ops whose operands are all constants at compile time.";
  let description = [{
    An op whose operands are all `graph.constant`s computes the same value
    on every run. This pass evaluates each such op once, with the reference
    interpreter (the one definition of every op's semantics, so no op
    needs folding code of its own), and replaces it with a
    `graph.constant`; ops are visited in order, so a chain of them folds
    to one constant. The ONNX importer folds each node the same way as it
    converts it, so that an op that needs a constant (Expand's shape)
    sees one whatever computed it.

    Not folded: a result of more than `max-elements` elements (the
    computation stays smaller than its value), an op of more than 2^26
    operations by the cost model's count (the interpreter would take more
    than about a second: a product of two large constants), ops that draw
    at random
    (`graph.dropout`), ops with side effects, ops that fail when evaluated
    (an index out of range: the run reports it, as without folding) and
    integer results the interpreter's doubles cannot hold exactly (beyond
    2^53). Weights are parameters, not constants: ops reading them stay.

    Before:
    ```mlir
    %a = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %b = graph.constant dense<3.0> : tensor<f32>
    %c = graph.mul %a, %b : tensor<2xf32>, tensor<f32>
    %y = graph.add %x, %c : tensor<2xf32>, tensor<2xf32>
    ```
    After:
    ```mlir
    %c = graph.constant dense<[3.0, 6.0]> : tensor<2xf32>
    %y = graph.add %x, %c : tensor<2xf32>, tensor<2xf32>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", "1 << 24",
           "The largest result folded, in elements.">
  ];
}

def RaiseCompositesPass : Pass<"modelc-raise-composites", "::mlir::ModuleOp"> {
  let summary = "Raises formulas spelled op by op to the graph op they compute (GELU, LayerNorm).";
  let description = [{
    Importers spell some functions as formulas: PyTorch exports `F.gelu`
    to ONNX as Div, Erf, Add, Mul, Mul, and the tanh approximation as
    seven ops. This pass finds those formulas and replaces each with the
    one graph op, so that later passes see one elementwise op (a oneDNN
    post-op on the CPU, one kernel on GPUs) instead of five passes over
    memory:
    * `0.5 * x * (1 + erf(x / sqrt(2)))` (or `x * 0.70710678`) becomes
      `graph.gelu x`;
    * `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` becomes
      `graph.gelu x approximate tanh`;
    * `graph.pow x, 2` (a one-element f32 constant exactly 2, x of the
      result's type) becomes `graph.mul x, x`: PyTorch exports LayerNorm's
      variance before opset 17, and `x ** 2`, as Pow; the product is the
      correctly rounded square (pow is within an ulp of it) and costs a
      multiply instead of a call to pow.
    * `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)`, both means over
      the trailing dimensions `[axis, rank)` with kept dimensions, `eps` a
      positive one-element f32 constant on either side of its sum (the
      square a product or still a pow), becomes `graph.layer_norm x
      {axis, epsilon}`: PyTorch's export of `nn.LayerNorm` before opset 17
      (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div). The centred value
      may be read only by the square and the division.
    * `graph.layer_norm` read only by a product with a tensor of the
      normalized shape (`x.shape[axis:]`, the same element type) takes it as
      its `scale` (when it has no bias yet); one read only by a sum with such
      a tensor takes it as its `bias`: the LayerNorm's affine parameters,
      exported as Mul and Add.
    The factors may come in any order and grouping; constants must be
    one-element f32 constants within 1e-6 (relative) of those values, and
    every intermediate value must have no other reader.

    Before:
    ```mlir
    %d = graph.div %x, %sqrt2 : tensor<8x64xf32>, tensor<f32>
    %e = graph.erf %d : tensor<8x64xf32>
    %a = graph.add %e, %one : tensor<8x64xf32>, tensor<f32>
    %m = graph.mul %x, %a : tensor<8x64xf32>, tensor<8x64xf32>
    %y = graph.mul %m, %half : tensor<8x64xf32>, tensor<f32>
    ```
    After:
    ```mlir
    %y = graph.gelu %x : tensor<8x64xf32>
    ```
  }];
}

def LowerPrecisionPass : Pass<"modelc-lower-precision", "::mlir::ModuleOp"> {
  let summary = "Stores an f32 model's weights and activations in f16 or bf16 (model.half() at compile time).";
  let description = [{
    `modelc --precision=f16|bf16` runs it after the graph passes, before
    placement. Every f32 tensor of the model becomes `precision`:
    the weights (`graph.weight ... from f32`: modelc rounds the f32 data it
    is given when it builds model.so, which then stores half the bytes),
    constants (rounded to nearest even), casts to f32 (now casts to
    `precision`), and every op's f32 result, so every buffer in the arenas
    halves. The entry points keep their declared types: each f32 input is
    cast to `precision` where the body starts, each f32 output cast back
    to f32 before it returns; an input returned as it is stays f32.
    Integer and boolean tensors are left alone.

    What is computed in f32 is up to the kernels, which take f16 and bf16
    operands everywhere: elementwise loops load into f32 registers and
    round on store; reductions, softmax, layer and batch norm statistics,
    pools and matrix products accumulate in f32 (CPU kernels read an f32
    copy of a half operand, oneDNN and cuBLASLt accumulate in f32, the
    CUDA row kernels load into f32). As with PyTorch's `model.half()`, a
    value is rounded each time it is stored; f16's range ends at 65504
    (bf16 keeps f32's range with 8 bits of mantissa).

    Before (`precision=bf16`):
    ```mlir
    graph.weight @w : tensor<10x4xf32>
    func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x10xf32> {
      %w = graph.weight_ref @w : tensor<10x4xf32>
      %y = graph.linear %x, %w : tensor<2x4xf32>, tensor<10x4xf32>
      %s = graph.softmax %y {axis = 1 : i64} : tensor<2x10xf32>
      return %s : tensor<2x10xf32>
    }
    ```
    After:
    ```mlir
    graph.weight @w : tensor<10x4xbf16> from f32
    func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x10xf32> {
      %0 = graph.cast %x : tensor<2x4xf32> to bf16
      %w = graph.weight_ref @w : tensor<10x4xbf16>
      %y = graph.linear %0, %w : tensor<2x4xbf16>, tensor<10x4xbf16>
      %s = graph.softmax %y {axis = 1 : i64} : tensor<2x10xbf16>
      %1 = graph.cast %s : tensor<2x10xbf16> to f32
      return %1 : tensor<2x10xf32>
    }
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "The element type f32 tensors are stored in: f16, bf16, or f32 "
           "(nothing changes)">,
  ];
}

def PlaceDevicesPass : Pass<"modelc-place", "::mlir::ModuleOp"> {
  let summary = "Assigns every graph op to a device of a target.";
  let description = [{
    Places each op on the CPU or an accelerator of `target` (a preset such
    as `h200x2` or `cpu+sim2`, or a JSON file; docs/placement.md). User pins
    (`device = "cuda:1"`) are honoured, or rejected at the op when the target
    lacks the device or the device has no kernel for the op. Views
    (reshape, flatten) and tiny ops stay with their input. Every other op
    goes where the estimated end-to-end time is lowest (HEFT list
    scheduling, then local improvement), under each device's memory
    capacity: resident weights plus the activation peak. Function inputs and
    outputs live on the host. Deterministic.

    Before (target h200x2, weights too big for one GPU):
    ```mlir
    %h = graph.matmul %x, %w1 : tensor<64x100000xf32>, tensor<100000x200000xf32>
    %y = graph.matmul %h, %w2 : tensor<64x200000xf32>, tensor<200000x100000xf32>
    ```
    After:
    ```mlir
    %h = graph.matmul %x, %w1 {device = #device.dev<cuda:0>} : ...
    %y = graph.matmul %h, %w2 {device = #device.dev<cuda:1>} : ...
    ```
    The module gets `device.target = #device.target<...>`. `report` writes
    the placement report (JSON), `dot` the placed graph (Graphviz).

    `place-all` (modelc `--place-all`) puts every op that has a kernel on
    that device there, tiny ones too, as `model.to(device)`; pins still win
    and views follow their input. Before (target h200, place-all=cuda:0):
    ```mlir
    %s = graph.add %a, %b : tensor<4xf32>, tensor<4xf32>
    %e = graph.exp %s : tensor<4xf32>
    ```
    After (without it, both would stay on the CPU: too small for a GPU):
    ```mlir
    %s = graph.add %a, %b {device = #device.dev<cuda:0>} : ...
    %e = graph.exp %s {device = #device.dev<cuda:0>} : ...
    ```
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Preset name or JSON file of the target">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the placement report (JSON) to this file">,
    Option<"dot", "dot", "std::string", /*default=*/"\"\"",
           "Write the placed graph (Graphviz DOT) to this file">,
    Option<"improve", "improve", "bool", /*default=*/"true",
           "Run local improvement after HEFT">,
    Option<"placeAll", "place-all", "std::string", /*default=*/"\"\"",
           "Put every op that has a kernel there on this device (as "
           "model.to(device)); pins still win">,
  ];
}

def SizeRegimesPass : Pass<"modelc-size-regimes", "::mlir::ModuleOp"> {
  let summary = "Cuts a dynamic dimension's range where the best placement "
                "changes.";
  let description = [{
    Size regimes (docs/dynamic.md): the right device for a model depends on
    the size of its dynamic dimension (a batch of 1 belongs on the CPU next
    to its data, a batch of 4096 on a GPU). For a module with a dynamic
    dimension (`graph.dim`, min < max; with several, the batch: the one at
    axis 0 of every entry point's first input, the others placed at their
    opt), this pass places a copy of the
    module with modelc-place on `target` at sample sizes across the range
    (min, the powers of two inside, opt, max). The placements found there
    are the candidates; at each size the best is the one with the lowest
    estimate (each timed at a size by a copy pinned to it: HEFT's choice at
    one size can lose there to its choice at another). The range is cut
    between two samples with different best placements, at the first size
    where the smaller sample's stops being the best (bisection). Then, while
    there are more than `regimes` ranges, or a cut pays less than 5% of the
    estimated time over its samples, the two neighbours whose merge costs
    least merge, keeping the better of their placements, and each cut moves
    to where its two neighbours' placements cross (the sample with the
    least total estimate, then bisection). Each range is placed at its
    `at` size: opt when inside and placed so, else its largest
    sample placed so, else the sample where its placement was found.

    With `data-parallel=consider` (the driver's default for a target with
    several accelerators), each sample of at least as many samples as the
    target has accelerators is also placed split (modelc-data-parallel,
    then modelc-place): the split is one more candidate, `data parallel
    over cuda:0, cuda:1 (...)`. With `data-parallel=always` (modelc
    --data-parallel) every size that can be split is split, the smaller
    ones placed unsplit; `never` places every size unsplit.

    The module gets `device.regimes`, one dictionary per range in order:
    `dim` (the dimension cut), `min`, `max`, `at`, `placement` (the devices and their op counts at
    `at`), `data_parallel` (whether the range is split over the
    accelerators), `estimated_s` (at `at`) and, from the second range on,
    `why`: the
    estimates of the two neighbours' placements on both sides of the cut.
    One range (a single-device target, or a placement that never changes)
    gives no attribute. `report` writes the samples, the ranges and the cuts
    as JSON. Nothing else changes: the driver builds one plan per range
    (modelc `--regimes`).

    Before (target h200x2, a two-layer MLP of 64 features;
    tests/e2e/Inputs/regimes.ir):
    ```mlir
    graph.dim @batch 1 to 4096 at 4096
    func.func @forward(%x: tensor<4096x64xf32> {graph.dims = ["batch", ""]})
        -> tensor<4096x10xf32> {
      %h = graph.linear %x, %w1, %b1 : ...
      ...
    }
    ```
    After (the module's body unchanged; docs/dynamic.md shows the report):
    ```mlir
    module attributes {device.regimes = [
      {at = 256, estimated_s = 2.688e-05, max = 415, min = 1,
       placement = "cpu 4 ops"},
      {at = 4096, estimated_s = 5.62e-05, max = 4096, min = 416,
       placement = "cuda:0 4 ops", why = "from 416 the placement at 4096
       (cuda:0 4 ops) is estimated 38.05 us against 38.08 us for the
       placement at 256 (cpu 4 ops); at 415, 38.05 us against 38.01 us"}
    ]} { ... }
    ```
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Preset name or JSON file of the target">,
    Option<"regimes", "regimes", "unsigned", /*default=*/"4",
           "The most ranges to cut the dimension into">,
    Option<"placeAll", "place-all", "std::string", /*default=*/"\"\"",
           "As modelc-place's place-all">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the samples, ranges and cuts (JSON) to this file">,
    Option<"dataParallel", "data-parallel", "std::string",
           /*default=*/"\"never\"",
           "Whether sizes are also placed split over the accelerators: "
           "never, consider (a candidate), always (every size that splits)">,
  ];
}

def DataParallelPass : Pass<"modelc-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Splits the batch of each entry point over the accelerators.";
  let description = [{
    Data parallelism: every input is sliced along dimension 0 into one part
    per accelerator of `target`, the function body is replicated once per
    part with its ops pinned to that accelerator, and the outputs are
    concatenated on the host. Weights are shared: transfer insertion later
    makes them resident on each accelerator, copied once at load. Runs
    before modelc-place.

    The batch must split: all inputs share dimension 0 (divisible by the
    number of accelerators), and no op mixes samples. A reduction over the
    batch, a reshape or transpose that moves it, a mean or sum loss, or an
    output without it is an error at that op.

    A dynamic batch (the inputs' dimension 0 is a `graph.dim`,
    docs/dynamic.md) splits at run time: replica `r` takes
    `graph.batch_part` `r` of the input, whose dimension 0 is the dimension
    `batch[r/N]` (a balanced part of the run's batch: 7 over 2 is 4 and 3),
    and the outputs' parts join back into `batch`. Every run must give each
    accelerator a sample: the dimension's minimum (or the size regime's,
    `device.regime_min`) must be at least the number of accelerators, and
    the batch must stay dimension 0 of every value that has it.

    Before (target cpu+sim2):
    ```mlir
    func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
      %y = graph.relu %x : tensor<8x4xf32>
      return %y : tensor<8x4xf32>
    }
    ```
    After:
    ```mlir
    %x0 = graph.slice %x {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: 4>, device = "cpu"}
    %y0 = graph.relu %x0 {device = "sim:0"} : tensor<4x4xf32>
    %x1 = graph.slice %x {axes = array<i64: 0>, starts = array<i64: 4>, ends = array<i64: 8>, device = "cpu"}
    %y1 = graph.relu %x1 {device = "sim:1"} : tensor<4x4xf32>
    %y = graph.concat %y0, %y1 {axis = 0, device = "cpu"}
    ```
    A dynamic batch (`graph.dim @batch 2 to 63 at 16`, the input's
    `graph.dims = ["batch", ""]`), after:
    ```mlir
    %x0 = graph.batch_part %x {device = "cpu", part = 0, parts = 2} : tensor<63x4xf32>
    %y0 = graph.relu %x0 {device = "sim:0"} : tensor<32x4xf32>
    %x1 = graph.batch_part %x {device = "cpu", part = 1, parts = 2} : tensor<63x4xf32>
    %y1 = graph.relu %x1 {device = "sim:1"} : tensor<31x4xf32>
    %y = graph.concat %y0, %y1 {axis = 0, device = "cpu"}
    ```
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect",
                           "::modelc::graph::GraphDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Preset name or JSON file of the target">,
  ];
}

def SplitBatchPass : Pass<"modelc-split-batch", "::mlir::ModuleOp"> {
  let summary = "Rewrites each entry point to take one replica's part of "
                "the batch.";
  let description = [{
    Data-parallel training in one process (`modelc --train --data-parallel`),
    first step: before the training pipeline, each entry point is rewritten
    in place to take 1/`parts` of dimension 0 of every input, so that the
    loss, its gradients and the optimizer are built for one replica, as a
    `--distributed` build is for one rank. modelc-replicate later runs the
    step once per replica and sums over the replicas. The batch must split
    as for modelc-data-parallel: all inputs share dimension 0 (divisible by
    `parts`) and no op mixes samples (an error at that op otherwise).

    Before (parts=2):
    ```mlir
    func.func @forward(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
      %y = graph.relu %x : tensor<8x4xf32>
      return %y : tensor<8x4xf32>
    }
    ```
    After:
    ```mlir
    func.func @forward(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %y = graph.relu %x : tensor<4x4xf32>
      return %y : tensor<4x4xf32>
    }
    ```
  }];
  let dependentDialects = ["::modelc::graph::GraphDialect"];
  let options = [
    Option<"parts", "parts", "int64_t", /*default=*/"1",
           "The number of replicas the batch is split into">,
  ];
}

def ReplicatePass : Pass<"modelc-replicate", "::mlir::ModuleOp"> {
  let summary = "Runs each entry point once per replica and sums over the "
                "replicas where a distributed build sums over the ranks.";
  let description = [{
    Data-parallel training in one process, second step, before modelc-place:
    the module was built for one replica's part of the batch
    (modelc-split-batch) with the distributed training passes, so every
    value the replicas must share is a `graph.all_reduce` (the loss
    denominators, the gradient buckets, SyncBatchNorm's sums). Each entry
    point then takes `replicas` times the batch: every input with a
    dimension is sliced along dimension 0 (a scalar such as `lr` goes to
    every replica whole), and every op is cloned once per replica, pinned
    to the replica's accelerator of `target` (round robin; the CPU where
    the target has none). Each `graph.all_reduce` becomes the sum of the
    replicas' values on the host, added in replica order so that results
    repeat run to run, and every replica reads that sum (with `distributed`,
    the sum is then all-reduced over the ranks too). An output that is the
    same on every replica (a loss, a gradient) is replica 0's; an output
    that carries the batch is concatenated.

    Parameters and optimizer state: each device holds its own copy of a
    weight a step writes (`graph.replica_copy` on its `graph.weight_ref` and
    `graph.assign`, which modelc-place keeps where this pass puts them), and
    each device's write stores the same value: the replica's own where it
    is the same on every replica (it depends on the inputs only through
    all-reduced values), replica 0's otherwise (BatchNorm's running
    statistics without SyncBatchNorm, as DDP broadcasts rank 0's buffers).
    What is the same on every replica is computed once per device that
    reads it, and a written weight that is not a parameter (optimizer
    state) has a copy only where it is read.

    With `shard-optimizer-state` (ZeRO stage 1): each parameter (of
    `gradients`' `graph.parameters`) gets an owner, the largest first to
    the device with the fewest bytes so far; only the owner computes the
    parameter's update, so only it holds the optimizer state (momentum,
    Adam's moments), and the other devices write the owner's new value into
    their copies. Where several parameters share a state (Adam's `step`),
    every device that updates one holds it.

    A training-mode dropout of the batch gets each replica's `offset`
    (its rows' place in the whole batch), so the replicas draw the masks
    of one device on the whole batch.

    Before (replicas=2, target cpu+sim2; the distributed build of one
    replica):
    ```mlir
    %s = graph.all_reduce %g : tensor<4xf32>
    ```
    After:
    ```mlir
    %g0 = ... {device = "sim:0"}
    %g1 = ... {device = "sim:1"}
    %s = graph.add %g0, %g1 {device = "cpu"} : ...
    ```
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect",
                           "::modelc::graph::GraphDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Preset name or JSON file of the target">,
    Option<"replicas", "replicas", "int64_t", /*default=*/"2",
           "The number of replicas (modelc-split-batch's parts)">,
    Option<"distributed", "distributed", "bool", /*default=*/"false",
           "Sum over the ranks of a distributed run too (graph.all_reduce "
           "of the replicas' sum)">,
    Option<"shardOptimizerState", "shard-optimizer-state", "bool",
           /*default=*/"false",
           "ZeRO stage 1: each parameter's update and optimizer state on "
           "one device, its new value copied to the others">,
  ];
}

def InsertTransfersPass : Pass<"modelc-insert-transfers", "::mlir::ModuleOp"> {
  let summary = "Inserts device.transfer on edges that cross devices.";
  let description = [{
    After placement: one `device.transfer` per (value, destination device),
    right after the value's producer, never one per use and none between ops
    on the same device. Function inputs start on the host and outputs return
    to it. A weight (or constant) read on several devices gets one
    `graph.weight_ref` (or `graph.constant`) per device: weights are
    resident on each device that uses them, copied once at load.

    Before:
    ```mlir
    %w = graph.weight_ref @w {device = #device.dev<cuda:0>} : tensor<4x4xf32>
    %a = graph.matmul %x, %w {device = #device.dev<cuda:0>} : ...
    %b = graph.relu %a {device = #device.dev<cuda:1>} : ...
    %c = graph.exp %a {device = #device.dev<cuda:1>} : ...
    return %b, %c
    ```
    After:
    ```mlir
    %x0 = device.transfer %x from <cpu> to <cuda:0> : ...
    %a = graph.matmul %x0, %w {device = #device.dev<cuda:0>} : ...
    %a1 = device.transfer %a from <cuda:0> to <cuda:1> : ...
    %b = graph.relu %a1 {device = #device.dev<cuda:1>} : ...
    %c = graph.exp %a1 {device = #device.dev<cuda:1>} : ...
    %b0 = device.transfer %b from <cuda:1> to <cpu> : ...
    %c0 = device.transfer %c from <cuda:1> to <cpu> : ...
    return %b0, %c0
    ```
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect"];
  let options = [
    Option<"dropTransfer", "debug-drop-transfer", "int", /*default=*/"-1",
           "Debugging only: leave out the N-th transfer (counting from 0), "
           "using the value where it is, to test that checked builds catch "
           "a missing transfer">,
  ];
}

def AnnotateEstimatesPass
    : Pass<"modelc-annotate-estimates", "::mlir::ModuleOp"> {
  let summary = "Records the cost model's estimate of each op for traces.";
  let description = [{
    Runs after the lowering passes, before the printers (the driver runs it
    after `--emit=scheduled` prints), on a module placed for a target
    (`device.target`). Each op of an entry point that runs on a device (it
    has `device`) and computes something gets `device.estimated_us`: the
    cost model's time for it on that device (compiler/Analysis/CostModel.h,
    what placement used), in microseconds; for a `sched.fused` group, a
    `sched.packed_product` or a `sched.gemm`, the sum over the graph ops it
    holds. The printers copy it into each trace point (ABI 6), which
    `modelc-run --profile` shows beside the measured time. It decides
    nothing: ops without a device, transfers, weights and constants are left
    as they are, and a module without a target is left alone.

    Before:
    ```mlir
    %2 = sched.fused (%1) {device = #device.dev<cpu>} : ... { graph.relu ... }
    ```
    After:
    ```mlir
    %2 = sched.fused (%1) {device = #device.dev<cpu>, device.estimated_us = 1.28 : f64} : ...
    ```
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect"];
}

def FuseElementwisePass : Pass<"modelc-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Groups elementwise ops into `sched.fused` loops.";
  let description = [{
    The first lowering pass after transfer insertion. An elementwise op
    (the graph dialect's `Elementwise` trait) joins its user's group when
    it has exactly one use and that user is elementwise with the same
    result shape, so element `i` of the user reads element `i` of it. Every
    group, a single op too, becomes one `sched.fused` whose inputs are the
    values the group reads from outside, in the order the ops first read
    them, and which carries the device of its ops. After it, no elementwise
    graph op is left outside a `sched.fused`: a printer emits one loop (one
    kernel) per `sched.fused`.

    A splat constant of more than one element that a group reads is not an
    input: the body gets a copy of it (a literal in the loop), and the
    constant goes once no op reads it any more. The gradient of a broadcast
    is a select on an all-true mask of the activations' shape; as an input
    it would be a constant that large in the library, read per element.
    One-element constants stay inputs (matrix-product folds look for a
    scale there).
    ```mlir
    %all = graph.constant dense<true> : tensor<8x64x56x56xi1>
    %b = graph.select %all, %g, %g : tensor<8x64x56x56xi1>, tensor<1x64x1x1xf32>, tensor<1x64x1x1xf32>
    ```
    becomes a body that starts with
    `%c = graph.constant dense<true> : tensor<8x64x56x56xi1>`.

    A `graph.reduce_sum` or `graph.reduce_mean` on a host device (CPU,
    sim) whose input is a group's value read by nothing else, f32 of a
    static shape, summed over the last axis (among others; 2 or more
    elements), takes the
    group into its own loop: one `sched.fused_reduce`, and the value is
    never written to memory. BatchNorm's training form reduces
    `(x - mean)^2` and the gradient's products this way: each was a
    tensor the size of the activations, written and read once. The sums
    add in the order the reduction alone adds (eight partial sums over
    each run of consecutive elements), so the result has the same bits.
    `fuse-reductions=false` leaves the reductions alone. GPUs keep the
    loop and the reduction apart (their reductions are split kernels), and
    so do modules with dynamic dimensions (their reductions size
    themselves from the run).

    A group holds at most `max-ops` ops: past that, the producer that would
    join next ends a group of its own, so that a chain of 10,000
    elementwise ops becomes loops of `max-ops` statements each, not one loop
    body that the C++ compiler cannot digest. Each cut costs one more pass
    over the tensor in memory, which is negligible next to that many ops.

    Before:
    ```mlir
    %s = graph.add %x, %b {device = #device.dev<cpu>} : tensor<64x10xf32>, tensor<10xf32>
    %r = graph.relu %s {device = #device.dev<cpu>} : tensor<64x10xf32>
    %e = graph.exp %r {device = #device.dev<cpu>} : tensor<64x10xf32>
    %f = graph.neg %r {device = #device.dev<cpu>} : tensor<64x10xf32>
    ```
    After (`%r` has two users, so it ends a group):
    ```mlir
    %r = sched.fused (%x, %b) {device = #device.dev<cpu>} : (...) -> tensor<64x10xf32> {
    ^bb0(%a: tensor<64x10xf32>, %c: tensor<10xf32>):
      %0 = graph.add %a, %c : ...
      %1 = graph.relu %0 : ...
      sched.yield %1 : tensor<64x10xf32>
    }
    %e = sched.fused (%r) {device = #device.dev<cpu>} : ... { graph.exp ... }
    %f = sched.fused (%r) {device = #device.dev<cpu>} : ... { graph.neg ... }
    ```

    A sum over the last axis of a loop read by nothing else, before:
    ```mlir
    %e = graph.exp %x {device = #device.dev<cpu>} : tensor<4x16xf32>
    %s = graph.reduce_sum %e {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<4x16xf32>
    ```
    After:
    ```mlir
    %s = sched.fused_reduce (%x) {device = #device.dev<cpu>} : (tensor<4x16xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4x16xf32>):
      %0 = graph.exp %a : tensor<4x16xf32>
      %1 = graph.reduce_sum %0 {axes = array<i64: 1>} : tensor<4x16xf32>
      sched.yield %1 : tensor<4xf32>
    }
    ```
  }];
  let options = [
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"64",
           "Most ops one sched.fused holds (at least 1)">,
    Option<"fuseReductions", "fuse-reductions", "bool", /*default=*/"true",
           "Compute a host reduction's only producer loop inside it "
           "(sched.fused_reduce)">,
  ];
  let dependentDialects = ["::modelc::sched::SchedDialect"];
}

def FoldCpuProductsPass : Pass<"modelc-fold-cpu-products", "::mlir::ModuleOp"> {
  let summary = "On CPUs, packs constant weights and folds the ops after a product into its oneDNN call.";
  let description = [{
    Runs after modelc-insert-transfers and before modelc-fuse-elementwise.
    For each `graph.linear`, `graph.matmul`, `graph.gemm` or `graph.conv2d`
    of f32, f16 or bf16 tensors (one type) whose weight is a constant, on a
    `cpu` or `sim` device,
    builds a `sched.packed_product`: the runtime packs the weight once into
    oneDNN's layout and keeps it across runs. The product's value is then
    followed as long as its only user is on the same device and is an op
    oneDNN applies after the product (dialects/Sched/IR/CpuPostOps.h:
    relu, leaky_relu, gelu, sigmoid, tanh, silu; add, sub, mul, div, max,
    min with a bias-like, scalar or, after a matrix product, same-shape
    value; after a convolution, one add or subtraction of a same-shape
    value, as oneDNN's sum), and each such op joins the call as a post-op: the value never
    goes through memory between them. An f16 or bf16 chain may end in a
    cast of its value to f32 (`modelc --precision` casts each output so),
    which joins the call too: oneDNN writes the result in f32. Products of computed weights, GPU
    ops, and ops after a product that oneDNN cannot apply are left as they
    are (they print as the generic kernels).

    Before (on the CPU):
    ```mlir
    %p = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<128x512xf32>, tensor<512x2048xf32>
    %b = graph.add %p, %bias {device = #device.dev<cpu>} : tensor<128x2048xf32>, tensor<2048xf32>
    %g = graph.gelu %b {device = #device.dev<cpu>} : tensor<128x2048xf32>
    ```
    After:
    ```mlir
    %g = sched.packed_product {device = #device.dev<cpu>} : tensor<128x2048xf32> {
      %p = graph.matmul %x, %w : tensor<128x512xf32>, tensor<512x2048xf32>
      %b = graph.add %p, %bias : tensor<128x2048xf32>, tensor<2048xf32>
      %g = graph.gelu %b : tensor<128x2048xf32>
      sched.yield %g : tensor<128x2048xf32>
    }
    ```
  }];
  let dependentDialects = ["::modelc::sched::SchedDialect"];
}

def SelectConvAlgorithmsPass : Pass<"modelc-select-conv-algorithms", "::mlir::ModuleOp"> {
  let summary = "Picks the CPU's convolution algorithms: Winograd for 3x3 packed products, GEMM and col2im for transposed convolutions.";
  let description = [{
    Runs after modelc-fold-cpu-products. A 3x3 convolution with stride 1,
    dilation 1 and one group, of a multiple of 16 channels in and out
    (`sched::suitsWinograd`), costs about half the multiplications with
    Winograd's F(2x2, 3x3) or F(4x4, 3x3) transforms than computed
    directly, and oneDNN has both for AVX-512 CPUs. This pass sets
    `winograd` on every such `sched.packed_product`; the runtime uses it
    where oneDNN has it for the CPU at hand and computes the convolution
    directly elsewhere. ResNet-18's 3x3 convolutions are all of this kind;
    on a 2-core AVX-512 machine the model runs about 20% faster. The
    transforms round differently from direct summation (ResNet-18's
    output stays within 1e-6 of PyTorch's, relative to its scale);
    `winograd=false` (`modelc --no-winograd`) leaves every convolution
    direct.

    A training step's convolutions on a host device (CPU or sim), f32 and
    of static shapes: a `graph.conv2d` whose weight is not a constant (so
    not a packed product), a `graph.conv_transpose2d` without a bias (a
    convolution's input gradient) and a `graph.conv2d_weight_grad`, of 16 or
    more channels in and out per group, get
    `sched.dnnl_conv`: the runtime runs them through oneDNN's forward,
    backward-data and backward-weights convolution primitives (blocked
    layouts, reorders from and to the model's NCHW buffers), about 1.3x
    the speed of im2col and a GEMM. `"winograd"` where Winograd's F(4x4,
    3x3) pays (3x3, stride 1, one group, multiples of 16 channels, an
    output of 14x14 or more: 1.6-2.2x direct's speed on ResNet-18's
    layers), else `"direct"`; with `winograd=false` all are direct.

    Another `graph.conv_transpose2d` on a host device whose outputs each sum 4 or more input
    channels gets `sched.col2im`: the CPU computes it as one GEMM per
    image and group into scratch columns, then adds them into place
    (col2im); with fewer channels (average pooling's gradient has one) it
    adds tap by tap. GPUs ignore the attribute.

    Before:
    ```mlir
    %y = sched.packed_product {device = #device.dev<cpu>} : tensor<1x64x8x8xf32> {
      %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>
      sched.yield %c : tensor<1x64x8x8xf32>
    }
    ```
    After (and a training step's convolutions on the CPU get
    `sched.dnnl_conv = "winograd"` or `"direct"`; another transposed
    convolution of 64 channels gets `sched.col2im`):
    ```mlir
    %y = sched.packed_product {device = #device.dev<cpu>, winograd} : tensor<1x64x8x8xf32> {
      %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>
      sched.yield %c : tensor<1x64x8x8xf32>
    }
    ```
  }];
  let options = [
    Option<"winograd", "winograd", "bool", /*default=*/"true",
           "Use Winograd's algorithm where it applies (false: every "
           "convolution direct)">,
  ];
}

def KeepCpuLayoutsPass : Pass<"modelc-keep-cpu-layouts", "::mlir::ModuleOp"> {
  let summary = "Keeps a convolution's output in oneDNN's layout when only convolutions (or a global average pool) read it.";
  let description = [{
    Runs after modelc-fold-cpu-products. oneDNN computes convolutions in
    its own layouts (NHWC or channel blocks); a `sched.packed_product`
    convolution reorders its NCHW input into that layout and its output
    back to NCHW, two passes over memory. When every reader of a packed
    convolution's result is another packed convolution reading it as its
    input or as the operand of its sum (a MobileNet block's expand,
    depthwise and project convolutions; a ResNet block's output, read by
    the next block's first convolution and by its residual sum), this pass
    sets `keep_layout` on it: its buffer holds oneDNN's layout and the
    readers take it as it is. A `graph.global_avg_pool` of a static f32
    NCHW value on the convolution's device reads it as it is too (the
    runtime pools that layout with oneDNN: `kept_pool`, ABI 18; a CNN's
    last convolution before its classifier). Values read by anything else
    (an elementwise op, another pool, an output, another device) stay
    NCHW, and so do f16 and
    bf16 convolutions (on a CPU without them they run in f32, whose layout
    would not fit their buffer).

    Before (a 1x1 convolution read only by a depthwise one):
    ```mlir
    %a = sched.packed_product {device = #device.dev<cpu>} : tensor<1x20x4x4xf32> {
      %c = graph.conv2d %x, %e : tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>
      sched.yield %c : tensor<1x20x4x4xf32>
    }
    %b = sched.packed_product {device = #device.dev<cpu>} : tensor<1x20x4x4xf32> {
      %c = graph.conv2d %a, %d {groups = 20 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x20x4x4xf32>, tensor<20x1x3x3xf32>
      sched.yield %c : tensor<1x20x4x4xf32>
    }
    ```
    After:
    ```mlir
    %a = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x20x4x4xf32> {
      %c = graph.conv2d %x, %e : tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>
      sched.yield %c : tensor<1x20x4x4xf32>
    }
    %b = sched.packed_product {device = #device.dev<cpu>} : tensor<1x20x4x4xf32> {
      %c = graph.conv2d %a, %d {groups = 20 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x20x4x4xf32>, tensor<20x1x3x3xf32>
      sched.yield %c : tensor<1x20x4x4xf32>
    }
    ```
  }];
}

def FoldGemmPass : Pass<"modelc-fold-gemm", "::mlir::ModuleOp"> {
  let summary = "On GPUs, folds a product's neighbours into its cuBLASLt call.";
  let description = [{
    Runs after modelc-fuse-elementwise. For each `graph.linear`,
    `graph.matmul` or `graph.conv2d` on a `cuda` device, writes down in a
    `sched.gemm` what its cuBLASLt call computes besides the product:
    * `relu` (with `relu-epilogue` only): the product's only user is a relu
      on the same GPU (a single-op `sched.fused`), applied as the epilogue.
      Off by default: cuBLASLt's epilogue may compute it as fmaxf, which
      turns NaN into 0 where PyTorch keeps NaN;
    * `alpha`: a matmul's only user multiplies it by a one-element constant;
    * `beta = 1`: a linear's only user adds a value computed before the
      linear (a residual connection); the call writes the sum with that
      value as C;
    * `lhs_view`/`rhs_view`: a matmul operand made by slices, reshapes and
      transposes (each used once, on the same GPU) is read in place as a
      strided matrix, when that saves a copy (attention's q, k^T, v).
    And a slice read (through reshapes) only by a transpose on the same GPU
    becomes a `sched.sliced_transpose`: one kernel for both. Views, residual
    adds and sliced transposes are not folded in `checked` plans, whose
    check callback verifies each op's own buffers. On the CPU and sim
    devices only the views are folded, for an f32 `graph.matmul` (not in
    checked plans): the host's sgemm reads the operand with its transpose
    flag and leading dimension instead of a copy of the transpose.

    Before (on cuda:0):
    ```mlir
    %p = graph.linear %x, %w, %b {device = #device.dev<cuda:0>} : ...
    %r = sched.fused(%p) {device = #device.dev<cuda:0>} : ... {
    ^bb0(%a: tensor<64x1024xf32>):
      %0 = graph.relu %a : tensor<64x1024xf32>
      sched.yield %0 : tensor<64x1024xf32>
    }
    ```
    After:
    ```mlir
    %r = sched.gemm {device = #device.dev<cuda:0>, relu} : tensor<64x1024xf32> {
      %p = graph.linear %x, %w, %b : ...
      %0 = graph.relu %p : tensor<64x1024xf32>
      sched.yield %0 : tensor<64x1024xf32>
    }
    ```
  }];
  let dependentDialects = ["::modelc::sched::SchedDialect"];
  let options = [
    Option<"checked", "checked", "bool", /*default=*/"false",
           "The plan checks each op's buffers (modelc --checked): fold "
           "only epilogues and alpha">,
    Option<"reluEpilogue", "relu-epilogue", "bool", /*default=*/"false",
           "Fold a relu into the cuBLASLt epilogue (modelc "
           "--gpu-relu-epilogue). Off by default: the epilogue may compute "
           "it as fmaxf, which turns NaN into 0">,
  ];
}

def UpdateWeightsInPlacePass
    : Pass<"modelc-update-weights-in-place", "::mlir::ModuleOp"> {
  let summary = "Writes a training step's new weight values straight into the weights.";
  let description = [{
    Runs after modelc-fold-gemm, before modelc-plan-memory. A training step
    computes each parameter's new value (and its optimizer state's) in a
    `sched.fused` loop and writes it with `graph.assign`: by default into a
    buffer of the arena, which the assign then copies over the weight
    (ResNet-18's SGD step copies 94 MB that way). Where it is safe, the
    loop writes into the weight's storage itself: the fused op gets
    `sched.writes_weight = @name`, modelc-plan-memory gives it no buffer,
    the CPU printer points its result at the weight, and the assign prints
    no copy. Every later reader of the value (the parameter's update
    reading its new momentum) reads the weight.

    Safe, and so done, when the module's plan is the CPU alone (`cpu`:
    its entry points run their ops one after the other in the body's
    order; a plan with other devices runs even its CPU ops on streams),
    every op of the entry point is on the CPU, the weight has exactly
    one `graph.assign` in it, its value is a `sched.fused` of the body with
    the weight's type, and every op that reads the weight's old value
    (directly or through views) comes before that loop in the body, or is
    the loop itself reading element i of the old value for element i of the
    new one (`w - lr * g`: an input of the result's shape, through views
    that keep the elements' order). Anything else keeps the buffer and the
    copy: plans with other devices (their streams order the assign through
    its `after` operands), a weight read after its update, an update that
    reads the old value broadcast or transposed.

    ZeRO-1 across ranks (modelc-shard-optimizer-state): an assign of a
    `graph.owner_broadcast` of such a loop, each with that one use: both
    get `sched.writes_weight`. The owner's loop writes the new value into
    the parameter and the broadcast sends it from there in place (the
    other ranks, which skip the loop, receive it there; nothing reads the
    old value after the loop), so neither takes a buffer of the arena.

    Before:
    ```mlir
    %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4xf32>
    %new = sched.fused (%w, %g) {device = #device.dev<cpu>} : ... {
      ... graph.sub ...
    }
    graph.assign @w, %new {device = #device.dev<cpu>} : tensor<4xf32>
    ```
    After: `%new = sched.fused (%w, %g) {device = #device.dev<cpu>,
    sched.writes_weight = @w} ...`; the assign stays (it says which weight
    the value is) and prints nothing.
  }];
}

def OverlapAllReducePass
    : Pass<"modelc-overlap-all-reduce", "::mlir::ModuleOp"> {
  let summary = "Lets a CPU plan's all-reduces run while the backward goes on.";
  let description = [{
    Runs after modelc-update-weights-in-place, before modelc-plan-memory.
    On the CPU plan (`cpu`: its ops run one after the other), a
    `graph.all_reduce` (a gradient bucket's sum in a `--distributed`
    build) would hold the step until every rank has summed; DDP instead
    sums a bucket while the backward goes on. This pass splits each
    all-reduce in two: `sched.all_reduce_start` where the all-reduce was
    (the runtime's communication thread starts the sum) and
    `sched.all_reduce_wait` right before the first op that reads the sum,
    through views (the views between move after the wait: they print no
    code). The starts are numbered (`slot`) in the order of the body.

    An all-reduce whose sum is read by the very next op that prints code
    (a loss's denominator) stays as it is: there is nothing to overlap; so
    does the sum of a weight's memory (a weight may be written in place
    while the communication thread would read it).
    Plans with other devices run the all-reduce on the host's stream,
    beside the replicas' work, already: they are left alone. The runtime
    runs every all-reduce of a process, started or not, in program order
    on one thread, so the ranks still meet them in the same order.

    Before:
    ```mlir
    %sum = graph.all_reduce %bucket {device = #device.dev<cpu>} : tensor<1024xf32>
    %g = graph.slice %sum ... // a view
    %x = graph.conv2d_weight_grad ...  // the backward that remains
    %w = sched.fused (%p, %g) ...
    ```
    After:
    ```mlir
    %s = sched.all_reduce_start %bucket {device = #device.dev<cpu>, slot = 0 : i64} : tensor<1024xf32>
    %x = graph.conv2d_weight_grad ...
    %sum = sched.all_reduce_wait %s {device = #device.dev<cpu>} : tensor<1024xf32>
    %g = graph.slice %sum ...
    %w = sched.fused (%p, %g) ...
    ```
  }];
  let dependentDialects = ["::modelc::sched::SchedDialect"];
}

def PlanMemoryPass : Pass<"modelc-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Places every buffer of an entry point in its device's arena.";
  let description = [{
    The last lowering pass. Each device of the target gets one arena per
    entry point. Every op that writes memory gets a buffer, alive from the
    op to the last op that reads it (through views; a value read inside a
    `sched.gemm` is read when the group runs; a function output or the
    source of a transfer is kept to the end of the run; a transfer's
    destination is reserved for the whole run, as copy streams write it
    whenever the source is ready). Views, weights and constants need none.
    An op's scratch (conv2d's im2col columns, f32 copies of f16/bf16
    operands on the CPU, constants copied for cuBLASLt on a GPU) is alive
    while it runs. A GPU whose kernels check indices gets an error word and
    a host copy of it. Buffers go at the lowest 64-byte-aligned offset that
    no buffer alive at the same time uses, largest first.

    One buffer is written in place: a `sched.packed_product` (oneDNN) whose sum
    post-op (oneDNN adds the product to what its output buffer holds) adds
    a value of the result's type and size that dies at the product (a
    residual read last by the block's sum), written by an op with a buffer
    on the same device, and that reaches the product only as the sum's
    operand (not also as its input, nor through a view), takes that value's
    buffer: the runtime then adds to the residual where it lies instead of
    copying it into the output first. Chains of such sums share one
    buffer.

    Writes `sched.buffer` on each op with a buffer (its own lifetime, and
    the offset it shares when it sums in place), `sched.scratch` on each
    op with scratch, `sched.arenas` (bytes per device) and
    `sched.error_words` on the function; the dialect's verifier checks that
    no two buffers alive at the same time overlap, but for a product that
    sums in place and its operand's buffer, which meet at the product.

    Before (on the CPU):
    ```mlir
    %h = graph.linear %x, %w : tensor<64x784xf32>, tensor<1024x784xf32>
    %y = graph.softmax %h : tensor<64x1024xf32>
    return %y : tensor<64x1024xf32>
    ```
    After:
    ```mlir
    func.func @f(...) attributes {sched.arenas = {cpu = 524288 : i64}} {
      %h = graph.linear %x, %w {sched.buffer = #sched.buffer<offset = 0, bytes = 262144, first = 1, last = 2>} : ...
      %y = graph.softmax %h {sched.buffer = #sched.buffer<offset = 262144, bytes = 262144, first = 2, last = 3>} : ...
    ```
  }];
  let dependentDialects = ["::modelc::sched::SchedDialect"];
}

def ScheduleStreamsPass : Pass<"modelc-schedule-streams", "::mlir::ModuleOp"> {
  let summary = "Streams and events of a plan with devices besides the host.";
  let description = [{
    Each device has a compute stream and a copy stream. A copy
    (`device.transfer`) runs on its destination's copy stream as soon as its
    source is ready; every other op with code runs on its device's compute
    stream, in program order. Every copy, and every compute result a copy
    reads (a view shares its source's event), gets an event recorded when
    it is done. Before an op runs, its stream waits for the events of the
    values it reads that another stream made, once per stream and event;
    the host's compute stream waits likewise before it copies the outputs
    (at the function's return). Cross-device dependencies use events,
    never a device-wide synchronisation. Plans on the host alone run
    straight-line code and get nothing.

    Writes `sched.stream` (`"compute"` or `"copy"`), `sched.record` (the
    event recorded after the op) and `sched.waits` (the events waited for
    before it) on the ops, and `sched.events` (how many) on the function;
    the dialect's verifier checks that each event is recorded once, and
    waited for only after an op earlier in the function recorded it.

    Before (target cpu+sim2):
    ```mlir
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4x4xf32>
    %m = graph.matmul %x0, %w {device = #device.dev<sim:0>} : ...
    %y = device.transfer %m from <sim:0> to <cpu> : tensor<4x4xf32>
    return %y : tensor<4x4xf32>
    ```
    After:
    ```mlir
    func.func @f(...) attributes {sched.events = 3 : i64} {
      %x0 = device.transfer %x from <cpu> to <sim:0> {sched.record = 0 : i64, sched.stream = "copy"} : ...
      %m = graph.matmul %x0, %w {device = #device.dev<sim:0>, sched.record = 1 : i64, sched.stream = "compute", sched.waits = array<i64: 0>} : ...
      %y = device.transfer %m from <sim:0> to <cpu> {sched.record = 2 : i64, sched.stream = "copy", sched.waits = array<i64: 1>} : ...
      return {sched.waits = array<i64: 2>} %y : tensor<4x4xf32>
    ```
  }];
  let dependentDialects = ["::modelc::sched::SchedDialect"];
}

#endif // MODELC_COMPILER_TRANSFORMS_PASSES_TD
