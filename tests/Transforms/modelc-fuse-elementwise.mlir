// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise=max-ops=2 | FileCheck %s --check-prefix=CAP

// A chain of elementwise ops of one shape is one group; the inputs are the
// values it reads from outside, in the order it first reads them, and a
// broadcast operand stays an input. The group carries its ops' device.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[F:.*]] = sched.fused(%[[X]], %[[B]]) {device = #device.dev<cpu>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x8xf32>, %[[A1:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.*]] = graph.add %[[A0]], %[[A1]] : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = graph.exp %[[R]] : tensor<4x8xf32>
// CHECK-NEXT: sched.yield %[[E]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = graph.add %x, %b {device = #device.dev<cpu>} : tensor<4x8xf32>, tensor<8xf32>
  %r = graph.relu %s {device = #device.dev<cpu>} : tensor<4x8xf32>
  %e = graph.exp %r {device = #device.dev<cpu>} : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// A value with two users ends its group (each user reads it from memory);
// each user is a group of its own, a single op too.
// CHECK-LABEL: func.func @two_users
// CHECK: %[[R:.*]] = sched.fused(%{{.*}}) {device = #device.dev<sim:0>}
// CHECK: graph.neg
// CHECK-NEXT: graph.relu
// CHECK-NEXT: sched.yield
// CHECK: %[[E:.*]] = sched.fused(%[[R]]) {device = #device.dev<sim:0>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.exp
// CHECK-NEXT: sched.yield
// CHECK: %[[T:.*]] = sched.fused(%[[R]]) {device = #device.dev<sim:0>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.tanh
// CHECK-NEXT: sched.yield
// CHECK: return %[[E]], %[[T]]
func.func @two_users(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = graph.neg %x {device = #device.dev<sim:0>} : tensor<16xf32>
  %r = graph.relu %n {device = #device.dev<sim:0>} : tensor<16xf32>
  %e = graph.exp %r {device = #device.dev<sim:0>} : tensor<16xf32>
  %t = graph.tanh %r {device = #device.dev<sim:0>} : tensor<16xf32>
  return %e, %t : tensor<16xf32>, tensor<16xf32>
}

// -----

// An op whose user has a larger (broadcast) shape is not computed inside
// the user's loop: element i of the user would read it at another index.
// CHECK-LABEL: func.func @broadcast_user
// CHECK: %[[SMALL:.*]] = sched.fused(%{{.*}}) {device = #device.dev<cpu>} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.exp
// CHECK-NEXT: sched.yield
// CHECK: %[[BIG:.*]] = sched.fused(%{{.*}}, %[[SMALL]]) {device = #device.dev<cpu>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.mul
// CHECK-NEXT: sched.yield
func.func @broadcast_user(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = graph.exp %y {device = #device.dev<cpu>} : tensor<8xf32>
  %m = graph.mul %x, %e {device = #device.dev<cpu>} : tensor<4x8xf32>, tensor<8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// Ops that are not elementwise end groups and stay as they are; a value
// used twice by one op is one input; compare, select and cast fuse too.
// CHECK-LABEL: func.func @boundaries
// CHECK: %[[M:.*]] = graph.matmul
// CHECK-NEXT: %[[F:.*]] = sched.fused(%[[M]], %{{.*}}) {device = #device.dev<cpu>}
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x4xf32>, %[[Z:.*]]: tensor<f32>):
// CHECK-NEXT: %[[C:.*]] = graph.compare gt, %[[A]], %[[Z]]
// CHECK-NEXT: %[[Q:.*]] = graph.mul %[[A]], %[[A]]
// CHECK-NEXT: %[[S:.*]] = graph.select %[[C]], %[[Q]], %[[A]]
// CHECK-NEXT: %[[H:.*]] = graph.cast %[[S]]
// CHECK-NEXT: sched.yield %[[H]] : tensor<4x4xf16>
// CHECK: graph.softmax %[[F]]
func.func @boundaries(%x: tensor<4x4xf32>, %zero: tensor<f32>) -> tensor<4x4xf16> {
  %m = graph.matmul %x, %x {device = #device.dev<cpu>} : tensor<4x4xf32>, tensor<4x4xf32>
  %c = graph.compare gt, %m, %zero {device = #device.dev<cpu>} : tensor<4x4xf32>, tensor<f32>
  %q = graph.mul %m, %m {device = #device.dev<cpu>} : tensor<4x4xf32>, tensor<4x4xf32>
  %s = graph.select %c, %q, %m {device = #device.dev<cpu>} : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>
  %h = graph.cast %s {device = #device.dev<cpu>} : tensor<4x4xf32> to f16
  %y = graph.softmax %h {device = #device.dev<cpu>} : tensor<4x4xf16>
  return %y : tensor<4x4xf16>
}

// -----

// A group holds at most max-ops ops: a chain longer than that is cut, and
// the producer left out ends the next group (the default cap keeps these
// five ops together).
// CHECK-LABEL: func.func @long_chain
// CHECK: sched.fused(%{{.*}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.neg
// CHECK-NEXT: graph.relu
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.tanh
// CHECK-NEXT: graph.sigmoid
// CHECK-NEXT: sched.yield
// CAP-LABEL: func.func @long_chain
// CAP-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CAP-NEXT: %[[F0:.*]] = sched.fused(%[[X]]) {device = #device.dev<cpu>}
// CAP-NEXT: ^bb0
// CAP-NEXT: graph.neg
// CAP-NEXT: sched.yield
// CAP-NEXT: }
// CAP-NEXT: %[[F1:.*]] = sched.fused(%[[F0]]) {device = #device.dev<cpu>}
// CAP-NEXT: ^bb0
// CAP-NEXT: graph.relu
// CAP-NEXT: graph.exp
// CAP-NEXT: sched.yield
// CAP-NEXT: }
// CAP-NEXT: %[[F2:.*]] = sched.fused(%[[F1]]) {device = #device.dev<cpu>}
// CAP-NEXT: ^bb0
// CAP-NEXT: graph.tanh
// CAP-NEXT: graph.sigmoid
// CAP-NEXT: sched.yield
// CAP-NEXT: }
// CAP-NEXT: return %[[F2]]
func.func @long_chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.neg %x {device = #device.dev<cpu>} : tensor<4x8xf32>
  %1 = graph.relu %0 {device = #device.dev<cpu>} : tensor<4x8xf32>
  %2 = graph.exp %1 {device = #device.dev<cpu>} : tensor<4x8xf32>
  %3 = graph.tanh %2 {device = #device.dev<cpu>} : tensor<4x8xf32>
  %4 = graph.sigmoid %3 {device = #device.dev<cpu>} : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// An elementwise op whose only user is a post-op inside a
// sched.packed_product (here the residual of an add) is a group of its
// own: the product reads it from memory.
// CHECK-LABEL: func.func @post_op_operand
// CHECK: %[[T:.*]] = sched.fused(%arg1) {device = #device.dev<cpu>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: graph.tanh
// CHECK: sched.packed_product {device = #device.dev<cpu>} : tensor<4x8xf32> {
// CHECK: graph.add %{{.*}}, %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>
graph.weight @w : tensor<8x16xf32>
func.func @post_op_operand(%x: tensor<4x16xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<8x16xf32>
  %t = graph.tanh %r {device = #device.dev<cpu>} : tensor<4x8xf32>
  %p = sched.packed_product {device = #device.dev<cpu>} : tensor<4x8xf32> {
    %l = graph.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32>
    %a = graph.add %l, %t : tensor<4x8xf32>, tensor<4x8xf32>
    sched.yield %a : tensor<4x8xf32>
  }
  return %p : tensor<4x8xf32>
}

// -----

// A splat constant of more than one element is computed in the loops that
// read it (a copy in each body), and the constant goes once nothing else
// reads it: a gradient's broadcast to the activations' shape (a select on
// an all-true mask) is not a constant the size of the activations. A
// one-element constant and a constant that is not a splat stay inputs.
// CHECK-LABEL: func.func @splat_constants
// CHECK-SAME: (%[[G:.*]]: tensor<1x3x1x1xf32>, %[[X:.*]]: tensor<2x3x4x4xf32>)
// CHECK-NOT: graph.constant dense<true>
// CHECK: %[[HALF:.*]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[STEPS:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NOT: graph.constant dense<true>
// CHECK: sched.fused(%[[G]], %[[X]], %[[HALF]]) {device = #device.dev<cpu>} : (tensor<1x3x1x1xf32>, tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<1x3x1x1xf32>, %[[A1:.*]]: tensor<2x3x4x4xf32>, %[[A2:.*]]: tensor<f32>):
// CHECK-NEXT: %[[ALL:.*]] = graph.constant dense<true> : tensor<2x3x4x4xi1>
// CHECK-NEXT: %[[B:.*]] = graph.select %[[ALL]], %[[A0]], %[[A0]]
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[B]], %[[A1]]
// CHECK-NEXT: graph.mul %[[M]], %[[A2]]
// CHECK: sched.fused(%[[X]], %[[STEPS]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[ALL2:.*]] = graph.constant dense<true> : tensor<2x3x4x4xi1>
// CHECK-NEXT: graph.select %[[ALL2]]
func.func @splat_constants(%g: tensor<1x3x1x1xf32>, %x: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %all = graph.constant dense<true> : tensor<2x3x4x4xi1> {device = #device.dev<cpu>}
  %half = graph.constant dense<0.5> : tensor<f32> {device = #device.dev<cpu>}
  %steps = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> {device = #device.dev<cpu>}
  %b = graph.select %all, %g, %g {device = #device.dev<cpu>} : tensor<2x3x4x4xi1>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>
  %m = graph.mul %b, %x {device = #device.dev<cpu>} : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %h = graph.mul %m, %half {device = #device.dev<cpu>} : tensor<2x3x4x4xf32>, tensor<f32>
  %c = graph.select %all, %x, %x {device = #device.dev<cpu>} : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %s = graph.add %c, %steps {device = #device.dev<cpu>} : tensor<2x3x4x4xf32>, tensor<4xf32>
  return %h, %s : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}
