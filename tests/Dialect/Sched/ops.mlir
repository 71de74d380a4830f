// RUN: modelc-opt %s | modelc-opt | FileCheck %s

// sched.fused round-trips with its body.
// CHECK-LABEL: func.func @fused
// CHECK: %[[F:.*]] = sched.fused(%{{.*}}, %{{.*}}) {device = #device.dev<cuda:0>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.*]] = graph.add %[[A]], %[[B]]
// CHECK-NEXT: sched.yield %[[S]] : tensor<4x8xf32>
// CHECK: return %[[F]]
func.func @fused(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %f = sched.fused(%x, %b) {device = #device.dev<cuda:0>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %s = graph.add %a, %c : tensor<4x8xf32>, tensor<8xf32>
    sched.yield %s : tensor<4x8xf32>
  }
  return %f : tensor<4x8xf32>
}

// sched.gemm and sched.sliced_transpose round-trip with their decisions.
// CHECK-LABEL: func.func @gemm
// CHECK: sched.gemm {alpha = 5.000000e-01 : f64, device = #device.dev<cuda:0>, lhs_view = #sched.view<offset = 0, ld = 8, batch_stride = 0, transposed = true>, relu} : tensor<4x4xf32> {
// CHECK-NEXT: graph.slice
// CHECK-NEXT: graph.transpose
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.relu
// CHECK-NEXT: sched.yield
// CHECK: sched.sliced_transpose {device = #device.dev<cuda:0>} : tensor<2x4xf32> {
// CHECK-NEXT: graph.slice
// CHECK-NEXT: graph.transpose
// CHECK-NEXT: sched.yield
func.func @gemm(%x: tensor<4x8xf32>, %c: tensor<f32>) -> (tensor<4x4xf32>, tensor<2x4xf32>) {
  %g = sched.gemm {alpha = 0.5 : f64, relu, device = #device.dev<cuda:0>, lhs_view = #sched.view<offset = 0, ld = 8, batch_stride = 0, transposed = true>} : tensor<4x4xf32> {
    %s = graph.slice %x {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 4>} : tensor<4x8xf32>
    %t = graph.transpose %s perm [1, 0] : tensor<4x4xf32>
    %a = graph.matmul %t, %t : tensor<4x4xf32>, tensor<4x4xf32>
    %m = graph.mul %a, %c : tensor<4x4xf32>, tensor<f32>
    %r = graph.relu %m : tensor<4x4xf32>
    sched.yield %r : tensor<4x4xf32>
  }
  %u = sched.sliced_transpose {device = #device.dev<cuda:0>} : tensor<2x4xf32> {
    %s = graph.slice %x {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 4>, steps = array<i64: 2>} : tensor<4x8xf32>
    %p = graph.transpose %s perm [1, 0] : tensor<4x2xf32>
    sched.yield %p : tensor<2x4xf32>
  }
  return %g, %u : tensor<4x4xf32>, tensor<2x4xf32>
}

// A leading contiguous slice (a view at offset 0) may sit between the
// folded slice and the transpose.
// CHECK-LABEL: func.func @sliced_transpose_through_view
// CHECK: sched.sliced_transpose : tensor<4x2xf32> {
// CHECK-NEXT: graph.slice
// CHECK-NEXT: graph.slice
// CHECK-NEXT: graph.transpose
func.func @sliced_transpose_through_view(%x: tensor<8x6xf32>) -> tensor<4x2xf32> {
  %t = sched.sliced_transpose : tensor<4x2xf32> {
    %s = graph.slice %x {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 4>} : tensor<8x6xf32>
    %r = graph.slice %s {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: 2>} : tensor<8x4xf32>
    %p = graph.transpose %r perm [1, 0] : tensor<2x4xf32>
    sched.yield %p : tensor<4x2xf32>
  }
  return %t : tensor<4x2xf32>
}
