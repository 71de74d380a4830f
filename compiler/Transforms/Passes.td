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
  }];
  let dependentDialects = ["::modelc::device::DeviceDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Preset name or JSON file of the target">,
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

#endif // MODELC_COMPILER_TRANSFORMS_PASSES_TD
