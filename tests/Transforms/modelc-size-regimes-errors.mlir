// RUN: not modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 data-parallel=always" 2>&1 | FileCheck %s --check-prefix=SPLIT
// Always split (modelc --data-parallel): a model whose batch cannot be
// split says why, at its op.
// SPLIT: error: cannot split the batch: it normalizes over the batch
graph.dim @batch 1 to 64 at 64
func.func @forward(%x: tensor<64x16xf32> {graph.dims = ["batch", ""]}) -> tensor<64x16xf32> {
  %y = graph.softmax %x {axis = 0} : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}
