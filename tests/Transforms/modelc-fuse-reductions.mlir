// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise=fuse-reductions=false | FileCheck %s --check-prefix=OFF

// BatchNorm's variance: the centred value has two readers and stays a loop
// of its own; its square is read by the mean alone and is computed inside
// the mean's loop (never written to memory).
// CHECK-LABEL: func.func @variance
// CHECK: %[[C:.*]] = sched.fused(%{{.*}}, %{{.*}}) {device = #device.dev<cpu>}
// CHECK: graph.sub
// CHECK: %[[V:.*]] = sched.fused_reduce(%[[C]]) {device = #device.dev<cpu>} : (tensor<8x4x6x6xf32>) -> tensor<1x4x1x1xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8x4x6x6xf32>):
// CHECK-NEXT: %[[S:.*]] = graph.mul %[[A]], %[[A]]
// CHECK-NEXT: %[[R:.*]] = graph.reduce_mean %[[S]] {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<8x4x6x6xf32>
// CHECK-NEXT: sched.yield %[[R]] : tensor<1x4x1x1xf32>
// CHECK: return %[[C]], %[[V]]
// OFF-LABEL: func.func @variance
// OFF-NOT: sched.fused_reduce
// OFF: graph.reduce_mean %{{.*}} {axes = array<i64: 0, 2, 3>, device = #device.dev<cpu>, keepdims = true}
func.func @variance(%x: tensor<8x4x6x6xf32>, %mu: tensor<1x4x1x1xf32>) -> (tensor<8x4x6x6xf32>, tensor<1x4x1x1xf32>) {
  %c = graph.sub %x, %mu {device = #device.dev<cpu>} : tensor<8x4x6x6xf32>, tensor<1x4x1x1xf32>
  %s = graph.mul %c, %c {device = #device.dev<cpu>} : tensor<8x4x6x6xf32>, tensor<8x4x6x6xf32>
  %v = graph.reduce_mean %s {axes = array<i64: 0, 2, 3>, keepdims = true, device = #device.dev<cpu>} : tensor<8x4x6x6xf32>
  return %c, %v : tensor<8x4x6x6xf32>, tensor<1x4x1x1xf32>
}

// -----

// A whole group (and a splat constant of its body) goes into a sum on a sim
// device too.
// CHECK-LABEL: func.func @group_on_sim
// CHECK: sched.fused_reduce(%{{.*}}, %{{.*}}) {device = #device.dev<sim:0>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.constant dense<2.000000e+00> : tensor<4x16xf32>
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.reduce_sum %{{.*}} {axes = array<i64: 1>} : tensor<4x16xf32>
// CHECK-NEXT: sched.yield
func.func @group_on_sim(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4xf32> {
  %two = graph.constant dense<2.0> : tensor<4x16xf32> {device = #device.dev<sim:0>}
  %m = graph.mul %x, %two {device = #device.dev<sim:0>} : tensor<4x16xf32>, tensor<4x16xf32>
  %a = graph.add %m, %b {device = #device.dev<sim:0>} : tensor<4x16xf32>, tensor<16xf32>
  %e = graph.exp %a {device = #device.dev<sim:0>} : tensor<4x16xf32>
  %r = graph.reduce_sum %e {axes = array<i64: 1>, device = #device.dev<sim:0>} : tensor<4x16xf32>
  return %r : tensor<4xf32>
}

// -----

// Left apart: a loop that is also returned; a sum that keeps the last axis
// (a bias gradient: the runtime sums it in columns); a sum over a last axis
// of one element; f16 values; a GPU's reduction; a reduction of another
// device's loop; a maximum.
// CHECK-LABEL: func.func @apart
// CHECK-NOT: sched.fused_reduce
// CHECK: return
func.func @apart(%x: tensor<4x16xf32>, %h: tensor<4x16xf16>, %y: tensor<4x1xf32>)
    -> (tensor<4x16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = graph.exp %x {device = #device.dev<cpu>} : tensor<4x16xf32>
  %r0 = graph.reduce_sum %e {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<4x16xf32>
  %n = graph.neg %x {device = #device.dev<cpu>} : tensor<4x16xf32>
  %r1 = graph.reduce_sum %n {axes = array<i64: 0>, device = #device.dev<cpu>} : tensor<4x16xf32>
  %ny = graph.neg %y {device = #device.dev<cpu>} : tensor<4x1xf32>
  %r2 = graph.reduce_sum %ny {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<4x1xf32>
  %nh = graph.neg %h {device = #device.dev<cpu>} : tensor<4x16xf16>
  %r3 = graph.reduce_sum %nh {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<4x16xf16>
  %t = graph.tanh %x {device = #device.dev<cuda:0>} : tensor<4x16xf32>
  %r4 = graph.reduce_sum %t {axes = array<i64: 1>, device = #device.dev<cuda:0>} : tensor<4x16xf32>
  %s = graph.sigmoid %x {device = #device.dev<cuda:0>} : tensor<4x16xf32>
  %r5 = graph.reduce_sum %s {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<4x16xf32>
  %a = graph.abs %x {device = #device.dev<cpu>} : tensor<4x16xf32>
  %r6 = graph.reduce_max %a {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<4x16xf32>
  return %e, %r0, %r1, %r2, %r3, %r4, %r5, %r6 : tensor<4x16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A module with a dynamic dimension keeps its reductions apart: their
// kernels size themselves from the run.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: sched.fused_reduce
// CHECK: graph.reduce_sum
graph.dim @batch 1 to 8 at 4
func.func @dynamic(%x: tensor<8x16xf32> {graph.dims = ["batch", ""]}) -> tensor<8xf32> {
  %e = graph.exp %x {device = #device.dev<cpu>} : tensor<8x16xf32>
  %r = graph.reduce_sum %e {axes = array<i64: 1>, device = #device.dev<cpu>} : tensor<8x16xf32>
  return %r : tensor<8xf32>
}
