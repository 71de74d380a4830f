// RUN: not modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2" 2>&1 | FileCheck %s

// Several dynamic dimensions: the regimes cut the batch, the dimension at
// axis 0 of every entry point's first input; here there is none in common.
// CHECK: error: size regimes of 2 dynamic dimensions cut the one at axis 0 of every entry point's first input (the batch), and these have none in common (one plan covers their ranges: modelc --regimes=1)
graph.dim @batch 1 to 8 at 8
graph.dim @rows 1 to 4 at 4
func.func @a(%x: tensor<8x4xf32> {graph.dims = ["batch", ""]}) -> tensor<8x4xf32> {
  %y = graph.relu %x : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
func.func @b(%x: tensor<4x4xf32> {graph.dims = ["rows", ""]}) -> tensor<4x4xf32> {
  %y = graph.relu %x : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// RUN: not modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 data-parallel=always" 2>&1 | FileCheck %s --check-prefix=SPLIT
// Always split (modelc --data-parallel): a model whose batch cannot be
// split says why, at its op.
// SPLIT: error: cannot split the batch: it normalizes over the batch
graph.dim @batch 1 to 64 at 64
func.func @forward(%x: tensor<64x16xf32> {graph.dims = ["batch", ""]}) -> tensor<64x16xf32> {
  %y = graph.softmax %x {axis = 0} : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}
