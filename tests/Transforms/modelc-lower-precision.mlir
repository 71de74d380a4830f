// RUN: modelc-opt %s --split-input-file --modelc-lower-precision=precision=bf16 | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-lower-precision=precision=f16 | FileCheck %s --check-prefix=F16
// RUN: modelc-opt %s --split-input-file --modelc-lower-precision | FileCheck %s --check-prefix=F32
// RUN: not modelc-opt %s --modelc-lower-precision=precision=f8 2>&1 | FileCheck %s --check-prefix=BAD

// A linear layer and a softmax: the weight is declared bf16, rounded from
// the f32 data it is given; the input is cast where the body starts, the
// output cast back before the return; the entry point keeps f32.
// CHECK-LABEL: graph.weight @w : tensor<10x4xbf16> from f32
// CHECK: graph.weight @b : tensor<10xbf16> from f32
// CHECK: func.func @forward(%[[X:.*]]: tensor<2x4xf32>) -> tensor<2x10xf32>
// CHECK-NEXT: %[[XH:.*]] = graph.cast %[[X]] : tensor<2x4xf32> to bf16
// CHECK-NEXT: graph.weight_ref @w : tensor<10x4xbf16>
// CHECK-NEXT: graph.weight_ref @b : tensor<10xbf16>
// CHECK-NEXT: %[[Y:.*]] = graph.linear %[[XH]], {{.*}} : tensor<2x4xbf16>, tensor<10x4xbf16>, tensor<10xbf16>
// CHECK-NEXT: %[[S:.*]] = graph.softmax %[[Y]] {axis = 1 : i64} : tensor<2x10xbf16>
// CHECK-NEXT: %[[O:.*]] = graph.cast %[[S]] : tensor<2x10xbf16> to f32
// CHECK-NEXT: return %[[O]] : tensor<2x10xf32>
// F16-LABEL: graph.weight @w : tensor<10x4xf16> from f32
// F16: graph.cast %{{.*}} : tensor<2x4xf32> to f16
// F32: graph.weight @w : tensor<10x4xf32>
// F32-NOT: from f32
// F32-NOT: graph.cast
// F32: return
graph.weight @w : tensor<10x4xf32>
graph.weight @b : tensor<10xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x10xf32> {
  %w = graph.weight_ref @w : tensor<10x4xf32>
  %b = graph.weight_ref @b : tensor<10xf32>
  %y = graph.linear %x, %w, %b : tensor<2x4xf32>, tensor<10x4xf32>, tensor<10xf32>
  %s = graph.softmax %y {axis = 1 : i64} : tensor<2x10xf32>
  return %s : tensor<2x10xf32>
}

// -----

// Integer and boolean tensors stay as they are; a cast to f32 becomes a
// cast to bf16; an f32 constant is rounded to nearest even (1.00390625 =
// 1 + 2^-8 lies halfway between bf16's 1 and 1.0078125 and rounds to the
// even 1); an input returned as it is needs no cast; an i64 input and
// output have none.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>)
// CHECK-NEXT: %[[XH:.*]] = graph.cast %[[X]] : tensor<4xf32> to bf16
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<[1.000000e+00, 1.007810e+00, 2.500000e+00, -3.000000e+00]> : tensor<4xbf16>
// CHECK-NEXT: %[[IF:.*]] = graph.cast %[[I]] : tensor<4xi64> to bf16
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[XH]], %[[C]] : tensor<4xbf16>, tensor<4xbf16>
// CHECK-NEXT: %[[A:.*]] = graph.add %[[M]], %[[IF]] : tensor<4xbf16>, tensor<4xbf16>
// CHECK-NEXT: %[[G:.*]] = graph.compare gt, %[[A]], %[[XH]] : tensor<4xbf16>, tensor<4xbf16>
// CHECK-NEXT: %[[GI:.*]] = graph.cast %[[G]] : tensor<4xi1> to i64
// CHECK-NEXT: %[[AO:.*]] = graph.cast %[[A]] : tensor<4xbf16> to f32
// CHECK-NEXT: return %[[AO]], %[[X]], %[[GI]] : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>
func.func @mixed(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) {
  %c = graph.constant dense<[1.00390625, 1.0078125, 2.5, -3.0]> : tensor<4xf32>
  %if = graph.cast %i : tensor<4xi64> to f32
  %m = graph.mul %x, %c : tensor<4xf32>, tensor<4xf32>
  %a = graph.add %m, %if : tensor<4xf32>, tensor<4xf32>
  %g = graph.compare gt, %a, %x : tensor<4xf32>, tensor<4xf32>
  %gi = graph.cast %g : tensor<4xi1> to i64
  return %a, %x, %gi : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>
}

// BAD: error: unknown precision 'f8': use f32, f16 or bf16
