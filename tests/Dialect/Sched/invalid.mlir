// RUN: modelc-opt %s --split-input-file --verify-diagnostics

func.func @not_elementwise(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %f = sched.fused(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    // expected-error @+1 {{'graph.softmax' op is not elementwise and cannot be fused}}
    %s = graph.softmax %a : tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  return %f : tensor<4x4xf32>
}

// -----

func.func @argument_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.fused' op has 2 inputs but its body has 1 arguments}}
  %f = sched.fused(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    sched.yield %e : tensor<4xf32>
  }
  return %f : tensor<4xf32>
}

// -----

func.func @argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.fused' op input #0 is 'tensor<4xf32>' but the body's argument is 'tensor<4xf16>'}}
  %f = sched.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf16>):
    %e = graph.exp %a : tensor<4xf16>
    sched.yield %e : tensor<4xf16>
  }
  return %f : tensor<4xf32>
}

// -----

func.func @empty_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.fused' op body computes nothing}}
  %f = sched.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    sched.yield %a : tensor<4xf32>
  }
  return %f : tensor<4xf32>
}

// -----

func.func @result_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'sched.fused' op yields 'tensor<4xf32>' but its result is 'tensor<4xf16>'}}
  %f = sched.fused(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    sched.yield %e : tensor<4xf32>
  }
  return %f : tensor<4xf16>
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.yield' op expects parent op to be one of 'sched.fused, sched.fused_reduce, sched.gemm, sched.sliced_transpose, sched.packed_product'}}
  sched.yield %x : tensor<4xf32>
}

// -----

