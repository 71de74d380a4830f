// RUN: modelc-opt %s --split-input-file --modelc-insert-transfers --verify-diagnostics | FileCheck %s

// One transfer per (value, destination), right after the producer so the
// copy overlaps later compute; none between
// ops on the same device; inputs arrive from the host, outputs go back.
// CHECK-LABEL: func.func @cut_edges
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[X0:.*]] = device.transfer %[[X]] from <cpu> to <cuda:0>
// CHECK-NEXT: %[[W:.*]] = graph.weight_ref @w {device = #device.dev<cuda:0>}
// CHECK-NEXT: %[[A:.*]] = graph.matmul %[[X0]], %[[W]] {device = #device.dev<cuda:0>}
// CHECK-NEXT: %[[A1:.*]] = device.transfer %[[A]] from <cuda:0> to <cuda:1>
// CHECK-NEXT: %[[B:.*]] = graph.relu %[[A1]] {device = #device.dev<cuda:1>}
// CHECK-NEXT: %[[B0:.*]] = device.transfer %[[B]] from <cuda:1> to <cpu>
// CHECK-NEXT: %[[C:.*]] = graph.exp %[[A1]] {device = #device.dev<cuda:1>}
// CHECK-NEXT: %[[C0:.*]] = device.transfer %[[C]] from <cuda:1> to <cpu>
// CHECK-NEXT: %[[D:.*]] = graph.neg %[[A]] {device = #device.dev<cuda:0>}
// CHECK-NEXT: %[[D0:.*]] = device.transfer %[[D]] from <cuda:0> to <cpu>
// CHECK-NEXT: return %[[B0]], %[[C0]], %[[D0]]
// CHECK-NOT: device.transfer
graph.weight @w : tensor<4x4xf32>
func.func @cut_edges(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = graph.weight_ref @w {device = #device.dev<cuda:0>} : tensor<4x4xf32>
  %a = graph.matmul %x, %w {device = #device.dev<cuda:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  %b = graph.relu %a {device = #device.dev<cuda:1>} : tensor<4x4xf32>
  %c = graph.exp %a {device = #device.dev<cuda:1>} : tensor<4x4xf32>
  %d = graph.neg %a {device = #device.dev<cuda:0>} : tensor<4x4xf32>
  return %b, %c, %d : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A weight read on two devices is resident on both: a second weight_ref,
// no transfer. Host ops on host values need nothing.
// CHECK-LABEL: func.func @replicated_weight
// CHECK: %[[W0:.*]] = graph.weight_ref @w {device = #device.dev<sim:0>}
// CHECK-NEXT: %[[W1:.*]] = graph.weight_ref @w {device = #device.dev<sim:1>}
// CHECK: graph.add %{{.*}}, %[[W0]] {device = #device.dev<sim:0>}
// CHECK: graph.add %{{.*}}, %[[W1]] {device = #device.dev<sim:1>}
// CHECK: graph.mul %{{.*}}, %{{.*}} {device = #device.dev<cpu>}
// CHECK-NOT: device.transfer %[[W0]]
graph.weight @w : tensor<4xf32>
func.func @replicated_weight(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %w = graph.weight_ref @w {device = #device.dev<sim:0>} : tensor<4xf32>
  %a = graph.add %x, %w {device = #device.dev<sim:0>} : tensor<4xf32>, tensor<4xf32>
  %b = graph.add %x, %w {device = #device.dev<sim:1>} : tensor<4xf32>, tensor<4xf32>
  %c = graph.mul %x, %x {device = #device.dev<cpu>} : tensor<4xf32>, tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @unplaced(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no device: run modelc-place first}}
  %0 = graph.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A writable weight (a parameter a training step writes) is never copied
// as a resident clone: the new value computed elsewhere is transferred to
// the weight's device for the write, while `after` (ordering only) is
// left alone.
// CHECK-LABEL: func.func @writable_weight
// CHECK: %[[W:.*]] = graph.weight_ref @p {device = #device.dev<sim:0>}
// CHECK: %[[Y:.*]] = graph.matmul %{{.*}}, %[[W]] {device = #device.dev<sim:0>}
// CHECK: %[[N:.*]] = graph.neg %{{.*}} {device = #device.dev<sim:1>}
// CHECK: %[[N0:.*]] = device.transfer %[[N]] from <sim:1> to <sim:0>
// CHECK: graph.assign @p, %[[N0]] after(%[[Y]]) {device = #device.dev<sim:0>}
graph.weight @p {writable} : tensor<4x4xf32>
func.func @writable_weight(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @p {device = #device.dev<sim:0>} : tensor<4x4xf32>
  %y = graph.matmul %x, %w {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  %n = graph.neg %x {device = #device.dev<sim:1>} : tensor<4x4xf32>
  graph.assign @p, %n after(%y) {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A parameter read on another device than the one it is written on would
// need a cross-device wait before the write: refused for now.
graph.weight @p {writable} : tensor<4x4xf32>
func.func @writable_weight_read_elsewhere(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @p {device = #device.dev<sim:0>} : tensor<4x4xf32>
  %y = graph.matmul %x, %w {device = #device.dev<sim:1>} : tensor<4x4xf32>, tensor<4x4xf32>
  %n = graph.neg %x {device = #device.dev<sim:0>} : tensor<4x4xf32>
  // expected-error @+1 {{training: weight 'p' is written on sim:0 but read on sim:1; a parameter read on several devices of a plan is not supported yet}}
  graph.assign @p, %n after(%y) {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A sum over the ranks on a GPU reads its input by pointer from the GPU's
// memory: a constant (host memory, of which kernels keep their own copies)
// is transferred there from a host copy of it; the kernel that reads the
// constant on the GPU keeps its own.
// CHECK-LABEL: func.func @rank_sum_of_constant
// CHECK: %[[C:.*]] = graph.constant dense<8.000000e+00> : tensor<f32> {device = #device.dev<cuda:0>}
// CHECK: %[[H:.*]] = graph.constant dense<8.000000e+00> : tensor<f32> {device = #device.dev<cpu>}
// CHECK: %[[T:.*]] = device.transfer %[[H]] from <cpu> to <cuda:0>
// CHECK: graph.all_reduce %[[T]] {device = #device.dev<cuda:0>}
// CHECK: graph.neg %[[C]] {device = #device.dev<cuda:0>}
func.func @rank_sum_of_constant() -> (tensor<f32>, tensor<f32>) {
  %c = graph.constant dense<8.0> : tensor<f32> {device = #device.dev<cuda:0>}
  %s = graph.all_reduce %c {device = #device.dev<cuda:0>} : tensor<f32>
  %n = graph.neg %c {device = #device.dev<cuda:0>} : tensor<f32>
  return %s, %n : tensor<f32>, tensor<f32>
}
