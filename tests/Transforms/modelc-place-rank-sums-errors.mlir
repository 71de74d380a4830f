// RUN: modelc-opt %s --split-input-file --modelc-place="target=h200x2" --verify-diagnostics | FileCheck %s

// A pin on a sum over the ranks decides where the entry point's sums go:
// the unpinned one joins it (here on the host, although its gradient is
// on a GPU).
// CHECK-LABEL: func.func @pinned
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cpu>} : tensor<512x512xf32>
// CHECK: graph.all_reduce {{.*}} {device = #device.dev<cpu>} : tensor<f32>
func.func @pinned(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %s: tensor<f32>) -> (tensor<512x512xf32>, tensor<f32>) {
  %m = graph.matmul %a, %b {device = "cuda:0"} : tensor<512x512xf32>, tensor<512x512xf32>
  %g = graph.all_reduce %m : tensor<512x512xf32>
  %t = graph.all_reduce %s {device = "cpu"} : tensor<f32>
  return %g, %t : tensor<512x512xf32>, tensor<f32>
}

// -----

// Pins that differ: every rank meets the sums in one order on one stream.
func.func @split(%a: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
  %g = graph.all_reduce %a {device = "cuda:0"} : tensor<4xf32>
  // expected-error @+1 {{pinned to 'cuda:1' where another sum over the ranks of this entry point is pinned to 'cuda:0': the sums over the ranks must share one device}}
  %t = graph.all_reduce %s {device = "cuda:1"} : tensor<f32>
  return %g, %t : tensor<4xf32>, tensor<f32>
}

// -----

// A plan sums on one GPU at most: the second entry point's pin to another
// GPU than the first's is an error.
func.func @first(%a: tensor<4xf32>) -> tensor<4xf32> {
  %g = graph.all_reduce %a {device = "cuda:0"} : tensor<4xf32>
  return %g : tensor<4xf32>
}
func.func @second(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pinned to 'cuda:1' where another entry point sums over the ranks on 'cuda:0': a plan sums over the ranks on one GPU at most (its NCCL communicator)}}
  %g = graph.all_reduce %a {device = "cuda:1"} : tensor<4xf32>
  return %g : tensor<4xf32>
}
