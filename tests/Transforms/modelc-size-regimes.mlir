// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=cpu+sim2" | FileCheck %s --check-prefix=SIM
// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2" | FileCheck %s --check-prefix=H200
// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 regimes=1" | FileCheck %s --check-prefix=ONE
// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=cpu" | FileCheck %s --check-prefix=ONE
// RUN: sed "/^\/\/ -----/,\$d" %s > %t.mlir && modelc-opt %t.mlir --modelc-size-regimes="target=h200x2 report=%t.json" > /dev/null && FileCheck %s --check-prefix=REPORT < %t.json

// A small MLP (64 features) over batches of 1 to 4096: the cost model keeps
// small batches on the CPU (a move to an accelerator costs more than the
// work) and sends large ones to one accelerator. The cut is where the
// placement at the smaller sample stops being chosen (bisection between
// 512 and 1024 on cpu+sim2, 256 and 512 on h200x2); each range is placed
// at its largest sample, and `why` gives both placements' estimates on
// both sides of the cut.
// SIM: module attributes {device.regimes = [
// SIM-SAME: {at = 512 : i64, data_parallel = false, dim = "batch", estimated_s = {{.*}} : f64, max = 520 : i64, min = 1 : i64, placement = "cpu 4 ops"},
// SIM-SAME: {at = 4096 : i64, data_parallel = false, dim = "batch", estimated_s = {{.*}} : f64, max = 4096 : i64, min = 521 : i64, placement = "sim:0 4 ops",
// SIM-SAME: why = "from 521 the placement at 4096 (sim:0 4 ops) is estimated {{.*}} us against {{.*}} us for the placement at 512 (cpu 4 ops); at 520, {{.*}} us against {{.*}} us"}]}
// H200: module attributes {device.regimes = [
// H200-SAME: {at = 256 : i64, {{.*}}, max = 415 : i64, min = 1 : i64, placement = "cpu 4 ops"},
// H200-SAME: {at = 4096 : i64, {{.*}}, max = 4096 : i64, min = 416 : i64, placement = "cuda:0 4 ops", why = "from 416 {{.*}}"}]}
// One regime allowed, or one device: no attribute, nothing changes.
// ONE-NOT: device.regimes
// The report: every sample's placement and estimate, and the regimes.
// REPORT: "dimension": "batch"
// REPORT: "regimes": [
// REPORT: "min": 1
// REPORT: "placement": "cpu 4 ops"
// REPORT: "why": "from 416
// REPORT: "samples": [
// REPORT: "placement": "cpu 4 ops",
// REPORT-NEXT: "size": 1
// REPORT: "size": 256
// REPORT: "placement": "cuda:0 4 ops",
// REPORT-NEXT: "size": 512
graph.dim @batch 1 to 4096 at 4096
graph.weight @w1 : tensor<64x64xf32>
graph.weight @b1 : tensor<64xf32>
graph.weight @w2 : tensor<10x64xf32>
func.func @forward(%x: tensor<4096x64xf32> {graph.dims = ["batch", ""]}) -> tensor<4096x10xf32> {
  %w1 = graph.weight_ref @w1 : tensor<64x64xf32>
  %b1 = graph.weight_ref @b1 : tensor<64xf32>
  %w2 = graph.weight_ref @w2 : tensor<10x64xf32>
  %h = graph.linear %x, %w1, %b1 : tensor<4096x64xf32>, tensor<64x64xf32>, tensor<64xf32>
  %r = graph.tanh %h : tensor<4096x64xf32>
  %y = graph.linear %r, %w2 : tensor<4096x64xf32>, tensor<10x64xf32>
  %s = graph.softmax %y : tensor<4096x10xf32>
  return %s : tensor<4096x10xf32>
}

// -----

// The same model over 1 to 64 only: the CPU throughout, one regime.
// SIM-NOT: device.regimes
// H200-NOT: device.regimes
graph.dim @batch 1 to 64 at 64
graph.weight @w1 : tensor<64x64xf32>
func.func @forward(%x: tensor<64x64xf32> {graph.dims = ["batch", ""]}) -> tensor<64x64xf32> {
  %w1 = graph.weight_ref @w1 : tensor<64x64xf32>
  %h = graph.linear %x, %w1 : tensor<64x64xf32>, tensor<64x64xf32>
  return %h : tensor<64x64xf32>
}

// -----

// A batch and a sequence: the regimes cut the batch (the dimension at axis
// 0 of the inputs); the sequence stays dynamic in each regime's plan.
// SIM: module attributes {device.regimes = [
// SIM-SAME: dim = "batch", {{.*}}min = 1 : i64, placement = "cpu 4 ops"}
// SIM-SAME: dim = "batch", {{.*}}max = 1024 : i64
// H200: module attributes {device.regimes = [
// H200-SAME: dim = "batch", {{.*}}min = 1 : i64, placement = "cpu 4 ops"}
// H200-SAME: dim = "batch", {{.*}}max = 1024 : i64, min = {{[0-9]+}} : i64, placement = "cuda:0 4 ops"
graph.dim @batch 1 to 1024 at 1024
graph.dim @seq 1 to 8 at 8
graph.weight @w1 : tensor<64x64xf32>
graph.weight @w2 : tensor<10x64xf32>
func.func @forward(%x: tensor<1024x8x64xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<1024x8x10xf32> {
  %w1 = graph.weight_ref @w1 : tensor<64x64xf32>
  %w2 = graph.weight_ref @w2 : tensor<10x64xf32>
  %h = graph.linear %x, %w1 : tensor<1024x8x64xf32>, tensor<64x64xf32>
  %r = graph.tanh %h : tensor<1024x8x64xf32>
  %y = graph.linear %r, %w2 : tensor<1024x8x64xf32>, tensor<10x64xf32>
  %s = graph.softmax %y : tensor<1024x8x10xf32>
  return %s : tensor<1024x8x10xf32>
}

// -----

// Several dimensions and no batch in common (each entry point its own):
// one plan covers the ranges.
// SIM-NOT: device.regimes
// H200-NOT: device.regimes
graph.dim @batch 1 to 4096 at 4096
graph.dim @rows 1 to 4096 at 4096
func.func @a(%x: tensor<4096x64xf32> {graph.dims = ["batch", ""]}) -> tensor<4096x64xf32> {
  %y = graph.tanh %x : tensor<4096x64xf32>
  return %y : tensor<4096x64xf32>
}
func.func @b(%x: tensor<4096x64xf32> {graph.dims = ["rows", ""]}) -> tensor<4096x64xf32> {
  %y = graph.tanh %x : tensor<4096x64xf32>
  return %y : tensor<4096x64xf32>
}
