// RUN: modelc-opt %s --split-input-file --modelc-plan-memory | FileCheck %s

// A convolution whose sum adds a residual that dies there writes its
// output over the residual (the same offset; the residual's lifetime ends
// where the product's begins), and so does the next such block: one
// buffer for the chain %a, %s1, %s2. %c1 and %c2, read while the residual
// lives, get other places.
// CHECK-LABEL: func.func @residual_chain
// CHECK: graph.exp %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = [[R:[0-9]+]], bytes = 576, first = 1, last = 3>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = [[C1:[0-9]+]], bytes = 576, first = 2, last = 3>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = [[R]], bytes = 576, first = 3, last = 6>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = [[C1]], bytes = 576, first = 4, last = 5>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = [[R]], bytes = 576, first = 6, last = 8>}
graph.weight @k : tensor<4x4x3x3xf32>
func.func @residual_chain(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %k = graph.weight_ref @k {device = #device.dev<cpu>} : tensor<4x4x3x3xf32>
  %a = graph.exp %x {device = #device.dev<cpu>} : tensor<1x4x6x6xf32>
  %c1 = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %a, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    sched.yield %p : tensor<1x4x6x6xf32>
  }
  %s1 = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %c1, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %p, %a : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  %c2 = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %s1, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    sched.yield %p : tensor<1x4x6x6xf32>
  }
  %t = graph.tanh %c2 {device = #device.dev<cpu>} : tensor<1x4x6x6xf32>
  %s2 = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %t, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %s1, %p : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  return %s2 : tensor<1x4x6x6xf32>
}

// -----

// No sum in place where the residual is read after the product (%a by the
// tanh), where it reaches the product also as the convolution's input
// (%b), or where it is a function argument (no buffer of the arena).
// CHECK-LABEL: func.func @residual_kept
// CHECK: graph.exp %{{.*}} {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 0, bytes = 576, first = 1, last = 3>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 576, bytes = 576, first = 2, last = 4>}
// CHECK: graph.tanh
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 0, bytes = 576, first = 4, last = 5>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 576, bytes = 576, first = 5, last = 7>}
graph.weight @k : tensor<4x4x3x3xf32>
func.func @residual_kept(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %k = graph.weight_ref @k {device = #device.dev<cpu>} : tensor<4x4x3x3xf32>
  %a = graph.exp %x {device = #device.dev<cpu>} : tensor<1x4x6x6xf32>
  %b = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %p, %a : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  %t = graph.tanh %a {device = #device.dev<cpu>} : tensor<1x4x6x6xf32>
  %c = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %b, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %p, %b : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  %d = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %c, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %p, %x : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  return %d : tensor<1x4x6x6xf32>
}

// -----

// A residual kept in oneDNN's layout is sized for 16-channel blocks: an
// output in NCHW holds fewer bytes and gets a buffer of its own.
// CHECK-LABEL: func.func @padded_residual
// CHECK: sched.packed_product {device = #device.dev<cpu>, keep_layout, sched.buffer = #sched.buffer<offset = 0, bytes = 2304, first = 1, last = 2>}
// CHECK: sched.packed_product {device = #device.dev<cpu>, sched.buffer = #sched.buffer<offset = 2304, bytes = 576, first = 2, last = 4>}
graph.weight @k : tensor<4x4x3x3xf32>
func.func @padded_residual(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %k = graph.weight_ref @k {device = #device.dev<cpu>} : tensor<4x4x3x3xf32>
  %a = sched.packed_product {device = #device.dev<cpu>, keep_layout} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    sched.yield %p : tensor<1x4x6x6xf32>
  }
  %b = sched.packed_product {device = #device.dev<cpu>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %p, %a : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  return %b : tensor<1x4x6x6xf32>
}

// -----

// On a simulated device: a residual the device computed is written over
// (%a, %s), one a transfer brought (%t: its buffer is the copy stream's for
// the whole run) is not.
// CHECK-LABEL: func.func @on_sim
// CHECK: device.transfer %{{.*}} from <cpu> to <sim:0> {sched.buffer = #sched.buffer<offset = 0, bytes = 576, first = 0, last = 7>}
// CHECK: graph.exp %{{.*}} {device = #device.dev<sim:0>, sched.buffer = #sched.buffer<offset = 576, bytes = 576, first = 2, last = 3>}
// CHECK: sched.packed_product {device = #device.dev<sim:0>, sched.buffer = #sched.buffer<offset = 576, bytes = 576, first = 3, last = 4>}
// CHECK: sched.packed_product {device = #device.dev<sim:0>, sched.buffer = #sched.buffer<offset = 1152, bytes = 576, first = 4, last = 7>}
module attributes {device.target = #device.target<name = "cpu+sim1", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  graph.weight @k : tensor<4x4x3x3xf32>
  func.func @on_sim(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
    %t = device.transfer %x from <cpu> to <sim:0> : tensor<1x4x6x6xf32>
    %k = graph.weight_ref @k {device = #device.dev<sim:0>} : tensor<4x4x3x3xf32>
    %a = graph.exp %t {device = #device.dev<sim:0>} : tensor<1x4x6x6xf32>
    %s = sched.packed_product {device = #device.dev<sim:0>} : tensor<1x4x6x6xf32> {
      %p = graph.conv2d %t, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
      %y = graph.add %p, %a : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
      sched.yield %y : tensor<1x4x6x6xf32>
    }
    %u = sched.packed_product {device = #device.dev<sim:0>} : tensor<1x4x6x6xf32> {
      %p = graph.conv2d %s, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
      %y = graph.add %p, %t : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
      sched.yield %y : tensor<1x4x6x6xf32>
    }
    %o = device.transfer %u from <sim:0> to <cpu> : tensor<1x4x6x6xf32>
    return %o : tensor<1x4x6x6xf32>
  }
}
