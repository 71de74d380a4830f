// RUN: modelc-opt %s --split-input-file --modelc-replicate='target=cpu+sim2 replicas=2' --verify-diagnostics | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-replicate='target=cpu replicas=2' --verify-diagnostics | FileCheck %s --check-prefix=CPU
// RUN: modelc-opt %s --split-input-file --modelc-replicate='target=cpu+sim2 replicas=4' --verify-diagnostics | FileCheck %s --check-prefix=SHARE
// RUN: modelc-opt %s --split-input-file --modelc-replicate='target=cpu+sim2 replicas=2 distributed=true' --verify-diagnostics | FileCheck %s --check-prefix=DIST
// RUN: modelc-opt %s --split-input-file --modelc-replicate='target=cpu+sim2 replicas=2 shard-optimizer-state=true' --verify-diagnostics | FileCheck %s --check-prefix=SHARD

// One replica's training step (the distributed form modelc-split-batch and
// the training passes build): the gradient is all-reduced, the parameter
// and its momentum are written after the step.
// Replicated over sim:0 and sim:1: the batch input is sliced on the host,
// the scalar `lr` goes to both whole; each replica reads and writes its
// device's own copy of the parameter (graph.replica_copy); the all-reduce
// is a group of graph.replica_all_reduce, one member per replica on its
// device, in member order; both devices write the update computed from
// their member's sum, after their own reads. The loss (the same on every
// replica: it is all-reduced) is replica 0's.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>, %[[LR:.*]]: tensor<f32> {graph.name = "lr"}) -> tensor<f32>
// CHECK: %[[X0:.*]] = graph.slice %[[X]] {axes = array<i64: 0>, device = "cpu", ends = array<i64: 4>, starts = array<i64: 0>}
// CHECK: %[[X1:.*]] = graph.slice %[[X]] {axes = array<i64: 0>, device = "cpu", ends = array<i64: 8>, starts = array<i64: 4>}
// CHECK: %[[W0:.*]] = graph.weight_ref @w {device = "sim:0", graph.replica_copy}
// CHECK: %[[W1:.*]] = graph.weight_ref @w {device = "sim:1", graph.replica_copy}
// CHECK: %[[Y0:.*]] = graph.mul %[[X0]], %[[W0]] {device = "sim:0"}
// CHECK: %[[Y1:.*]] = graph.mul %[[X1]], %[[W1]] {device = "sim:1"}
// CHECK: %[[G0:.*]] = graph.reduce_sum %[[Y0]] {axes = array<i64: 0>, device = "sim:0"}
// CHECK: %[[G1:.*]] = graph.reduce_sum %[[Y1]] {axes = array<i64: 0>, device = "sim:1"}
// CHECK: %[[S0:.*]] = graph.replica_all_reduce %[[G0]] {device = "sim:0", group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
// CHECK-NEXT: %[[S1:.*]] = graph.replica_all_reduce %[[G1]] {device = "sim:1", group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
// CHECK-NOT: graph.all_reduce
// CHECK: %[[U0:.*]] = graph.mul %[[S0]], %[[LR]] {device = "sim:0"}
// CHECK: %[[U1:.*]] = graph.mul %[[S1]], %[[LR]] {device = "sim:1"}
// CHECK: %[[N0:.*]] = graph.sub %[[W0]], %[[U0]] {device = "sim:0"}
// CHECK: %[[N1:.*]] = graph.sub %[[W1]], %[[U1]] {device = "sim:1"}
// CHECK: graph.assign @w, %[[N0]] after(%[[Y0]]) {device = "sim:0", graph.replica_copy}
// CHECK: graph.assign @w, %[[N1]] after(%[[Y1]]) {device = "sim:1", graph.replica_copy}
// CHECK: %[[L0:.*]] = graph.reduce_sum %[[S0]] {device = "sim:0"}
// CHECK: return %[[L0]] : tensor<f32>
// Four replicas on two devices share them: the host sums, in replica
// order.
// SHARE-LABEL: func.func @train_step
// SHARE: %[[A:.*]] = graph.add %{{.*}}, %{{.*}} {device = "cpu"} : tensor<4xf32>, tensor<4xf32>
// SHARE-NEXT: %[[B:.*]] = graph.add %[[A]], %{{.*}} {device = "cpu"}
// SHARE-NEXT: %[[C:.*]] = graph.add %[[B]], %{{.*}} {device = "cpu"}
// SHARE-NOT: graph.replica_all_reduce
// SHARE: graph.mul %[[C]], %{{.*}} {device = "sim:0"}
// SHARE: return
// On a target without accelerators both replicas run on the CPU, one
// after the other: one copy of the parameter, written once, after the
// reads of both replicas.
// CPU-LABEL: func.func @train_step
// CPU: %[[Y0:.*]] = graph.mul %{{.*}} {device = "cpu"}
// CPU: %[[Y1:.*]] = graph.mul %{{.*}} {device = "cpu"}
// CPU: graph.assign @w, %{{.*}} after(%[[Y0]], %[[Y1]]) {device = "cpu", graph.replica_copy}
// CPU-NOT: graph.assign
// CPU: return
// Distributed too: the replicas' sum is then summed over the ranks.
// DIST-LABEL: func.func @train_step
// DIST: %[[S:.*]] = graph.add %{{.*}}, %{{.*}} {device = "cpu"}
// DIST-NEXT: %{{.*}} = graph.all_reduce %[[S]] {device = "cpu"} : tensor<4xf32>
graph.weight @w {writable} : tensor<4xf32>
func.func @train_step(%x: tensor<4x4xf32>, %lr: tensor<f32> {graph.name = "lr"}) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<4xf32>
  %y = graph.mul %x, %w : tensor<4x4xf32>, tensor<4xf32>
  %g = graph.reduce_sum %y {axes = array<i64: 0>} : tensor<4x4xf32>
  %s = graph.all_reduce %g : tensor<4xf32>
  %u = graph.mul %s, %lr : tensor<4xf32>, tensor<f32>
  %n = graph.sub %w, %u : tensor<4xf32>, tensor<4xf32>
  graph.assign @w, %n after(%y) : tensor<4xf32>, tensor<4x4xf32>
  %l = graph.reduce_sum %s : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// A value computed from the batch but not all-reduced (BatchNorm's running
