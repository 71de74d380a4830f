// RUN: modelc-opt %s --split-input-file --verify-diagnostics

// One case per user-facing verifier message of the graph dialect.

//===--- tensor types (shared by every op) ---===//

func.func @dynamic_dimension(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.relu' op operand #0 has a dynamic dimension ('tensor<?x4xf32>'); dynamic shapes are not supported yet}}
  %0 = graph.relu %x : tensor<?x4xf32>
  return
}

// -----

func.func @dynamic_dimension_inferred(%x: tensor<?x4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'graph.add' op lhs has a dynamic dimension ('tensor<?x4xf32>'); dynamic shapes are not supported yet}}
  %0 = graph.add %x, %y : tensor<?x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @unsupported_element_type(%x: tensor<4xsi8>, %y: tensor<4xsi8>) {
  // expected-error @+1 {{'graph.add' op lhs has element type 'si8'; expected one of f32, f16, bf16, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1}}
  %0 = graph.add %x, %y : tensor<4xsi8>, tensor<4xsi8>
  return
}

// -----

func.func @not_a_tensor(%x: f32, %y: tensor<4xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = graph.mul %x, %y : f32, tensor<4xf32>
  return
}

// -----

func.func @not_a_tensor_generic(%x: f32, %y: tensor<4xf32>) {
  // expected-error @+1 {{'graph.mul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'f32'}}
  %0 = "graph.mul"(%x, %y) : (f32, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = graph.reduce_sum %x : tensor<*xf32>
  return
}

// -----

//===--- device pins ---===//

func.func @bad_pin(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.relu' op invalid device pin "gpu:0"; expected "cpu", "cuda:N" or "sim:N"}}
  %0 = graph.relu %x {device = "gpu:0"} : tensor<4xf32>
  return
}

// -----

func.func @cpu_pin_with_index(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.relu' op invalid device pin "cpu:1"; expected "cpu", "cuda:N" or "sim:N"}}
  %0 = graph.relu %x {device = "cpu:1"} : tensor<4xf32>
  return
}

// -----

func.func @pin_not_a_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.relu' op device pin must be a string such as "cuda:0", got 1 : i64}}
  %0 = graph.relu %x {device = 1} : tensor<4xf32>
  return
}

// -----

//===--- attribute names ---===//

// A misspelled attribute is an error with the closest valid name, not an
// attribute silently ignored (a convolution without its padding).
func.func @misspelled_attribute(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op has no attribute 'pading'; did you mean 'padding'?}}
  %0 = graph.conv2d %x, %w {pading = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// Reported while the parser infers the result type, before the `return`
// whose type the misspelling would make wrong (an unpadded result is 6x6).
func.func @misspelled_attribute_changes_the_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'graph.conv2d' op has no attribute 'pading'; did you mean 'padding'?}}
  %0 = graph.conv2d %x, %w {pading = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @misspelled_pin(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.relu' op has no attribute 'devise'; did you mean 'device'?}}
  %0 = graph.relu %x {devise = "cpu"} : tensor<4xf32>
  return
}

// -----

// Nothing close: the message lists the op's attributes.
func.func @unknown_attribute(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.softmax' op has no attribute 'temperature'; its attributes are axis, device}}
  %0 = graph.softmax %x {temperature = 2.0 : f32} : tensor<4x8xf32>
  return
}

// -----

func.func @attribute_of_op_without_any(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.relu' op has no attribute 'alpha'; its attributes are device}}
  %0 = graph.relu %x {alpha = 0.1 : f32} : tensor<4xf32>
  return
}

// -----

//===--- weights and constants ---===//

func.func @unknown_weight() {
  // expected-error @+1 {{'graph.weight_ref' op references unknown weight '@fc9.weight'; declare it with graph.weight}}
  %0 = graph.weight_ref @fc9.weight : tensor<4xf32>
  return
}

// -----

func.func @assign_unknown_weight(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.assign' op references unknown weight '@nope'; declare it with graph.weight}}
  graph.assign @nope, %x : tensor<4xf32>
  return
}

// -----

graph.weight @w : tensor<4xf32>
func.func @assign_not_writable(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.assign' op assigns weight '@w', which is not declared writable}}
  graph.assign @w, %x : tensor<4xf32>
  return
}

// -----

graph.weight @w {writable} : tensor<4xf32>
func.func @assign_type_mismatch(%x: tensor<5xf32>) {
  // expected-error @+1 {{'graph.assign' op value type 'tensor<5xf32>' differs from the declared type 'tensor<4xf32>' of weight '@w'}}
  graph.assign @w, %x : tensor<5xf32>
  return
}

// -----

graph.weight @w : tensor<4x4xf32>
func.func @weight_type_mismatch() {
  // expected-error @+1 {{'graph.weight_ref' op result type 'tensor<4x5xf32>' differs from the declared type 'tensor<4x4xf32>' of weight '@w'}}
  %0 = graph.weight_ref @w : tensor<4x5xf32>
  return
}

// -----

func.func @forward() {
  // expected-error @+1 {{'graph.weight_ref' op '@forward' is a 'func.func', not a graph.weight}}
  %0 = graph.weight_ref @forward : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'graph.weight' op weight 'w' has a dynamic dimension ('tensor<?xf32>'); dynamic shapes are not supported yet}}
