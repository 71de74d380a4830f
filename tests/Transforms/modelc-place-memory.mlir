// RUN: modelc-opt %s --split-input-file --modelc-place="target=%S/Inputs/small-sims.json" --verify-diagnostics | FileCheck %s

// Each weight is 16 MB and each simulated device holds 20 MB: the two layers
// cannot share a device, so they are split across both (model parallelism).
// CHECK-LABEL: func.func @capacity_split
// CHECK: graph.matmul {{.*}} {device = #device.dev<[[A:sim:[01]]]>}
// CHECK-NOT: device = #device.dev<[[A]]>} : tensor<64x2000xf32>, tensor<2000x2000xf32>
// CHECK: graph.matmul {{.*}} {device = #device.dev<sim:{{[01]}}>} : tensor<64x2000xf32>, tensor<2000x2000xf32>
graph.weight @w1 : tensor<2000x2000xf32>
graph.weight @w2 : tensor<2000x2000xf32>
func.func @capacity_split(%x: tensor<64x2000xf32>) -> tensor<64x2000xf32> {
  %w1 = graph.weight_ref @w1 : tensor<2000x2000xf32>
  %h = graph.matmul %x, %w1 : tensor<64x2000xf32>, tensor<2000x2000xf32>
  %w2 = graph.weight_ref @w2 : tensor<2000x2000xf32>
  %y = graph.matmul %h, %w2 : tensor<64x2000xf32>, tensor<2000x2000xf32>
  return %y : tensor<64x2000xf32>
}

// -----

// A weight used by two ops on one device is resident there once: both fit.
// CHECK-LABEL: func.func @shared_weight
// CHECK: graph.matmul {{.*}} {device = #device.dev<[[D:sim:[01]]]>}
// CHECK: graph.matmul {{.*}} {device = #device.dev<[[D]]>}
graph.weight @w : tensor<2000x2000xf32>
func.func @shared_weight(%x: tensor<64x2000xf32>) -> tensor<64x2000xf32> {
  %w = graph.weight_ref @w : tensor<2000x2000xf32>
  %h = graph.matmul %x, %w : tensor<64x2000xf32>, tensor<2000x2000xf32>
  %y = graph.matmul %h, %w : tensor<64x2000xf32>, tensor<2000x2000xf32>
  return %y : tensor<64x2000xf32>
}
