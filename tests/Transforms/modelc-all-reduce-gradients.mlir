// RUN: modelc-opt %s --split-input-file --verify-diagnostics --modelc-all-reduce-gradients | FileCheck %s
// RUN: modelc-opt %s --split-input-file --verify-diagnostics --modelc-all-reduce-gradients='bucket-mb=0.0001 first-bucket-mb=0.0001' | FileCheck %s --check-prefix=SMALL
// RUN: not modelc-opt %s --split-input-file --modelc-all-reduce-gradients='bucket-mb=0' 2>&1 | FileCheck %s --check-prefix=ZERO

// A loss that is each rank's share of the whole batch's (graph.loss_share,
// from modelc-attach-loss --distributed): the loss entry and gradients'
// loss are summed over the ranks; the gradients, in the order the backward
// computes them (%g2 first), flattened into one bucket, summed by one
// all-reduce right after the last of them, and split back.
// CHECK-LABEL: func.func @loss
// CHECK: %[[L:.*]] = graph.reduce_sum
// CHECK-NEXT: %[[S:.*]] = graph.all_reduce %[[L]] : tensor<f32>
// CHECK-NEXT: return %[[S]]
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: graph.gradient_buckets = 1 : i64
// CHECK: %[[L:.*]] = graph.reduce_sum
// CHECK-NEXT: %[[LS:.*]] = graph.all_reduce %[[L]] : tensor<f32>
// CHECK: %[[G2:.*]] = graph.mul
// CHECK-NEXT: %[[G1:.*]] = graph.exp
// CHECK-NEXT: %[[F1:.*]] = graph.reshape %[[G1]] to [32] : tensor<8x4xf32>
// CHECK-NEXT: %[[V:.*]] = graph.concat %[[G2]], %[[F1]] {axis = 0 : i64} : tensor<8xf32>, tensor<32xf32>
// CHECK-NEXT: %[[SUM:.*]] = graph.all_reduce %[[V]] : tensor<40xf32>
// CHECK-NEXT: %[[R2:.*]] = graph.slice %[[SUM]] {ends = array<i64: 8>, starts = array<i64: 0>}
// CHECK-NEXT: %[[P1:.*]] = graph.slice %[[SUM]] {ends = array<i64: 40>, starts = array<i64: 8>}
// CHECK-NEXT: %[[R1:.*]] = graph.reshape %[[P1]] to [8, 4]
// CHECK-NEXT: return %[[LS]], %[[R1]], %[[R2]]
// Buckets of 100 bytes: one per gradient (32 and 128 bytes), the one
// computed first summed first.
// SMALL-LABEL: func.func @gradients
// SMALL-SAME: graph.gradient_buckets = 2 : i64
// SMALL: %[[G2:.*]] = graph.mul
// SMALL-NEXT: graph.all_reduce %[[G2]] : tensor<8xf32>
// SMALL: %[[G1:.*]] = graph.exp
// SMALL-NEXT: %[[F1:.*]] = graph.reshape %[[G1]] to [32]
// SMALL-NEXT: graph.all_reduce %[[F1]] : tensor<32xf32>
// ZERO: error: modelc-all-reduce-gradients: bucket sizes must be positive
func.func @loss(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}) attributes {graph.loss_share} {
  %l = graph.reduce_sum %x : tensor<8x4xf32>
  return %l : tensor<f32>
}
func.func @gradients(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<8x4xf32> {graph.name = "w1"}, tensor<8xf32> {graph.name = "w2"}) attributes {graph.parameters = [@w1, @w2]} {
  %l = graph.reduce_sum %x : tensor<8x4xf32>
  %r = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<8x4xf32>
  %g2 = graph.mul %r, %r : tensor<8xf32>, tensor<8xf32>
  %g1 = graph.exp %x : tensor<8x4xf32>
  return %l, %g1, %g2 : tensor<f32>, tensor<8x4xf32>, tensor<8xf32>
}

// -----

