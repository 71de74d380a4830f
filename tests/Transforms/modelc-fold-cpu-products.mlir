// RUN: modelc-opt %s --split-input-file --modelc-fold-cpu-products | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fold-cpu-products --modelc-fuse-elementwise | modelc-opt --split-input-file | FileCheck %s --check-prefix=FUSED

// A matmul of a constant [K, N] weight, its bias, GELU and a residual add
// become one oneDNN call; the op after the residual (a softmax) is not a
// post-op. The call sits where the chain's last op was: the residual %r
// is computed after the matmul.
// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.*]] = graph.exp %arg1
// CHECK-NEXT: %[[P:.*]] = sched.packed_product {device = #device.dev<cpu>} : tensor<2x8x16xf32> {
// CHECK-NEXT: %[[M:.*]] = graph.matmul %arg0, %{{.*}} : tensor<2x8x32xf32>, tensor<32x16xf32>
// CHECK-NEXT: %[[B:.*]] = graph.add %[[M]], %{{.*}} : tensor<2x8x16xf32>, tensor<16xf32>
// CHECK-NEXT: %[[G:.*]] = graph.gelu %[[B]] : tensor<2x8x16xf32>
// CHECK-NEXT: %[[S:.*]] = graph.add %[[R]], %[[G]] : tensor<2x8x16xf32>, tensor<2x8x16xf32>
// CHECK-NEXT: sched.yield %[[S]] : tensor<2x8x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: graph.softmax %[[P]] {device = #device.dev<cpu>}
graph.weight @w : tensor<32x16xf32>
graph.weight @b : tensor<16xf32>
func.func @chain(%x: tensor<2x8x32xf32>, %y: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<32x16xf32>
  %b = graph.weight_ref @b {device = #device.dev<cpu>} : tensor<16xf32>
  %m = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<2x8x32xf32>, tensor<32x16xf32>
  %r = graph.exp %y {device = #device.dev<cpu>} : tensor<2x8x16xf32>
  %a = graph.add %m, %b {device = #device.dev<cpu>} : tensor<2x8x16xf32>, tensor<16xf32>
  %g = graph.gelu %a {device = #device.dev<cpu>} : tensor<2x8x16xf32>
  %s = graph.add %r, %g {device = #device.dev<cpu>} : tensor<2x8x16xf32>, tensor<2x8x16xf32>
  %o = graph.softmax %s {device = #device.dev<cpu>} : tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// Elementwise fusion runs after: the exp outside the call is a loop of its
// own, and nothing inside the call is fused again.
// FUSED-LABEL: func.func @after_fusion
// FUSED: sched.fused
// FUSED-NEXT: ^bb0
// FUSED-NEXT: graph.exp
// FUSED: sched.packed_product
// FUSED-NEXT: graph.linear
// FUSED-NEXT: graph.relu
// FUSED-NEXT: sched.yield
graph.weight @w : tensor<16x32xf32>
func.func @after_fusion(%x: tensor<8x32xf32>) -> tensor<8x16xf32> {
  %e = graph.exp %x {device = #device.dev<cpu>} : tensor<8x32xf32>
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<16x32xf32>
  %h = graph.linear %e, %w {device = #device.dev<cpu>} : tensor<8x32xf32>, tensor<16x32xf32>
  %r = graph.relu %h {device = #device.dev<cpu>} : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Convolutions take per-channel and scalar operands (ReLU6 as max and min
// with constants) as binary post-ops, and one same-shape value (a
// residual) as oneDNN's sum; a second same-shape value is not folded.
// CHECK-LABEL: func.func @conv
// CHECK: %[[P:.*]] = sched.packed_product {device = #device.dev<sim:1>} : tensor<1x4x6x6xf32> {
// CHECK-NEXT: graph.conv2d
// CHECK-NEXT: graph.mul %{{.*}}, %{{.*}} : tensor<1x4x6x6xf32>, tensor<4x1x1xf32>
// CHECK-NEXT: graph.max
// CHECK-NEXT: graph.min
// CHECK-NEXT: %[[ADD:.*]] = graph.add %{{.*}}, %arg0
// CHECK-NEXT: sched.yield %[[ADD]]
// CHECK-NEXT: }
// CHECK-NEXT: graph.sub %[[P]], %arg0 {device = #device.dev<sim:1>}
graph.weight @k : tensor<4x4x3x3xf32>
func.func @conv(%x: tensor<1x4x6x6xf32>, %s: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %k = graph.weight_ref @k {device = #device.dev<sim:1>} : tensor<4x4x3x3xf32>
  %zero = graph.constant dense<0.0> : tensor<f32> {device = #device.dev<sim:1>}
  %six = graph.constant dense<6.0> : tensor<f32> {device = #device.dev<sim:1>}
  %c = graph.conv2d %x, %k {device = #device.dev<sim:1>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
  %m = graph.mul %c, %s {device = #device.dev<sim:1>} : tensor<1x4x6x6xf32>, tensor<4x1x1xf32>
  %lo = graph.max %m, %zero {device = #device.dev<sim:1>} : tensor<1x4x6x6xf32>, tensor<f32>
  %hi = graph.min %lo, %six {device = #device.dev<sim:1>} : tensor<1x4x6x6xf32>, tensor<f32>
  %r = graph.add %hi, %x {device = #device.dev<sim:1>} : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
  %r2 = graph.sub %r, %x {device = #device.dev<sim:1>} : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
  return %r2 : tensor<1x4x6x6xf32>
}

// -----

// Left alone: a GPU product, a weight computed at run time, a gemm with
// alpha, and a subtraction from another value (oneDNN subtracts the
// operand from the product, not the product from the operand).
// CHECK-LABEL: func.func @left_alone
// CHECK: graph.linear %arg0, %{{.*}} {device = #device.dev<cuda:0>}
// CHECK: %[[M:.*]] = graph.matmul %arg0, %arg1 {device = #device.dev<cpu>}
// CHECK: graph.gemm %arg0, %{{.*}} {alpha = 2.000000e+00 : f32, device = #device.dev<cpu>, transpose_b = true}
// CHECK: %[[L:.*]] = sched.packed_product {device = #device.dev<cpu>} : tensor<8x16xf32> {
// CHECK-NEXT: graph.linear
// CHECK-NEXT: sched.yield
// CHECK-NEXT: }
// CHECK-NEXT: graph.sub %[[M]], %[[L]] {device = #device.dev<cpu>}
graph.weight @w : tensor<16x32xf32>
func.func @left_alone(%x: tensor<8x32xf32>, %v: tensor<32x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %wg = graph.weight_ref @w {device = #device.dev<cuda:0>} : tensor<16x32xf32>
  %g = graph.linear %x, %wg {device = #device.dev<cuda:0>} : tensor<8x32xf32>, tensor<16x32xf32>
  %m = graph.matmul %x, %v {device = #device.dev<cpu>} : tensor<8x32xf32>, tensor<32x16xf32>
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<16x32xf32>
  %gm = graph.gemm %x, %w {device = #device.dev<cpu>, transpose_b = true, alpha = 2.0 : f32} : tensor<8x32xf32>, tensor<16x32xf32>
  %l = graph.linear %x, %w {device = #device.dev<cpu>} : tensor<8x32xf32>, tensor<16x32xf32>
  %s = graph.sub %m, %l {device = #device.dev<cpu>} : tensor<8x16xf32>, tensor<8x16xf32>
  return %g, %s, %gm : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A product whose post-op chain stops at another device, and one read twice.
// CHECK-LABEL: func.func @boundaries
// CHECK: %[[A:.*]] = sched.packed_product {device = #device.dev<cpu>} : tensor<8x16xf32> {
// CHECK-NEXT: graph.linear
// CHECK-NEXT: sched.yield
// CHECK: graph.relu %[[A]] {device = #device.dev<sim:0>}
// CHECK: %[[B:.*]] = sched.packed_product {device = #device.dev<cpu>} : tensor<8x16xf32> {
// CHECK-NEXT: graph.linear
// CHECK-NEXT: sched.yield
// CHECK: graph.relu %[[B]] {device = #device.dev<cpu>}
// CHECK: graph.exp %[[B]] {device = #device.dev<cpu>}
graph.weight @w : tensor<16x32xf32>
func.func @boundaries(%x: tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<16x32xf32>
  %a = graph.linear %x, %w {device = #device.dev<cpu>} : tensor<8x32xf32>, tensor<16x32xf32>
  %ra = graph.relu %a {device = #device.dev<sim:0>} : tensor<8x16xf32>
  %b = graph.linear %x, %w {device = #device.dev<cpu>} : tensor<8x32xf32>, tensor<16x32xf32>
  %rb = graph.relu %b {device = #device.dev<cpu>} : tensor<8x16xf32>
  %eb = graph.exp %b {device = #device.dev<cpu>} : tensor<8x16xf32>
  return %ra, %rb, %eb : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// modelc --precision: bf16 and f16 products pack as f32 ones do, with
// their post-ops (a bias of their type); a cast of the result to f32 joins
// the product as its last op (oneDNN writes f32) and ends the chain: the
// relu after it is left alone.
// CHECK-LABEL: func.func @half
// CHECK: sched.packed_product {device = #device.dev<cpu>} : tensor<8x16xbf16> {
// CHECK-NEXT: graph.linear {{.*}} : tensor<8x32xbf16>, tensor<16x32xbf16>
// CHECK-NEXT: graph.add {{.*}} : tensor<8x16xbf16>, tensor<16xbf16>
// CHECK-NEXT: graph.gelu
// CHECK-NEXT: sched.yield
// CHECK: %[[C:.*]] = sched.packed_product {device = #device.dev<cpu>} : tensor<1x16x4x4xf32> {
// CHECK-NEXT: graph.conv2d
// CHECK-NEXT: graph.cast {{.*}} : tensor<1x16x4x4xf16> to f32
// CHECK-NEXT: sched.yield
// CHECK-NEXT: }
// CHECK-NEXT: graph.relu %[[C]]
graph.weight @w : tensor<16x32xbf16>
graph.weight @b : tensor<16xbf16>
graph.weight @k : tensor<16x8x3x3xf16>
func.func @half(%x: tensor<8x32xbf16>, %img: tensor<1x8x4x4xf16>) -> (tensor<8x16xbf16>, tensor<1x16x4x4xf32>) {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<16x32xbf16>
  %b = graph.weight_ref @b {device = #device.dev<cpu>} : tensor<16xbf16>
  %k = graph.weight_ref @k {device = #device.dev<cpu>} : tensor<16x8x3x3xf16>
  %l = graph.linear %x, %w {device = #device.dev<cpu>} : tensor<8x32xbf16>, tensor<16x32xbf16>
  %a = graph.add %l, %b {device = #device.dev<cpu>} : tensor<8x16xbf16>, tensor<16xbf16>
  %g = graph.gelu %a {device = #device.dev<cpu>} : tensor<8x16xbf16>
  %c = graph.conv2d %img, %k {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x4x4xf16>, tensor<16x8x3x3xf16>
  %cf = graph.cast %c {device = #device.dev<cpu>} : tensor<1x16x4x4xf16> to f32
  %r = graph.relu %cf {device = #device.dev<cpu>} : tensor<1x16x4x4xf32>
  return %g, %r : tensor<8x16xbf16>, tensor<1x16x4x4xf32>
}
