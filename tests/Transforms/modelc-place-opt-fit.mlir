// RUN: modelc-opt %s --modelc-place="target=%S/Inputs/small-sims.json place-all=sim:0" --verify-diagnostics

// Placement aims at opt (16 rows: 4 KB on sim:0), but a run may have the
// max (100000 rows: 25.6 MB of activations, each sim holds 20 MB): the
// devices' memory is checked at the max the types hold.
graph.dim @batch 1 to 100000 at 16
// expected-error @+1 {{entry point 'forward' does not fit target 'small-sims'}}
func.func @forward(%x: tensor<100000x64xf32> {graph.dims = ["batch", ""]}) -> tensor<100000x64xf32> {
  %y = graph.tanh %x : tensor<100000x64xf32>
  %z = graph.exp %y : tensor<100000x64xf32>
  return %z : tensor<100000x64xf32>
}
