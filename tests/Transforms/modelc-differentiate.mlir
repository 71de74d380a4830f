// RUN: modelc-opt %s --split-input-file --verify-diagnostics --modelc-differentiate | FileCheck %s

// A linear layer and cross-entropy: dW = dy^T x, db = sum of dy's rows,
// and no gradient for the input x (not a parameter).
// CHECK-LABEL: func.func @loss
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<3x4xf32> {graph.name = "w"}, tensor<3xf32> {graph.name = "b"})
// CHECK-SAME: attributes {graph.parameters = [@w, @b]}
// CHECK: %[[Y:.*]] = graph.linear %arg0
// CHECK: %[[L:.*]] = graph.cross_entropy %[[Y]], %arg1
// CHECK: %[[P:.*]] = graph.softmax %[[Y]]
// CHECK: %[[DY:.*]] = graph.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK-NOT: graph.gemm %[[DY]], %{{.*}} :
// CHECK-DAG: %[[DW:.*]] = graph.gemm %[[DY]], %arg0 {transpose_a = true} : tensor<2x3xf32>, tensor<2x4xf32>
// CHECK-DAG: %[[DB:.*]] = graph.reduce_sum %[[DY]] {axes = array<i64: 0>} : tensor<2x3xf32>
// CHECK: return %[[L]], %[[DW]], %[[DB]]
graph.weight @w : tensor<3x4xf32>
graph.weight @b : tensor<3xf32>
func.func @loss(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<3x4xf32>
  %b = graph.weight_ref @b : tensor<3xf32>
  %y = graph.linear %x, %w, %b : tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>
  %l = graph.cross_entropy %y, %t : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// A broadcast operand's gradient is summed back to its shape; a weight
// read twice gets the sum of both gradients; a frozen weight none.
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<4xf32> {graph.name = "s"})
// CHECK-SAME: attributes {graph.parameters = [@s]}
// CHECK: %[[A:.*]] = graph.add %arg0, %[[S:.*]] : tensor<2x4xf32>, tensor<4xf32>
// CHECK: %[[M:.*]] = graph.mul %[[A]], %[[S]] : tensor<2x4xf32>, tensor<4xf32>
// CHECK: graph.reduce_mean
// CHECK: %[[G1:.*]] = graph.reduce_sum %{{.*}} {axes = array<i64: 0>} : tensor<2x4xf32>
// CHECK: %[[G2:.*]] = graph.reduce_sum %{{.*}} {axes = array<i64: 0>} : tensor<2x4xf32>
// CHECK: %[[G:.*]] = graph.add %[[G1]], %[[G2]] : tensor<4xf32>, tensor<4xf32>
// CHECK: return %{{.*}}, %[[G]]
graph.weight @s : tensor<4xf32>
graph.weight @k {frozen} : tensor<4xf32>
func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
  %s = graph.weight_ref @s : tensor<4xf32>
  %k = graph.weight_ref @k : tensor<4xf32>
  %a = graph.add %x, %s : tensor<2x4xf32>, tensor<4xf32>
  %m = graph.mul %a, %s : tensor<2x4xf32>, tensor<4xf32>
  %n = graph.mul %m, %k : tensor<2x4xf32>, tensor<4xf32>
  %l = graph.reduce_mean %n : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

// Every op on the way without a gradient rule, in one error.
graph.weight @w : tensor<4x4xf32>
// expected-error @below {{cannot differentiate 'loss': no gradient for graph.sin, graph.reduce_max (2 ops on the way from the parameters to the loss; not supported yet)}}
func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  // expected-note @below {{'graph.sin' here}}
  %a = graph.sin %y : tensor<2x4xf32>
  // expected-note @below {{'graph.reduce_max' here}}
  %l = graph.reduce_max %a : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

graph.weight @w : tensor<4x4xf32>
// expected-error @below {{the loss entry point 'loss' must return one scalar float tensor (tensor<f32>); it returns 1 value(s) of type 'tensor<2x4xf32>'}}
func.func @loss(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

graph.weight @w {frozen} : tensor<4x4xf32>
// expected-error @below {{the loss of 'loss' depends on no trainable weight}}
func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = graph.reduce_sum %y : tensor<2x4xf32>
  return %l : tensor<f32>
}
