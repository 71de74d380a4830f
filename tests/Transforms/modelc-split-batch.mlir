// RUN: modelc-opt %s --split-input-file --modelc-split-batch=parts=2 --verify-diagnostics | FileCheck %s

// Each entry point takes one replica's part of the batch: the inputs, every
// value that carries the batch and a reshape's target shape have dimension
// 0 halved; weights and what does not carry the batch keep their shapes.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>) -> tensor<4x4x8xf32>
// CHECK: %[[W:.*]] = graph.weight_ref @w : tensor<32x16xf32>
// CHECK: %[[L:.*]] = graph.linear %[[X]], %[[W]] : tensor<4x16xf32>, tensor<32x16xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[L]] to [4, 4, 8] : tensor<4x32xf32>
// CHECK: return %[[R]] : tensor<4x4x8xf32>
graph.weight @w : tensor<32x16xf32>
func.func @forward(%x: tensor<8x16xf32>) -> tensor<8x4x8xf32> {
  %w = graph.weight_ref @w : tensor<32x16xf32>
  %y = graph.linear %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
  %r = graph.reshape %y to [8, 4, 8] : tensor<8x32xf32>
  return %r : tensor<8x4x8xf32>
}

// -----

// A batch that does not split evenly.
// expected-error @+1 {{cannot split a batch of 7 over 2 accelerators evenly}}
func.func @odd(%x: tensor<7x4xf32>) -> tensor<7x4xf32> {
  %y = graph.relu %x : tensor<7x4xf32>
  return %y : tensor<7x4xf32>
}

// -----

// An op that mixes the samples of the batch (here a mean over it) would
// make each replica's result differ from the whole batch's.
func.func @mixes(%x: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{cannot split the batch: its result does not keep the batch as dimension 0}}
  %m = graph.reduce_mean %x {axes = array<i64: 0>} : tensor<8x4xf32>
  return %m : tensor<4xf32>
}
