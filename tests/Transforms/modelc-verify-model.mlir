// RUN: modelc-opt %s --split-input-file --modelc-verify-model --verify-diagnostics | FileCheck %s

// A well-formed model passes unchanged.
// CHECK: graph.weight @w : tensor<4x4xf32>
// CHECK-LABEL: func.func @forward
// CHECK: graph.matmul
graph.weight @w : tensor<4x4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Several entry points are fine.
// CHECK-LABEL: func.func @encode
// CHECK-LABEL: func.func @decode
func.func @encode(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @decode(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 of entry point 'f' has a dynamic dimension ('tensor<?x4xf32>'); the IR holds a dynamic dimension at its max, named in graph.dims (docs/dynamic.md)}}
func.func @f(%x: tensor<?x4xf32>) {
  return
}

// -----

func.func @f(%x: tensor<4xf32>,
// expected-error @+1 {{argument #1 of entry point 'f' has a dynamic dimension ('tensor<?xf32>'); the IR holds a dynamic dimension at its max, named in graph.dims (docs/dynamic.md)}}
             %y: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  return %x, %y : tensor<4xf32>, tensor<?xf32>
}

// -----

// expected-error @+1 {{argument #0 of entry point 'f' must be a ranked tensor, got 'f32'}}
func.func @f(%x: f32) {
  return
}

// -----

// expected-error @+1 {{argument #0 of entry point 'f' has element type 'si16'; expected one of f32, f16, bf16, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1}}
func.func @f(%x: tensor<4xsi16>) {
  return
}

// -----

// expected-error @+1 {{entry point 'f' has no body; declarations are not supported}}
func.func private @f(%x: tensor<4xf32>)

// -----

func.func @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{calls between functions are not supported yet; inline 'callee' into 'caller'}}
  %0 = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'builtin.module' is not allowed at the top level of a model; expected graph.weight and graph.dim declarations and func.func entry points}}
module {
}
func.func @f() {
  return
}

// -----

// expected-error @+1 {{the model has no entry point; define one with func.func}}
module {
  graph.weight @w : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.constant' is not an op of a model; models are written with graph and device ops (see docs/ir.md)}}
  %0 = func.constant @f : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// A dynamic dimension: declared, named per axis, held at its max.
// CHECK: graph.dim @batch 1 to 64 at 8
// CHECK: func.func @dyn(%arg0: tensor<64x4xf32> {graph.dims = ["batch", ""]})
graph.dim @batch 1 to 64 at 8
func.func @dyn(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> tensor<64x4xf32> {
  return %x : tensor<64x4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
// expected-error @+1 {{argument #0 of 'f' names dimension 'seq', which no graph.dim declares}}
func.func @f(%x: tensor<64x4xf32> {graph.dims = ["seq", ""]}) {
  return
}

// -----

graph.dim @batch 1 to 64 at 8
// expected-error @+1 {{argument #0 of 'f' has size 32 at axis 0, dimension 'batch'; the IR holds a dynamic dimension at its max, 64}}
func.func @f(%x: tensor<32x4xf32> {graph.dims = ["batch", ""]}) {
  return
}

// -----

graph.dim @batch 1 to 64 at 8
// expected-error @+1 {{argument #0 of 'f' is a scalar; graph.dims names the axes of a tensor}}
func.func @f(%x: tensor<f32> {graph.dims = []}) {
  return
}

// -----

graph.dim @batch 1 to 64 at 8
// expected-error @+1 {{graph.dims of argument #0 of 'f' must be 2 strings, one per axis: a graph.dim's name or "" (static)}}
func.func @f(%x: tensor<64x4xf32> {graph.dims = ["batch"]}) {
  return
}
