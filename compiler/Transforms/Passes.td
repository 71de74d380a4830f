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

#endif // MODELC_COMPILER_TRANSFORMS_PASSES_TD
