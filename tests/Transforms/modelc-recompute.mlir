// RUN: modelc-opt %s --split-input-file --modelc-recompute | FileCheck %s

// The MLP's backward reads the ReLU's result (for the second weight's
// gradient) and its input (for the mask). The input is live there anyway,
// so the ReLU is computed again right before its backward reader, and the
// forward's copy dies at the second linear.
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: graph.recompute = {ops = 1 : i64, peak_bytes_after = {{[0-9]+}} : i64, peak_bytes_before = {{[0-9]+}} : i64}
// CHECK: %[[H:.*]] = graph.linear %arg0
// CHECK-NEXT: %[[A:.*]] = graph.relu %[[H]]
// CHECK-NEXT: %[[Y:.*]] = graph.linear %[[A]]
// CHECK-NEXT: %[[L:.*]] = graph.reduce_sum %[[Y]]
// CHECK-NEXT: %[[DY:.*]] = graph.sigmoid %[[Y]]
// CHECK-NEXT: %[[DA:.*]] = graph.gemm %[[DY]], %{{.*}} :
// CHECK-NEXT: %[[A2:.*]] = graph.relu %[[H]]
// CHECK-NEXT: graph.gemm %[[DY]], %[[A2]] {transpose_a = true}
// CHECK-NEXT: graph.compare gt, %[[H]]
graph.weight @w1 : tensor<32x16xf32>
graph.weight @w2 : tensor<16x32xf32>
func.func @gradients(%x: tensor<16x16xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<16x32xf32> {graph.name = "w2"}, tensor<16x32xf32> {graph.name = "dh"}) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %w1 = graph.weight_ref @w1 : tensor<32x16xf32>
  %w2 = graph.weight_ref @w2 : tensor<16x32xf32>
  %h = graph.linear %x, %w1 : tensor<16x16xf32>, tensor<32x16xf32>
  %a = graph.relu %h : tensor<16x32xf32>
  %y = graph.linear %a, %w2 : tensor<16x32xf32>, tensor<16x32xf32>
  %l = graph.reduce_sum %y : tensor<16x16xf32>
  %dy = graph.sigmoid %y : tensor<16x16xf32>
  %da = graph.gemm %dy, %w2 : tensor<16x16xf32>, tensor<16x32xf32>
  %dw2 = graph.gemm %dy, %a {transpose_a = true} : tensor<16x16xf32>, tensor<16x32xf32>
  %mask = graph.compare gt, %h, %zero : tensor<16x32xf32>, tensor<f32>
  %dh = graph.select %mask, %da, %zero : tensor<16x32xi1>, tensor<16x32xf32>, tensor<f32>
  return %l, %dw2, %dh : tensor<f32>, tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// Nothing else reads %h in the backward: a copy of the exponential would
