// RUN: modelc-opt %s --split-input-file --modelc-raise-composites | FileCheck %s

// GELU as PyTorch exports it to ONNX: x / sqrt(2), erf, + 1, * x, * 0.5.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT: %[[G:.*]] = graph.gelu %arg0 : tensor<8x64xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %d = graph.div %x, %sqrt2 : tensor<8x64xf32>, tensor<f32>
  %e = graph.erf %d : tensor<8x64xf32>
  %a = graph.add %e, %one : tensor<8x64xf32>, tensor<f32>
  %m = graph.mul %x, %a : tensor<8x64xf32>, tensor<8x64xf32>
  %y = graph.mul %m, %half : tensor<8x64xf32>, tensor<f32>
  return %y : tensor<8x64xf32>
}

// -----

// Other orders and groupings: (0.5 * x) * (1 + erf(x * 0.7071...)).
// CHECK-LABEL: func.func @gelu_erf_regrouped
// CHECK-NEXT: %[[G:.*]] = graph.gelu %arg0 : tensor<4xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_regrouped(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.constant dense<0.707106769> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %hx = graph.mul %half, %x : tensor<f32>, tensor<4xf32>
  %d = graph.mul %r, %x : tensor<f32>, tensor<4xf32>
  %e = graph.erf %d : tensor<4xf32>
  %a = graph.add %one, %e : tensor<f32>, tensor<4xf32>
  %y = graph.mul %a, %hx : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The tanh approximation as PyTorch 1.13 exports it (opset 17).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = graph.gelu %arg0 approximate tanh : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %c = graph.constant dense<0.044715> : tensor<f32>
  %sq = graph.mul %x, %x : tensor<2x8xf32>, tensor<2x8xf32>
  %cube = graph.mul %x, %sq : tensor<2x8xf32>, tensor<2x8xf32>
  %cc = graph.mul %c, %cube : tensor<f32>, tensor<2x8xf32>
  %in = graph.add %x, %cc : tensor<2x8xf32>, tensor<2x8xf32>
  %s = graph.mul %k, %in : tensor<f32>, tensor<2x8xf32>
  %t = graph.tanh %s : tensor<2x8xf32>
  %a = graph.add %one, %t : tensor<f32>, tensor<2x8xf32>
  %m = graph.mul %x, %a : tensor<2x8xf32>, tensor<2x8xf32>
  %y = graph.mul %half, %m : tensor<f32>, tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Not GELU: a wrong constant (0.6 instead of 0.5), and a formula whose
