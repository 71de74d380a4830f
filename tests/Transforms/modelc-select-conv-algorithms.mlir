// RUN: modelc-opt %s --split-input-file --modelc-fold-cpu-products --modelc-select-conv-algorithms | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fold-cpu-products --modelc-select-conv-algorithms=winograd=false | FileCheck %s --check-prefix=DIRECT

// A ResNet basic block's 3x3 convolutions (stride 1, 16k channels) take
// Winograd's algorithm; the strided 3x3 convolution, the 1x1 shortcut
// (which carries the residual sum and relu) and the 7x7 one stay direct.
// CHECK-LABEL: func.func @block
// CHECK: sched.packed_product {device = #device.dev<cpu>} : tensor<1x32x4x4xf32>
// CHECK-NEXT: graph.conv2d {{.*}} tensor<32x16x3x3xf32>
// CHECK: sched.packed_product {device = #device.dev<cpu>, winograd} : tensor<1x32x4x4xf32>
// CHECK-NEXT: graph.conv2d {{.*}} tensor<32x32x3x3xf32>
// CHECK: sched.packed_product {device = #device.dev<cpu>} : tensor<1x32x4x4xf32>
// CHECK-NEXT: graph.conv2d {{.*}} tensor<32x16x1x1xf32>
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.relu
// CHECK: sched.packed_product {device = #device.dev<cpu>, winograd} : tensor<1x32x4x4xf32>
// CHECK-NEXT: graph.conv2d {{.*}} tensor<32x32x3x3xf32>
// CHECK: sched.packed_product {device = #device.dev<cpu>} : tensor<1x32x4x4xf32>
// CHECK-NEXT: graph.conv2d {{.*}} tensor<32x32x7x7xf32>
// DIRECT-LABEL: func.func @block
// DIRECT-NOT: winograd}
graph.weight @down : tensor<32x16x3x3xf32>
graph.weight @short : tensor<32x16x1x1xf32>
graph.weight @k1 : tensor<32x32x3x3xf32>
graph.weight @k2 : tensor<32x32x3x3xf32>
graph.weight @k7 : tensor<32x32x7x7xf32>
func.func @block(%x: tensor<1x16x8x8xf32>) -> tensor<1x32x4x4xf32> {
  %down = graph.weight_ref @down {device = #device.dev<cpu>} : tensor<32x16x3x3xf32>
  %short = graph.weight_ref @short {device = #device.dev<cpu>} : tensor<32x16x1x1xf32>
  %k1 = graph.weight_ref @k1 {device = #device.dev<cpu>} : tensor<32x32x3x3xf32>
  %k2 = graph.weight_ref @k2 {device = #device.dev<cpu>} : tensor<32x32x3x3xf32>
  %k7 = graph.weight_ref @k7 {device = #device.dev<cpu>} : tensor<32x32x7x7xf32>
  %s = graph.conv2d %x, %short {device = #device.dev<cpu>, strides = array<i64: 2, 2>} : tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>
  %a = graph.conv2d %x, %down {device = #device.dev<cpu>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>
  %b = graph.conv2d %a, %k1 {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x32x4x4xf32>, tensor<32x32x3x3xf32>
  %c = graph.add %b, %s {device = #device.dev<cpu>} : tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>
  %r = graph.relu %c {device = #device.dev<cpu>} : tensor<1x32x4x4xf32>
  %d = graph.conv2d %r, %k2 {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x32x4x4xf32>, tensor<32x32x3x3xf32>
  %e = graph.conv2d %d, %k7 {device = #device.dev<cpu>, padding = array<i64: 3, 3, 3, 3>} : tensor<1x32x4x4xf32>, tensor<32x32x7x7xf32>
  return %e : tensor<1x32x4x4xf32>
}

// -----

// Not Winograd: a depthwise (grouped) 3x3 convolution, a dilated one, and
// one of 8 input channels (oneDNN's transforms take blocks of 16).
// CHECK-LABEL: func.func @not_winograd
// CHECK-NOT: winograd}
graph.weight @dw : tensor<16x1x3x3xf32>
graph.weight @dil : tensor<16x16x3x3xf32>
graph.weight @few : tensor<16x8x3x3xf32>
func.func @not_winograd(%x: tensor<1x16x8x8xf32>, %y: tensor<1x8x8x8xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %dw = graph.weight_ref @dw {device = #device.dev<cpu>} : tensor<16x1x3x3xf32>
  %dil = graph.weight_ref @dil {device = #device.dev<cpu>} : tensor<16x16x3x3xf32>
  %few = graph.weight_ref @few {device = #device.dev<cpu>} : tensor<16x8x3x3xf32>
  %a = graph.conv2d %x, %dw {device = #device.dev<cpu>, groups = 16 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>
  %b = graph.conv2d %x, %dil {device = #device.dev<cpu>, dilations = array<i64: 2, 2>, padding = array<i64: 2, 2, 2, 2>} : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>
  %c = graph.conv2d %y, %few {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32>
  return %a, %b, %c : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}

// -----

// Transposed convolutions (a convolution's input gradient): on the CPU a
// GEMM and col2im when each output sums 4 or more input channels; tap by
// tap for one channel (average pooling's gradient) and on a GPU.
// CHECK-LABEL: func.func @transposed
// CHECK: graph.conv_transpose2d {{.*}}sched.col2im{{.*}} : tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>
// CHECK: graph.conv_transpose2d
// CHECK-NOT: sched.col2im
// CHECK-SAME: tensor<8x1x4x4xf32>, tensor<1x1x2x2xf32>
// CHECK: graph.conv_transpose2d
// CHECK-NOT: sched.col2im
// CHECK-SAME: tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>
// DIRECT-LABEL: func.func @transposed
// DIRECT: sched.col2im
func.func @transposed(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>, %p: tensor<8x1x4x4xf32>, %ones: tensor<1x1x2x2xf32>) -> (tensor<1x4x6x6xf32>, tensor<8x1x8x8xf32>, tensor<1x4x6x6xf32>) {
  %a = graph.conv_transpose2d %x, %w {device = #device.dev<cpu>} : tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>
  %b = graph.conv_transpose2d %p, %ones {device = #device.dev<cpu>, strides = array<i64: 2, 2>} : tensor<8x1x4x4xf32>, tensor<1x1x2x2xf32>
  %c = graph.conv_transpose2d %x, %w {device = #device.dev<cuda:0>} : tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>
  return %a, %b, %c : tensor<1x4x6x6xf32>, tensor<8x1x8x8xf32>, tensor<1x4x6x6xf32>
}
