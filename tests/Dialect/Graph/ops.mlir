// RUN: modelc-opt %s | FileCheck %s
// RUN: modelc-opt %s | modelc-opt | FileCheck %s
// RUN: modelc-opt %s --mlir-print-op-generic | modelc-opt | FileCheck %s

// Round trip of every graph op in its custom form.

// CHECK: graph.weight @fc1.weight : tensor<16x8xf32>
graph.weight @fc1.weight : tensor<16x8xf32>
// CHECK: graph.weight @"0.bias" : tensor<16xf32>
graph.weight @"0.bias" : tensor<16xf32>
// CHECK: graph.dim @batch 1 to 64 at 8
graph.dim @batch 1 to 64 at 8

// CHECK-LABEL: func.func @weights_and_constants
func.func @weights_and_constants() -> (tensor<16x8xf32>, tensor<16xf32>, tensor<2xf32>, tensor<i64>) {
  // CHECK: graph.weight_ref @fc1.weight : tensor<16x8xf32>
  %w = graph.weight_ref @fc1.weight : tensor<16x8xf32>
  // CHECK: graph.weight_ref @"0.bias" : tensor<16xf32>
  %b = graph.weight_ref @"0.bias" : tensor<16xf32>
  // CHECK: graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: graph.constant dense<7> : tensor<i64>
  %s = graph.constant dense<7> : tensor<i64>
  return %w, %b, %c, %s : tensor<16x8xf32>, tensor<16xf32>, tensor<2xf32>, tensor<i64>
}

// Training: a parameter and optimizer state, written with graph.assign.
// CHECK: graph.weight @p {writable} : tensor<4xf32>
graph.weight @p {writable} : tensor<4xf32>
// CHECK: graph.weight @p.exp_avg {frozen, writable, zeros} : tensor<4xf32>
graph.weight @p.exp_avg {frozen, writable, zeros} : tensor<4xf32>

// CHECK-LABEL: func.func @assign
func.func @assign(%x: tensor<4xf32>, %y: tensor<2x4xf32>) {
  // CHECK: graph.assign @p, %{{.*}} : tensor<4xf32>
  graph.assign @p, %x : tensor<4xf32>
  // CHECK: graph.assign @p.exp_avg, %{{.*}} after(%{{.*}}) : tensor<4xf32>, tensor<2x4xf32>
  graph.assign @p.exp_avg, %x after(%y) : tensor<4xf32>, tensor<2x4xf32>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>) {
  // CHECK: graph.neg %{{.*}} : tensor<4x8xf32>
  %0 = graph.neg %x : tensor<4x8xf32>
  // CHECK: graph.abs %{{.*}} : tensor<4xi32>
  %1 = graph.abs %i : tensor<4xi32>
  // CHECK: graph.relu %{{.*}} : tensor<4x8xf32>
  %2 = graph.relu %x : tensor<4x8xf32>
  // CHECK: graph.exp
  %3 = graph.exp %x : tensor<4x8xf32>
  // CHECK: graph.log
  %4 = graph.log %x : tensor<4x8xf32>
  // CHECK: graph.sqrt
  %5 = graph.sqrt %x : tensor<4x8xf32>
  // CHECK: graph.rsqrt
  %6 = graph.rsqrt %x : tensor<4x8xf32>
  // CHECK: graph.tanh
  %7 = graph.tanh %x : tensor<4x8xf32>
  // CHECK: graph.sigmoid
  %8 = graph.sigmoid %x : tensor<4x8xf32>
  // CHECK: graph.silu
  %9 = graph.silu %x : tensor<4x8xf32>
  // CHECK: graph.erf
  %10 = graph.erf %x : tensor<4x8xf32>
  // CHECK: graph.gelu %{{.*}} : tensor<4x8xf32>
  %11 = graph.gelu %x : tensor<4x8xf32>
  // CHECK: graph.gelu %{{.*}} approximate tanh : tensor<4x8xf32>
  %12 = graph.gelu %x approximate tanh : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>, %i: tensor<2x1xi64>, %j: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<2x3xi64>) {
  // CHECK: %[[ADD:.*]] = graph.add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %0 = graph.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.sub %[[ADD]], %{{.*}} : tensor<4x8xf32>, tensor<f32>
  %1 = graph.sub %0, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: graph.mul
  %2 = graph.mul %1, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.div
  %3 = graph.div %2, %a : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: graph.max
  %4 = graph.max %3, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: graph.min
  %5 = graph.min %4, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: graph.pow
  %6 = graph.pow %5, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.add %{{.*}}, %{{.*}} : tensor<2x1xi64>, tensor<3xi64>
  %7 = graph.add %i, %j : tensor<2x1xi64>, tensor<3xi64>
  return %6, %7 : tensor<4x8xf32>, tensor<2x3xi64>
}