// keep %h alive instead of %e, so %e stays. A chain whose first input is
// read in the backward anyway (%n = neg %x, %t = tanh %n, read past the
// loss) is recomputed whole, the last op first.
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: graph.recompute = {ops = 2 : i64
// CHECK: %[[H:.*]] = graph.linear %arg0
// CHECK-NEXT: %[[E:.*]] = graph.exp %[[H]]
// CHECK-NEXT: %[[N:.*]] = graph.neg %arg0
// CHECK-NEXT: %[[T:.*]] = graph.tanh %[[N]]
// CHECK-NEXT: %[[S:.*]] = graph.add %[[E]], %[[T]]
// CHECK-NEXT: %[[L:.*]] = graph.reduce_sum %[[S]]
// CHECK-NEXT: %[[G:.*]] = graph.mul %[[E]], %[[E]]
// CHECK-NEXT: %[[N2:.*]] = graph.neg %arg0
// CHECK-NEXT: %[[T2:.*]] = graph.tanh %[[N2]]
// CHECK-NEXT: graph.mul %[[G]], %[[T2]]
graph.weight @w : tensor<8x8xf32>
func.func @gradients(%x: tensor<8x8xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<8x8xf32> {graph.name = "g"}) {
  %w = graph.weight_ref @w : tensor<8x8xf32>
  %h = graph.linear %x, %w : tensor<8x8xf32>, tensor<8x8xf32>
  %e = graph.exp %h : tensor<8x8xf32>
  %n = graph.neg %x : tensor<8x8xf32>
  %t = graph.tanh %n : tensor<8x8xf32>
  %s = graph.add %e, %t : tensor<8x8xf32>, tensor<8x8xf32>
  %l = graph.reduce_sum %s : tensor<8x8xf32>
  %g = graph.mul %e, %e : tensor<8x8xf32>, tensor<8x8xf32>
  %r = graph.mul %g, %t : tensor<8x8xf32>, tensor<8x8xf32>
  return %l, %r : tensor<f32>, tensor<8x8xf32>
}

// -----

// In train_step the parameters are written. A copy that reads %w before
// its write is one more reader the write waits for (`after`); one that
// would read %v after its write would see the new value, so %vs stays.
// An output (%o) and a value read through a view (%s) stay too, and an
// entry point other than gradients and train_step is left as it is.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: graph.recompute = {ops = 1 : i64, peak_bytes_after = 1284 : i64, peak_bytes_before = 1536 : i64}
// CHECK: %[[W:.*]] = graph.weight_ref @w
// CHECK: %[[V:.*]] = graph.weight_ref @v
// CHECK: %[[WS:.*]] = graph.mul %[[W]], %{{.*}}
// CHECK: %[[VS:.*]] = graph.mul %[[V]], %{{.*}}
// CHECK: graph.assign @v, %{{.*}} :
// CHECK: %[[WS2:.*]] = graph.mul %[[W]], %{{.*}}
// CHECK-NEXT: %[[DW:.*]] = graph.gemm %arg0, %[[WS2]] {transpose_a = true}
// CHECK-NEXT: graph.gemm %arg0, %[[VS]] {transpose_a = true}
// CHECK: graph.assign @w, %{{.*}} after(%[[WS2]]) :
// CHECK-LABEL: func.func @loss
// CHECK-NOT: graph.recompute
// CHECK-COUNT-1: graph.relu
// CHECK-NOT: graph.relu
graph.weight @w {writable} : tensor<8x8xf32>
graph.weight @v {writable} : tensor<8x8xf32>
func.func @train_step(%x: tensor<8x8xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<8x8xf32> {graph.name = "out"}, tensor<8x8xf32> {graph.name = "dv"}, tensor<64xf32> {graph.name = "sr"}) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %w = graph.weight_ref @w : tensor<8x8xf32>
  %v = graph.weight_ref @v : tensor<8x8xf32>
  %ws = graph.mul %w, %two : tensor<8x8xf32>, tensor<f32>
  %vs = graph.mul %v, %two : tensor<8x8xf32>, tensor<f32>
  %o = graph.exp %x : tensor<8x8xf32>
  %s = graph.sigmoid %x : tensor<8x8xf32>
  %sr = graph.reshape %s to [64] : tensor<8x8xf32>
  %y = graph.matmul %o, %ws : tensor<8x8xf32>, tensor<8x8xf32>
  %y2 = graph.matmul %y, %vs : tensor<8x8xf32>, tensor<8x8xf32>
  %l = graph.reduce_sum %y2 : tensor<8x8xf32>
  %nv = graph.neg %v : tensor<8x8xf32>
  graph.assign @v, %nv : tensor<8x8xf32>
  %dw = graph.gemm %x, %ws {transpose_a = true} : tensor<8x8xf32>, tensor<8x8xf32>
  %dv = graph.gemm %x, %vs {transpose_a = true} : tensor<8x8xf32>, tensor<8x8xf32>
  %u = graph.sub %w, %dw : tensor<8x8xf32>, tensor<8x8xf32>
  graph.assign @w, %u : tensor<8x8xf32>
  return %l, %o, %dv, %sr : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<64xf32>
}
func.func @loss(%x: tensor<8x8xf32>) -> (tensor<f32> {graph.name = "loss"}) {
  %a = graph.relu %x : tensor<8x8xf32>
  %l = graph.reduce_sum %a : tensor<8x8xf32>
  %b = graph.mul %a, %a : tensor<8x8xf32>, tensor<8x8xf32>
  %r = graph.add %b, %l : tensor<8x8xf32>, tensor<f32>
  return %l : tensor<f32>
}

// -----

// A dropout's mask is a function of its step and site: the copy draws the
// same one. Its step count is not written in `gradients`.
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: graph.recompute = {ops = 1 : i64
// CHECK: %[[S:.*]] = graph.weight_ref @rng_step
// CHECK: %[[D:.*]] = graph.dropout %[[H:.*]], %[[S]] {ratio = 5.000000e-01 : f64, site = 3 : i64}
// CHECK: graph.reduce_sum
// CHECK: %[[D2:.*]] = graph.dropout %[[H]], %[[S]] {ratio = 5.000000e-01 : f64, site = 3 : i64}
// CHECK-NEXT: graph.gemm %{{.*}}, %[[D2]] {transpose_a = true}
graph.weight @rng_step {frozen, writable, zeros} : tensor<i64>
graph.weight @w : tensor<8x8xf32>
func.func @gradients(%x: tensor<8x8xf32>) -> (tensor<f32> {graph.name = "loss"}, tensor<8x8xf32> {graph.name = "w"}, tensor<8x8xf32> {graph.name = "h"}) {
  %s = graph.weight_ref @rng_step : tensor<i64>
  %w = graph.weight_ref @w : tensor<8x8xf32>
  %h = graph.linear %x, %w : tensor<8x8xf32>, tensor<8x8xf32>
  %d = graph.dropout %h, %s {ratio = 0.5, site = 3} : tensor<8x8xf32>, tensor<i64>
  %y = graph.matmul %d, %w : tensor<8x8xf32>, tensor<8x8xf32>
  %l = graph.reduce_sum %y : tensor<8x8xf32>
  %g = graph.exp %y : tensor<8x8xf32>
  %dw = graph.gemm %g, %d {transpose_a = true} : tensor<8x8xf32>, tensor<8x8xf32>
  %dh = graph.mul %h, %g : tensor<8x8xf32>, tensor<8x8xf32>
  return %l, %dw, %dh : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
}