func.func @gemm_two_products(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.gemm' op body must hold one linear, matmul or conv2d, not 2}}
  %g = sched.gemm : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    %b = graph.matmul %a, %x : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %b : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @gemm_relu_unset(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.gemm' op 'relu' must be set exactly when the body applies one relu after the product}}
  %g = sched.gemm : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    %r = graph.relu %a : tensor<4x4xf32>
    sched.yield %r : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @gemm_alpha_without_mul(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.gemm' op 'alpha' must differ from 1 exactly when the body scales the product once}}
  %g = sched.gemm {alpha = 2.0 : f64} : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %a : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @gemm_beta(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.gemm' op 'beta' must be 0 or 1, not 5.000000e-01}}
  %g = sched.gemm {beta = 0.5 : f64} : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %a : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @gemm_residual_after_matmul(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.gemm' op a residual addition must add a value from above to a linear's result}}
  %g = sched.gemm {beta = 1.0 : f64} : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    %s = graph.add %a, %x : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @gemm_softmax(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %g = sched.gemm : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    // expected-error @+1 {{'graph.softmax' op cannot be computed by a GEMM}}
    %s = graph.softmax %a : tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @gemm_view_without_chain(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.gemm' op the view of operand #0 needs the ops it folds in the body}}
  %g = sched.gemm {lhs_view = #sched.view<offset = 0, ld = 4, batch_stride = 0, transposed = false>} : tensor<4x4xf32> {
    %a = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %a : tensor<4x4xf32>
  }
  return %g : tensor<4x4xf32>
}

// -----

func.func @sliced_transpose_without_slice(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'sched.sliced_transpose' op body must be a slice, views of it, and a transpose whose value it yields}}
  %t = sched.sliced_transpose : tensor<8x4xf32> {
    %p = graph.transpose %x perm [1, 0] : tensor<4x8xf32>
    sched.yield %p : tensor<8x4xf32>
  }
  return %t : tensor<8x4xf32>
}

// -----

func.func @overlapping_buffers(%x: tensor<16xf32>) -> tensor<16xf32> attributes {sched.arenas = {cpu = 128 : i64}} {
  // expected-note @+1 {{the other buffer's op}}
  %a = graph.exp %x {sched.buffer = #sched.buffer<offset = 0, bytes = 64, first = 0, last = 1>} : tensor<16xf32>
  // expected-error @+1 {{'graph.neg' op has a buffer [32, 96) on cpu that overlaps a buffer [0, 64) alive at the same time (ops 0-1 and 1-2)}}
  %b = graph.neg %a {sched.buffer = #sched.buffer<offset = 32, bytes = 64, first = 1, last = 2>} : tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----

// A product may write over its sum's operand only where the operand dies
// there (modelc-plan-memory's sum in place): here %a is read after it.
graph.weight @k : tensor<4x4x3x3xf32>
func.func @sum_in_place_of_a_live_value(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> attributes {sched.arenas = {cpu = 1152 : i64}} {
  %k = graph.weight_ref @k : tensor<4x4x3x3xf32>
  // expected-note @+1 {{the other buffer's op}}
  %a = graph.exp %x {sched.buffer = #sched.buffer<offset = 0, bytes = 576, first = 1, last = 3>} : tensor<1x4x6x6xf32>
  // expected-error @+1 {{'sched.packed_product' op has a buffer [0, 576) on cpu that overlaps a buffer [0, 576) alive at the same time (ops 1-3 and 2-3)}}
  %s = sched.packed_product {sched.buffer = #sched.buffer<offset = 0, bytes = 576, first = 2, last = 3>} : tensor<1x4x6x6xf32> {
    %p = graph.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
    %y = graph.add %p, %a : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
    sched.yield %y : tensor<1x4x6x6xf32>
  }
  %t = graph.add %s, %a {sched.buffer = #sched.buffer<offset = 576, bytes = 576, first = 3, last = 4>} : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
  return %t : tensor<1x4x6x6xf32>
}

// -----

func.func @outside_arena(%x: tensor<16xf32>) -> tensor<16xf32> attributes {sched.arenas = {cpu = 64 : i64}} {
  // expected-error @+1 {{'graph.exp' op has a buffer [64, 128) outside the arena of cpu (64 bytes)}}
  %a = graph.exp %x {sched.buffer = #sched.buffer<offset = 64, bytes = 64, first = 0, last = 1>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'sched.arenas' must map devices to bytes}}
func.func @arenas_not_a_map() attributes {sched.arenas = 3 : i64} {
  return
}

// -----

func.func @wait_before_record(%x: tensor<4xf32>) -> tensor<4xf32> attributes {sched.events = 1 : i64} {
  // expected-error @+1 {{'graph.exp' op waits for event 0, which no op before it records}}
  %a = graph.exp %x {sched.waits = array<i64: 0>} : tensor<4xf32>
  %b = graph.neg %a {sched.record = 0 : i64} : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

func.func @recorded_twice(%x: tensor<4xf32>) -> tensor<4xf32> attributes {sched.events = 1 : i64} {
  %a = graph.exp %x {sched.record = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{'graph.neg' op records event 0, which an op before it records too}}
  %b = graph.neg %a {sched.record = 0 : i64} : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

func.func @event_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> attributes {sched.events = 1 : i64} {
  // expected-error @+1 {{'graph.exp' op records event 3 of a function with 1 events}}
  %a = graph.exp %x {sched.record = 3 : i64} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @bad_stream(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op 'sched.stream' must be "compute" or "copy"}}
  %a = graph.exp %x {sched.stream = "dma"} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @buffer_not_a_buffer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op 'sched.buffer' must be a #sched.buffer}}
  %a = graph.exp %x {sched.buffer = 3 : i64} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @scratch_not_buffers(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op 'sched.scratch' must be an array of #sched.buffer}}
  %a = graph.exp %x {sched.scratch = [1 : i64]} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @waits_not_events(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op 'sched.waits' must be an array<i64> of events}}
  %a = graph.exp %x {sched.waits = [0 : i64]} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @col2im_elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op 'sched.col2im' is a unit attribute of graph.conv_transpose2d}}
  %a = graph.exp %x {sched.col2im} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @dnnl_conv_algorithm(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+1 {{'graph.conv2d' op 'sched.dnnl_conv' must be "direct" or "winograd"}}
  %a = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, sched.dnnl_conv = "fft"} : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>
  return %a : tensor<1x16x8x8xf32>
}

// -----

func.func @dnnl_conv_elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op 'sched.dnnl_conv' is for f32 graph.conv2d, graph.conv_transpose2d (without a bias) and graph.conv2d_weight_grad of static shapes}}
  %a = graph.exp %x {sched.dnnl_conv = "direct"} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @dnnl_conv_half(%x: tensor<1x16x8x8xf16>, %w: tensor<16x16x3x3xf16>) -> tensor<1x16x8x8xf16> {
  // expected-error @+1 {{'graph.conv2d' op 'sched.dnnl_conv' is for f32 graph.conv2d}}
  %a = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, sched.dnnl_conv = "direct"} : tensor<1x16x8x8xf16>, tensor<16x16x3x3xf16>
  return %a : tensor<1x16x8x8xf16>
}

// -----

func.func @unknown_sched_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.exp' op has an unknown sched attribute 'sched.bogus'}}
  %a = graph.exp %x {sched.bogus} : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @packed_needs_constant_weight(%x: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'sched.packed_product' op body must start with a linear, matmul, gemm or conv2d of f32, f16 or bf16 tensors (one type) and a constant weight}}
  %p = sched.packed_product : tensor<4x4xf32> {
    %m = graph.matmul %x, %v : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %m : tensor<4x4xf32>
  }
  return %p : tensor<4x4xf32>
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @packed_post_op(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %p = sched.packed_product : tensor<4x4xf32> {
    %m = graph.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
    // expected-error @+1 {{'graph.exp' op cannot be applied by oneDNN after the product (or does not read the value before it)}}
    %e = graph.exp %m : tensor<4x4xf32>
    sched.yield %e : tensor<4x4xf32>
  }
  return %p : tensor<4x4xf32>
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @packed_chain(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %p = sched.packed_product : tensor<4x4xf32> {
    %m = graph.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
    // expected-error @+1 {{'graph.relu' op reads a value that another op also reads}}
    %r = graph.relu %m : tensor<4x4xf32>
    %s = graph.relu %m : tensor<4x4xf32>
    sched.yield %s : tensor<4x4xf32>
  }
  return %p : tensor<4x4xf32>
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @packed_yield(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  // expected-error @+1 {{'sched.packed_product' op must yield the value of its last op}}
  %p = sched.packed_product : tensor<4x4xf32> {
    %m = graph.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
    %r = graph.relu %m : tensor<4x4xf32>
    sched.yield %x : tensor<4x4xf32>
  }
  return %p : tensor<4x4xf32>
}

// -----

graph.weight @k : tensor<4x4x1x1xf32>
func.func @packed_conv_two_sums(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %k = graph.weight_ref @k : tensor<4x4x1x1xf32>
  %p = sched.packed_product : tensor<1x4x2x2xf32> {
    %c = graph.conv2d %x, %k : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>
    %a = graph.add %c, %x : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
    // expected-error @+1 {{'graph.add' op is a second sum: oneDNN takes one per product}}
    %b = graph.add %a, %x : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
    sched.yield %b : tensor<1x4x2x2xf32>
  }
  return %p : tensor<1x4x2x2xf32>
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @keep_layout_matmul(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  // expected-error @+1 {{'sched.packed_product' op keeps oneDNN's layout only for an f32 convolution}}
  %p = sched.packed_product {keep_layout} : tensor<4x4xf32> {
    %m = graph.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
    sched.yield %m : tensor<4x4xf32>
  }
  return %p : tensor<4x4xf32>
}

// -----

graph.weight @k : tensor<4x4x1x1xf32>
func.func @keep_layout_reader(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %k = graph.weight_ref @k : tensor<4x4x1x1xf32>
  // expected-error @+1 {{'sched.packed_product' op keeps oneDNN's layout, so every reader must be a packed convolution reading it as its input or as the operand of its sum}}
  %p = sched.packed_product {keep_layout} : tensor<1x4x2x2xf32> {
    %c = graph.conv2d %x, %k : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>
    sched.yield %c : tensor<1x4x2x2xf32>
  }
  %r = graph.relu %p : tensor<1x4x2x2xf32>
  return %r : tensor<1x4x2x2xf32>
}

// -----

graph.weight @w : tensor<16x16xf32>
func.func @winograd_matmul(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = graph.weight_ref @w : tensor<16x16xf32>
  // expected-error @+1 {{'sched.packed_product' op asks for Winograd's algorithm, which applies only to a 3x3 convolution with stride 1, dilation 1, one group and a multiple of 16 channels in and out}}
  %p = sched.packed_product {winograd} : tensor<4x16xf32> {
    %m = graph.linear %x, %w : tensor<4x16xf32>, tensor<16x16xf32>
    sched.yield %m : tensor<4x16xf32>
  }
  return %p : tensor<4x16xf32>
}

// -----

graph.weight @k : tensor<16x16x3x3xf32>
func.func @winograd_strided(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %k = graph.weight_ref @k : tensor<16x16x3x3xf32>
  // expected-error @+1 {{'sched.packed_product' op asks for Winograd's algorithm}}
  %p = sched.packed_product {winograd} : tensor<1x16x4x4xf32> {
    %c = graph.conv2d %x, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>
    sched.yield %c : tensor<1x16x4x4xf32>
  }
  return %p : tensor<1x16x4x4xf32>
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @output_cast_of_f32(%x: tensor<4x4xf32>) -> tensor<4x4xf16> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %p = sched.packed_product : tensor<4x4xf16> {
    %m = graph.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
    // expected-error @+1 {{'graph.cast' op can end a packed product only as a cast of its f16 or bf16 value to f32}}
    %c = graph.cast %m : tensor<4x4xf32> to f16
    sched.yield %c : tensor<4x4xf16>
  }
  return %p : tensor<4x4xf16>
}

// -----

func.func @constant_not_splat(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = sched.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'graph.constant' op in a fused body must be a splat}}
    %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %s = graph.add %a, %c : tensor<4xf32>, tensor<4xf32>
    sched.yield %s : tensor<4xf32>
  }
  return %f : tensor<4xf32>
}

// -----

graph.weight @w {writable} : tensor<8xf32>
func.func @writes_weight_of_other_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.fused' op 'sched.writes_weight' names @w, which is not a weight of the result's type}}
  %f = sched.fused(%x) {sched.writes_weight = @w} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = graph.neg %a : tensor<4xf32>
    sched.yield %s : tensor<4xf32>
  }
  return %f : tensor<4xf32>
}

// -----

graph.weight @w {writable} : tensor<4xf32>
func.func @writes_weight_not_fused(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.neg' op 'sched.writes_weight' names the weight a sched.fused (or a graph.owner_broadcast) writes its value into}}
  %n = graph.neg %x {sched.writes_weight = @w} : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

func.func @fused_reduce_without_reduction(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'sched.fused_reduce' op body must end in a 'graph.reduce_sum' or 'graph.reduce_mean' before its yield}}
  %r = sched.fused_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = graph.exp %a : tensor<4x8xf32>
    sched.yield %e : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fused_reduce_of_an_input(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.fused_reduce' op reduces a value its body does not compute}}
  %r = sched.fused_reduce(%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = graph.reduce_sum %a {axes = array<i64: 1>} : tensor<4x8xf32>
    sched.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_reduce_not_elementwise(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = sched.fused_reduce(%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{'graph.softmax' op is not elementwise and cannot be fused}}
    %s = graph.softmax %a {axis = 1} : tensor<4x8xf32>
    %t = graph.reduce_sum %s {axes = array<i64: 1>} : tensor<4x8xf32>
    sched.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @all_reduce_start_two_uses(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'sched.all_reduce_start' op must have exactly one use, its 'sched.all_reduce_wait'}}
  %s = sched.all_reduce_start %x {slot = 0 : i64} : tensor<4xf32>
  %w = sched.all_reduce_wait %s : tensor<4xf32>
  return %w, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @all_reduce_start_not_waited(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.all_reduce_start' op must be used by a 'sched.all_reduce_wait' later in its block}}
  %s = sched.all_reduce_start %x {slot = 0 : i64} : tensor<4xf32>
  %e = graph.exp %s : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @all_reduce_slot_twice(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = sched.all_reduce_start %x {slot = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{'sched.all_reduce_start' op has slot 0, as an earlier start of its block}}
  %t = sched.all_reduce_start %y {slot = 0 : i64} : tensor<4xf32>
  %v = sched.all_reduce_wait %s : tensor<4xf32>
  %w = sched.all_reduce_wait %t : tensor<4xf32>
  return %v, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @all_reduce_wait_without_start(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sched.all_reduce_wait' op must wait for the result of a 'sched.all_reduce_start'}}
  %w = sched.all_reduce_wait %x : tensor<4xf32>
  return %w : tensor<4xf32>
}
