// RUN: modelc-opt %s --split-input-file --modelc-schedule-streams | FileCheck %s

// A copy runs on its destination's copy stream once its source is ready (an
// input needs no wait); a task waits for the copies it reads; the outputs
// wait on the host. Every copy and every result a copy reads gets an event.
// A second reader on the same stream does not wait again, and a value made
// on the reader's own compute stream needs no wait.
// CHECK-LABEL: func.func @two_devices
// CHECK-SAME: attributes {sched.events = 3 : i64}
// CHECK: %[[X0:.*]] = device.transfer %{{.*}} from <cpu> to <sim:0> {sched.record = 0 : i64, sched.stream = "copy"}
// CHECK: %[[W:.*]] = graph.weight_ref @w {device = #device.dev<sim:0>} :
// CHECK: %[[M:.*]] = graph.matmul %[[X0]], %[[W]] {device = #device.dev<sim:0>, sched.record = 1 : i64, sched.stream = "compute", sched.waits = array<i64: 0>}
// CHECK: %[[E:.*]] = graph.exp %[[X0]] {device = #device.dev<sim:0>, sched.stream = "compute"} :
// CHECK: %[[A:.*]] = graph.add %[[E]], %[[M]] {device = #device.dev<sim:0>, sched.stream = "compute"} :
// CHECK: %[[Y:.*]] = device.transfer %[[M]] from <sim:0> to <cpu> {sched.record = 2 : i64, sched.stream = "copy", sched.waits = array<i64: 1>}
// CHECK: return {sched.waits = array<i64: 2>} %[[Y]]
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  graph.weight @w : tensor<4x4xf32>
  func.func @two_devices(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4x4xf32>
    %w = graph.weight_ref @w {device = #device.dev<sim:0>} : tensor<4x4xf32>
    %m = graph.matmul %x0, %w {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
    %e = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4x4xf32>
    %a = graph.add %e, %m {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
    %y = device.transfer %m from <sim:0> to <cpu> : tensor<4x4xf32>
    return %y : tensor<4x4xf32>
  }
}

// -----

// A view shares its source's event: the copy of a reshape waits for the
// op that made the source.
// CHECK-LABEL: func.func @view
// CHECK-SAME: attributes {sched.events = 3 : i64}
// CHECK: graph.exp %{{.*}} {device = #device.dev<sim:0>, sched.record = 1 : i64, sched.stream = "compute", sched.waits = array<i64: 0>}
// CHECK: graph.reshape %{{.*}} to [16] {device = #device.dev<sim:0>} :
// CHECK: device.transfer %{{.*}} from <sim:0> to <cpu> {sched.record = 2 : i64, sched.stream = "copy", sched.waits = array<i64: 1>}
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @view(%x: tensor<4x4xf32>) -> tensor<16xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4x4xf32>
    %e = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4x4xf32>
    %r = graph.reshape %e to [16] {device = #device.dev<sim:0>} : tensor<4x4xf32>
    %y = device.transfer %r from <sim:0> to <cpu> : tensor<16xf32>
    return %y : tensor<16xf32>
  }
}

// -----

// A copy of a view of a constant (an imported model's reshaped scale)
// waits for nothing: constants are ready before the run, no op records
// them, so they get no event.
// CHECK-LABEL: func.func @constant_view
// CHECK-SAME: attributes {sched.events = 4 : i64}
// CHECK: graph.reshape %{{.*}} to [1, 4] {device = #device.dev<cpu>} :
// CHECK-NEXT: device.transfer %{{.*}} from <cpu> to <sim:0> {sched.record = 1 : i64, sched.stream = "copy"} :
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @constant_view(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<2x4xf32>
    %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> {device = #device.dev<cpu>}
    %r = graph.reshape %c to [1, 4] {device = #device.dev<cpu>} : tensor<4xf32>
    %r0 = device.transfer %r from <cpu> to <sim:0> : tensor<1x4xf32>
    %m = graph.mul %x0, %r0 {device = #device.dev<sim:0>} : tensor<2x4xf32>, tensor<1x4xf32>
    %y = device.transfer %m from <sim:0> to <cpu> : tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// A plan on the host alone runs straight-line code: no streams.
// CHECK-LABEL: func.func @host_only
// CHECK-SAME: -> tensor<4xf32> {
// CHECK-NEXT: graph.exp %{{.*}} {device = #device.dev<cpu>} : tensor<4xf32>
module attributes {device.target = #device.target<name = "cpu", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @host_only(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = graph.exp %x {device = #device.dev<cpu>} : tensor<4xf32>
    return %e : tensor<4xf32>
  }
}
