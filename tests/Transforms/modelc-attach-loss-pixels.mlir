// RUN: modelc-opt %s --split-input-file --modelc-attach-loss --verify-diagnostics | FileCheck %s

// A class per position: [N, C, H, W] scores take [N, H, W] targets; the
// scores become rows [N * H * W, C] (classes last), the targets [N * H * W].
// CHECK-LABEL: func.func @loss
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4x5xf32>, %[[T:.*]]: tensor<2x4x5xi64> {graph.name = "target"}
// CHECK: %[[Y:.*]] = graph.relu %[[X]]
// CHECK: %[[P:.*]] = graph.transpose %[[Y]] perm [0, 2, 3, 1] : tensor<2x3x4x5xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[P]] to [40, 3] : tensor<2x4x5x3xf32>
// CHECK: %[[RT:.*]] = graph.reshape %[[T]] to [40] : tensor<2x4x5xi64>
func.func @forward(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %y = graph.relu %x : tensor<2x3x4x5xf32>
  return %y : tensor<2x3x4x5xf32>
}

// -----

// expected-error @+1 {{the loss cross_entropy takes [N, C] or [N, C, d1, ...] scores of known sizes; the output of 'forward' is 'tensor<6xf32>'}}
func.func @forward(%x: tensor<6xf32>) -> tensor<6xf32> {
  %y = graph.relu %x : tensor<6xf32>
  return %y : tensor<6xf32>
}
