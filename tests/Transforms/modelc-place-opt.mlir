// RUN: modelc-opt %s --split-input-file --modelc-place="target=h200x2" | FileCheck %s
// RUN: sed "/^\/\/ -----/,\$d" %s > %t.mlir && modelc-opt %t.mlir --modelc-place="target=h200x2 report=%t.json" > /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// A dynamic dimension (docs/dynamic.md): the types hold it at its max, and
// placement aims at its opt size. At a batch of 16 this MLP stays on the
// CPU (a move costs more than the work); at its max of 4096 it would go to
// a GPU (the second case).
// CHECK-LABEL: func.func @forward
// CHECK: graph.linear {{.*}}device = #device.dev<cpu>
// CHECK: graph.tanh {{.*}}device = #device.dev<cpu>
// REPORT: "placed_at": "batch 16"
graph.dim @batch 1 to 4096 at 16
graph.weight @w1 : tensor<64x64xf32>
func.func @forward(%x: tensor<4096x64xf32> {graph.dims = ["batch", ""]}) -> tensor<4096x64xf32> {
  %w1 = graph.weight_ref @w1 : tensor<64x64xf32>
  %h = graph.linear %x, %w1 : tensor<4096x64xf32>, tensor<64x64xf32>
  %r = graph.tanh %h : tensor<4096x64xf32>
  return %r : tensor<4096x64xf32>
}

// -----

// CHECK-LABEL: func.func @forward
// CHECK: graph.linear {{.*}}device = #device.dev<cuda:0>
// CHECK: graph.tanh {{.*}}device = #device.dev<cuda:0>
graph.dim @batch 1 to 4096 at 4096
graph.weight @w1 : tensor<64x64xf32>
func.func @forward(%x: tensor<4096x64xf32> {graph.dims = ["batch", ""]}) -> tensor<4096x64xf32> {
  %w1 = graph.weight_ref @w1 : tensor<64x64xf32>
  %h = graph.linear %x, %w1 : tensor<4096x64xf32>, tensor<64x64xf32>
  %r = graph.tanh %h : tensor<4096x64xf32>
  return %r : tensor<4096x64xf32>
}
