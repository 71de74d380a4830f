// RUN: modelc-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @double_negation
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @double_negation(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.neg %x : tensor<4xf32>
  %1 = graph.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_to_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]
func.func @cast_to_same_type(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = graph.cast %x : tensor<4xf16> to f16
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @cast_kept
// CHECK: graph.cast %{{.*}} : tensor<4xf32> to f16
func.func @cast_kept(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = graph.cast %x : tensor<4xf32> to f16
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @identity_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.reshape %x to [2, -1] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A chain of reshapes becomes one, with its -1 resolved.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]] to [4, 6] : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x to [6, -1] : tensor<2x3x4xf32>
  %1 = graph.reshape %0 to [24] : tensor<6x4xf32>
  %2 = graph.reshape %1 to [4, -1] : tensor<24xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @flatten_is_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]] to [2, 12] {device = "cpu"} : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @flatten_is_reshape(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %0 = graph.flatten %x {device = "cpu"} : tensor<2x3x4xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @identity_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.transpose %x perm [0, 1] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[X]] perm [1, 2, 0] : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_chain(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = graph.transpose %x perm [0, 2, 1] : tensor<2x3x4xf32>
  %1 = graph.transpose %0 perm [2, 1, 0] : tensor<2x4x3xf32>
  return %1 : tensor<3x4x2xf32>
}

// -----

// Two transposes that cancel leave nothing.
// CHECK-LABEL: func.func @transposes_cancel
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transposes_cancel(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.transpose %x perm [1, 0] : tensor<2x3xf32>
  %1 = graph.transpose %0 perm [1, 0] : tensor<3x2xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// A transpose that only moves dimensions of size 1 keeps every element in
// place: a reshape (a view, no copy). One that reorders two dimensions of
// size > 1 stays a transpose.
// CHECK-LABEL: func.func @unit_dims_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<1x128x512xf32>, %[[Y:.*]]: tensor<2x1x3xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]] to [128, 1, 512] {device = "cpu"} : tensor<1x128x512xf32>
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[Y]] perm [2, 1, 0] : tensor<2x1x3xf32>
// CHECK-NEXT: return %[[R]], %[[T]]
func.func @unit_dims_transpose(%x: tensor<1x128x512xf32>, %y: tensor<2x1x3xf32>) -> (tensor<128x1x512xf32>, tensor<3x1x2xf32>) {
  %0 = graph.transpose %x perm [1, 0, 2] {device = "cpu"} : tensor<1x128x512xf32>
  %1 = graph.transpose %y perm [2, 1, 0] : tensor<2x1x3xf32>
  return %0, %1 : tensor<128x1x512xf32>, tensor<3x1x2xf32>
}

// -----

// CHECK-LABEL: func.func @concat_of_one
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @concat_of_one(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.concat %x {axis = 0} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @full_slice
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @full_slice(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 100>, axes = array<i64: 1>} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A slice cut to a dynamic dimension (graph.dims) takes everything only at
// the dimension's max: kept.
// CHECK-LABEL: func.func @cut_to_dimension_kept
// CHECK: graph.slice {{.*}}graph.dims = ["", "seq"]
func.func @cut_to_dimension_kept(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 1>, graph.dims = ["", "seq"]} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @partial_slice_kept
// CHECK: graph.slice
func.func @partial_slice_kept(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %0 = graph.slice %x {starts = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: 1>} : tensor<2x3xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Unused pure ops disappear; constants are deduplicated.
// CHECK-LABEL: func.func @dead_code
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[C]], %[[C]]
func.func @dead_code(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.exp %x : tensor<4xf32>
  %1 = graph.constant dense<1.0> : tensor<4xf32>
  %2 = graph.constant dense<1.0> : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
