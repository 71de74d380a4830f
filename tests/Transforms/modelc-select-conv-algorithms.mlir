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

// -----

// A training step's convolutions (a weight that is an argument, so not a
// packed product; the input and weight gradients) of 16 or more channels
// run through oneDNN's primitives: Winograd for 3x3, stride 1, 16k
// channels and an output of 14x14 or more; direct for a strided one, a
// 7x7 output and a grouped one of 16 channels per group. A first layer of
// 3 channels, a transposed convolution with a bias (col2im) and a GPU's
// convolution keep the generated kernels.
// CHECK-LABEL: func.func @training
// CHECK: graph.conv2d {{.*}}sched.dnnl_conv = "winograd"} : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>
// CHECK: graph.conv_transpose2d {{.*}}sched.dnnl_conv = "winograd"} : tensor<2x32x16x16xf32>, tensor<32x16x3x3xf32>
// CHECK: graph.conv2d_weight_grad {{.*}}sched.dnnl_conv = "winograd"
// CHECK: graph.conv2d {{.*}}sched.dnnl_conv = "direct", strides
// CHECK: graph.conv2d {{.*}}sched.dnnl_conv = "direct"} : tensor<2x32x7x7xf32>
// CHECK: graph.conv2d {{.*}}groups = 2 : i64, {{.*}}sched.dnnl_conv = "direct"
// CHECK: graph.conv2d
// CHECK-NOT: dnnl_conv
// CHECK-SAME: tensor<2x3x16x16xf32>
// CHECK: graph.conv_transpose2d
// CHECK-SAME: sched.col2im
// CHECK-NOT: dnnl_conv
// CHECK: graph.conv2d {{.*}} {device = #device.dev<cuda:0>
// CHECK-NOT: dnnl_conv
// CHECK-SAME: tensor<32x16x3x3xf32>
// DIRECT-LABEL: func.func @training
// DIRECT-NOT: "winograd"
// DIRECT: sched.dnnl_conv = "direct"
func.func @training(%x: tensor<2x16x16x16xf32>, %w: tensor<32x16x3x3xf32>, %v: tensor<32x32x3x3xf32>, %g: tensor<32x16x3x3xf32>, %rgb: tensor<2x3x16x16xf32>, %f: tensor<16x3x3x3xf32>, %bias: tensor<16xf32>)
    -> (tensor<2x32x16x16xf32>, tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>, tensor<2x32x7x7xf32>, tensor<2x32x16x16xf32>, tensor<2x16x16x16xf32>, tensor<2x16x16x16xf32>, tensor<2x32x16x16xf32>) {
  %a = graph.conv2d %x, %w {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>
  %dx = graph.conv_transpose2d %a, %w {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x32x16x16xf32>, tensor<32x16x3x3xf32>
  %dw = graph.conv2d_weight_grad %x, %a {device = #device.dev<cpu>, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x16x16x16xf32>, tensor<2x32x16x16xf32>
  %s = graph.conv2d %x, %w {device = #device.dev<cpu>, strides = array<i64: 2, 2>} : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>
  %t = graph.conv2d %s, %v {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x32x7x7xf32>, tensor<32x32x3x3xf32>
  %u = graph.conv2d %a, %g {device = #device.dev<cpu>, groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<2x32x16x16xf32>, tensor<32x16x3x3xf32>
  %r = graph.conv2d %rgb, %f {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x16x16xf32>, tensor<16x3x3x3xf32>
  %b = graph.conv_transpose2d %a, %w, %bias {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x32x16x16xf32>, tensor<32x16x3x3xf32>, tensor<16xf32>
  %c = graph.conv2d %x, %w {device = #device.dev<cuda:0>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>
  return %a, %dx, %dw, %t, %u, %r, %b, %c : tensor<2x32x16x16xf32>, tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>, tensor<2x32x7x7xf32>, tensor<2x32x16x16xf32>, tensor<2x16x16x16xf32>, tensor<2x16x16x16xf32>, tensor<2x32x16x16xf32>
}

// -----

// Sizes known at run time (a graph.dim) keep the generated kernels.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: dnnl_conv
graph.dim @batch 1 to 8 at 2
func.func @dynamic(%x: tensor<2x16x16x16xf32> {graph.dims = ["batch", "", "", ""]}, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %a = graph.conv2d %x, %w {device = #device.dev<cpu>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>
  return %a : tensor<2x32x16x16xf32>
}