// CHECK-LABEL: func.func @compare_select_cast
func.func @compare_select_cast(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xi1>) {
  // CHECK: graph.compare eq, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %0 = graph.compare eq, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.compare ne,
  %1 = graph.compare ne, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.compare lt,
  %2 = graph.compare lt, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.compare le,
  %3 = graph.compare le, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.compare gt,
  %4 = graph.compare gt, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: graph.compare ge,
  %5 = graph.compare ge, %a, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: graph.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>
  %6 = graph.select %5, %a, %s : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>
  // CHECK: graph.cast %{{.*}} : tensor<4x8xf32> to f16
  %7 = graph.cast %6 : tensor<4x8xf32> to f16
  // CHECK: graph.cast %{{.*}} : tensor<4x8xf16> to bf16
  %8 = graph.cast %7 : tensor<4x8xf16> to bf16
  // CHECK: graph.cast %{{.*}} : tensor<4x8xbf16> to i1
  %9 = graph.cast %8 : tensor<4x8xbf16> to i1
  return %6, %7, %9 : tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xi1>
}

// CHECK-LABEL: func.func @products
func.func @products(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>, %x: tensor<6x8xf32>, %w: tensor<16x8xf32>, %bias: tensor<16xf32>, %c: tensor<6x16xf32>) -> (tensor<2x3x4x5xf32>, tensor<6x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<2x1x4x8xf32>, tensor<3x8x5xf32>
  %0 = graph.matmul %a, %b : tensor<2x1x4x8xf32>, tensor<3x8x5xf32>
  // CHECK: graph.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<6x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %1 = graph.linear %x, %w, %bias : tensor<6x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  // CHECK: graph.linear %{{.*}}, %{{.*}} : tensor<6x8xf32>, tensor<16x8xf32>
  %2 = graph.linear %x, %w : tensor<6x8xf32>, tensor<16x8xf32>
  // CHECK: graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 2.000000e+00 : f32, transpose_b = true} : tensor<6x8xf32>, tensor<16x8xf32>, tensor<6x16xf32>
  %3 = graph.gemm %x, %w, %c {transpose_b = true, alpha = 2.0 : f32} : tensor<6x8xf32>, tensor<16x8xf32>, tensor<6x16xf32>
  return %0, %1, %2, %3 : tensor<2x3x4x5xf32>, tensor<6x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>
}

// CHECK-LABEL: func.func @integer_products
func.func @integer_products(%a: tensor<2x4x8xi32>, %b: tensor<8x5xi32>, %x: tensor<6x8xi64>, %w: tensor<16x8xi64>, %c: tensor<16xi64>) -> (tensor<2x4x5xi32>, tensor<6x16xi64>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xi32>, tensor<8x5xi32>
  %0 = graph.matmul %a, %b : tensor<2x4x8xi32>, tensor<8x5xi32>
  // CHECK: graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 3.000000e+00 : f32, beta = -2.000000e+00 : f32, transpose_b = true} : tensor<6x8xi64>, tensor<16x8xi64>, tensor<16xi64>
  %1 = graph.gemm %x, %w, %c {transpose_b = true, alpha = 3.0 : f32, beta = -2.0 : f32} : tensor<6x8xi64>, tensor<16x8xi64>, tensor<16xi64>
  return %0, %1 : tensor<2x4x5xi32>, tensor<6x16xi64>
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %img: tensor<1x4x5x5xf32>, %c: tensor<4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x4x5x5xf32>) {
  // CHECK: graph.softmax %{{.*}} : tensor<2x4x8xf32>
  %0 = graph.softmax %x : tensor<2x4x8xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 1 : i64} : tensor<2x4x8xf32>
  %1 = graph.log_softmax %x {axis = 1} : tensor<2x4x8xf32>
  // CHECK: graph.layer_norm %{{.*}} scale %{{.*}} bias %{{.*}} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %2 = graph.layer_norm %x scale %g bias %g : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: graph.layer_norm %{{.*}} {epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>
  %3 = graph.layer_norm %x {epsilon = 1.0e-6 : f32} : tensor<2x4x8xf32>
  // CHECK: graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %4 = graph.batch_norm %img, %c, %c, %c, %c : tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x4x5x5xf32>
}