graph.weight @w : tensor<?xf32>

// -----

// expected-error @+1 {{'graph.weight' op weight name must not be empty}}
graph.weight @"" : tensor<4xf32>

// -----

// expected-note @+1 {{see existing symbol definition here}}
graph.weight @w : tensor<4xf32>
// expected-error @+1 {{redefinition of symbol named 'w'}}
graph.weight @w : tensor<4xf32>

// -----

func.func @weight_inside_function() {
  // expected-error @+1 {{'graph.weight' op expects parent op 'builtin.module'}}
  graph.weight @w : tensor<4xf32>
  return
}

// -----

func.func @constant_i4() {
  // expected-error @+1 {{'graph.constant' op value has element type 'i4'; expected one of f32, f16, bf16, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1}}
  %0 = graph.constant dense<1> : tensor<2xi4>
  return
}

// -----

//===--- elementwise ---===//

func.func @no_broadcast(%x: tensor<4x8xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'graph.add' op shapes [4, 8] and [3] do not broadcast: dimension -1 is 8 vs 3}}
  %0 = graph.add %x, %y : tensor<4x8xf32>, tensor<3xf32>
  return
}

// -----

func.func @mixed_element_types(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'graph.sub' op element types differ: lhs is 'f32', rhs is 'f16'}}
  %0 = graph.sub %x, %y : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @bool_arithmetic(%x: tensor<4xi1>) {
  // expected-error @+1 {{'graph.add' op lhs must have a numeric element type (not i1), got i1}}
  %0 = graph.add %x, %x : tensor<4xi1>, tensor<4xi1>
  return
}

// -----

func.func @exp_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{'graph.exp' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = graph.exp %x : tensor<4xi32>
  return
}

// -----

