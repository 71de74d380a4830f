// RUN: modelc-opt %s --split-input-file --modelc-data-parallel=target=cpu+sim2 --verify-diagnostics | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-data-parallel=target=h200x2 --verify-diagnostics | FileCheck %s --check-prefix=H200

// A dynamic batch (docs/dynamic.md) splits at run time: replica r takes
// graph.batch_part r of each input (balanced: 7 rows are 4 and 3), whose
// dimension 0 is the dimension batch[r/2]; the types hold each part at the
// input's max (63 rows: 32 and 31); a reshape's grouping names the part;
// the outputs' parts join back into the batch.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[X:.*]]: tensor<63x16xf32> {graph.dims = ["batch", ""]})
// CHECK: %[[X0:.*]] = graph.batch_part %[[X]] {device = "cpu", part = 0 : i64, parts = 2 : i64} : tensor<63x16xf32>
// CHECK: %[[L0:.*]] = graph.linear %[[X0]], %{{.*}} {device = "sim:0"} : tensor<32x16xf32>, tensor<32x16xf32>
// CHECK: %[[R0:.*]] = graph.reshape %[[L0]] to [32, 4, 8] {device = "sim:0", graph.dims = ["batch[0/2]", "", ""]}
// CHECK: %[[X1:.*]] = graph.batch_part %[[X]] {device = "cpu", part = 1 : i64, parts = 2 : i64} : tensor<63x16xf32>
// CHECK: %[[L1:.*]] = graph.linear %[[X1]], %{{.*}} {device = "sim:1"} : tensor<31x16xf32>, tensor<32x16xf32>
// CHECK: %[[R1:.*]] = graph.reshape %[[L1]] to [31, 4, 8] {device = "sim:1", graph.dims = ["batch[1/2]", "", ""]}
// CHECK: %[[Y:.*]] = graph.concat %[[R0]], %[[R1]] {axis = 0 : i64, device = "cpu"} : tensor<32x4x8xf32>, tensor<31x4x8xf32>
// CHECK: return %[[Y]] : tensor<63x4x8xf32>
// H200-LABEL: func.func @split
// H200: graph.linear {{.*}} {device = "cuda:0"} : tensor<32x16xf32>
// H200: graph.linear {{.*}} {device = "cuda:1"} : tensor<31x16xf32>
graph.dim @batch 2 to 63 at 16
graph.weight @w : tensor<32x16xf32>
func.func @split(%x: tensor<63x16xf32> {graph.dims = ["batch", ""]}) -> tensor<63x4x8xf32> {
  %w = graph.weight_ref @w : tensor<32x16xf32>
  %y = graph.linear %x, %w : tensor<63x16xf32>, tensor<32x16xf32>
  %r = graph.reshape %y to [63, 4, 8] {graph.dims = ["batch", "", ""]} : tensor<63x32xf32>
  return %r : tensor<63x4x8xf32>
}

// -----

// A run may give fewer samples than there are accelerators: not split
// (size regimes place such sizes unsplit; modelc --regimes).
graph.dim @batch 1 to 64 at 64
// expected-error @+1 {{cannot split the dynamic batch 'batch' over 2 accelerators: a batch of 1 (the smallest it takes) leaves an accelerator without a sample (size regimes run the small sizes unsplit: modelc --regimes=2 or more; or a range that starts at 2 or more)}}
func.func @too_small(%x: tensor<64x16xf32> {graph.dims = ["batch", ""]}) -> tensor<64x16xf32> {
  %y = graph.relu %x : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// A size regime's smallest size counts (the driver writes
// device.regime_min on each regime's module).
// CHECK-LABEL: func.func @regime
// CHECK: graph.batch_part
module attributes {device.regime_min = {batch = 2 : i64}} {
  graph.dim @batch 1 to 64 at 64
  func.func @regime(%x: tensor<64x16xf32> {graph.dims = ["batch", ""]}) -> tensor<64x16xf32> {
    %y = graph.relu %x : tensor<64x16xf32>
    return %y : tensor<64x16xf32>
  }
}

// -----

// Inputs that do not share the dynamic batch.
graph.dim @batch 2 to 64 at 64
func.func @mixed(%x: tensor<64x16xf32> {graph.dims = ["batch", ""]},
                 // expected-error @+1 {{cannot split the batch: the inputs of 'mixed' do not share a dynamic dimension 0 ('batch' and '')}}
                 %y: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %z = graph.add %x, %y : tensor<64x16xf32>, tensor<64x16xf32>
  return %z : tensor<64x16xf32>
}

// -----

// Each replica must hold its part as dimension 0: an op that moves the
// batch elsewhere is not split.
graph.dim @batch 2 to 8 at 8
graph.dim @seq 1 to 4 at 4
func.func @moved(%x: tensor<8x4x16xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<8x4x16xf32> {
  // expected-error @+1 {{cannot split the batch: its result does not keep the batch as dimension 0}}
  %t = graph.transpose %x perm [1, 0, 2] : tensor<8x4x16xf32>
  %u = graph.transpose %t perm [1, 0, 2] : tensor<4x8x16xf32>
  return %u : tensor<8x4x16xf32>
}

// -----

// Samples mixed by an op: the same check as for a static batch.
graph.dim @batch 2 to 8 at 8
func.func @reduces(%x: tensor<8x16xf32> {graph.dims = ["batch", ""]}) -> tensor<8x16xf32> {
  // expected-error @+1 {{cannot split the batch: it normalizes over the batch}}
  %0 = graph.softmax %x {axis = 0} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Positions over the batch (a constant cut to its size) would restart at
// 0 in every replica.
graph.dim @batch 2 to 8 at 8
func.func @positions(%x: tensor<8x16xf32> {graph.dims = ["batch", ""]}) -> tensor<8x16xf32> {
  %iota = graph.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  // expected-error @+1 {{cannot split the dynamic batch 'batch': this op cuts a value without it to its size (positions over the batch would restart in every replica); not supported yet}}
  %p = graph.slice %iota {starts = array<i64: 0>, ends = array<i64: 8>, graph.dims = ["batch"]} : tensor<8xf32>
  %r = graph.reshape %p to [8, 1] : tensor<8xf32>
  %y = graph.add %x, %r : tensor<8x16xf32>, tensor<8x1xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A reshape that moves the batch off dimension 0 where the max's sizes
// hide it (4 rows of 4): the symbolic shapes see it.
graph.dim @batch 2 to 4 at 4
func.func @moved_by_reshape(%x: tensor<4x4xf32> {graph.dims = ["batch", ""]}) -> tensor<4x4xf32> {
  // expected-error @+1 {{cannot split the dynamic batch 'batch': this op's result is [4, batch], the batch other than as dimension 0 (not supported yet)}}
  %r = graph.reshape %x to [4, 4] {graph.dims = ["", "batch"]} : tensor<4x4xf32>
  %y = graph.relu %r : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
