// RUN: modelc-opt %s --modelc-place="target=h200x2" | FileCheck %s

// A plan sums on one GPU at most (its NCCL communicator): the first entry
// point's GPU (cuda:1, where its gradient is) takes the next one's sums
// too, although that one computes on cuda:0.
// CHECK-LABEL: func.func @first
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cuda:1>} : tensor<512x512xf32>
// CHECK-LABEL: func.func @second
// CHECK: graph.matmul {{.*}} {device = #device.dev<cuda:0>}
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cuda:1>} : tensor<512x512xf32>
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cuda:1>} : tensor<f32>
func.func @first(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %m = graph.matmul %a, %b {device = "cuda:1"} : tensor<512x512xf32>, tensor<512x512xf32>
  %g = graph.all_reduce %m : tensor<512x512xf32>
  return %g : tensor<512x512xf32>
}
func.func @second(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %s: tensor<f32>) -> (tensor<512x512xf32>, tensor<f32>) {
  %m = graph.matmul %a, %b {device = "cuda:0"} : tensor<512x512xf32>, tensor<512x512xf32>
  %g = graph.all_reduce %m : tensor<512x512xf32>
  %t = graph.all_reduce %s : tensor<f32>
  return %g, %t : tensor<512x512xf32>, tensor<f32>
}
