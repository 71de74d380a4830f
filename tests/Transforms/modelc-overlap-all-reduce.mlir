// RUN: modelc-opt %s --split-input-file --modelc-overlap-all-reduce | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-overlap-all-reduce --modelc-plan-memory | FileCheck %s --check-prefix=PLAN

// A gradient bucket's sum on the CPU plan: the start stays where the
// all-reduce was, the backward that remains (the matmul) runs before the
// wait, the views of the sum move after the wait, which comes right before
// the first op that reads the sum (the update). The slots count the starts.
// CHECK-LABEL: func.func @bucket
// CHECK: %[[S:.*]] = sched.all_reduce_start %{{.*}} {device = #device.dev<cpu>, slot = 0 : i64} : tensor<8xf32>
// CHECK-NEXT: %[[M:.*]] = graph.matmul
// CHECK-NEXT: %[[SUM:.*]] = sched.all_reduce_wait %[[S]] {device = #device.dev<cpu>} : tensor<8xf32>
// CHECK-NEXT: %[[P:.*]] = graph.slice %[[SUM]]
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[P]]
// CHECK-NEXT: sched.fused(%{{.*}}, %[[R]])
// CHECK: %[[S1:.*]] = sched.all_reduce_start %{{.*}} {device = #device.dev<cpu>, slot = 1 : i64} : tensor<4xf32>
// CHECK-NEXT: graph.exp
// CHECK-NEXT: sched.all_reduce_wait %[[S1]]
// CHECK-NOT: graph.all_reduce
// The start's input stays alive up to the wait (op 3), the sum from the
// start to its last reader through the wait and the views (op 6); the
// matmul's buffer, alive meanwhile, lies elsewhere; the wait has none.
// PLAN-LABEL: func.func @bucket
// PLAN: graph.concat {{.*}}sched.buffer = #sched.buffer<offset = {{[0-9]+}}, bytes = 32, first = 0, last = 3>
// PLAN: sched.all_reduce_start {{.*}}sched.buffer = #sched.buffer<offset = {{[0-9]+}}, bytes = 32, first = 1, last = 6>
// PLAN: sched.all_reduce_wait %{{.*}} {device = #device.dev<cpu>} :
func.func @bucket(%g: tensor<4xf32>, %h: tensor<4xf32>, %x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %p: tensor<2x2xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %v = graph.concat %g, %h {axis = 0 : i64, device = #device.dev<cpu>} : tensor<4xf32>, tensor<4xf32>
  %sum = graph.all_reduce %v {device = #device.dev<cpu>} : tensor<8xf32>
  %piece = graph.slice %sum {starts = array<i64: 0>, ends = array<i64: 4>, device = #device.dev<cpu>} : tensor<8xf32>
  %r = graph.reshape %piece to [2, 2] {device = #device.dev<cpu>} : tensor<4xf32>
  %m = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<2x4xf32>, tensor<4x4xf32>
  %new = sched.fused(%p, %r) {device = #device.dev<cpu>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %s = graph.sub %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
    sched.yield %s : tensor<2x2xf32>
  }
  %sum2 = graph.all_reduce %g {device = #device.dev<cpu>} : tensor<4xf32>
  %e = graph.exp %h {device = #device.dev<cpu>} : tensor<4xf32>
  %t = graph.add %sum2, %e {device = #device.dev<cpu>} : tensor<4xf32>, tensor<4xf32>
  return %m, %new, %t : tensor<2x4xf32>, tensor<2x2xf32>, tensor<4xf32>
}

// -----

// A sum read by the next op that prints code (a loss's denominator: views
// between do not count) has nothing to overlap: it stays one all-reduce.
// CHECK-LABEL: func.func @next
// CHECK: %[[SUM:.*]] = graph.all_reduce
// CHECK-NEXT: graph.reshape %[[SUM]]
// CHECK-NEXT: graph.div
// CHECK-NOT: sched.all_reduce_start
func.func @next(%n: tensor<1xf32>, %l: tensor<f32>) -> tensor<f32> {
  %sum = graph.all_reduce %n {device = #device.dev<cpu>} : tensor<1xf32>
  %s = graph.reshape %sum to [] {device = #device.dev<cpu>} : tensor<1xf32>
  %d = graph.div %l, %s {device = #device.dev<cpu>} : tensor<f32>, tensor<f32>
  return %d : tensor<f32>
}

// -----

// A plan with other devices runs its all-reduces on the host's stream
// beside the replicas already: left alone.
// CHECK-LABEL: func.func @streams
// CHECK: graph.all_reduce
// CHECK-NOT: sched.all_reduce_start
module attributes {device.target = #device.target<name = "cpu+sim1", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  func.func @streams(%g: tensor<4xf32>, %h: tensor<4xf32>) -> tensor<4xf32> {
    %sum = graph.all_reduce %g {device = #device.dev<cpu>} : tensor<4xf32>
    %e = graph.exp %h {device = #device.dev<cpu>} : tensor<4xf32>
    %t = graph.add %sum, %e {device = #device.dev<cpu>} : tensor<4xf32>, tensor<4xf32>
    return %t : tensor<4xf32>
  }
}

// -----

// A sum of a weight's memory (through a view) stays whole: the weight may
// be written in place while the communication thread would read it.
// CHECK-LABEL: func.func @weight
// CHECK: graph.all_reduce
// CHECK-NOT: sched.all_reduce_start
graph.weight @w {writable} : tensor<2x2xf32>
func.func @weight(%h: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<2x2xf32>
  %f = graph.reshape %w to [4] {device = #device.dev<cpu>} : tensor<2x2xf32>
  %sum = graph.all_reduce %f {device = #device.dev<cpu>} : tensor<4xf32>
  %e = graph.exp %h {device = #device.dev<cpu>} : tensor<4xf32>
  %t = graph.add %sum, %e {device = #device.dev<cpu>} : tensor<4xf32>, tensor<4xf32>
  return %t : tensor<4xf32>
}
