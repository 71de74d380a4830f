// RUN: modelc-opt %s --split-input-file --modelc-fold-constants | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fold-constants=max-elements=3 | FileCheck %s --check-prefix=CAP

// A chain on constants folds to one constant; the op on the input stays.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<[3.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.add %arg0, %[[C]]
// CHECK-NEXT: return %[[Y]]
// CAP-LABEL: func.func @chain
// CAP-NEXT: graph.constant dense<[3.000000e+00, 6.000000e+00]>
func.func @chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = graph.constant dense<3.0> : tensor<f32>
  %c = graph.mul %a, %b : tensor<2xf32>, tensor<f32>
  %y = graph.add %x, %c : tensor<2xf32>, tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// The shape torch.onnx.export writes for `cls.expand(n, -1, -1)`:
// Where(Equal(c, Mul(ConstantOfShape(c), c)), ConstantOfShape(c), c).
// CHECK-LABEL: func.func @expand_shape
// CHECK-NEXT: %[[S:.*]] = graph.constant dense<[2, 1, 8]> : tensor<3xi64>
// CHECK-NEXT: return %[[S]]
func.func @expand_shape() -> tensor<3xi64> {
  %c = graph.constant dense<[2, -1, -1]> : tensor<3xi64>
  %ones = graph.constant dense<1> : tensor<3xi64>
  %neg = graph.constant dense<-1> : tensor<i64>
  %m = graph.mul %ones, %neg : tensor<3xi64>, tensor<i64>
  %e = graph.compare eq, %c, %m : tensor<3xi64>, tensor<3xi64>
  %old = graph.constant dense<[2, 1, 8]> : tensor<3xi64>
  %s = graph.select %e, %old, %c : tensor<3xi1>, tensor<3xi64>, tensor<3xi64>
  return %s : tensor<3xi64>
}

// -----

// Booleans, casts and f16 fold; results are rounded to their type.
// CHECK-LABEL: func.func @types
// CHECK-DAG: graph.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: graph.constant dense<[1.000000e+00, 3.332520e-01]> : tensor<2xf16>
// CHECK-NOT: graph.compare
// CHECK-NOT: graph.cast
// CHECK-NOT: graph.div
func.func @types() -> (tensor<2xi1>, tensor<2xf16>) {
  %a = graph.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<2.0> : tensor<f32>
  %lt = graph.compare lt, %a, %b : tensor<2xf32>, tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %r = graph.div %one, %a : tensor<f32>, tensor<2xf32>
  %h = graph.cast %r : tensor<2xf32> to f16
  return %lt, %h : tensor<2xi1>, tensor<2xf16>
}

// -----

// Not folded: an op reading a weight (a parameter), dropout (it draws at
// random), a gather whose index is out of range (the run reports it), an
// i64 result beyond 2^53 (the interpreter's doubles would round it).
// CHECK-LABEL: func.func @kept
// CHECK: graph.add %[[W:.*]], %{{.*}}
// CHECK: graph.dropout
// CHECK: graph.gather
// CHECK: graph.mul
graph.weight @w : tensor<2xf32>
func.func @kept() -> (tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<i64>) {
  %w = graph.weight_ref @w : tensor<2xf32>
  %a = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = graph.add %w, %a : tensor<2xf32>, tensor<2xf32>
  %d = graph.dropout %a {ratio = 5.000000e-01} : tensor<2xf32>
  %t = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %i = graph.constant dense<[5]> : tensor<1xi64>
  %g = graph.gather %t, %i : tensor<2x2xf32>, tensor<1xi64>
  %big = graph.constant dense<4611686018427387904> : tensor<i64>
  %two = graph.constant dense<3> : tensor<i64>
  %p = graph.mul %big, %two : tensor<i64>, tensor<i64>
  return %s, %d, %g, %p : tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<i64>
}

// -----

// A result above max-elements stays an op.
// CAP-LABEL: func.func @large
// CAP: graph.add
// CHECK-LABEL: func.func @large
// CHECK-NEXT: graph.constant dense<2.000000e+00> : tensor<4xf32>
func.func @large() -> tensor<4xf32> {
  %a = graph.constant dense<1.0> : tensor<4xf32>
  %y = graph.add %a, %a : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A product of two large constants stays an op: 2 * 512^3 operations are
// more than the 2^26 the interpreter may spend on one op.
// CHECK-LABEL: func.func @heavy
// CHECK: graph.matmul
func.func @heavy() -> tensor<512x512xf32> {
  %a = graph.constant dense<1.0> : tensor<512x512xf32>
  %y = graph.matmul %a, %a : tensor<512x512xf32>, tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}

// -----

// A slice of a constant cut to a dynamic dimension's size (graph.dims) has
// the run's size: never folded.
// CHECK-LABEL: func.func @cut_to_dimension
// CHECK: graph.slice {{.*}}graph.dims = ["seq"]
// CAP-LABEL: func.func @cut_to_dimension
func.func @cut_to_dimension() -> tensor<3xi64> {
  %c = graph.constant dense<[0, 1, 2]> : tensor<3xi64>
  %0 = graph.slice %c {starts = array<i64: 0>, ends = array<i64: 3>, graph.dims = ["seq"]} : tensor<3xi64>
  return %0 : tensor<3xi64>
}