// CHECK-LABEL: func.func @transposed_convolution
func.func @transposed_convolution(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>) -> (tensor<1x6x10x10xf32>, tensor<1x3x7x7xf32>) {
  // CHECK: graph.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {groups = 2 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>
  %0 = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, groups = 2} : tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>
  // CHECK: graph.conv_transpose2d %{{.*}}, %{{.*}} : tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>
  %1 = graph.conv_transpose2d %x, %w : tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>
  return %0, %1 : tensor<1x6x10x10xf32>, tensor<1x3x7x7xf32>
}

// CHECK-LABEL: func.func @convolution_and_pooling
func.func @convolution_and_pooling(%x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x8x9x9xf32>, tensor<1x4x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2} : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, groups = 2 : i64, padding = array<i64: 2, 2, 2, 2>} : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>
  %1 = graph.conv2d %x, %w {dilations = array<i64: 2, 2>, padding = array<i64: 2, 2, 2, 2>, groups = 2} : tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>
  // CHECK: graph.max_pool2d %{{.*}} {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32>
  %2 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x9x9xf32>
  // CHECK: graph.avg_pool2d %{{.*}} {ceil_mode = true, count_include_pad = false, kernel = array<i64: 2, 2>} : tensor<1x4x9x9xf32>
  %3 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, ceil_mode = true, count_include_pad = false} : tensor<1x4x9x9xf32>
  // CHECK: graph.global_avg_pool %{{.*}} : tensor<1x4x9x9xf32>
  %4 = graph.global_avg_pool %x : tensor<1x4x9x9xf32>
  %5 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : tensor<1x4x9x9xf32>
  return %0, %1, %2, %5, %4 : tensor<1x8x5x5xf32>, tensor<1x8x9x9xf32>, tensor<1x4x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>
}

// CHECK-LABEL: func.func @training_forms
func.func @training_forms(%x: tensor<1x4x9x9xf32>, %g: tensor<1x4x5x5xf32>, %s: tensor<4xf32>, %e: tensor<1x3x4x9x9xf32>, %ids: tensor<3x4xi64>) -> (tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>) {
  // CHECK: graph.max_pool2d_grad %{{.*}}, %{{.*}} {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32>, tensor<1x4x5x5xf32>
  %0 = graph.max_pool2d_grad %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x9x9xf32>, tensor<1x4x5x5xf32>
  // CHECK: graph.batch_norm %{{.*}} {momentum = 1.000000e-01 : f32} : tensor<1x4x9x9xf32>
  %1 = graph.batch_norm %x, %s, %s, %s, %s {momentum = 0.1 : f32} : tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  // CHECK: graph.conv2d_weight_grad %{{.*}}, %{{.*}} {groups = 2 : i64, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32>, tensor<1x4x5x5xf32>
  %2 = graph.conv2d_weight_grad %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2} : tensor<1x4x9x9xf32>, tensor<1x4x5x5xf32>
  // CHECK: graph.gather_grad %{{.*}}, %{{.*}} {axis = 1 : i64, size = 9 : i64} : tensor<1x3x4x9x9xf32>, tensor<3x4xi64>
  %3 = graph.gather_grad %e, %ids {axis = 1, size = 9} : tensor<1x3x4x9x9xf32>, tensor<3x4xi64>
  return %0, %1 : tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %table: tensor<10x6xf32>, %ids: tensor<2x3xi64>) -> (tensor<6x4xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>, tensor<2x8x4xf32>, tensor<2x1x2xf32>, tensor<2x3x6xf32>, tensor<24xf32>) {
  // CHECK: graph.reshape %{{.*}} to [6, -1] : tensor<2x3x4xf32>
  %0 = graph.reshape %x to [6, -1] : tensor<2x3x4xf32>
  // CHECK: graph.flatten %{{.*}} : tensor<2x3x4xf32>
  %1 = graph.flatten %x : tensor<2x3x4xf32>
  // CHECK: graph.flatten %{{.*}} {start_dim = 0 : i64} : tensor<2x3x4xf32>
  %2 = graph.flatten %x {start_dim = 0} : tensor<2x3x4xf32>
  // CHECK: graph.transpose %{{.*}} perm [2, 0, 1] : tensor<2x3x4xf32>
  %3 = graph.transpose %x perm [2, 0, 1] : tensor<2x3x4xf32>
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x5x4xf32>
  %4 = graph.concat %x, %y {axis = 1} : tensor<2x3x4xf32>, tensor<2x5x4xf32>
  // CHECK: graph.slice %{{.*}} {axes = array<i64: 1, 2>, ends = array<i64: 2, -1>, starts = array<i64: 1, 0>, steps = array<i64: 1, 2>} : tensor<2x3x4xf32>
  %5 = graph.slice %x {axes = array<i64: 1, 2>, starts = array<i64: 1, 0>, ends = array<i64: 2, -1>, steps = array<i64: 1, 2>} : tensor<2x3x4xf32>
  // CHECK: graph.gather %{{.*}}, %{{.*}} : tensor<10x6xf32>, tensor<2x3xi64>
  %6 = graph.gather %table, %ids : tensor<10x6xf32>, tensor<2x3xi64>
  return %0, %1, %3, %4, %5, %6, %2 : tensor<6x4xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>, tensor<2x8x4xf32>, tensor<2x1x2xf32>, tensor<2x3x6xf32>, tensor<24xf32>
}

