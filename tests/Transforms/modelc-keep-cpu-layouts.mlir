// RUN: modelc-opt %s --split-input-file --modelc-fold-cpu-products --modelc-keep-cpu-layouts | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fold-cpu-products --modelc-keep-cpu-layouts --modelc-plan-memory | FileCheck %s --check-prefix=MEMORY

// An expand, depthwise and project convolution chain (a MobileNet block):
// the first two results are read only by the next convolution and keep
// oneDNN's layout; the last is read by an add and an output, and stays
// NCHW. A kept buffer is sized for 16-channel blocks: 20 channels become
// 32 (1 x 32 x 4 x 4 x 4 bytes = 2048), where NCHW takes 1280.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x20x4x4xf32>
// CHECK: %[[B:.*]] = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x20x4x4xf32>
// CHECK-NEXT: graph.conv2d %[[A]]
// CHECK: %[[C:.*]] = sched.packed_product {device = #device.dev<cpu>} : tensor<1x8x4x4xf32>
// CHECK-NEXT: graph.conv2d %[[B]]
// MEMORY-LABEL: func.func @chain
// MEMORY: keep_layout, sched.buffer = #sched.buffer<offset = {{[0-9]+}}, bytes = 2048,
graph.weight @e : tensor<20x8x1x1xf32>
graph.weight @d : tensor<20x1x3x3xf32>
graph.weight @p : tensor<8x20x1x1xf32>
func.func @chain(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %e = graph.weight_ref @e {device = #device.dev<cpu>} : tensor<20x8x1x1xf32>
  %d = graph.weight_ref @d {device = #device.dev<cpu>} : tensor<20x1x3x3xf32>
  %p = graph.weight_ref @p {device = #device.dev<cpu>} : tensor<8x20x1x1xf32>
  %a = graph.conv2d %x, %e {device = #device.dev<cpu>} : tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>
  %ra = graph.relu %a {device = #device.dev<cpu>} : tensor<1x20x4x4xf32>
  %b = graph.conv2d %ra, %d {device = #device.dev<cpu>, groups = 20 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x20x4x4xf32>, tensor<20x1x3x3xf32>
  %c = graph.conv2d %b, %p {device = #device.dev<cpu>} : tensor<1x20x4x4xf32>, tensor<8x20x1x1xf32>
  %s = graph.add %c, %x {device = #device.dev<cpu>} : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  return %s, %c : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// A residual block: its input (a convolution's output) is read by the
// block's first convolution and by the sum after its second: kept. The
// block's output goes only to a global average pool on the CPU: kept too
// (the runtime pools it in that layout, kept_pool).
// CHECK-LABEL: func.func @residual
// CHECK: %[[IN:.*]] = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x4x4x4xf32>
// CHECK: %[[A:.*]] = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x4x4x4xf32>
// CHECK-NEXT: graph.conv2d %[[IN]]
// CHECK: %[[B:.*]] = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x4x4x4xf32>
// CHECK-NEXT: graph.conv2d %[[A]]
// CHECK-NEXT: graph.add %{{.*}}, %[[IN]]
// CHECK: graph.global_avg_pool %[[B]]
graph.weight @k : tensor<4x4x3x3xf32>
func.func @residual(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32> {
  %k = graph.weight_ref @k {device = #device.dev<cpu>} : tensor<4x4x3x3xf32>
  %in = graph.conv2d %x, %k {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>
  %a = graph.conv2d %in, %k {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>
  %ra = graph.relu %a {device = #device.dev<cpu>} : tensor<1x4x4x4xf32>
  %b = graph.conv2d %ra, %k {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>
  %s = graph.add %b, %in {device = #device.dev<cpu>} : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
  %p = graph.global_avg_pool %s {device = #device.dev<cpu>} : tensor<1x4x4x4xf32>
  return %p : tensor<1x4x1x1xf32>
}

// -----

// Not kept: a convolution read by a convolution as its weight, one read by
// a matrix product, one whose reader is on another device, one read by a
// global average pool and returned.
// CHECK-LABEL: func.func @not_kept
// CHECK-NOT: keep_layout
// CHECK: return
graph.weight @k : tensor<4x4x1x1xf32>
graph.weight @w : tensor<2x4xf32>
func.func @not_kept(%x: tensor<1x4x2x2xf32>) -> (tensor<1x4x2x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x2x2xf32>) {
  %k = graph.weight_ref @k {device = #device.dev<cpu>} : tensor<4x4x1x1xf32>
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<2x4xf32>
  %a = graph.conv2d %x, %k {device = #device.dev<cpu>} : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>
  %m = graph.matmul %a, %w {device = #device.dev<cpu>} : tensor<1x4x2x2xf32>, tensor<2x4xf32>
  %b = graph.conv2d %x, %k {device = #device.dev<cpu>} : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>
  %ks = graph.weight_ref @k {device = #device.dev<sim:0>} : tensor<4x4x1x1xf32>
  %t = device.transfer %b from <cpu> to <sim:0> : tensor<1x4x2x2xf32>
  %c = graph.conv2d %t, %ks {device = #device.dev<sim:0>} : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>
  %mm = graph.exp %m {device = #device.dev<cpu>} : tensor<1x4x2x4xf32>
  %g = graph.conv2d %x, %k {device = #device.dev<cpu>} : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>
  %gp = graph.global_avg_pool %g {device = #device.dev<cpu>} : tensor<1x4x2x2xf32>
  return %mm, %c, %gp, %g : tensor<1x4x2x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x2x2xf32>
}

// -----

// A bf16 convolution read only by another one stays NCHW: on a CPU
// without bf16 it computes in f32, whose layout would not fit its buffer.
// CHECK-LABEL: func.func @half
// CHECK-NOT: keep_layout
graph.weight @k1 : tensor<16x16x1x1xbf16>
graph.weight @k2 : tensor<16x16x1x1xbf16>
func.func @half(%x: tensor<1x16x4x4xbf16>) -> tensor<1x16x4x4xbf16> {
  %k1 = graph.weight_ref @k1 {device = #device.dev<cpu>} : tensor<16x16x1x1xbf16>
  %k2 = graph.weight_ref @k2 {device = #device.dev<cpu>} : tensor<16x16x1x1xbf16>
  %a = graph.conv2d %x, %k1 {device = #device.dev<cpu>} : tensor<1x16x4x4xbf16>, tensor<16x16x1x1xbf16>
  %b = graph.conv2d %a, %k2 {device = #device.dev<cpu>} : tensor<1x16x4x4xbf16>, tensor<16x16x1x1xbf16>
  return %b : tensor<1x16x4x4xbf16>
}
