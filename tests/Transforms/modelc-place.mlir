// RUN: modelc-opt %s --split-input-file --modelc-place=target=h200x2 --verify-diagnostics | FileCheck %s

// Large matrix products go to a GPU; the inputs stay on the host.
// CHECK-LABEL: func.func @gemm_on_gpu
// CHECK: graph.linear {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.relu {{.*}} {device = #device.dev<cuda:0>}
graph.weight @w : tensor<4096x4096xf32>
func.func @gemm_on_gpu(%x: tensor<1024x4096xf32>) -> tensor<1024x4096xf32> {
  %w = graph.weight_ref @w : tensor<4096x4096xf32>
  %y = graph.linear %x, %w : tensor<1024x4096xf32>, tensor<4096x4096xf32>
  %r = graph.relu %y : tensor<1024x4096xf32>
  return %r : tensor<1024x4096xf32>
}

// -----

// A pin is honoured even where the cost model would not go, and stored as a
// device attribute.
// CHECK-LABEL: func.func @pinned
// CHECK: graph.linear {{.*}} {device = #device.dev<cuda:1>}
// CHECK: graph.relu {{.*}} {device = #device.dev<cpu>}
graph.weight @w : tensor<4096x4096xf32>
func.func @pinned(%x: tensor<1024x4096xf32>) -> tensor<1024x4096xf32> {
  %w = graph.weight_ref @w : tensor<4096x4096xf32>
  %y = graph.linear %x, %w {device = "cuda:1"} : tensor<1024x4096xf32>, tensor<4096x4096xf32>
  %r = graph.relu %y {device = #device.dev<cpu>} : tensor<1024x4096xf32>
  return %r : tensor<1024x4096xf32>
}

// -----

// Tiny ops stay with their input: no GPU round trip for a scalar, neither
// away from the host nor back to it. Views (reshape) follow their input too.
// CHECK-LABEL: func.func @tiny
// CHECK: graph.add {{.*}} {device = #device.dev<cpu>}
// CHECK: graph.linear {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.reduce_max {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.reshape {{.*}} {device = #device.dev<cuda:0>}
graph.weight @w : tensor<4096x4096xf32>
func.func @tiny(%s: tensor<f32>, %x: tensor<1024x4096xf32>) -> (tensor<f32>, tensor<1x1xf32>) {
  %t = graph.add %s, %s : tensor<f32>, tensor<f32>
  %w = graph.weight_ref @w : tensor<4096x4096xf32>
  %y = graph.linear %x, %w : tensor<1024x4096xf32>, tensor<4096x4096xf32>
  %m = graph.reduce_max %y : tensor<1024x4096xf32>
  %r = graph.reshape %m to [1, 1] : tensor<f32>
  return %t, %r : tensor<f32>, tensor<1x1xf32>
}

// -----

// A loss's class weights follow the op to its device (the classic
// criterion.cuda() mistake cannot happen).
// CHECK-LABEL: func.func @class_weights
// CHECK: graph.weight_ref @classes {device = #device.dev<[[D:cuda:[01]]]>}
// CHECK: graph.cross_entropy {{.*}} {device = #device.dev<[[D]]>}
graph.weight @head : tensor<8192x4096xf32>
graph.weight @classes : tensor<8192xf32>
func.func @class_weights(%x: tensor<512x4096xf32>, %t: tensor<512xi64>) -> tensor<f32> {
  %w = graph.weight_ref @head : tensor<8192x4096xf32>
  %logits = graph.linear %x, %w : tensor<512x4096xf32>, tensor<8192x4096xf32>
  %c = graph.weight_ref @classes : tensor<8192xf32>
  %loss = graph.cross_entropy %logits, %t weight %c : tensor<512x8192xf32>, tensor<512xi64>, tensor<8192xf32>
  return %loss : tensor<f32>
}

// -----

// The module records the target.
// CHECK: module attributes {{.*}}device.target = #device.target<name = "h200x2"
func.func @records_target(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @pin_missing_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pinned to 'cuda:3', which target 'h200x2' does not have (it has cpu, cuda:0, cuda:1)}}
  %0 = graph.relu %x {device = "cuda:3"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pin_sim_on_gpu_target(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pinned to 'sim:0', which target 'h200x2' does not have (it has cpu, cuda:0, cuda:1)}}
  %0 = graph.relu %x {device = "sim:0"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pin_without_kernel(%x: tensor<64x64xi32>) -> tensor<64xi32> {
  // expected-error @+1 {{pinned to 'cuda:0', but 'graph.reduce_max' has no kernel there for these element types}}
  %0 = graph.reduce_max %x {axes = array<i64: 1>, device = "cuda:0"} : tensor<64x64xi32>
  return %0 : tensor<64xi32>
}

// -----

// The CUDA printer's kernel table takes float reductions only; the host's
// takes integers too: the integer sum of a GPU result runs on the host.
// CHECK-LABEL: func.func @int_reduce_on_host
// CHECK: graph.cast {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.reduce_sum {{.*}} {axes = array<i64: 1>, device = #device.dev<cpu>}
// CHECK: graph.reduce_sum {{.*}} {axes = array<i64: 1>, device = #device.dev<cuda:0>}
graph.weight @wr : tensor<4096x4096xf32>
func.func @int_reduce_on_host(%x: tensor<1024x4096xf32>) -> (tensor<1024xi32>, tensor<1024xf32>) {
  %w = graph.weight_ref @wr : tensor<4096x4096xf32>
  %y = graph.linear %x, %w : tensor<1024x4096xf32>, tensor<4096x4096xf32>
  %i = graph.cast %y : tensor<1024x4096xf32> to i32
  %0 = graph.reduce_sum %i {axes = array<i64: 1>} : tensor<1024x4096xi32>
  %1 = graph.reduce_sum %y {axes = array<i64: 1>} : tensor<1024x4096xf32>
  return %0, %1 : tensor<1024xi32>, tensor<1024xf32>
}

// -----

func.func @int_reduce_pinned(%x: tensor<64x64xi32>) -> tensor<64xi32> {
  // expected-error @+1 {{pinned to 'cuda:0', but 'graph.reduce_sum' has no kernel there for these element types}}
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, device = "cuda:0"} : tensor<64x64xi32>
  return %0 : tensor<64xi32>
}

// -----

// Integer matrix products have kernels on the CPU and on GPUs (generated
// loops that wrap around on overflow): a large one goes to a GPU, a pinned
// one where it is pinned.
// CHECK-LABEL: func.func @integer_products
// CHECK: graph.matmul {{.*}} {device = #device.dev<cuda:{{[01]}}>}
// CHECK: graph.gemm {{.*}} {device = #device.dev<cuda:1>, transpose_b = true}
func.func @integer_products(%x: tensor<1024x1024xi32>, %y: tensor<256x256xi64>) -> (tensor<1024x1024xi32>, tensor<256x256xi64>) {
  %0 = graph.matmul %x, %x : tensor<1024x1024xi32>, tensor<1024x1024xi32>
  %1 = graph.gemm %y, %y {device = "cuda:1", transpose_b = true} : tensor<256x256xi64>, tensor<256x256xi64>
  return %0, %1 : tensor<1024x1024xi32>, tensor<256x256xi64>
}
