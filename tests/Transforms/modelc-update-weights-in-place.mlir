// RUN: modelc-opt %s --split-input-file --modelc-update-weights-in-place | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-update-weights-in-place --modelc-plan-memory | FileCheck %s --check-prefix=PLAN

// SGD with momentum on the CPU plan: the new momentum and the new weight
// are written into their weights; the parameter's update reads the new
// momentum (now in @w.momentum) and the old weight element by element. The
// matmul reads the old weight before the updates. Neither loop gets a
// buffer of the arena.
// CHECK-LABEL: func.func @sgd
// CHECK: %[[BUF:.*]] = sched.fused(%{{.*}}, %{{.*}}) {device = #device.dev<cpu>, sched.writes_weight = @w.momentum}
// CHECK: graph.assign @w.momentum, %[[BUF]]
// CHECK: %[[NEW:.*]] = sched.fused(%{{.*}}, %[[BUF]]) {device = #device.dev<cpu>, sched.writes_weight = @w}
// CHECK: graph.assign @w, %[[NEW]]
// PLAN-LABEL: func.func @sgd
// PLAN-SAME: sched.arenas = {cpu = 64 : i64}
// PLAN: graph.matmul {{.*}}sched.buffer
// PLAN: sched.fused({{.*}}) {device = #device.dev<cpu>, sched.writes_weight = @w.momentum} :
// PLAN: sched.fused({{.*}}) {device = #device.dev<cpu>, sched.writes_weight = @w} :
graph.weight @w {writable} : tensor<4x4xf32>
graph.weight @w.momentum {frozen, writable} : tensor<4x4xf32>
func.func @sgd(%x: tensor<1x4xf32>, %g: tensor<4x4xf32>) -> tensor<1x4xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4x4xf32>
  %m = graph.weight_ref @w.momentum {device = #device.dev<cpu>} : tensor<4x4xf32>
  %y = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<1x4xf32>, tensor<4x4xf32>
  %buf = sched.fused(%m, %g) {device = #device.dev<cpu>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>):
    %s = graph.add %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  graph.assign @w.momentum, %buf {device = #device.dev<cpu>} : tensor<4x4xf32>
  %new = sched.fused(%w, %buf) {device = #device.dev<cpu>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>):
    %s = graph.sub %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  graph.assign @w, %new {device = #device.dev<cpu>} : tensor<4x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// A reader of the old weight after the update (the input gradient's matmul
// placed after it), through a view: the update keeps its buffer and the
// assign copies.
// CHECK-LABEL: func.func @read_after
// CHECK-NOT: sched.writes_weight
// CHECK: return
graph.weight @w {writable} : tensor<4x4xf32>
func.func @read_after(%x: tensor<1x4xf32>, %g: tensor<4x4xf32>) -> tensor<1x16xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4x4xf32>
  %new = sched.fused(%w, %g) {device = #device.dev<cpu>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>):
    %s = graph.sub %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  graph.assign @w, %new {device = #device.dev<cpu>} : tensor<4x4xf32>
  %r = graph.reshape %w to [1, 16] {device = #device.dev<cpu>} : tensor<4x4xf32>
  %y = sched.fused(%r) {device = #device.dev<cpu>} : (tensor<1x16xf32>) -> tensor<1x16xf32> {
  ^bb0(%a: tensor<1x16xf32>):
    %e = graph.exp %a : tensor<1x16xf32>
    sched.yield %e : tensor<1x16xf32>
  }
  return %y : tensor<1x16xf32>
}

// -----

// The update reads the old weight at other elements than the one it
// writes (its second row, a view, broadcast over both rows): element 0
// of the new value would read element 4 while another thread may have
// written it already.
// CHECK-LABEL: func.func @other_elements
// CHECK-NOT: sched.writes_weight
// CHECK: return
graph.weight @w {writable} : tensor<2x4xf32>
func.func @other_elements(%g: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<2x4xf32>
  %row = graph.slice %w {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: 2>, device = #device.dev<cpu>} : tensor<2x4xf32>
  %new = sched.fused(%w, %row) {device = #device.dev<cpu>} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<1x4xf32>):
    %s = graph.sub %a, %b : tensor<2x4xf32>, tensor<1x4xf32>
    sched.yield %s : tensor<2x4xf32>
  }
  graph.assign @w, %new {device = #device.dev<cpu>} : tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

// Plans with other devices keep the copy: their streams order the assign
// through its `after` operands, not the body's order.
// CHECK-LABEL: func.func @sim
// CHECK-NOT: sched.writes_weight
// CHECK: return
graph.weight @w {writable} : tensor<4xf32>
func.func @sim(%g: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight_ref @w {device = #device.dev<sim:0>} : tensor<4xf32>
  %new = sched.fused(%w, %g) {device = #device.dev<sim:0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = graph.sub %a, %b : tensor<4xf32>, tensor<4xf32>
    sched.yield %s : tensor<4xf32>
  }
  graph.assign @w, %new {device = #device.dev<sim:0>} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// A value that is not a loop of the body (a matrix product's) keeps the copy.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: sched.writes_weight
// CHECK: return
graph.weight @w {writable} : tensor<4x4xf32>
func.func @not_fused(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4x4xf32>
  %new = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<4x4xf32>, tensor<4x4xf32>
  graph.assign @w, %new {device = #device.dev<cpu>} : tensor<4x4xf32>
  return %x : tensor<4x4xf32>
}

// -----

// An entry point whose ops are all on the CPU in a plan with other devices:
// the plan runs on streams, so the copy stays.
// CHECK-LABEL: func.func @cpu_ops_of_a_sim_plan
// CHECK-NOT: sched.writes_weight
// CHECK: return
module attributes {device.target = #device.target<name = "cpu+sim2", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:1>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  graph.weight @w {writable} : tensor<4xf32>
  func.func @cpu_ops_of_a_sim_plan(%g: tensor<4xf32>) -> tensor<4xf32> {
    %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4xf32>
    %new = sched.fused(%w, %g) {device = #device.dev<cpu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %s = graph.sub %a, %b : tensor<4xf32>, tensor<4xf32>
      sched.yield %s : tensor<4xf32>
    }
    graph.assign @w, %new {device = #device.dev<cpu>} : tensor<4xf32>
    return %g : tensor<4xf32>
  }
}

// -----

// ZeRO-1 across ranks (modelc-shard-optimizer-state): the owner's update
// (graph.shard) writes the new value into the parameter, and the
// broadcast sends it from there in place, which the other ranks receive
// there: neither gets a buffer of the arena, and the assign copies
// nothing.
// CHECK-LABEL: func.func @owner_update
// CHECK: %[[NEW:.*]] = sched.fused(%{{.*}}, %{{.*}}) {device = #device.dev<cpu>, graph.shard = 1 : i64, sched.writes_weight = @w}
// CHECK: %[[B:.*]] = graph.owner_broadcast %[[NEW]] {device = #device.dev<cpu>, sched.writes_weight = @w, shard = 1 : i64}
// CHECK: graph.assign @w, %[[B]]
// PLAN-LABEL: func.func @owner_update
// PLAN-NOT: sched.buffer
// PLAN: return
graph.weight @w {writable} : tensor<4xf32>
func.func @owner_update(%g: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4xf32>
  %new = sched.fused(%w, %g) {device = #device.dev<cpu>, graph.shard = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = graph.sub %a, %b : tensor<4xf32>, tensor<4xf32>
    sched.yield %s : tensor<4xf32>
  }
  %b = graph.owner_broadcast %new {device = #device.dev<cpu>, shard = 1 : i64} : tensor<4xf32>
  graph.assign @w, %b {device = #device.dev<cpu>} : tensor<4xf32>
  return %g : tensor<4xf32>
}