// statistics without SyncBatchNorm) differs between replicas: every device
// writes replica 0's, as DDP broadcasts rank 0's buffers. An output that
// carries the batch is concatenated on the host.
// CHECK-LABEL: func.func @running
// CHECK: %[[M0:.*]] = graph.reduce_mean %{{.*}} {axes = array<i64: 0>, device = "sim:0"}
// CHECK: %[[M1:.*]] = graph.reduce_mean %{{.*}} {axes = array<i64: 0>, device = "sim:1"}
// CHECK: graph.assign @stat, %[[M0]] {device = "sim:0", graph.replica_copy}
// CHECK: graph.assign @stat, %[[M0]] {device = "sim:1", graph.replica_copy}
// CHECK: %[[C:.*]] = graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64, device = "cpu"} : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK: return %[[C]] : tensor<8x4xf32>
graph.weight @stat {writable} : tensor<4xf32>
func.func @running(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = graph.reduce_mean %x {axes = array<i64: 0>} : tensor<4x4xf32>
  graph.assign @stat, %m : tensor<4xf32>
  %y = graph.relu %x : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A scalar that differs between replicas cannot be returned: there is no
// batch dimension to join the replicas' values on.
func.func @own_mean(%x: tensor<4x4xf32>) -> tensor<f32> {
  %m = graph.reduce_mean %x : tensor<4x4xf32>
  // expected-error @+1 {{data-parallel training: output #0 of 'own_mean' differs between replicas and has no batch dimension to concatenate}}
  return %m : tensor<f32>
}

// -----

// A training-mode dropout of the batch: replica 1 draws the masks of its
// rows in the whole batch (offset: its 16 elements after replica 0's); a
// dropout of a weight (the same on every replica) keeps the whole
// tensor's mask on both.
// CHECK-LABEL: func.func @drop
// CHECK: graph.dropout %{{.*}}, %{{.*}} {device = "sim:0", ratio = 3.000000e-01 : f64} : tensor<4x4xf32>
// CHECK: graph.dropout %{{.*}}, %{{.*}} {device = "sim:1", offset = 16 : i64, ratio = 3.000000e-01 : f64} : tensor<4x4xf32>
// CHECK: graph.dropout %{{.*}}, %{{.*}} {device = "sim:0", ratio = 5.000000e-01 : f64, site = 1 : i64} : tensor<4xf32>
// CHECK: graph.dropout %{{.*}}, %{{.*}} {device = "sim:1", ratio = 5.000000e-01 : f64, site = 1 : i64} : tensor<4xf32>
graph.weight @v : tensor<4xf32>
func.func @drop(%x: tensor<4x4xf32>, %s: tensor<i64>) -> tensor<4x4xf32> {
  %d = graph.dropout %x, %s {ratio = 0.3 : f64} : tensor<4x4xf32>, tensor<i64>
  %v = graph.weight_ref @v : tensor<4xf32>
  %e = graph.dropout %v, %s {ratio = 0.5 : f64, site = 1} : tensor<4xf32>, tensor<i64>
  %y = graph.mul %d, %e : tensor<4x4xf32>, tensor<4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Optimizer state. Without sharding each device holds the momentum of
// every parameter and updates its own copies. With shard-optimizer-state
// (ZeRO stage 1) @a (the larger) is updated on sim:0 and @b on sim:1: only
// the owner holds the parameter's momentum and computes its update, and
// the other device writes the owner's new value into its copy.
// CHECK-LABEL: func.func @step_sharded
// CHECK: graph.weight_ref @a.momentum_buffer {device = "sim:0", graph.replica_copy}
// CHECK: graph.weight_ref @a.momentum_buffer {device = "sim:1", graph.replica_copy}
// SHARD-LABEL: func.func @step_sharded
// SHARD: graph.weight_ref @a {device = "sim:0", graph.replica_copy}
// SHARD: graph.weight_ref @a {device = "sim:1", graph.replica_copy}
// SHARD-NOT: graph.weight_ref @a.momentum_buffer {device = "sim:1"
// SHARD: %[[MA:.*]] = graph.weight_ref @a.momentum_buffer {device = "sim:0", graph.replica_copy}
// SHARD-NEXT: %[[NA:.*]] = graph.add %[[MA]], %{{.*}} {device = "sim:0"}
// SHARD-NEXT: graph.assign @a.momentum_buffer, %[[NA]] {device = "sim:0", graph.replica_copy}
// SHARD-NEXT: %[[PA:.*]] = graph.sub %{{.*}}, %[[NA]] {device = "sim:0"}
// SHARD-NEXT: graph.assign @a, %[[PA]] after(%{{.*}}) {device = "sim:0", graph.replica_copy}
// SHARD-NEXT: graph.assign @a, %[[PA]] after(%{{.*}}) {device = "sim:1", graph.replica_copy}
// SHARD-NEXT: %[[MB:.*]] = graph.weight_ref @b.momentum_buffer {device = "sim:1", graph.replica_copy}
// SHARD-NEXT: %[[NB:.*]] = graph.add %[[MB]], %{{.*}} {device = "sim:1"}
// SHARD-NEXT: graph.assign @b.momentum_buffer, %[[NB]] {device = "sim:1", graph.replica_copy}
// SHARD-NEXT: %[[PB:.*]] = graph.sub %{{.*}}, %[[NB]] {device = "sim:1"}
// SHARD-NEXT: graph.assign @b, %[[PB]] {device = "sim:0", graph.replica_copy}
// SHARD-NEXT: graph.assign @b, %[[PB]] {device = "sim:1", graph.replica_copy}
graph.weight @a {writable} : tensor<16xf32>
graph.weight @b {writable} : tensor<4xf32>
graph.weight @a.momentum_buffer {writable, zeros} : tensor<16xf32>
graph.weight @b.momentum_buffer {writable, zeros} : tensor<4xf32>
func.func @gradients(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {graph.parameters = [@a, @b]} {
  %y = graph.relu %x : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
func.func @step_sharded(%x: tensor<4x4xf32>) -> tensor<f32> {
  %a = graph.weight_ref @a : tensor<16xf32>
  %b = graph.weight_ref @b : tensor<4xf32>
  %r = graph.reshape %x to [16] : tensor<4x4xf32>
  %ga = graph.mul %r, %a : tensor<16xf32>, tensor<16xf32>
  %sa = graph.all_reduce %ga : tensor<16xf32>
  %gb = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<4x4xf32>
  %sb = graph.all_reduce %gb : tensor<4xf32>
  %ma = graph.weight_ref @a.momentum_buffer : tensor<16xf32>
  %na = graph.add %ma, %sa : tensor<16xf32>, tensor<16xf32>
  graph.assign @a.momentum_buffer, %na : tensor<16xf32>
  %pa = graph.sub %a, %na : tensor<16xf32>, tensor<16xf32>
  graph.assign @a, %pa after(%ga) : tensor<16xf32>, tensor<16xf32>
  %mb = graph.weight_ref @b.momentum_buffer : tensor<4xf32>
  %nb = graph.add %mb, %sb : tensor<4xf32>, tensor<4xf32>
  graph.assign @b.momentum_buffer, %nb : tensor<4xf32>
  %pb = graph.sub %b, %nb : tensor<4xf32>, tensor<4xf32>
  graph.assign @b, %pb : tensor<4xf32>
  %l = graph.reduce_sum %sa : tensor<16xf32>
  return %l : tensor<f32>
}