// A replica's part of the batch: 7 rows in 2 balanced parts are 4 and 3.
// CHECK-LABEL: func.func @batch_parts
func.func @batch_parts(%x: tensor<7x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>) {
  // CHECK: graph.batch_part %{{.*}} {part = 0 : i64, parts = 2 : i64} : tensor<7x3xf32>
  %0 = graph.batch_part %x {part = 0, parts = 2} : tensor<7x3xf32>
  // CHECK: graph.batch_part %{{.*}} {part = 1 : i64, parts = 2 : i64} : tensor<7x3xf32>
  %1 = graph.batch_part %x {part = 1, parts = 2} : tensor<7x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<3x3xf32>
}

// CHECK-LABEL: func.func @products_and_cumulative_sums
func.func @products_and_cumulative_sums(%x: tensor<4x10xf32>, %i: tensor<4x10xi64>) -> (tensor<4x1xf32>, tensor<i64>, tensor<4x10xf32>, tensor<4x10xi64>) {
  // CHECK: graph.reduce_prod %{{.*}} {axes = array<i64: 1>, keepdims = true} : tensor<4x10xf32>
  %0 = graph.reduce_prod %x {axes = array<i64: 1>, keepdims = true} : tensor<4x10xf32>
  // CHECK: graph.reduce_prod %{{.*}} : tensor<4x10xi64>
  %1 = graph.reduce_prod %i : tensor<4x10xi64>
  // CHECK: graph.cumsum %{{.*}} {axis = 1 : i64} : tensor<4x10xf32>
  %2 = graph.cumsum %x {axis = 1} : tensor<4x10xf32>
  // CHECK: graph.cumsum %{{.*}} {axis = -2 : i64, exclusive = true, reverse = true} : tensor<4x10xi64>
  %3 = graph.cumsum %i {axis = -2, exclusive = true, reverse = true} : tensor<4x10xi64>
  return %0, %1, %2, %3 : tensor<4x1xf32>, tensor<i64>, tensor<4x10xf32>, tensor<4x10xi64>
}

// CHECK-LABEL: func.func @reductions_and_loss
func.func @reductions_and_loss(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<10xf32>) -> (tensor<f32>, tensor<4x1xf32>, tensor<10xf32>, tensor<f32>, tensor<4xf32>) {
  // CHECK: graph.reduce_sum %{{.*}} : tensor<4x10xf32>
  %0 = graph.reduce_sum %x : tensor<4x10xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = true} : tensor<4x10xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x10xf32>
  // CHECK: graph.reduce_max %{{.*}} {axes = array<i64: 0>} : tensor<4x10xf32>
  %2 = graph.reduce_max %x {axes = array<i64: 0>} : tensor<4x10xf32>
  // CHECK: graph.cross_entropy %{{.*}}, %{{.*}} weight %{{.*}} : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  %3 = graph.cross_entropy %x, %t weight %w : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  // CHECK: graph.cross_entropy %{{.*}}, %{{.*}} reduction none {ignore_index = 0 : i64} : tensor<4x10xf32>, tensor<4xi64>
  %4 = graph.cross_entropy %x, %t reduction none {ignore_index = 0} : tensor<4x10xf32>, tensor<4xi64>
  return %3, %1, %2, %0, %4 : tensor<f32>, tensor<4x1xf32>, tensor<10xf32>, tensor<f32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @device_pins
