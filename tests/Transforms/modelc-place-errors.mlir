// RUN: modelc-opt %s --modelc-place="target=%S/Inputs/tiny-memory.json" --verify-diagnostics
// RUN: not modelc-opt %s --modelc-place=target=h300 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not modelc-opt %s --modelc-place=target=%t.missing.json 2>&1 | FileCheck %s --check-prefix=MISSING

// Nothing fits: 4 MB of weights, 1 MB per device.
graph.weight @w : tensor<1000x1000xf32>
// expected-error @+1 {{entry point 'forward' does not fit target 'tiny-memory': it needs 4.0 MB of weights; cpu has 1.0 MB, placement puts}}
func.func @forward(%x: tensor<8x1000xf32>) -> tensor<8x1000xf32> {
  %w = graph.weight_ref @w : tensor<1000x1000xf32>
  %y = graph.matmul %x, %w : tensor<8x1000xf32>, tensor<1000x1000xf32>
  return %y : tensor<8x1000xf32>
}

// UNKNOWN: error: unknown target 'h300'; expected a preset (cpu, h200, h200x2, h200x4, h200x8, cpu+sim2, cpu+sim4) or a .json file
// MISSING: error: cannot read target '{{.*}}missing.json': No such file or directory