func.func @result_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+2 {{'graph.add' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  // expected-error @+1 {{'graph.add' op failed to infer returned types}}
  %0 = "graph.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @compare_mixed(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'graph.compare' op element types differ: lhs is 'f32', rhs is 'i32'}}
  %0 = graph.compare lt, %x, %y : tensor<4xf32>, tensor<4xi32>
  return
}

// -----

func.func @compare_unknown_predicate(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = graph.compare less, %x, %x : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @select_condition_not_bool(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.select' op condition must have element type i1, got 'f32'}}
  %0 = graph.select %c, %x, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @select_mixed(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'graph.select' op element types differ: true value is 'f32', false value is 'f16'}}
  %0 = graph.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @select_no_broadcast(%c: tensor<3xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.select' op shapes [3] and [4] do not broadcast: dimension -1 is 3 vs 4}}
  %0 = graph.select %c, %x, %x : tensor<3xi1>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @cast_to_f8(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cast' op cannot cast to 'f8E4M3FN'; expected one of f32, f16, bf16, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1}}
  %0 = graph.cast %x : tensor<4xf32> to f8E4M3FN
  return
}

// -----

//===--- matrix products ---===//

func.func @matmul_vector(%x: tensor<4xf32>, %y: tensor<4x4xf32>) {
  // expected-error @+1 {{'graph.matmul' op operands must have rank >= 2, got ranks 1 and 2 (reshape a vector to a matrix)}}
  %0 = graph.matmul %x, %y : tensor<4xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @matmul_inner(%x: tensor<64x784xf32>, %y: tensor<512x10xf32>) {
  // expected-error @+1 {{'graph.matmul' op inner dimensions differ: lhs [64, 784] has K = 784, rhs [512, 10] has K = 512}}
  %0 = graph.matmul %x, %y : tensor<64x784xf32>, tensor<512x10xf32>
  return
}

// -----

func.func @matmul_batch(%x: tensor<2x4x4xf32>, %y: tensor<3x4x4xf32>) {
  // expected-error @+1 {{'graph.matmul' op shapes [2] and [3] do not broadcast: dimension -1 is 2 vs 3}}
  %0 = graph.matmul %x, %y : tensor<2x4x4xf32>, tensor<3x4x4xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<64x785xf32>, %w: tensor<1024x784xf32>) {
  // expected-error @+1 {{'graph.linear' op weight [1024, 784] expects 784 input features, input [64, 785] has 785}}
  %0 = graph.linear %x, %w : tensor<64x785xf32>, tensor<1024x784xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<64x784xf32>, %w: tensor<784xf32>) {
  // expected-error @+1 {{'graph.linear' op weight must have rank 2 ([out_features, in_features]), got [784]}}
  %0 = graph.linear %x, %w : tensor<64x784xf32>, tensor<784xf32>
  return
}

// -----

func.func @linear_scalar(%x: tensor<f32>, %w: tensor<4x1xf32>) {
  // expected-error @+1 {{'graph.linear' op input must have rank >= 1, got a scalar}}
  %0 = graph.linear %x, %w : tensor<f32>, tensor<4x1xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<64x784xf32>, %w: tensor<1024x784xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'graph.linear' op bias must have shape [1024], got [10]}}
  %0 = graph.linear %x, %w, %b : tensor<64x784xf32>, tensor<1024x784xf32>, tensor<10xf32>
  return
}

// -----

func.func @linear_integers(%x: tensor<4x4xi32>) {
  // expected-error @+1 {{'graph.linear' op input must have a floating-point element type (f32, f16, bf16, f64): 'i32' is not supported}}
  %0 = graph.linear %x, %x : tensor<4x4xi32>, tensor<4x4xi32>
  return
}

// -----

func.func @gemm_rank(%a: tensor<2x4x4xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{'graph.gemm' op a and b must have rank 2, got [2, 4, 4] and [4, 4]}}
  %0 = graph.gemm %a, %b : tensor<2x4x4xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @gemm_inner(%a: tensor<6x8xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+1 {{'graph.gemm' op inner dimensions differ: op(a) is [6, 8], op(b) is [16, 8]}}
  %0 = graph.gemm %a, %b : tensor<6x8xf32>, tensor<16x8xf32>
  return
}

// -----

func.func @gemm_c(%a: tensor<6x8xf32>, %b: tensor<8x16xf32>, %c: tensor<6x1x1xf32>) {
  // expected-error @+1 {{'graph.gemm' op c [6, 1, 1] does not broadcast to the result shape [6, 16]}}
  %0 = graph.gemm %a, %b, %c : tensor<6x8xf32>, tensor<8x16xf32>, tensor<6x1x1xf32>
  return
}

// -----

func.func @gemm_int_alpha(%a: tensor<6x8xi32>, %b: tensor<8x16xi32>) {
  // expected-error @+1 {{'graph.gemm' op alpha must be a whole number for 'i32' operands, got 5.000000e-01}}
  %0 = graph.gemm %a, %b {alpha = 0.5 : f32} : tensor<6x8xi32>, tensor<8x16xi32>
  return
}

// -----

func.func @gemm_bool(%a: tensor<6x8xi1>, %b: tensor<8x16xi1>) {
  // expected-error @+1 {{'graph.gemm' op a must have a numeric element type (not i1), got i1}}
  %0 = graph.gemm %a, %b : tensor<6x8xi1>, tensor<8x16xi1>
  return
}

// -----

func.func @gemm_bad_flag(%a: tensor<6x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'graph.gemm' op attribute 'transpose_a' failed to satisfy constraint: bool attribute}}
  %0 = graph.gemm %a, %b {transpose_a = 1} : tensor<6x8xf32>, tensor<8x16xf32>
  return
}

// -----

//===--- normalization ---===//

func.func @softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.softmax %x {axis = 2} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.log_softmax' op axis -1 is out of range for rank 0; a scalar has no axes}}
  %0 = graph.log_softmax %x : tensor<f32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op scale must have shape [8], got [4, 8]}}
  %0 = graph.layer_norm %x scale %g : tensor<2x4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_bias_dtype(%x: tensor<2x8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'graph.layer_norm' op element types differ: input is 'f32', bias is 'f16'}}
  %0 = graph.layer_norm %x bias %b : tensor<2x8xf32>, tensor<8xf16>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op epsilon must be > 0, got -1.000000e+00}}
  %0 = graph.layer_norm %x {epsilon = -1.0 : f32} : tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op axis -3 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.layer_norm %x {axis = -3} : tensor<2x8xf32>
  return
}

// -----

