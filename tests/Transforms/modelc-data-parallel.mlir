// RUN: modelc-opt %s --split-input-file --modelc-data-parallel=target=cpu+sim2 --verify-diagnostics | FileCheck %s

// The batch is sliced on the host, each half runs on its own accelerator
// with the same weight, and the halves are joined on the host.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[X0:.*]] = graph.slice %[[X]] {axes = array<i64: 0>, device = "cpu", ends = array<i64: 4>, starts = array<i64: 0>}
// CHECK: %[[W0:.*]] = graph.weight_ref @w {device = "sim:0"}
// CHECK: %[[L0:.*]] = graph.linear %[[X0]], %[[W0]] {device = "sim:0"} : tensor<4x16xf32>, tensor<32x16xf32>
// CHECK: %[[R0:.*]] = graph.reshape %[[L0]] to [4, 4, 8] {device = "sim:0"}
// CHECK: %[[X1:.*]] = graph.slice %[[X]] {axes = array<i64: 0>, device = "cpu", ends = array<i64: 8>, starts = array<i64: 4>}
// CHECK: %[[L1:.*]] = graph.linear %[[X1]], %{{.*}} {device = "sim:1"}
// CHECK: %[[R1:.*]] = graph.reshape %[[L1]] to [4, 4, 8] {device = "sim:1"}
// CHECK: %[[Y:.*]] = graph.concat %[[R0]], %[[R1]] {axis = 0 : i64, device = "cpu"}
// CHECK: return %[[Y]] : tensor<8x4x8xf32>
graph.weight @w : tensor<32x16xf32>
func.func @split(%x: tensor<8x16xf32>) -> tensor<8x4x8xf32> {
  %w = graph.weight_ref @w : tensor<32x16xf32>
  %y = graph.linear %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
  %r = graph.reshape %y to [8, 4, 8] : tensor<8x32xf32>
  return %r : tensor<8x4x8xf32>
}

// -----

func.func @reduces_batch(%x: tensor<8x16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{cannot split the batch: its result does not keep the batch as dimension 0}}
  %0 = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<8x16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @softmax_over_batch(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{cannot split the batch: it normalizes over the batch}}
  %0 = graph.softmax %x {axis = 0} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @moves_batch(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{cannot split the batch: it moves the batch dimension}}
  %0 = graph.transpose %x perm [1, 0] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @mean_loss(%x: tensor<8x10xf32>, %t: tensor<8xi64>) -> tensor<f32> {
  // expected-error @+1 {{cannot split the batch: its result does not keep the batch as dimension 0}}
  %0 = graph.cross_entropy %x, %t : tensor<8x10xf32>, tensor<8xi64>
  return %0 : tensor<f32>
}

// -----

graph.weight @full : tensor<8x8xf32>
func.func @mixes_with_full_size(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %w = graph.weight_ref @full : tensor<8x8xf32>
  // expected-error @+1 {{cannot split the batch: it combines the batch with a full-size operand that is not split}}
  %0 = graph.add %x, %w : tensor<8x8xf32>, tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// expected-error @+1 {{cannot split a batch of 3 over 2 accelerators evenly}}
func.func @odd_batch(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = graph.relu %x : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @different_batches(%x: tensor<4x4xf32>,
    // expected-error @+1 {{cannot split the batch: the inputs of 'different_batches' do not share a dimension 0 (the batch)}}
    %y: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = graph.relu %x : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

graph.weight @w : tensor<4xf32>
func.func @output_without_batch(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %w = graph.weight_ref @w : tensor<4xf32>
  // expected-error @+1 {{cannot split the batch: an output does not carry it}}
  return %w : tensor<4xf32>
}

// -----

// A transposed convolution works on each image alone (it declares
// BatchSplitOpInterface without conditions): each replica takes half.
// CHECK-LABEL: func.func @conv_transpose_split
// CHECK: graph.conv_transpose2d {{.*}} {device = "sim:0", strides = array<i64: 2, 2>} : tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>
// CHECK: graph.conv_transpose2d {{.*}} {device = "sim:1", strides = array<i64: 2, 2>} : tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>
// CHECK: graph.concat {{.*}} {axis = 0 : i64, device = "cpu"}
graph.weight @wt : tensor<4x3x3x3xf32>
func.func @conv_transpose_split(%x: tensor<4x4x5x5xf32>) -> tensor<4x3x11x11xf32> {
  %w = graph.weight_ref @wt : tensor<4x3x3x3xf32>
  %y = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : tensor<4x4x5x5xf32>, tensor<4x3x3x3xf32>
  return %y : tensor<4x3x11x11xf32>
}

// -----

func.func @cumsum_over_batch(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{cannot split the batch: it accumulates along the batch}}
  %0 = graph.cumsum %x {axis = 0} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A cumulative sum along another axis works on each sample alone.
// CHECK-LABEL: func.func @cumsum_split
// CHECK: graph.cumsum {{.*}} {axis = -1 : i64, device = "sim:0"} : tensor<4x16xf32>
// CHECK: graph.cumsum {{.*}} {axis = -1 : i64, device = "sim:1"} : tensor<4x16xf32>
// CHECK: graph.concat {{.*}} {axis = 0 : i64, device = "cpu"}
func.func @cumsum_split(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = graph.cumsum %x {axis = -1} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// An entry point without ops (it returns its input) has nothing to split and
// stays as it is, in a module where no graph op loaded the graph dialect.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %{{.*}} : tensor<4xf32>
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @nothing
// CHECK-NEXT: return
func.func @nothing() {
  return
}
