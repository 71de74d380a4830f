// RUN: modelc-opt %s --modelc-annotate-estimates | FileCheck %s

// Each op with a device gets the cost model's time for it there, in
// microseconds: launch overhead (1 us here) plus the larger of FLOPs over
// peak and bytes over bandwidth. The matmul: 2*4*4*4 = 128 FLOPs (1.28 ns)
// and 3 * 64 bytes (19.2 ns): 1.0192 us. A fused group sums the graph ops
// it holds: exp and neg read 64 bytes and write 64 each (12.8 ns): 2.0256
// us. Transfers, weights and ops without a device get nothing.
// CHECK-LABEL: func.func @estimates
// CHECK: device.transfer {{.*}} {sched.stream = "copy"}
// CHECK: graph.weight_ref @w {device = #device.dev<sim:0>} :
// CHECK: graph.matmul {{.*}} {device = #device.dev<sim:0>, device.estimated_us = 1.019{{[0-9]*}} : f64}
// CHECK: sched.fused({{.*}}) {device = #device.dev<cpu>, device.estimated_us = 2.0256{{[0-9e+]*}} : f64}
// CHECK: graph.exp
// CHECK-NOT: estimated_us
// CHECK: graph.neg
// CHECK: graph.relu {{.*}} : tensor<4x4xf32>
// CHECK-NOT: estimated_us
module attributes {device.target = #device.target<name = "cpu+sim1", devices = [#device.device_spec<device = <cpu>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>, #device.device_spec<device = <sim:0>, memory = 1000000, bandwidth = 1.0e10 : f64, launch_overhead = 1.0e-06 : f64, peak_flops = {f32 = 1.0e11 : f64}>], links = []>} {
  graph.weight @w : tensor<4x4xf32>
  func.func @estimates(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %x0 = device.transfer %x from <cpu> to <sim:0> {sched.stream = "copy"} : tensor<4x4xf32>
    %w = graph.weight_ref @w {device = #device.dev<sim:0>} : tensor<4x4xf32>
    %m = graph.matmul %x0, %w {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
    %f = sched.fused(%x) {device = #device.dev<cpu>} : (tensor<4x4xf32>) -> tensor<4x4xf32> {
    ^bb0(%a: tensor<4x4xf32>):
      %e = graph.exp %a : tensor<4x4xf32>
      %n = graph.neg %e : tensor<4x4xf32>
      sched.yield %n : tensor<4x4xf32>
    }
    %r = graph.relu %x : tensor<4x4xf32>
    return %m, %f : tensor<4x4xf32>, tensor<4x4xf32>
  }
}