// Found by modelc-ir-fuzz: a batch norm with too few operands crashed
// shape inference.
func.func @batch_norm_operands(%x: tensor<4x8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op takes 5 operands (input, scale, bias, mean, var), got 2}}
  %0 = graph.batch_norm %x, %c : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op input must have rank >= 2 ([N, C, ...]), got [4]}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<1x4x2x2xf32>, %c: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op variance must have shape [4], got [3]}}
  %0 = graph.batch_norm %x, %c, %c, %c, %v : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>
  return
}

// -----

//===--- convolution and pooling ---===//

func.func @convt_input_rank(%x: tensor<4x9x9xf32>, %w: tensor<4x8x3x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op input must have rank 4 ([N, C, H, W]), got [4, 9, 9]}}
  %0 = graph.conv_transpose2d %x, %w : tensor<4x9x9xf32>, tensor<4x8x3x3xf32>
  return
}

// -----

func.func @convt_weight_rank(%x: tensor<1x4x9x9xf32>, %w: tensor<4x8x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op weight must have rank 4 ([C, O/groups, KH, KW]), got [4, 8, 3]}}
  %0 = graph.conv_transpose2d %x, %w : tensor<1x4x9x9xf32>, tensor<4x8x3xf32>
  return
}

// -----

func.func @convt_channels(%x: tensor<1x3x9x9xf32>, %w: tensor<4x8x3x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op weight [4, 8, 3, 3] expects 4 input channels, input [1, 3, 9, 9] has 3}}
  %0 = graph.conv_transpose2d %x, %w : tensor<1x3x9x9xf32>, tensor<4x8x3x3xf32>
  return
}

// -----

func.func @convt_groups_divide(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op input channels (4) must be divisible by groups (3)}}
  %0 = graph.conv_transpose2d %x, %w {groups = 3} : tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convt_groups_zero(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op groups must be >= 1, got 0}}
  %0 = graph.conv_transpose2d %x, %w {groups = 0} : tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convt_output_padding(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op output_padding [0, 2] must be smaller than the stride or the dilation in each dimension (strides [2, 2], dilations [1, 1])}}
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 0, 2>} : tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convt_output_padding_length(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op output_padding must have 2 entries, got 4}}
  %0 = graph.conv_transpose2d %x, %w {output_padding = array<i64: 0, 0, 0, 0>} : tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convt_empty(%x: tensor<1x4x2x2xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op the padding [1, 1, 1, 1] removes the whole output (0x0)}}
  %0 = graph.conv_transpose2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x2x2xf32>, tensor<4x2x1x1xf32>
  return
}

// -----

func.func @convt_bias(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'graph.conv_transpose2d' op bias must have shape [4], got [2]}}
  %0 = graph.conv_transpose2d %x, %w, %b {groups = 2} : tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>
  return
}

// -----

func.func @conv_input_rank(%x: tensor<4x9x9xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op input must have rank 4 ([N, C, H, W]), got [4, 9, 9]}}
  %0 = graph.conv2d %x, %w : tensor<4x9x9xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op weight must have rank 4 ([O, C/groups, KH, KW]), got [8, 4, 3]}}
  %0 = graph.conv2d %x, %w : tensor<1x4x9x9xf32>, tensor<8x4x3xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x9x9xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op weight [8, 4, 3, 3] expects 4 input channels (4 per group x 1 groups), input [1, 3, 9, 9] has 3}}
  %0 = graph.conv2d %x, %w : tensor<1x3x9x9xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_groups_divide(%x: tensor<1x4x9x9xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op input channels (4) and output channels (6) must be divisible by groups (4)}}
  %0 = graph.conv2d %x, %w {groups = 4} : tensor<1x4x9x9xf32>, tensor<6x1x3x3xf32>
  return
}

// -----

func.func @conv_groups_zero(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op groups must be >= 1, got 0}}
  %0 = graph.conv2d %x, %w {groups = 0} : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op strides must have 2 entries, got 1}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 2>} : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_negative_padding(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op padding entries must be >= 0, got [0, -1, 0, 0]}}
  %0 = graph.conv2d %x, %w {padding = array<i64: 0, -1, 0, 0>} : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op bias must have shape [8], got [4]}}
  %0 = graph.conv2d %x, %w, %b : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @conv_kernel_too_big(%x: tensor<1x4x2x2xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op the kernel [3, 3] (dilated) does not fit the padded input [2, 2]}}
  %0 = graph.conv2d %x, %w : tensor<1x4x2x2xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<4x9x9xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op input must have rank 4 ([N, C, H, W]), got [4, 9, 9]}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<4x9x9xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x4x9x9xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op kernel entries must be >= 1, got [0, 2]}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 0, 2>} : tensor<1x4x9x9xf32>
  return
}

// -----

