// RUN: not modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2" 2>&1 | FileCheck %s

// Size regimes of two dynamic dimensions at once are not supported yet.
// CHECK: error: size regimes of 2 dynamic dimensions are not supported yet (one plan covers their ranges: modelc --regimes=1)
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
