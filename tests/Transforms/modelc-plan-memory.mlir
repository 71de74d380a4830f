// RUN: modelc-opt %s --split-input-file --modelc-plan-memory | FileCheck %s

// Buffers whose lifetimes do not overlap share memory: %a dies when %b is
// computed, so %c reuses its place. The output lives to the end of the run
// (position 5, past the return). Views (reshape) have no buffer of their own and keep
// their source alive.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME: attributes {sched.arenas = {cpu = 128 : i64}}
// CHECK: graph.exp %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 0, last = 1>}
// CHECK: graph.neg %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 64, bytes = 64, first = 1, last = 3>}
// CHECK: graph.reshape %{{.*}} to [4, 4] {device = #device.dev<cpu>} : tensor<16xf32>
// CHECK: graph.tanh %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 3, last = 5>}
func.func @reuse(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  %a = graph.exp %x {device = #device.dev<cpu>} : tensor<16xf32>
  %b = graph.neg %a {device = #device.dev<cpu>} : tensor<16xf32>
  %r = graph.reshape %b to [4, 4] {device = #device.dev<cpu>} : tensor<16xf32>
  %c = graph.tanh %r {device = #device.dev<cpu>} : tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

// One arena per device of the target. A transfer's destination is reserved
// for the whole run and so is its source (the copy stream reads it whenever
// it is ready). Weights need no buffer.
// CHECK-LABEL: func.func @two_devices
// CHECK-SAME: sched.arenas = {cpu = 64 : i64, "sim:0" = 128 : i64, "sim:1" = 0 : i64}
// CHECK: device.transfer %{{.*}} from <cpu> to <sim:0> {sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 0, last = 5>}
// CHECK: graph.weight_ref @w {device = #device.dev<sim:0>} :
// CHECK: graph.matmul %{{.*}} {device = #device.dev<sim:0>, sched.buffer = #sched.buffer<offset = 64, bytes = 64, first = 2, last = 5>}
// CHECK: device.transfer %{{.*}} from <sim:0> to <cpu> {sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 0, last = 5>}
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  graph.weight @w : tensor<4x4xf32>
  func.func @two_devices(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4x4xf32>
    %w = graph.weight_ref @w {device = #device.dev<sim:0>} : tensor<4x4xf32>
    %m = graph.matmul %x0, %w {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
    %y = device.transfer %m from <sim:0> to <cpu> : tensor<4x4xf32>
    return %y : tensor<4x4xf32>
  }
}

// -----

// Scratch is alive while its op runs: an f16 matmul on the CPU multiplies
// one batch at a time in f32 (OpenBLAS), in scratch for its operands and
// its product (4x8 + 8x4 + 4x4 floats).
// CHECK-LABEL: func.func @scratch
// CHECK-SAME: attributes {sched.arenas = {cpu = 384 : i64}}
// CHECK: graph.matmul %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 320, bytes = 32, first = 0, last = 2>, sched.scratch = [#sched.buffer<offset = 0, bytes = 320, first = 0, last = 0>]}
func.func @scratch(%x: tensor<4x8xf16>, %y: tensor<8x4xf16>) -> tensor<4x4xf16> {
  %m = graph.matmul %x, %y {device = #device.dev<cpu>} : tensor<4x8xf16>, tensor<8x4xf16>
  return %m : tensor<4x4xf16>
}

// -----

// A GPU whose kernels check indices gets an error word, and the host a copy,
// both alive for the whole run (after every buffer of their arena).
// CHECK-LABEL: func.func @error_word
// CHECK-SAME: attributes {sched.arenas = {cpu = 128 : i64, "cuda:0" = 256 : i64}, sched.error_words = [#sched.error_word<device = <cuda:0>, offset = 192, host_offset = 64>]}
// CHECK: graph.gather %{{.*}} {device = #device.dev<cuda:0>, sched.buffer = #sched.buffer<offset = 64, bytes = 32, first = 2, last = 5>}
module attributes {device.target = #device.target<name = "h200", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <cuda:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @error_word(%d: tensor<4x4xf32>, %i: tensor<2xi64>) -> tensor<2x4xf32> {
    %d0 = device.transfer %d from <cpu> to <cuda:0> : tensor<4x4xf32>
    %i0 = device.transfer %i from <cpu> to <cuda:0> : tensor<2xi64>
    %g = graph.gather %d0, %i0 {axis = 0, device = #device.dev<cuda:0>} : tensor<4x4xf32>, tensor<2xi64>
    %y = device.transfer %g from <cuda:0> to <cpu> : tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// A graph.assign's `after` operands only order the write after the ops
// that read the weight's old value: %r is not read by the assign, so its
// buffer is free after %s (its last reader) and %t takes its place.
// CHECK-LABEL: func.func @assign_after
// CHECK-SAME: attributes {sched.arenas = {cpu = 128 : i64}}
// CHECK: graph.mul %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 1, last = 2>}
// CHECK: graph.exp %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 64, bytes = 64, first = 2, last = 6>}
// CHECK: graph.neg %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 3, last = 4>}
// CHECK: graph.assign @w, %{{.*}} after(%{{.*}}) {device = #device.dev<cpu>}
graph.weight @w {writable} : tensor<16xf32>
func.func @assign_after(%x: tensor<16xf32>) -> tensor<16xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<16xf32>
  %r = graph.mul %x, %w {device = #device.dev<cpu>} : tensor<16xf32>, tensor<16xf32>
  %s = graph.exp %r {device = #device.dev<cpu>} : tensor<16xf32>
  %t = graph.neg %x {device = #device.dev<cpu>} : tensor<16xf32>
  graph.assign @w, %t after(%r) {device = #device.dev<cpu>} : tensor<16xf32>, tensor<16xf32>
  return %s : tensor<16xf32>
}