func.func @pool_missing_kernel(%x: tensor<1x4x9x9xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op requires attribute 'kernel'}}
  %0 = graph.max_pool2d %x : tensor<1x4x9x9xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<1x4x9x9xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op padding [2, 2, 2, 2] must be at most half the kernel [3, 3]}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 2, 2, 2, 2>} : tensor<1x4x9x9xf32>
  return
}

// -----

func.func @pool_kernel_too_big(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op the kernel [3, 3] does not fit the padded input [2, 2]}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 3, 3>} : tensor<1x4x2x2xf32>
  return
}

// -----

func.func @global_pool_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.global_avg_pool' op input must have rank >= 3 ([N, C, spatial...]), got [4, 8]}}
  %0 = graph.global_avg_pool %x : tensor<4x8xf32>
  return
}

// -----

//===--- shapes ---===//

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)}}
  %0 = graph.reshape %x to [4, 2] : tensor<2x3xf32>
  return
}

// -----

// A product that wraps around 64 bits is an error, not a shape whose
// wrapped count happens to match the input's.
func.func @reshape_overflow(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reshape' op shape [4294967296, 4294967296, 6] has more elements than fit in 64 bits}}
  %0 = graph.reshape %x to [4294967296, 4294967296, 6] : tensor<2x3xf32>
  return
}

// -----

func.func @reshape_not_divisible(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape [2, 3] (6 elements) to [4, -1]}}
  %0 = graph.reshape %x to [4, -1] : tensor<2x3xf32>
  return
}

// -----

func.func @reshape_two_unknowns(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reshape' op shape [-1, -1] has more than one -1}}
  %0 = graph.reshape %x to [-1, -1] : tensor<2x3xf32>
  return
}

// -----

func.func @reshape_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reshape' op shape [-2, 3] has a negative entry other than -1}}
  %0 = graph.reshape %x to [-2, 3] : tensor<2x3xf32>
  return
}

// -----

func.func @flatten_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.flatten' op end_dim 2 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.flatten %x {end_dim = 2} : tensor<2x3xf32>
  return
}

// -----

func.func @flatten_order(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'graph.flatten' op start_dim (2) is after end_dim (1)}}
  %0 = graph.flatten %x {start_dim = 2, end_dim = 1} : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.transpose' op perm [0, 1, 2] has 3 entries; the input has rank 2}}
  %0 = graph.transpose %x perm [0, 1, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.transpose' op perm [1, 1] is not a permutation of [0, 2)}}
  %0 = graph.transpose %x perm [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+2 {{'graph.concat' op needs at least one input}}
  // expected-error @+1 {{'graph.concat' op failed to infer returned types}}
  %0 = "graph.concat"() <{axis = 0 : i64}> : () -> tensor<1xf32>
  return
}

// -----

func.func @concat_rank(%x: tensor<2x3xf32>, %y: tensor<2x3x1xf32>) {
  // expected-error @+1 {{'graph.concat' op input #1 has rank 3, input #0 has 2}}
  %0 = graph.concat %x, %y {axis = 1} : tensor<2x3xf32>, tensor<2x3x1xf32>
  return
}

// -----

func.func @concat_dims(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.concat' op input #1 [4, 3] differs from input #0 [2, 3] in dimension 0, which is not the concat axis}}
  %0 = graph.concat %x, %y {axis = 1} : tensor<2x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @concat_dtype(%x: tensor<2x3xf32>, %y: tensor<2x3xf16>) {
  // expected-error @+1 {{'graph.concat' op element types differ: input #0 is 'f32', input #1 is 'f16'}}
  %0 = graph.concat %x, %y {axis = 1} : tensor<2x3xf32>, tensor<2x3xf16>
  return
}

// -----

func.func @concat_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.concat' op axis 2 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.concat %x, %x {axis = 2} : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_missing_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.concat' op requires attribute 'axis'}}
  %0 = graph.concat %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @batch_part_range(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'graph.batch_part' op part 2 of 2: needs 0 <= part < parts}}
  %0 = graph.batch_part %x {part = 2, parts = 2} : tensor<8x3xf32>
  return
}

// -----

func.func @batch_part_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.batch_part' op needs an input with a dimension 0 (the batch)}}
  %0 = graph.batch_part %x {part = 0, parts = 2} : tensor<f32>
  return
}

// -----

func.func @slice_missing_ends(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op requires attribute 'ends'}}
  %0 = graph.slice %x {starts = array<i64: 0>} : tensor<2x3xf32>
  return
}

// -----

func.func @slice_lengths(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op starts has 2 entries but ends has 1}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 1>} : tensor<2x3xf32>
  return
}

// -----

