// RUN: modelc-opt %s --modelc-place="target=h200 place-all=cuda:0" | FileCheck %s
// RUN: not modelc-opt %s --modelc-place="target=h200 place-all=cuda:3" 2>&1 | FileCheck %s --check-prefix=ABSENT

// --place-all (modelc --place-all=cuda:0): every op with a kernel there goes
// to the device, tiny ops included, as model.to("cuda"); a pin still wins;
// views follow their input; inputs and outputs stay on the host.
// CHECK-LABEL: func.func @tiny
// CHECK: graph.add {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.relu {{.*}} {device = #device.dev<cpu>}
// CHECK: graph.reshape {{.*}} {device = #device.dev<cpu>}
// CHECK: graph.exp {{.*}} {device = #device.dev<cuda:0>}
// Integer reductions have no GPU kernel: the cost model places them.
// CHECK: graph.reduce_sum {{.*}} {device = #device.dev<cpu>}
func.func @tiny(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<2x2xf32>, tensor<i32>) {
  %s = graph.add %a, %b : tensor<4xf32>, tensor<4xf32>
  %r = graph.relu %s {device = "cpu"} : tensor<4xf32>
  %v = graph.reshape %r to [2, 2] : tensor<4xf32>
  %e = graph.exp %v : tensor<2x2xf32>
  %n = graph.reduce_sum %i : tensor<4xi32>
  return %e, %n : tensor<2x2xf32>, tensor<i32>
}

// ABSENT: error: --place-all names 'cuda:3', which target 'h200' does not have (it has cpu, cuda:0)
