// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 data-parallel=consider" | FileCheck %s --check-prefix=H200
// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=cpu+sim2 data-parallel=consider" | FileCheck %s --check-prefix=SIM
// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 data-parallel=always" | FileCheck %s --check-prefix=ALWAYS
// RUN: modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 data-parallel=never" | FileCheck %s --check-prefix=NEVER
// RUN: not modelc-opt %s --split-input-file --modelc-size-regimes="target=h200x2 data-parallel=sometimes" 2>&1 | FileCheck %s --check-prefix=BADMODE

// Size regimes with data parallelism as a candidate (modelc's default on a
// target with several accelerators): a compute-heavy MLP (2048 wide) over
// batches of 1 to 4096. Small batches run on one accelerator; from the
// cut on, the batch is split over both (modelc-data-parallel: a balanced
// part per accelerator at run time), estimated faster there.
// H200: module attributes {device.regimes = [
// H200-SAME: {at = 32 : i64, data_parallel = false, {{.*}}, max = 35 : i64, min = 1 : i64, placement = "cuda:0 8 ops"},
// H200-SAME: {at = 1024 : i64, data_parallel = true, {{.*}}, max = 4096 : i64, min = 36 : i64, placement = "data parallel over cuda:0, cuda:1 (cpu 3 ops, cuda:0 8 ops, cuda:1 8 ops)",
// H200-SAME: why = "from 36 the placement at 1024 (data parallel over cuda:0, cuda:1 {{.*}}) is estimated {{.*}} us against {{.*}} us for the placement at 32 (cuda:0 8 ops); at 35, {{.*}}"}]}
// SIM: module attributes {device.regimes = [
// SIM-SAME: data_parallel = false, {{.*}}, min = 1 : i64
// SIM-SAME: data_parallel = true, {{.*}}, max = 4096 : i64, {{.*}}, placement = "data parallel over sim:0, sim:1 (cpu 3 ops, sim:0 8 ops, sim:1 8 ops)"
// With data-parallel=always (modelc --data-parallel), every batch that
// can be split is: a batch of 1 runs whole.
// ALWAYS: module attributes {device.regimes = [
// ALWAYS-SAME: {at = 1 : i64, data_parallel = false, {{.*}}, max = 1 : i64, min = 1 : i64,
// ALWAYS-SAME: {at = 1024 : i64, data_parallel = true, {{.*}}, max = 4096 : i64, min = 2 : i64, {{.*}}, why = "from 2 the batch is split over the 2 accelerators (modelc --data-parallel): {{.*}} us there; a smaller batch leaves one without a sample"}]}
// NEVER-NOT: data_parallel = true
// BADMODE: error: modelc-size-regimes: data-parallel is 'sometimes'; expected never, consider or always
graph.dim @batch 1 to 4096 at 1024
graph.weight @w1 : tensor<2048x64xf32>
graph.weight @w2 : tensor<2048x2048xf32>
graph.weight @w3 : tensor<2048x2048xf32>
graph.weight @w4 : tensor<10x2048xf32>
func.func @forward(%x: tensor<4096x64xf32> {graph.dims = ["batch", ""]}) -> tensor<4096x10xf32> {
  %w1 = graph.weight_ref @w1 : tensor<2048x64xf32>
  %w2 = graph.weight_ref @w2 : tensor<2048x2048xf32>
  %w3 = graph.weight_ref @w3 : tensor<2048x2048xf32>
  %w4 = graph.weight_ref @w4 : tensor<10x2048xf32>
  %h = graph.linear %x, %w1 : tensor<4096x64xf32>, tensor<2048x64xf32>
  %r = graph.tanh %h : tensor<4096x2048xf32>
  %h2 = graph.linear %r, %w2 : tensor<4096x2048xf32>, tensor<2048x2048xf32>
  %r2 = graph.tanh %h2 : tensor<4096x2048xf32>
  %h3 = graph.linear %r2, %w3 : tensor<4096x2048xf32>, tensor<2048x2048xf32>
  %r3 = graph.tanh %h3 : tensor<4096x2048xf32>
  %y = graph.linear %r3, %w4 : tensor<4096x2048xf32>, tensor<10x2048xf32>
  %s = graph.softmax %y : tensor<4096x10xf32>
  return %s : tensor<4096x10xf32>
}
