// RUN: modelc-opt %s --split-input-file --modelc-check-dynamic-dims --verify-diagnostics | FileCheck %s

// The dimension flows through per-sample ops to the outputs that carry it;
// an output computed without it gets no graph.dims.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<64x10xf32> {graph.dims = ["batch", ""]}, tensor<10xf32>)
graph.dim @batch 1 to 64 at 8
graph.weight @w : tensor<10x4xf32>
graph.weight @b : tensor<10xf32>
func.func @mlp(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> (tensor<64x10xf32>, tensor<10xf32>) {
  %w = graph.weight_ref @w : tensor<10x4xf32>
  %b = graph.weight_ref @b : tensor<10xf32>
  %h = graph.linear %x, %w, %b : tensor<64x4xf32>, tensor<10x4xf32>, tensor<10xf32>
  %r = graph.relu %h : tensor<64x10xf32>
  %s = graph.add %r, %b : tensor<64x10xf32>, tensor<10xf32>
  %y = graph.softmax %s {axis = 1} : tensor<64x10xf32>
  %c = graph.relu %b : tensor<10xf32>
  return %y, %c : tensor<64x10xf32>, tensor<10xf32>
}

// -----

// A static entry point is left alone.
// CHECK-LABEL: func.func @static
// CHECK-SAME: -> tensor<2x4xf32> {
func.func @static(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = graph.relu %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
func.func @sum(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> tensor<4xf32> {
  // expected-error @+1 {{dynamic dimension 'batch' (axis 0, up to 64) cannot flow through 'graph.reduce_sum': its result does not keep the batch as dimension 0; not supported yet}}
  %y = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<64x4xf32>
  return %y : tensor<4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
func.func @softmax_over_batch(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> tensor<64x4xf32> {
  // expected-error @+1 {{dynamic dimension 'batch' (axis 0, up to 64) cannot flow through 'graph.softmax'}}
  %y = graph.softmax %x {axis = 0} : tensor<64x4xf32>
  return %y : tensor<64x4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
func.func @full_size_operand(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}, %z: tensor<64x4xf32>) -> tensor<64x4xf32> {
  // expected-error @+1 {{cannot flow through 'graph.add': it combines the batch with a full-size operand that is not split; not supported yet}}
  %y = graph.add %x, %z : tensor<64x4xf32>, tensor<64x4xf32>
  return %y : tensor<64x4xf32>
}

// -----

// A right operand with batch dimensions of its own that is not split.
graph.dim @batch 1 to 4 at 4
func.func @paired(%x: tensor<4x2x3xf32> {graph.dims = ["batch", "", ""]}, %w: tensor<4x3x5xf32>) -> tensor<4x2x5xf32> {
  // expected-error @+1 {{cannot flow through 'graph.matmul': it pairs each sample with a matrix of a right operand that is not split; not supported yet}}
  %y = graph.matmul %x, %w : tensor<4x2x3xf32>, tensor<4x3x5xf32>
  return %y : tensor<4x2x5xf32>
}

// -----

graph.dim @seq 1 to 16 at 16
// expected-error @+1 {{argument #0 of 'f' has dynamic dimension 'seq' at axis 1; only the first axis may be dynamic yet}}
func.func @f(%x: tensor<2x16xf32> {graph.dims = ["", "seq"]}) -> tensor<2x16xf32> {
  return %x : tensor<2x16xf32>
}

// -----

graph.dim @batch 1 to 4 at 4
graph.dim @other 1 to 4 at 4
// expected-error @+1 {{argument #1 of 'f' has dynamic dimension 'other' and an earlier one 'batch'; one dynamic dimension per entry point is supported yet}}
func.func @f(%x: tensor<4x2xf32> {graph.dims = ["batch", ""]}, %y: tensor<4x2xf32> {graph.dims = ["other", ""]}) -> tensor<4x2xf32> {
  return %x : tensor<4x2xf32>
}