func.func @slice_axes_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op starts, ends, axes and steps must have equal lengths, got 1, 1, 2, 1}}
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 0, 1>} : tensor<2x3xf32>
  return
}

// -----

func.func @slice_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op slice axis 5 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 5>} : tensor<2x3xf32>
  return
}

// -----

func.func @slice_axis_twice(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op axis 1 is sliced twice}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 1, 1>, axes = array<i64: 1, -1>} : tensor<2x3xf32>
  return
}

// -----

func.func @slice_negative_step(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op step -1 on axis 0: negative steps are not supported yet}}
  %0 = graph.slice %x {starts = array<i64: 1>, ends = array<i64: 0>, steps = array<i64: -1>} : tensor<2x3xf32>
  return
}

// -----

func.func @slice_zero_step(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice' op step 0 on axis 0: steps must be >= 1}}
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 0>} : tensor<2x3xf32>
  return
}

// -----

func.func @gather_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'graph.gather' op indices must have element type i32 or i64, got 'f32'}}
  %0 = graph.gather %t, %i : tensor<10x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @gather_axis(%t: tensor<10x4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'graph.gather' op axis 2 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.gather %t, %i {axis = 2} : tensor<10x4xf32>, tensor<3xi32>
  return
}

// -----

//===--- reductions and losses ---===//

func.func @reduce_empty_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reduce_sum' op axes must not be empty; omit it to reduce over all axes}}
  %0 = graph.reduce_sum %x {axes = array<i64>} : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_repeated_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reduce_mean' op axis 1 is listed twice in axes [1, -1]}}
  %0 = graph.reduce_mean %x {axes = array<i64: 1, -1>} : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reduce_max' op axis 3 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.reduce_max %x {axes = array<i64: 3>} : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_prod_bool(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'graph.reduce_prod' op input must have a numeric element type (not i1), got i1}}
  %0 = graph.reduce_prod %x : tensor<2x3xi1>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.cumsum' op axis -3 is out of range for rank 2; expected a value in [-2, 1]}}
  %0 = graph.cumsum %x {axis = -3} : tensor<2x3xf32>
  return
}

// -----

func.func @cumsum_missing_axis(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'graph.cumsum' op requires attribute 'axis'}}
  %0 = graph.cumsum %x : tensor<2x3xi32>
  return
}

// -----

func.func @cross_entropy_rank(%x: tensor<4x10x2xf32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{'graph.cross_entropy' op logits must have rank 2 ([N, C]), got [4, 10, 2]}}
  %0 = graph.cross_entropy %x, %t : tensor<4x10x2xf32>, tensor<4xi64>
  return
}

// -----

func.func @cross_entropy_targets(%x: tensor<4x10xf32>, %t: tensor<5xi64>) {
  // expected-error @+1 {{'graph.cross_entropy' op targets must have shape [4], got [5]}}
  %0 = graph.cross_entropy %x, %t : tensor<4x10xf32>, tensor<5xi64>
  return
}

// -----

func.func @cross_entropy_target_type(%x: tensor<4x10xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cross_entropy' op targets must have element type i32 or i64, got 'f32'}}
  %0 = graph.cross_entropy %x, %t : tensor<4x10xf32>, tensor<4xf32>
  return
}

// -----

func.func @cross_entropy_weight(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cross_entropy' op weight must have shape [10], got [4]}}
  %0 = graph.cross_entropy %x, %t weight %w : tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>
  return
}

// -----

func.func @leaky_relu_of_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'graph.leaky_relu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = graph.leaky_relu %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @sin_of_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'graph.sin' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = graph.sin %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @round_of_integers(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'graph.round' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi64>'}}
  %0 = graph.round %x : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @mod_float_without_fmod(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'graph.mod' op fmod = false (the divisor's sign, Python's %) is for integers; 'f32' operands need fmod = true (C fmod, as ONNX Mod requires for floats)}}
  %0 = graph.mod %x, %y : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @mod_element_types(%x: tensor<4xi32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'graph.mod' op element types differ: lhs is 'i32', rhs is 'i64'}}
  %0 = graph.mod %x, %y : tensor<4xi32>, tensor<4xi64>
  return
}

// -----

func.func @mod_of_booleans(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  // expected-error @+1 {{'graph.mod' op lhs must have a numeric element type (not i1), got i1}}
  %0 = graph.mod %x, %y {fmod = true} : tensor<4xi1>, tensor<4xi1>
  return
}

// -----

// expected-error @+1 {{'graph.weight' op weight 'w' is rounded from 'f16' to 'f32'; only f32 rounds, to f16 or bf16}}
graph.weight @w : tensor<4xf32> from f16

// -----

