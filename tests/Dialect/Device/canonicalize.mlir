// RUN: modelc-opt %s --split-input-file --canonicalize | FileCheck %s

// A transfer of a transfer becomes one transfer from the first source.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[T:.*]] = device.transfer %[[X]] from <cpu> to <cuda:1> : tensor<4xf32>
// CHECK-NEXT: return %[[T]]
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = device.transfer %x from <cpu> to <cuda:0> : tensor<4xf32>
  %1 = device.transfer %0 from <cuda:0> to <cuda:1> : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A round trip back to the source disappears.
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = device.transfer %x from <cpu> to <sim:0> : tensor<4xf32>
  %1 = device.transfer %0 from <sim:0> to <cpu> : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A transfer whose value is also used on its destination stays.
// CHECK-LABEL: func.func @used_transfer_kept
// CHECK: %[[A:.*]] = device.transfer %{{.*}} from <cpu> to <cuda:0>
// CHECK: graph.relu %[[A]] {device = "cuda:0"}
// CHECK: device.transfer %{{.*}} from <cpu> to <cuda:1>
func.func @used_transfer_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = device.transfer %x from <cpu> to <cuda:0> : tensor<4xf32>
  %1 = graph.relu %0 {device = "cuda:0"} : tensor<4xf32>
  %2 = device.transfer %0 from <cuda:0> to <cuda:1> : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
