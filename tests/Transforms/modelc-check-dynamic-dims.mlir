// RUN: modelc-opt %s --split-input-file --modelc-check-dynamic-dims --verify-diagnostics | FileCheck %s

// The dimension flows through per-sample ops to the outputs that carry it;
// an output computed without it gets no graph.dims.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<64x10xf32> {graph.dims = ["batch", ""]}, tensor<10xf32>)
graph.dim @batch 1 to 64 at 8
graph.weight @w : tensor<10x4xf32>
graph.weight @b : tensor<10xf32>
func.func @mlp(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> (tensor<64x10xf32>, tensor<10xf32>) {
  %w = graph.weight_ref @w : tensor<10x4xf32>
  %b = graph.weight_ref @b : tensor<10xf32>
  %h = graph.linear %x, %w, %b : tensor<64x4xf32>, tensor<10x4xf32>, tensor<10xf32>
  %r = graph.relu %h : tensor<64x10xf32>
  %s = graph.add %r, %b : tensor<64x10xf32>, tensor<10xf32>
  %y = graph.softmax %s {axis = 1} : tensor<64x10xf32>
  %c = graph.relu %b : tensor<10xf32>
  return %y, %c : tensor<64x10xf32>, tensor<10xf32>
}

// -----

// A static entry point is left alone.
// CHECK-LABEL: func.func @static
// CHECK-SAME: -> tensor<2x4xf32> {
func.func @static(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = graph.relu %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
func.func @sum(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> tensor<4xf32> {
  // expected-error @+1 {{dynamic dimension 'batch' (axis 0, up to 64) cannot flow through 'graph.reduce_sum': its result does not keep the batch as dimension 0; not supported yet}}
  %y = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<64x4xf32>
  return %y : tensor<4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
func.func @softmax_over_batch(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}) -> tensor<64x4xf32> {
  // expected-error @+1 {{dynamic dimension 'batch' (axis 0, up to 64) cannot flow through 'graph.softmax'}}
  %y = graph.softmax %x {axis = 0} : tensor<64x4xf32>
  return %y : tensor<64x4xf32>
}

// -----

graph.dim @batch 1 to 64 at 8
func.func @full_size_operand(%x: tensor<64x4xf32> {graph.dims = ["batch", ""]}, %z: tensor<64x4xf32>) -> tensor<64x4xf32> {
  // expected-error @+1 {{cannot flow through 'graph.add': it combines the batch with a full-size operand that is not split; not supported yet}}
  %y = graph.add %x, %z : tensor<64x4xf32>, tensor<64x4xf32>
  return %y : tensor<64x4xf32>
}

// -----

// A right operand with batch dimensions of its own that is not split.
graph.dim @batch 1 to 4 at 4
func.func @paired(%x: tensor<4x2x3xf32> {graph.dims = ["batch", "", ""]}, %w: tensor<4x3x5xf32>) -> tensor<4x2x5xf32> {
  // expected-error @+1 {{cannot flow through 'graph.matmul': it pairs each sample with a matrix of a right operand that is not split; not supported yet}}
  %y = graph.matmul %x, %w : tensor<4x2x3xf32>, tensor<4x3x5xf32>
  return %y : tensor<4x2x5xf32>
}

// -----

// A dynamic sequence beyond axis 0 and a dynamic batch: attention. The
// sizes are inferred per axis (SymbolicShape.h): a reshape records its
// grouping, outputs name their dimensions.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: -> (tensor<4x16x8xf32> {graph.dims = ["batch", "seq", ""]})
// CHECK: graph.reshape %{{.*}} to [4, 16, 2, 4] {graph.dims = ["batch", "seq", "", ""]}
// CHECK: graph.reshape %{{.*}} to [64, 8] {graph.dims = ["batch*seq", ""]}
graph.dim @batch 1 to 4 at 4
graph.dim @seq 1 to 16 at 8
graph.weight @w : tensor<8x8xf32>
func.func @attention(%x: tensor<4x16x8xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<4x16x8xf32> {
  %w = graph.weight_ref @w : tensor<8x8xf32>
  %h = graph.linear %x, %w : tensor<4x16x8xf32>, tensor<8x8xf32>
  %q = graph.reshape %h to [4, 16, 2, 4] : tensor<4x16x8xf32>
  %qt = graph.transpose %q perm [0, 2, 1, 3] : tensor<4x16x2x4xf32>
  %kt = graph.transpose %q perm [0, 2, 3, 1] : tensor<4x16x2x4xf32>
  %s = graph.matmul %qt, %kt : tensor<4x2x16x4xf32>, tensor<4x2x4x16xf32>
  %p = graph.softmax %s : tensor<4x2x16x16xf32>
  %o = graph.matmul %p, %qt : tensor<4x2x16x16xf32>, tensor<4x2x16x4xf32>
  %o1 = graph.transpose %o perm [0, 2, 1, 3] : tensor<4x2x16x4xf32>
  %o2 = graph.reshape %o1 to [4, 16, 8] : tensor<4x16x2x4xf32>
  %y = graph.layer_norm %o2 : tensor<4x16x8xf32>
  %flat = graph.reshape %y to [64, 8] : tensor<4x16x8xf32>
  %z = graph.relu %flat : tensor<64x8xf32>
  return %y : tensor<4x16x8xf32>
}

// -----

// An output's axis must be one dimension (the runtime sizes outputs by name).
graph.dim @batch 1 to 4 at 4
graph.dim @seq 1 to 16 at 8
func.func @merged(%x: tensor<4x16xf32> {graph.dims = ["batch", "seq"]}) -> tensor<64xf32> {
  %y = graph.reshape %x to [64] : tensor<4x16xf32>
  // expected-error @+1 {{result #0 of 'merged' has size batch*seq at axis 0; an output's dynamic axis must be one dimension; not supported yet}}
  return %y : tensor<64xf32>
}

// -----

// A contracted axis that is dynamic.
graph.dim @seq 1 to 16 at 16
graph.weight @w : tensor<4x16xf32>
func.func @contracted(%x: tensor<2x16xf32> {graph.dims = ["", "seq"]}) -> tensor<2x4xf32> {
  %w = graph.weight_ref @w : tensor<4x16xf32>
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.linear': the contracted axis is dynamic (seq); not supported yet}}
  %y = graph.linear %x, %w : tensor<2x16xf32>, tensor<4x16xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A sequence against a static size it cannot be proved equal to.
graph.dim @seq 1 to 16 at 16
graph.weight @pos : tensor<16x8xf32>
func.func @positions(%x: tensor<2x16x8xf32> {graph.dims = ["", "seq", ""]}) -> tensor<2x16x8xf32> {
  %p = graph.weight_ref @pos : tensor<16x8xf32>
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.add': sizes seq and 16 (axis 1 of the result) cannot be proved equal; not supported yet}}
  %y = graph.add %x, %p : tensor<2x16x8xf32>, tensor<16x8xf32>
  return %y : tensor<2x16x8xf32>
}

// -----

// Two dimensions in a normalized axis.
graph.dim @seq 1 to 16 at 16
func.func @normalized(%x: tensor<2x16xf32> {graph.dims = ["", "seq"]}) -> tensor<2x16xf32> {
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.layer_norm': the normalized axis 1 is dynamic (seq); not supported yet}}
  %y = graph.layer_norm %x : tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// Several dimensions in one entry point, each at axis 0 of its input.
// CHECK-LABEL: func.func @two
// CHECK-SAME: -> (tensor<4x2xf32> {graph.dims = ["batch", ""]}, tensor<3x2xf32> {graph.dims = ["other", ""]})
graph.dim @batch 1 to 4 at 4
graph.dim @other 1 to 3 at 3
func.func @two(%x: tensor<4x2xf32> {graph.dims = ["batch", ""]}, %y: tensor<3x2xf32> {graph.dims = ["other", ""]}) -> (tensor<4x2xf32>, tensor<3x2xf32>) {
  %a = graph.relu %x : tensor<4x2xf32>
  %b = graph.relu %y : tensor<3x2xf32>
  return %a, %b : tensor<4x2xf32>, tensor<3x2xf32>
}

// -----

// A reshape's own graph.dims must be sizes and names, with the operand's
// elements.
graph.dim @seq 1 to 16 at 16
func.func @bad_grouping(%x: tensor<2x16xf32> {graph.dims = ["", "seq"]}) -> tensor<32xf32> {
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.reshape': its graph.dims [seq*4, 8] has other elements (seq*32) than its operand [2, seq] (seq*2); not supported yet}}
  %y = graph.reshape %x to [4, 8] {graph.dims = ["seq*4", ""]} : tensor<2x16xf32>
  %z = graph.reshape %y to [32] : tensor<4x8xf32>
  return %z : tensor<32xf32>
}

// -----

graph.dim @seq 1 to 16 at 16
func.func @not_a_size(%x: tensor<2x16xf32> {graph.dims = ["", "seq"]}) -> tensor<2x16xf32> {
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.reshape': its graph.dims entry 1 is not a product of sizes and dimension names; not supported yet}}
  %y = graph.reshape %x to [2, 16] {graph.dims = ["", "seq*-1"]} : tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// The parts of a split batch (modelc-data-parallel): graph.batch_part r of
// `batch` has dimension batch[r/2] (its size follows from the run's
// batch); the parts, joined in order, are the batch again.
// CHECK-LABEL: func.func @parts
// CHECK-SAME: -> (tensor<7x3xf32> {graph.dims = ["batch", ""]})
graph.dim @batch 2 to 7 at 7
func.func @parts(%x: tensor<7x3xf32> {graph.dims = ["batch", ""]}) -> tensor<7x3xf32> {
  %a = graph.batch_part %x {part = 0, parts = 2} : tensor<7x3xf32>
  %b = graph.batch_part %x {part = 1, parts = 2} : tensor<7x3xf32>
  %ra = graph.relu %a : tensor<4x3xf32>
  %rb = graph.relu %b : tensor<3x3xf32>
  %y = graph.concat %ra, %rb {axis = 0} : tensor<4x3xf32>, tensor<3x3xf32>
  return %y : tensor<7x3xf32>
}

// -----

// Parts joined out of order are no size the runtime knows.
graph.dim @batch 2 to 7 at 7
func.func @parts_swapped(%x: tensor<7x3xf32> {graph.dims = ["batch", ""]}) -> tensor<7x3xf32> {
  %a = graph.batch_part %x {part = 0, parts = 2} : tensor<7x3xf32>
  %b = graph.batch_part %x {part = 1, parts = 2} : tensor<7x3xf32>
  // expected-error @+1 {{dynamic dimension 'batch[1/2]' (axis 0, up to 3) cannot flow through 'graph.concat': its result does not keep the batch as dimension 0; not supported yet}}
  %y = graph.concat %b, %a {axis = 0} : tensor<3x3xf32>, tensor<4x3xf32>
  return %y : tensor<7x3xf32>
}

// -----

// A slice cut to a dimension's size (graph.dims; the ONNX importer writes
// it for torch.arange(seq) and table[:, :seq]): its result has the
// dimension even where its input is static.
// CHECK-LABEL: func.func @cut_to_seq
// CHECK-SAME: -> (tensor<2x16x8xf32> {graph.dims = ["", "seq", ""]})
graph.dim @seq 1 to 16 at 16
func.func @cut_to_seq(%x: tensor<2x16x8xf32> {graph.dims = ["", "seq", ""]}) -> tensor<2x16x8xf32> {
  %table = graph.constant dense<1.0> : tensor<1x32x8xf32>
  %cut = graph.slice %table {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 16>, graph.dims = ["", "seq", ""]} : tensor<1x32x8xf32>
  %y = graph.add %x, %cut : tensor<2x16x8xf32>, tensor<1x16x8xf32>
  return %y : tensor<2x16x8xf32>
}

// -----

graph.dim @seq 1 to 16 at 16
func.func @cut_from_one(%x: tensor<16xf32> {graph.dims = ["seq"]}) -> tensor<16xf32> {
  %table = graph.constant dense<1.0> : tensor<32xf32>
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.slice': it cuts axis 0 to seq from another start than 0 or in steps; not supported yet}}
  %cut = graph.slice %table {starts = array<i64: 1>, ends = array<i64: 17>, graph.dims = ["seq"]} : tensor<32xf32>
  %y = graph.add %x, %cut : tensor<16xf32>, tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

graph.dim @seq 1 to 16 at 16
func.func @cut_past_the_end(%x: tensor<16xf32> {graph.dims = ["seq"]}) -> tensor<16xf32> {
  %table = graph.constant dense<1.0> : tensor<16xf32>
  // expected-error @+1 {{dynamic dimensions cannot flow through 'graph.slice': it cuts axis 0 (16) to seq*2, which can be longer; not supported yet}}
  %cut = graph.slice %table {starts = array<i64: 0>, ends = array<i64: 16>, graph.dims = ["seq*2"]} : tensor<16xf32>
  %y = graph.add %x, %cut : tensor<16xf32>, tensor<16xf32>
  return %y : tensor<16xf32>
}
