// RUN: modelc-opt %s --split-input-file --modelc-schedule-streams --verify-diagnostics | FileCheck %s

// The members of a sum over the replicas (graph.replica_all_reduce) run on
// their devices' copy streams, as copies do: each waits for its input's
// event and records its result's; a task reading a member's result on the
// compute stream waits for it. Other ops may lie between a group's members.
// CHECK-LABEL: func.func @members
// CHECK: %[[G0:.*]] = graph.exp %{{.*}} {device = #device.dev<sim:0>, sched.record = 2 : i64, sched.stream = "compute", sched.waits = array<i64: 0>}
// CHECK: %[[G1:.*]] = graph.exp %{{.*}} {device = #device.dev<sim:1>, sched.record = 4 : i64, sched.stream = "compute", sched.waits = array<i64: 1>}
// CHECK: %[[R0:.*]] = graph.replica_all_reduce %[[G0]] {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64, sched.record = 3 : i64, sched.stream = "copy", sched.waits = array<i64: 2>}
// CHECK: graph.neg %[[G1]] {device = #device.dev<sim:1>, sched.stream = "compute"}
// CHECK: %[[R1:.*]] = graph.replica_all_reduce %[[G1]] {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64, sched.record = 5 : i64, sched.stream = "copy", sched.waits = array<i64: 4>}
// CHECK: graph.neg %[[R0]] {device = #device.dev<sim:0>, sched.record = 6 : i64, sched.stream = "compute", sched.waits = array<i64: 3>}
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @members(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %n = graph.neg %g1 {device = #device.dev<sim:1>} : tensor<4xf32>
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %r = graph.neg %r0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %y = device.transfer %r from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// Errors: every device must meet the groups in the same order, so a
// group's members come in member order, each on its own device, all of
// them before the next group starts.
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @out_of_order(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 1 starts with member 1 instead of member 0}}
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @interleaved(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 2 starts before group 1 has all its 2 members (it has 1)}}
    %s0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 2 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %s1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 2 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @one_device(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 1: two members on one device; each replica needs its own}}
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:0>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @incomplete(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 1 has 1 of its 2 members}}
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 1 appears twice}}
    %t0 = graph.replica_all_reduce %r0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %t1 = graph.replica_all_reduce %r1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @sizes(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 1: member 1 of 3 where member 1 of 2 was due}}
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 3 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @late_input(%x: tensor<4xf32>) -> tensor<4xf32> {
    %x0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
    %x1 = device.transfer %x from <cpu> to <sim:1> : tensor<4xf32>
    %g0 = graph.exp %x0 {device = #device.dev<sim:0>} : tensor<4xf32>
    %r0 = graph.replica_all_reduce %g0 {device = #device.dev<sim:0>, group = 1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
    %g1 = graph.exp %x1 {device = #device.dev<sim:1>} : tensor<4xf32>
    // expected-error @+1 {{replica_all_reduce group 1: member 1's input is computed after the group's first member}}
    %r1 = graph.replica_all_reduce %g1 {device = #device.dev<sim:1>, group = 1 : i64, member = 1 : i64, members = 2 : i64} : tensor<4xf32>
    %y = device.transfer %r0 from <sim:0> to <cpu> : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// A sum over the ranks placed on a GPU (graph.all_reduce, NCCL) runs on its
// copy stream like a copy: it waits for its input's event and records its
// result's, which the compute stream waits for; the host's sums stay on the
// host's compute stream.
// CHECK-LABEL: func.func @rank_sums
// CHECK: %[[G:.*]] = graph.exp %{{.*}} {device = #device.dev<cuda:0>, sched.record = 1 : i64, sched.stream = "compute", sched.waits = array<i64: 0>}
// CHECK: %[[S:.*]] = graph.all_reduce %[[G]] {device = #device.dev<cuda:0>, sched.record = 2 : i64, sched.stream = "copy", sched.waits = array<i64: 1>}
// CHECK: graph.neg %[[S]] {device = #device.dev<cuda:0>, sched.record = 3 : i64, sched.stream = "compute", sched.waits = array<i64: 2>}
// CHECK: graph.all_reduce %{{.*}} {device = #device.dev<cpu>, sched.stream = "compute"}
module attributes {device.target = #device.target<name = "h200", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <cuda:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @rank_sums(%x: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
    %x0 = device.transfer %x from <cpu> to <cuda:0> : tensor<4xf32>
    %g = graph.exp %x0 {device = #device.dev<cuda:0>} : tensor<4xf32>
    %sum = graph.all_reduce %g {device = #device.dev<cuda:0>} : tensor<4xf32>
    %n = graph.neg %sum {device = #device.dev<cuda:0>} : tensor<4xf32>
    %y = device.transfer %n from <cuda:0> to <cpu> : tensor<4xf32>
    %t = graph.all_reduce %s {device = #device.dev<cpu>} : tensor<f32>
    return %y, %t : tensor<4xf32>, tensor<f32>
  }
}