func.func @device_pins(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: graph.relu %{{.*}} {device = "cuda:1"} : tensor<4xf32>
  %0 = graph.relu %x {device = "cuda:1"} : tensor<4xf32>
  // CHECK: graph.exp %{{.*}} {device = #device.dev<sim:0>} : tensor<4xf32>
  %1 = graph.exp %0 {device = #device.dev<sim:0>} : tensor<4xf32>
  // CHECK: graph.neg %{{.*}} {device = "cpu"} : tensor<4xf32>
  %2 = graph.neg %1 {device = "cpu"} : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// CHECK-LABEL: func.func @leaky_relu
// CHECK: graph.leaky_relu %{{.*}} : tensor<4x8xf32>
// CHECK: graph.leaky_relu %{{.*}} alpha 2.000000e-01 : tensor<4x8xf32>
func.func @leaky_relu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = graph.leaky_relu %x : tensor<4x8xf32>
  %b = graph.leaky_relu %x alpha 0.2 : tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @math
// CHECK: graph.sin %{{.*}} : tensor<4x8xf32>
// CHECK: graph.cos %{{.*}} : tensor<4x8xf32>
// CHECK: graph.tan %{{.*}} : tensor<4x8xf32>
// CHECK: graph.asin %{{.*}} : tensor<4x8xf32>
// CHECK: graph.acos %{{.*}} : tensor<4x8xf32>
// CHECK: graph.atan %{{.*}} : tensor<4x8xf32>
// CHECK: graph.sinh %{{.*}} : tensor<4x8xf16>
// CHECK: graph.cosh %{{.*}} : tensor<4x8xf16>
// CHECK: graph.asinh %{{.*}} : tensor<4x8xbf16>
// CHECK: graph.acosh %{{.*}} : tensor<4x8xbf16>
// CHECK: graph.atanh %{{.*}} : tensor<4x8xf32>
// CHECK: graph.floor %{{.*}} : tensor<4x8xf32>
// CHECK: graph.ceil %{{.*}} : tensor<4x8xf32>
// CHECK: graph.round %{{.*}} : tensor<4x8xf32>
func.func @math(%x: tensor<4x8xf32>, %h: tensor<4x8xf16>, %b: tensor<4x8xbf16>) {
  %0 = graph.sin %x : tensor<4x8xf32>
  %1 = graph.cos %x : tensor<4x8xf32>
  %2 = graph.tan %x : tensor<4x8xf32>
  %3 = graph.asin %x : tensor<4x8xf32>
  %4 = graph.acos %x : tensor<4x8xf32>
  %5 = graph.atan %x : tensor<4x8xf32>
  %6 = graph.sinh %h : tensor<4x8xf16>
  %7 = graph.cosh %h : tensor<4x8xf16>
  %8 = graph.asinh %b : tensor<4x8xbf16>
  %9 = graph.acosh %b : tensor<4x8xbf16>
  %10 = graph.atanh %x : tensor<4x8xf32>
  %11 = graph.floor %x : tensor<4x8xf32>
  %12 = graph.ceil %x : tensor<4x8xf32>
  %13 = graph.round %x : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @mod
// CHECK: graph.mod %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<8xi32>
// CHECK: graph.mod %{{.*}}, %{{.*}} {fmod = true} : tensor<4x8xi64>, tensor<i64>
// CHECK: graph.mod %{{.*}}, %{{.*}} {fmod = true} : tensor<4x8xf32>, tensor<4x1xf32>
func.func @mod(%i: tensor<4x8xi32>, %j: tensor<8xi32>, %k: tensor<4x8xi64>, %l: tensor<i64>, %x: tensor<4x8xf32>, %y: tensor<4x1xf32>) -> (tensor<4x8xi32>, tensor<4x8xi64>, tensor<4x8xf32>) {
  %0 = graph.mod %i, %j : tensor<4x8xi32>, tensor<8xi32>
  %1 = graph.mod %k, %l {fmod = true} : tensor<4x8xi64>, tensor<i64>
  %2 = graph.mod %x, %y {fmod = true} : tensor<4x8xf32>, tensor<4x1xf32>
  return %0, %1, %2 : tensor<4x8xi32>, tensor<4x8xi64>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @new_element_types
// CHECK: graph.bit_shift %{{.*}}, %{{.*}} : tensor<4xui8>, tensor<4xui8>
// CHECK: graph.bit_shift %{{.*}}, %{{.*}} {right = true} : tensor<4xi16>, tensor<i16>
// CHECK: graph.cast %{{.*}} : tensor<4xui8> to f64
// CHECK: graph.add %{{.*}}, %{{.*}} : tensor<4xf64>, tensor<4xf64>
// CHECK: graph.constant dense<[255, 0, 7, 128]> : tensor<4xui8>
func.func @new_element_types(%a: tensor<4xui8>, %b: tensor<4xi16>, %n: tensor<i16>) -> (tensor<4xui8>, tensor<4xi16>, tensor<4xf64>, tensor<4xui8>) {
  %0 = graph.bit_shift %a, %a : tensor<4xui8>, tensor<4xui8>
  %1 = graph.bit_shift %b, %n {right = true} : tensor<4xi16>, tensor<i16>
  %2 = graph.cast %a : tensor<4xui8> to f64
  %3 = graph.add %2, %2 : tensor<4xf64>, tensor<4xf64>
  %4 = graph.constant dense<[255, 0, 7, 128]> : tensor<4xui8>
  return %0, %1, %3, %4 : tensor<4xui8>, tensor<4xi16>, tensor<4xf64>, tensor<4xui8>
}

// Besides its own attributes, a graph op may carry a device pin and
// dialect-prefixed attributes (those passes write, such as sched.buffer).
// CHECK-LABEL: func.func @free_attributes
// CHECK: graph.relu %{{.*}} {device = "cpu", sched.stream = "compute"} : tensor<4xf32>
func.func @free_attributes(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x {device = "cpu", sched.stream = "compute"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// An input with a default (graph.default, as train_step's `lr`), last.
// CHECK-LABEL: func.func @input_with_default
// CHECK-SAME: %{{.*}}: tensor<f32> {graph.default = dense<1.000000e-01> : tensor<f32>}
func.func @input_with_default(%x: tensor<4xf32>, %lr: tensor<f32> {graph.default = dense<0.1> : tensor<f32>}) -> tensor<4xf32> {
  %0 = graph.mul %x, %lr : tensor<4xf32>, tensor<f32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @scatters
func.func @scatters(%d: tensor<4x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x8xf32>, %j: tensor<3x2xi32>, %v: tensor<3xf32>, %b: tensor<4x8xi1>, %w: tensor<2x8xi1>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>) {
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>
  %0 = graph.scatter_nd %d, %i, %u : tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} reduction max : tensor<4x8xf32>, tensor<3x2xi32>, tensor<3xf32>
  %1 = graph.scatter_nd %d, %j, %v reduction max : tensor<4x8xf32>, tensor<3x2xi32>, tensor<3xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<2x1xi64>, tensor<2x8xi1>
  %2 = graph.scatter_nd %b, %i, %w : tensor<4x8xi1>, tensor<2x1xi64>, tensor<2x8xi1>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>
}

// ZeRO-1 across ranks (modelc-shard-optimizer-state): a guarded op, the
// owner's value on every rank, and a state weight one rank holds.
// CHECK: graph.weight @w.momentum_buffer {frozen, shard = 1 : i64, writable, zeros} : tensor<4xf32>
graph.weight @w.momentum_buffer {frozen, shard = 1 : i64, writable, zeros} : tensor<4xf32>
// CHECK-LABEL: func.func @owner_broadcast
func.func @owner_broadcast(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: graph.relu %{{.*}} {graph.shard = 1 : i64} : tensor<4xf32>
  %0 = graph.relu %x {graph.shard = 1 : i64} : tensor<4xf32>
  // CHECK: graph.owner_broadcast %{{.*}} {shard = 1 : i64} : tensor<4xf32>
  %1 = graph.owner_broadcast %0 {shard = 1 : i64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}