func.func @max_pool_grad_shape(%x: tensor<1x4x9x9xf32>, %g: tensor<1x3x5x5xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_grad' op grad [1, 3, 5, 5] must have the input's batch and channels [1, 4, 9, 9]}}
  %0 = graph.max_pool2d_grad %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32>, tensor<1x3x5x5xf32>
  return
}

// -----

func.func @max_pool_grad_windows(%x: tensor<1x4x9x9xf32>, %g: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_grad' op grad [1, 4, 6, 6] has more windows than the input [1, 4, 9, 9] holds}}
  %0 = graph.max_pool2d_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32>, tensor<1x4x6x6xf32>
  return
}

// -----

func.func @max_pool_grad_strides(%x: tensor<1x4x9x9xf32>, %g: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_grad' op requires attribute 'strides'}}
  %0 = graph.max_pool2d_grad %x, %g {kernel = array<i64: 2, 2>} : tensor<1x4x9x9xf32>, tensor<1x4x4x4xf32>
  return
}

// -----

func.func @batch_norm_momentum(%x: tensor<1x4x9x9xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op momentum must be in [0, 1], got 1.5}}
  %0 = graph.batch_norm %x, %s, %s, %s, %s {momentum = 1.5 : f32} : tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @conv_weight_grad_size(%x: tensor<1x4x9x9xf32>, %g: tensor<1x8x9x9xf32>) {
  // expected-error @+1 {{'graph.conv2d_weight_grad' op grad [1, 8, 9, 9] is not the output size of a convolution of [1, 4, 9, 9] with kernel [3, 3]}}
  %0 = graph.conv2d_weight_grad %x, %g {kernel = array<i64: 3, 3>} : tensor<1x4x9x9xf32>, tensor<1x8x9x9xf32>
  return
}

// -----

func.func @conv_weight_grad_groups(%x: tensor<1x4x9x9xf32>, %g: tensor<1x6x7x7xf32>) {
  // expected-error @+1 {{'graph.conv2d_weight_grad' op groups 4 must divide the input's 4 and the gradient's 6 channels}}
  %0 = graph.conv2d_weight_grad %x, %g {kernel = array<i64: 3, 3>, groups = 4} : tensor<1x4x9x9xf32>, tensor<1x6x7x7xf32>
  return
}

// -----

func.func @gather_grad_shape(%g: tensor<2x5x3xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'graph.gather_grad' op grad [2, 5, 3] must hold the indices' shape [4] at axis 1}}
  %0 = graph.gather_grad %g, %ids {axis = 1, size = 7} : tensor<2x5x3xf32>, tensor<4xi64>
  return
}

// -----

//===--- graph.default: an entry point input's default value ---===//

// expected-error @+1 {{'func.func' op argument #0: 'graph.default' must be dense elements of the argument's type 'tensor<f32>'}}
func.func @step(%lr: tensor<f32> {graph.default = dense<1.0> : tensor<2xf32>}) -> tensor<f32> {
  return %lr : tensor<f32>
}

// -----

// expected-error @+1 {{'func.func' op argument #1 has no 'graph.default' but follows one that has (inputs with a default come last)}}
func.func @step(%lr: tensor<f32> {graph.default = dense<1.0> : tensor<f32>}, %x: tensor<f32>) -> tensor<f32> {
  return %lr : tensor<f32>
}

// -----

//===--- graph.dropout ---===//