// A loss of the model's own (no graph.loss_share) is each rank's mean:
// loss and gradients are scaled by 1 / ranks (the all-reduce of 1), as
// DistributedDataParallel averages.
// CHECK-LABEL: func.func @loss
// CHECK: %[[L:.*]] = graph.reduce_mean
// CHECK-NEXT: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[N:.*]] = graph.all_reduce %[[ONE]] : tensor<f32>
// CHECK: %[[INV:.*]] = graph.div %{{.*}}, %[[N]]
// CHECK-NEXT: %[[S:.*]] = graph.all_reduce %[[L]] : tensor<f32>
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[S]], %[[INV]]
// CHECK-NEXT: return %[[M]]
// In `gradients` one all-reduce of 1 scales the loss and every gradient.
// CHECK-LABEL: func.func @gradients
// CHECK: %[[N:.*]] = graph.all_reduce %{{.*}} : tensor<f32>
// CHECK: %[[INV:.*]] = graph.div %{{.*}}, %[[N]]
// CHECK: %[[G:.*]] = graph.exp
// CHECK-NEXT: %[[SG:.*]] = graph.mul %[[G]], %[[INV]]
// CHECK-NEXT: %[[F:.*]] = graph.reshape %[[SG]] to [32]
// CHECK-NEXT: graph.all_reduce %[[F]] : tensor<32xf32>
// CHECK-NEXT: graph.reshape
// CHECK-NEXT: return
func.func @loss(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}) {
  %l = graph.reduce_mean %x : tensor<8x4xf32>
  return %l : tensor<f32>
}
func.func @gradients(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<8x4xf32> {graph.name = "w"}) attributes {graph.parameters = [@w]} {
  %l = graph.reduce_mean %x : tensor<8x4xf32>
  %g = graph.exp %x : tensor<8x4xf32>
  return %l, %g : tensor<f32>, tensor<8x4xf32>
}

// -----

// Two buckets that end at one op (a gradient returned for two parameters):
// the second goes after the first (its scale by 1 / ranks included).
// SMALL-LABEL: {{.*}}graph.name = "b"}) attributes {graph.gradient_buckets = 2 : i64
// SMALL: %[[INV:.*]] = graph.div
// SMALL: %[[G:.*]] = graph.exp
// SMALL-NEXT: %[[A:.*]] = graph.mul %[[G]], %[[INV]]
// SMALL-NEXT: %[[FA:.*]] = graph.reshape %[[A]] to [32]
// SMALL-NEXT: %[[SA:.*]] = graph.all_reduce %[[FA]] : tensor<32xf32>
// SMALL-NEXT: %[[RA:.*]] = graph.reshape %[[SA]] to [8, 4]
// SMALL-NEXT: %[[B:.*]] = graph.mul %[[G]], %[[INV]]
// SMALL-NEXT: %[[FB:.*]] = graph.reshape %[[B]] to [32]
// SMALL-NEXT: %[[SB:.*]] = graph.all_reduce %[[FB]] : tensor<32xf32>
// SMALL-NEXT: %[[RB:.*]] = graph.reshape %[[SB]] to [8, 4]
// SMALL-NEXT: return %{{.*}}, %[[RA]], %[[RB]]
func.func @loss(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}) {
  %l = graph.reduce_mean %x : tensor<8x4xf32>
  return %l : tensor<f32>
}
func.func @gradients(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<8x4xf32> {graph.name = "a"}, tensor<8x4xf32> {graph.name = "b"}) attributes {graph.parameters = [@a, @b]} {
  %l = graph.reduce_mean %x : tensor<8x4xf32>
  %g = graph.exp %x : tensor<8x4xf32>
  return %l, %g, %g : tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// expected-error@below {{modelc-all-reduce-gradients: needs the loss entry point 'loss' and 'gradients' (run modelc-differentiate first)}}
module {
  func.func @loss(%x: tensor<8x4xf32>) -> tensor<f32> {
    %l = graph.reduce_sum %x : tensor<8x4xf32>
    return %l : tensor<f32>
  }
}

// -----

// Dropout in training mode: a dropout of the batch's rows draws the masks
// of their place in the whole batch (rank_stride: the 32 elements of one
// rank's rows; the run's rank times it is added to the element index);
// a dropout of a weight draws the same mask on every rank, as one process
// does.
// CHECK-LABEL: func.func @gradients
// CHECK: graph.dropout %{{.*}}, %{{.*}} {rank_stride = 32 : i64, ratio = 5.000000e-01 : f64} : tensor<8x4xf32>
// CHECK: graph.dropout %{{.*}}, %{{.*}} {ratio = 5.000000e-01 : f64, site = 1 : i64} : tensor<4xf32>
module {
  graph.weight @rng_step {frozen, writable, zeros} : tensor<i64>
  graph.weight @a {writable} : tensor<4xf32>
  func.func @loss(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}) {
    %l = graph.reduce_mean %x : tensor<8x4xf32>
    return %l : tensor<f32>
  }
  func.func @gradients(%x: tensor<8x4xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<4xf32> {graph.name = "a"}) attributes {graph.parameters = [@a]} {
    %s = graph.weight_ref @rng_step : tensor<i64>
    %a = graph.weight_ref @a : tensor<4xf32>
    %d = graph.dropout %x, %s {ratio = 0.5} : tensor<8x4xf32>, tensor<i64>
    %l = graph.reduce_mean %d : tensor<8x4xf32>
    %da = graph.dropout %a, %s {ratio = 0.5, site = 1} : tensor<4xf32>, tensor<i64>
    return %l, %da : tensor<f32>, tensor<4xf32>
  }
}
