// RUN: modelc-opt %s --modelc-place="target=h200 report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: modelc-opt %s --modelc-place="target=cpu+sim2" | FileCheck %s --check-prefix=SIM

// The sums over the ranks (graph.all_reduce) of a function go on one
// device: every rank must meet them in one order, which one stream gives.
// A gradient the GPU computes is summed there (NCCL's all-reduce on its
// copy stream), and the scalar the cost model would sum on the host (a
// tiny op with its input) joins it on the GPU, the device with most of
// their bytes; the report gives them the reason "rank sums".
// CHECK-LABEL: func.func @gpu
// CHECK: graph.matmul {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cuda:0>} : tensor<512x512xf32>
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cuda:0>} : tensor<f32>
// REPORT: "function": "gpu",
// REPORT: "op": "graph.all_reduce (line [[#]])",
// REPORT-NEXT: "reason": "rank sums",
// REPORT: "op": "graph.all_reduce (line [[#]])",
// REPORT-NEXT: "reason": "rank sums",
func.func @gpu(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %s: tensor<f32>) -> (tensor<512x512xf32>, tensor<f32>) {
  %m = graph.matmul %a, %b : tensor<512x512xf32>, tensor<512x512xf32>
  %g = graph.all_reduce %m : tensor<512x512xf32>
  %t = graph.all_reduce %s : tensor<f32>
  return %g, %t : tensor<512x512xf32>, tensor<f32>
}

// Where every sum stays on the host, nothing moves.
// CHECK-LABEL: func.func @host
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cpu>} : tensor<4xf32>
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cpu>} : tensor<f32>
func.func @host(%a: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
  %r = graph.relu %a : tensor<4xf32>
  %g = graph.all_reduce %r : tensor<4xf32>
  %t = graph.all_reduce %s : tensor<f32>
  return %g, %t : tensor<4xf32>, tensor<f32>
}

// Simulated devices have no sum over the ranks: the host sums.
// SIM-LABEL: func.func @gpu
// SIM: graph.all_reduce {{.*}} {device = #device.dev<cpu>} : tensor<512x512xf32>
// SIM: graph.all_reduce {{.*}} {device = #device.dev<cpu>} : tensor<f32>