// erf another op also reads (raising it would compute erf twice).
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: graph.gelu
// CHECK: return
func.func @not_gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %other = graph.constant dense<0.6> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %d = graph.div %x, %sqrt2 : tensor<4xf32>, tensor<f32>
  %e = graph.erf %d : tensor<4xf32>
  %a = graph.add %e, %one : tensor<4xf32>, tensor<f32>
  %m = graph.mul %x, %a : tensor<4xf32>, tensor<4xf32>
  %y = graph.mul %m, %other : tensor<4xf32>, tensor<f32>
  %d2 = graph.div %x, %sqrt2 : tensor<4xf32>, tensor<f32>
  %e2 = graph.erf %d2 : tensor<4xf32>
  %a2 = graph.add %e2, %one : tensor<4xf32>, tensor<f32>
  %m2 = graph.mul %x, %a2 : tensor<4xf32>, tensor<4xf32>
  %y2 = graph.mul %m2, %half : tensor<4xf32>, tensor<f32>
  return %y, %y2, %e2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A square spelled as pow (LayerNorm's variance as PyTorch exports it
// before opset 17) is a product; other exponents, an exponent only near 2,
// and an exponent of more than one element are not.
// CHECK-LABEL: func.func @square
// CHECK: %[[D:.*]] = graph.sub
// CHECK-NEXT: %[[S:.*]] = graph.mul %[[D]], %[[D]] : tensor<2x8xf32>, tensor<2x8xf32>
// CHECK-NEXT: graph.reduce_mean %[[S]]
// CHECK: graph.pow %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<f32>
// CHECK-NEXT: graph.pow %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<f32>
// CHECK-NEXT: graph.pow %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<2x8xf32>
func.func @square(%x: tensor<2x8xf32>, %m: tensor<2x1xf32>, %v: tensor<8xf32>)
    -> (tensor<2x1xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %three = graph.constant dense<3.0> : tensor<f32>
  %near = graph.constant dense<2.0000002> : tensor<f32>
  %twos = graph.constant dense<2.0> : tensor<2x8xf32>
  %d = graph.sub %x, %m : tensor<2x8xf32>, tensor<2x1xf32>
  %s = graph.pow %d, %two : tensor<2x8xf32>, tensor<f32>
  %r = graph.reduce_mean %s {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32>
  %c = graph.pow %x, %three : tensor<2x8xf32>, tensor<f32>
  %n = graph.pow %x, %near : tensor<2x8xf32>, tensor<f32>
  %b = graph.pow %v, %twos : tensor<8xf32>, tensor<2x8xf32>
  return %r, %c, %n, %b : tensor<2x1xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// LayerNorm as PyTorch exports it before opset 17 (ReduceMean, Sub, Pow,
// ReduceMean, Add, Sqrt, Div, Mul, Add) is one graph.layer_norm with the
// affine parameters as its scale and bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT: %[[Y:.*]] = graph.layer_norm %arg0 scale %arg1 bias %arg2 {axis = 2 : i64} : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %m = graph.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : tensor<2x3x8xf32>
  %d = graph.sub %x, %m : tensor<2x3x8xf32>, tensor<2x3x1xf32>
  %p = graph.pow %d, %two : tensor<2x3x8xf32>, tensor<f32>
  %v = graph.reduce_mean %p {axes = array<i64: -1>, keepdims = true} : tensor<2x3x8xf32>
  %a = graph.add %v, %eps : tensor<2x3x1xf32>, tensor<f32>
  %s = graph.sqrt %a : tensor<2x3x1xf32>
  %n = graph.div %d, %s : tensor<2x3x8xf32>, tensor<2x3x1xf32>
  %g = graph.mul %n, %w : tensor<2x3x8xf32>, tensor<8xf32>
  %y = graph.add %g, %b : tensor<2x3x8xf32>, tensor<8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Over the last two dimensions, the epsilon first in its sum, the square a
// product, no affine parameters.
// CHECK-LABEL: func.func @layer_norm_2d
// CHECK-NEXT: %[[Y:.*]] = graph.layer_norm %arg0 {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : tensor<2x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_2d(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %eps = graph.constant dense<1.0e-3> : tensor<f32>
  %m = graph.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x3x8xf32>
  %d = graph.sub %x, %m : tensor<2x3x8xf32>, tensor<2x1x1xf32>
  %p = graph.mul %d, %d : tensor<2x3x8xf32>, tensor<2x3x8xf32>
  %v = graph.reduce_mean %p {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x3x8xf32>
  %a = graph.add %eps, %v : tensor<f32>, tensor<2x1x1xf32>
  %s = graph.sqrt %a : tensor<2x1x1xf32>
  %n = graph.div %d, %s : tensor<2x3x8xf32>, tensor<2x1x1xf32>
  return %n : tensor<2x3x8xf32>
}

// -----

// Not raised: a mean over a leading dimension (not a layer norm), the
// centred value read elsewhere, a variance of another value; an affine
// weight of another shape stays a product.
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-COUNT-2: graph.div
// CHECK: graph.layer_norm %arg0 {axis = 1 : i64
// CHECK-NEXT: graph.mul
// CHECK-NOT: graph.layer_norm
func.func @not_layer_norm(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %m0 = graph.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
  %d0 = graph.sub %x, %m0 : tensor<4x8xf32>, tensor<1x8xf32>
  %p0 = graph.mul %d0, %d0 : tensor<4x8xf32>, tensor<4x8xf32>
  %v0 = graph.reduce_mean %p0 {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
  %a0 = graph.add %v0, %eps : tensor<1x8xf32>, tensor<f32>
  %s0 = graph.sqrt %a0 : tensor<1x8xf32>
  %n0 = graph.div %d0, %s0 : tensor<4x8xf32>, tensor<1x8xf32>
  %m1 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
  %d1 = graph.sub %x, %m1 : tensor<4x8xf32>, tensor<4x1xf32>
  %p1 = graph.mul %d1, %d1 : tensor<4x8xf32>, tensor<4x8xf32>
  %v1 = graph.reduce_mean %p1 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
  %a1 = graph.add %v1, %eps : tensor<4x1xf32>, tensor<f32>
  %s1 = graph.sqrt %a1 : tensor<4x1xf32>
  %n1 = graph.div %d1, %s1 : tensor<4x8xf32>, tensor<4x1xf32>
  %m2 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
  %d2 = graph.sub %x, %m2 : tensor<4x8xf32>, tensor<4x1xf32>
  %p2 = graph.mul %d2, %d2 : tensor<4x8xf32>, tensor<4x8xf32>
  %v2 = graph.reduce_mean %p2 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
  %a2 = graph.add %v2, %eps : tensor<4x1xf32>, tensor<f32>
  %s2 = graph.sqrt %a2 : tensor<4x1xf32>
  %n2 = graph.div %d2, %s2 : tensor<4x8xf32>, tensor<4x1xf32>
  %g2 = graph.mul %n2, %w : tensor<4x8xf32>, tensor<4x8xf32>
  return %n0, %n1, %d1, %g2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
