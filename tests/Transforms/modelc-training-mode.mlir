// RUN: modelc-opt %s --split-input-file --verify-diagnostics --modelc-training-mode | FileCheck %s
// RUN: modelc-opt %s --split-input-file --verify-diagnostics --modelc-training-mode='sync-batchnorm=true' | FileCheck %s --check-prefix=SYNC
// RUN: modelc-opt %s --split-input-file --verify-diagnostics --modelc-training-mode='dropout-seed=7' | FileCheck %s --check-prefix=SEED

// A BatchNorm exported in training mode (momentum set): in the loss entry,
// batch statistics (biased variance to normalise) and the running
// statistics updated with the unbiased variance (8 values per channel:
// 8/7), written back after; `forward` keeps the inference form.
graph.weight @s : tensor<3xf32>
graph.weight @b : tensor<3xf32>
graph.weight @m : tensor<3xf32>
graph.weight @v : tensor<3xf32>
func.func @forward(%x: tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32> {
  %s = graph.weight_ref @s : tensor<3xf32>
  %b = graph.weight_ref @b : tensor<3xf32>
  %m = graph.weight_ref @m : tensor<3xf32>
  %v = graph.weight_ref @v : tensor<3xf32>
  %y = graph.batch_norm %x, %s, %b, %m, %v {momentum = 0.1 : f32} : tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return %y : tensor<2x3x2x2xf32>
}
func.func @loss(%x: tensor<2x3x2x2xf32>) -> tensor<f32> {
  %s = graph.weight_ref @s : tensor<3xf32>
  %b = graph.weight_ref @b : tensor<3xf32>
  %m = graph.weight_ref @m : tensor<3xf32>
  %v = graph.weight_ref @v : tensor<3xf32>
  %y = graph.batch_norm %x, %s, %b, %m, %v {momentum = 0.1 : f32} : tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = graph.reduce_sum %y : tensor<2x3x2x2xf32>
  return %l : tensor<f32>
}
// SyncBatchNorm: sums and the count over the ranks (graph.all_reduce),
// the unbiased factor from the total count.
// SYNC-LABEL: func.func @loss
// SYNC: %[[N:.*]] = graph.all_reduce %{{.*}} : tensor<f32>
// SYNC: %[[S:.*]] = graph.reduce_sum %{{.*}} {axes = array<i64: 0, 2, 3>, keepdims = true}
// SYNC-NEXT: %[[SA:.*]] = graph.all_reduce %[[S]] : tensor<1x3x1x1xf32>
// SYNC-NEXT: %[[MU:.*]] = graph.div %[[SA]], %[[N]]
// SYNC: graph.reduce_sum %{{.*}} {axes = array<i64: 0, 2, 3>, keepdims = true}
// SYNC-NEXT: graph.all_reduce %{{.*}} : tensor<1x3x1x1xf32>
// SYNC: graph.sub %[[N]], %{{.*}}
// SYNC: graph.assign @m
// CHECK-DAG: graph.weight @m {frozen, writable} : tensor<3xf32>
// CHECK-DAG: graph.weight @v {frozen, writable} : tensor<3xf32>
// CHECK-LABEL: func.func @forward
// CHECK: graph.batch_norm {{.*}} {momentum = 1.000000e-01 : f32}
// CHECK-LABEL: func.func @loss
// CHECK-NOT: graph.batch_norm
// CHECK: %[[MU:.*]] = graph.reduce_mean %arg0 {axes = array<i64: 0, 2, 3>, keepdims = true}
// CHECK: %[[C:.*]] = graph.sub %arg0, %[[MU]]
// CHECK: %[[SQ:.*]] = graph.mul %[[C]], %[[C]]
// CHECK: %[[VAR:.*]] = graph.reduce_mean %[[SQ]] {axes = array<i64: 0, 2, 3>, keepdims = true}
// CHECK: graph.rsqrt
// CHECK: graph.reshape %{{.*}} to [1, 3, 1, 1] : tensor<3xf32>
// CHECK: %[[Y:.*]] = graph.add
// CHECK: graph.constant dense<0.899999976> : tensor<f32>
// CHECK: %[[NEWM:.*]] = graph.add
// CHECK: graph.constant dense<0.114285715> : tensor<f32>
// CHECK: %[[NEWV:.*]] = graph.add
// CHECK: %[[L:.*]] = graph.reduce_sum %[[Y]]
// CHECK: graph.assign @m, %[[NEWM]] : tensor<3xf32>
// CHECK: graph.assign @v, %[[NEWV]] : tensor<3xf32>
// CHECK: return %[[L]]

// -----

// Without a momentum (an eval export) nothing changes.
graph.weight @s : tensor<3xf32>
func.func @loss(%x: tensor<2x3xf32>) -> tensor<f32> {
  %s = graph.weight_ref @s : tensor<3xf32>
  %y = graph.batch_norm %x, %s, %s, %s, %s : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = graph.reduce_sum %y : tensor<2x3xf32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @loss
// CHECK: graph.batch_norm
// CHECK-NOT: graph.assign

// -----

// Running statistics that are not weights cannot be updated.
graph.weight @s : tensor<3xf32>
func.func @loss(%x: tensor<2x3xf32>, %m: tensor<3xf32>) -> tensor<f32> {
  %s = graph.weight_ref @s : tensor<3xf32>
  // expected-error @below {{a batch_norm in training mode needs its running mean and variance as weights}}
  %y = graph.batch_norm %x, %s, %s, %m, %m {momentum = 0.1 : f32} : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = graph.reduce_sum %y : tensor<2x3xf32>
  return %l : tensor<f32>
}

// -----

// One value per channel has no variance (PyTorch refuses it too).
graph.weight @s : tensor<3xf32>
graph.weight @m : tensor<3xf32>
func.func @loss(%x: tensor<1x3xf32>) -> tensor<f32> {
  %s = graph.weight_ref @s : tensor<3xf32>
  %m = graph.weight_ref @m : tensor<3xf32>
  // expected-error @below {{a batch_norm in training mode needs more than one value per channel}}
  %y = graph.batch_norm %x, %s, %s, %m, %m {momentum = 0.1 : f32} : tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = graph.reduce_sum %y : tensor<1x3xf32>
  return %l : tensor<f32>
}

// -----

// Dropout: in the loss entry each graph.dropout gets the step count (the
// weight rng_step, declared once: i64, zeros, writable, not trained) and a
// site of its own (the first, 0, is the default and not printed); `forward` keeps the eval form (no step: the identity).
// CHECK: graph.weight @rng_step {frozen, writable, zeros} : tensor<i64>
// CHECK-LABEL: func.func @forward
// CHECK: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64} : tensor<4x8xf32>
// CHECK-LABEL: func.func @loss
// CHECK: %[[STEP:.*]] = graph.weight_ref @rng_step : tensor<i64>
// CHECK: graph.dropout %{{.*}}, %[[STEP]] {ratio = 1.000000e-01 : f64} : tensor<4x8xf32>, tensor<i64>
// CHECK: graph.dropout %{{.*}}, %[[STEP]] {ratio = 5.000000e-01 : f64, seed = 4 : i64, site = 1 : i64} : tensor<4x8xf32>, tensor<i64>
// With dropout-seed (modelc --dropout-seed), every dropout of the loss
// entry draws with that seed, its own (ONNX's) replaced; `forward` keeps
// the eval form.
// SEED: graph.weight @rng_step
// SEED: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64} : tensor<4x8xf32>
// SEED: graph.dropout %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4x8xf32>, tensor<i64>
// SEED: graph.dropout %{{.*}}, %{{.*}} {ratio = 5.000000e-01 : f64, seed = 7 : i64, site = 1 : i64} : tensor<4x8xf32>, tensor<i64>
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.dropout %x {ratio = 0.1} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
  %y = graph.dropout %x {ratio = 0.1} : tensor<4x8xf32>
  %z = graph.dropout %y {ratio = 0.5, seed = 4} : tensor<4x8xf32>
  %l = graph.reduce_sum %z : tensor<4x8xf32>
  return %l : tensor<f32>
}

// -----

// A symbol named rng_step that is not the step count is an error.
// expected-error @+1 {{'@rng_step' is the name of the step count modelc declares for dropout in training ('tensor<i64>')}}
graph.weight @rng_step : tensor<f32>
func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
  %y = graph.dropout %x {ratio = 0.1} : tensor<4x8xf32>
  %l = graph.reduce_sum %y : tensor<4x8xf32>
  return %l : tensor<f32>
}