func.func @dropout_ratio(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.dropout' op ratio must be in [0, 1], got 1.5}}
  %y = graph.dropout %x {ratio = 1.5} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @dropout_site(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.dropout' op site must be in [0, 2^32), got -1}}
  %y = graph.dropout %x, %s {ratio = 0.5, site = -1} : tensor<4xf32>, tensor<i64>
  return %y : tensor<4xf32>
}

// -----

func.func @dropout_offset(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.dropout' op offset must not be negative, got -4}}
  %y = graph.dropout %x, %s {ratio = 0.5, offset = -4} : tensor<4xf32>, tensor<i64>
  return %y : tensor<4xf32>
}

// -----

func.func @dropout_rank_stride(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.dropout' op rank_stride must not be negative, got -4}}
  %y = graph.dropout %x, %s {ratio = 0.5, rank_stride = -4} : tensor<4xf32>, tensor<i64>
  return %y : tensor<4xf32>
}

// -----

func.func @replica_one_member(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.replica_all_reduce' op members must be at least 2, got 1}}
  %y = graph.replica_all_reduce %x {group = 0 : i64, member = 0 : i64, members = 1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @replica_member_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.replica_all_reduce' op member must be in [0, 2), got 2}}
  %y = graph.replica_all_reduce %x {group = 0 : i64, member = 2 : i64, members = 2 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @replica_negative_group(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.replica_all_reduce' op group must not be negative, got -1}}
  %y = graph.replica_all_reduce %x {group = -1 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @replica_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.replica_all_reduce' op operand #0 must be tensor of 32-bit float values}}
  %y = graph.replica_all_reduce %x {group = 0 : i64, member = 0 : i64, members = 2 : i64} : tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

//===--- graph.scatter_nd ---===//

func.func @scatter_nd_tuple_too_long(%d: tensor<4x8xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'graph.scatter_nd' op an index tuple of 3 numbers does not address data [4, 8]}}
  %0 = graph.scatter_nd %d, %i, %u : tensor<4x8xf32>, tensor<2x3xi64>, tensor<2xf32>
  return
}

// -----

func.func @scatter_nd_updates_shape(%d: tensor<4x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.scatter_nd' op updates [2, 4] must have the shape [2, 8] (indices' rows, then data's dimensions after the 1 indexed)}}
  %0 = graph.scatter_nd %d, %i, %u : tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  return
}

// -----

func.func @scatter_nd_scalar_indices(%d: tensor<4xf32>, %i: tensor<i64>, %u: tensor<f32>) {
  // expected-error @+1 {{'graph.scatter_nd' op indices must have rank >= 1 (rows of index tuples)}}
  %0 = graph.scatter_nd %d, %i, %u : tensor<4xf32>, tensor<i64>, tensor<f32>
  return
}

// -----

func.func @scatter_nd_bool_add(%d: tensor<4xi1>, %i: tensor<1x1xi64>, %u: tensor<1xi1>) {
  // expected-error @+1 {{'graph.scatter_nd' op reduction add needs numbers, not booleans}}
  %0 = graph.scatter_nd %d, %i, %u reduction add : tensor<4xi1>, tensor<1x1xi64>, tensor<1xi1>
  return
}

// -----

func.func @scatter_nd_types(%d: tensor<4xf32>, %i: tensor<1x1xi64>, %u: tensor<1xf16>) {
  // expected-error @+1 {{'graph.scatter_nd' op}}
  %0 = graph.scatter_nd %d, %i, %u : tensor<4xf32>, tensor<1x1xi64>, tensor<1xf16>
  return
}

// -----

func.func @bit_shift_of_floats(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.bit_shift' op shifts integers; 'f32' operands are not supported}}
  %0 = graph.bit_shift %x, %x : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @bit_shift_of_two_types(%x: tensor<4xui8>, %y: tensor<4xi8>) {
  // expected-error @+1 {{'graph.bit_shift' op element types differ: lhs is 'ui8', rhs is 'i8'}}
  %0 = graph.bit_shift %x, %y : tensor<4xui8>, tensor<4xi8>
  return
}

// -----

// expected-error @+1 {{'graph.dim' op dimension 'batch' has range 8 to 4 at 4; expected 1 <= min <= opt <= max}}
graph.dim @batch 8 to 4 at 4

// -----

// expected-error @+1 {{'graph.dim' op dimension 'batch' has range 0 to 4 at 4; expected 1 <= min <= opt <= max}}
graph.dim @batch 0 to 4 at 4

// -----

// expected-error @+1 {{'graph.dim' op dimension 'batch' has range 1 to 4 at 5; expected 1 <= min <= opt <= max}}
graph.dim @batch 1 to 4 at 5

//===--- ZeRO-1 across ranks: graph.owner_broadcast, shards ---===//

// -----

func.func @owner_broadcast_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.owner_broadcast' op shard -1: expected a non-negative shard index}}
  %y = graph.owner_broadcast %x {shard = -1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'graph.weight' op weight 'w' has shard -2; expected a non-negative shard index}}
graph.weight @w {frozen, shard = -2 : i64, writable, zeros} : tensor<4xf32>

// -----

// expected-error @+1 {{'graph.weight' op weight 'w' has a shard but is not writable optimizer state (writable, zeros)}}
graph.weight @w {shard = 0 : i64, writable} : tensor<4xf32>

// -----

func.func @guard_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.relu' op 'graph.shard' must be a non-negative i64 (a shard index)}}
  %y = graph.relu %x {graph.shard = -1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @guard_not_integer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.relu' op 'graph.shard' must be a non-negative i64 (a shard index)}}
  %y = graph.relu %x {graph.shard = "rank 0"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @guard_collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.all_reduce' op 'graph.shard' guards an op of a training step; this op cannot be guarded}}
  %y = graph.all_reduce %x {graph.shard = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}
