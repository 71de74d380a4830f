// gradient_check_test.cpp - every gradient rule against finite differences,
// in the reference interpreter in double (no rounding to f32): for each
// case, modelc-differentiate's `gradients` entry point must equal the
// central difference of the `loss` entry point in every parameter element.
// Independent of PyTorch (tests/training/op-gradients.test compares the
// compiled gradients with torch.autograd).
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Reference/Interpreter.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace mlir;

namespace {

struct Case {
  const char *name;
  /// Weight declarations and `func.func @loss(...) -> tensor<f32>`. Weights
  /// named `pos*` are positive (log, sqrt), `r*` are frozen multipliers.
  const char *ir;
  /// Integer inputs of @loss (cross_entropy targets), in order.
  std::vector<std::vector<double>> inputs;
};

// The loss multiplies each op's result by a frozen random tensor %r and
// sums it, so every result element has its own weight in the gradient.
const Case cases[] = {
    {"unary",
     R"(
graph.weight @x : tensor<2x3xf32>
graph.weight @posx : tensor<2x3xf32>
graph.weight @r {frozen} : tensor<2x3xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<2x3xf32>
  %p = graph.weight_ref @posx : tensor<2x3xf32>
  %r = graph.weight_ref @r : tensor<2x3xf32>
  %a = graph.neg %x : tensor<2x3xf32>
  %b = graph.relu %x : tensor<2x3xf32>
  %c = graph.leaky_relu %x alpha 2.000000e-01 : tensor<2x3xf32>
  %d = graph.exp %x : tensor<2x3xf32>
  %e = graph.log %p : tensor<2x3xf32>
  %f = graph.sqrt %p : tensor<2x3xf32>
  %g = graph.rsqrt %p : tensor<2x3xf32>
  %h = graph.tanh %x : tensor<2x3xf32>
  %i = graph.sigmoid %x : tensor<2x3xf32>
  %j = graph.silu %x : tensor<2x3xf32>
  %k = graph.erf %x : tensor<2x3xf32>
  %l = graph.gelu %x : tensor<2x3xf32>
  %m = graph.gelu %x approximate tanh : tensor<2x3xf32>
  %s1 = graph.add %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
  %s2 = graph.add %s1, %c : tensor<2x3xf32>, tensor<2x3xf32>
  %s3 = graph.add %s2, %d : tensor<2x3xf32>, tensor<2x3xf32>
  %s4 = graph.add %s3, %e : tensor<2x3xf32>, tensor<2x3xf32>
  %s5 = graph.add %s4, %f : tensor<2x3xf32>, tensor<2x3xf32>
  %s6 = graph.add %s5, %g : tensor<2x3xf32>, tensor<2x3xf32>
  %s7 = graph.add %s6, %h : tensor<2x3xf32>, tensor<2x3xf32>
  %s8 = graph.add %s7, %i : tensor<2x3xf32>, tensor<2x3xf32>
  %s9 = graph.add %s8, %j : tensor<2x3xf32>, tensor<2x3xf32>
  %s10 = graph.add %s9, %k : tensor<2x3xf32>, tensor<2x3xf32>
  %s11 = graph.add %s10, %l : tensor<2x3xf32>, tensor<2x3xf32>
  %s12 = graph.add %s11, %m : tensor<2x3xf32>, tensor<2x3xf32>
  %y = graph.mul %s12, %r : tensor<2x3xf32>, tensor<2x3xf32>
  %loss = graph.reduce_sum %y : tensor<2x3xf32>
  return %loss : tensor<f32>
})",
     {}},
    {"binary_broadcast",
     R"(
graph.weight @a : tensor<2x3xf32>
graph.weight @b : tensor<3xf32>
graph.weight @c : tensor<2x1xf32>
graph.weight @posd : tensor<3xf32>
graph.weight @r {frozen} : tensor<2x3xf32>
func.func @loss() -> tensor<f32> {
  %a = graph.weight_ref @a : tensor<2x3xf32>
  %b = graph.weight_ref @b : tensor<3xf32>
  %c = graph.weight_ref @c : tensor<2x1xf32>
  %d = graph.weight_ref @posd : tensor<3xf32>
  %r = graph.weight_ref @r : tensor<2x3xf32>
  %s = graph.add %a, %b : tensor<2x3xf32>, tensor<3xf32>
  %t = graph.sub %c, %s : tensor<2x1xf32>, tensor<2x3xf32>
  %m = graph.mul %t, %c : tensor<2x3xf32>, tensor<2x1xf32>
  %q = graph.div %m, %d : tensor<2x3xf32>, tensor<3xf32>
  %y = graph.mul %q, %r : tensor<2x3xf32>, tensor<2x3xf32>
  %loss = graph.reduce_sum %y : tensor<2x3xf32>
  return %loss : tensor<f32>
})",
     {}},
    {"products",
     R"(
graph.weight @x : tensor<3x4xf32>
graph.weight @w : tensor<5x4xf32>
graph.weight @bias : tensor<5xf32>
graph.weight @m : tensor<2x3x4xf32>
graph.weight @n : tensor<4x2xf32>
graph.weight @ga : tensor<4x3xf32>
graph.weight @gb : tensor<5x4xf32>
graph.weight @gc : tensor<5xf32>
graph.weight @r1 {frozen} : tensor<3x5xf32>
graph.weight @r2 {frozen} : tensor<2x3x2xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<3x4xf32>
  %w = graph.weight_ref @w : tensor<5x4xf32>
  %bias = graph.weight_ref @bias : tensor<5xf32>
  %m = graph.weight_ref @m : tensor<2x3x4xf32>
  %n = graph.weight_ref @n : tensor<4x2xf32>
  %ga = graph.weight_ref @ga : tensor<4x3xf32>
  %gb = graph.weight_ref @gb : tensor<5x4xf32>
  %gc = graph.weight_ref @gc : tensor<5xf32>
  %r1 = graph.weight_ref @r1 : tensor<3x5xf32>
  %r2 = graph.weight_ref @r2 : tensor<2x3x2xf32>
  %l = graph.linear %x, %w, %bias : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>
  %g = graph.gemm %ga, %gb, %gc {transpose_a = true, transpose_b = true, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : tensor<4x3xf32>, tensor<5x4xf32>, tensor<5xf32>
  %s = graph.add %l, %g : tensor<3x5xf32>, tensor<3x5xf32>
  %y1 = graph.mul %s, %r1 : tensor<3x5xf32>, tensor<3x5xf32>
  %bm = graph.matmul %m, %n : tensor<2x3x4xf32>, tensor<4x2xf32>
  %y2 = graph.mul %bm, %r2 : tensor<2x3x2xf32>, tensor<2x3x2xf32>
  %l1 = graph.reduce_sum %y1 : tensor<3x5xf32>
  %l2 = graph.reduce_sum %y2 : tensor<2x3x2xf32>
  %loss = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {}},
    {"normalization_and_shapes",
     R"(
graph.weight @x : tensor<2x3x4xf32>
graph.weight @r {frozen} : tensor<4x6xf32>
graph.weight @r3 {frozen} : tensor<2x4xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<2x3x4xf32>
  %r = graph.weight_ref @r : tensor<4x6xf32>
  %r3 = graph.weight_ref @r3 : tensor<2x4xf32>
  %s = graph.softmax %x : tensor<2x3x4xf32>
  %ls = graph.log_softmax %x {axis = 0} : tensor<2x3x4xf32>
  %a = graph.add %s, %ls : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %t = graph.transpose %a perm [2, 0, 1] : tensor<2x3x4xf32>
  %f = graph.flatten %t : tensor<4x2x3xf32>
  %y = graph.mul %f, %r : tensor<4x6xf32>, tensor<4x6xf32>
  %sum = graph.reduce_sum %y {axes = array<i64: 1>, keepdims = true} : tensor<4x6xf32>
  %mean = graph.reduce_mean %x {axes = array<i64: 1>} : tensor<2x3x4xf32>
  %z = graph.mul %mean, %r3 : tensor<2x4xf32>, tensor<2x4xf32>
  %rz = graph.reshape %z to [8] : tensor<2x4xf32>
  %l1 = graph.reduce_mean %sum : tensor<4x1xf32>
  %l2 = graph.reduce_sum %rz : tensor<8xf32>
  %loss = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {}},
    {"cross_entropy",
     R"(
graph.weight @x : tensor<4x3xf32>
graph.weight @cw {frozen} : tensor<3xf32>
graph.weight @r {frozen} : tensor<4xf32>
func.func @loss(%t: tensor<4xi64>) -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<4x3xf32>
  %cw = graph.weight_ref @cw : tensor<3xf32>
  %r = graph.weight_ref @r : tensor<4xf32>
  %a = graph.cross_entropy %x, %t : tensor<4x3xf32>, tensor<4xi64>
  %b = graph.cross_entropy %x, %t weight %cw reduction sum : tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>
  %c = graph.cross_entropy %x, %t weight %cw reduction none : tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>
  %d = graph.cross_entropy %x, %t weight %cw : tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>
  %cr = graph.mul %c, %r : tensor<4xf32>, tensor<4xf32>
  %cs = graph.reduce_sum %cr : tensor<4xf32>
  %s1 = graph.add %a, %b : tensor<f32>, tensor<f32>
  %s2 = graph.add %s1, %cs : tensor<f32>, tensor<f32>
  %loss = graph.add %s2, %d : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {{2, -100, 0, 1}}},
    {"convolution",
     R"(
graph.weight @x : tensor<2x4x7x6xf32>
graph.weight @w : tensor<6x2x3x2xf32>
graph.weight @b : tensor<6xf32>
graph.weight @tw : tensor<4x3x3x3xf32>
graph.weight @tb : tensor<6xf32>
graph.weight @r1 {frozen} : tensor<2x6x4x3xf32>
graph.weight @r2 {frozen} : tensor<2x6x14x12xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<2x4x7x6xf32>
  %w = graph.weight_ref @w : tensor<6x2x3x2xf32>
  %b = graph.weight_ref @b : tensor<6xf32>
  %tw = graph.weight_ref @tw : tensor<4x3x3x3xf32>
  %tb = graph.weight_ref @tb : tensor<6xf32>
  %r1 = graph.weight_ref @r1 : tensor<2x6x4x3xf32>
  %r2 = graph.weight_ref @r2 : tensor<2x6x14x12xf32>
  %y = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>, dilations = array<i64: 1, 2>, groups = 2} : tensor<2x4x7x6xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>
  %t = graph.conv_transpose2d %x, %tw, %tb {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, groups = 2} : tensor<2x4x7x6xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>
  %yr = graph.mul %y, %r1 : tensor<2x6x4x3xf32>, tensor<2x6x4x3xf32>
  %tr = graph.mul %t, %r2 : tensor<2x6x14x12xf32>, tensor<2x6x14x12xf32>
  %l1 = graph.reduce_sum %yr : tensor<2x6x4x3xf32>
  %l2 = graph.reduce_sum %tr : tensor<2x6x14x12xf32>
  %loss = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {}},
    {"pooling",
     R"(
graph.weight @x : tensor<2x3x7x7xf32>
graph.weight @r1 {frozen} : tensor<2x3x4x4xf32>
graph.weight @r2 {frozen} : tensor<2x3x4x4xf32>
graph.weight @r3 {frozen} : tensor<2x3x4x4xf32>
graph.weight @r4 {frozen} : tensor<2x3x1x1xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<2x3x7x7xf32>
  %r1 = graph.weight_ref @r1 : tensor<2x3x4x4xf32>
  %r2 = graph.weight_ref @r2 : tensor<2x3x4x4xf32>
  %r3 = graph.weight_ref @r3 : tensor<2x3x4x4xf32>
  %r4 = graph.weight_ref @r4 : tensor<2x3x1x1xf32>
  %m = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x7x7xf32>
  %a = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<2x3x7x7xf32>
  %c = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, ceil_mode = true} : tensor<2x3x7x7xf32>
  %g = graph.global_avg_pool %x : tensor<2x3x7x7xf32>
  %mr = graph.mul %m, %r1 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %ar = graph.mul %a, %r2 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %cr = graph.mul %c, %r3 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %gr = graph.mul %g, %r4 : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>
  %l1 = graph.reduce_sum %mr : tensor<2x3x4x4xf32>
  %l2 = graph.reduce_sum %ar : tensor<2x3x4x4xf32>
  %l3 = graph.reduce_sum %cr : tensor<2x3x4x4xf32>
  %l4 = graph.reduce_sum %gr : tensor<2x3x1x1xf32>
  %s1 = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  %s2 = graph.add %s1, %l3 : tensor<f32>, tensor<f32>
  %loss = graph.add %s2, %l4 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {}},
    {"normalization",
     R"(
graph.weight @x : tensor<2x3x4xf32>
graph.weight @g : tensor<3x4xf32>
graph.weight @b : tensor<3x4xf32>
graph.weight @s : tensor<3xf32>
graph.weight @c : tensor<3xf32>
graph.weight @rm {frozen} : tensor<3xf32>
graph.weight @posv {frozen} : tensor<3xf32>
graph.weight @tm {frozen} : tensor<3xf32>
graph.weight @posw {frozen} : tensor<3xf32>
graph.weight @r {frozen} : tensor<2x3x4xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<2x3x4xf32>
  %g = graph.weight_ref @g : tensor<3x4xf32>
  %b = graph.weight_ref @b : tensor<3x4xf32>
  %s = graph.weight_ref @s : tensor<3xf32>
  %c = graph.weight_ref @c : tensor<3xf32>
  %rm = graph.weight_ref @rm : tensor<3xf32>
  %rv = graph.weight_ref @posv : tensor<3xf32>
  %tm = graph.weight_ref @tm : tensor<3xf32>
  %tv = graph.weight_ref @posw : tensor<3xf32>
  %r = graph.weight_ref @r : tensor<2x3x4xf32>
  %ln = graph.layer_norm %x scale %g bias %b {axis = 1} : tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
  %bn = graph.batch_norm %x, %s, %c, %rm, %rv : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %tn = graph.batch_norm %x, %s, %c, %tm, %tv {momentum = 0.1 : f32} : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %lr = graph.mul %ln, %r : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %br = graph.mul %bn, %r : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %t2 = graph.mul %tn, %tn : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %tr = graph.mul %t2, %r : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %l1 = graph.reduce_sum %lr : tensor<2x3x4xf32>
  %l2 = graph.reduce_sum %br : tensor<2x3x4xf32>
  %l3 = graph.reduce_sum %tr : tensor<2x3x4xf32>
  %s1 = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  %loss = graph.add %s1, %l3 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {}},
    {"data_movement",
     R"(
graph.weight @a : tensor<2x3xf32>
graph.weight @b : tensor<2x2xf32>
graph.weight @x : tensor<4x6xf32>
graph.weight @y : tensor<4x6xf32>
graph.weight @r1 {frozen} : tensor<2x5xf32>
graph.weight @r2 {frozen} : tensor<2x3xf32>
graph.weight @r3 {frozen} : tensor<4x6xf32>
graph.weight @r4 {frozen} : tensor<4x6xf32>
func.func @loss() -> tensor<f32> {
  %a = graph.weight_ref @a : tensor<2x3xf32>
  %b = graph.weight_ref @b : tensor<2x2xf32>
  %x = graph.weight_ref @x : tensor<4x6xf32>
  %y = graph.weight_ref @y : tensor<4x6xf32>
  %r1 = graph.weight_ref @r1 : tensor<2x5xf32>
  %r2 = graph.weight_ref @r2 : tensor<2x3xf32>
  %r3 = graph.weight_ref @r3 : tensor<4x6xf32>
  %r4 = graph.weight_ref @r4 : tensor<4x6xf32>
  %c = graph.concat %a, %b {axis = 1} : tensor<2x3xf32>, tensor<2x2xf32>
  %s = graph.slice %x {axes = array<i64: 0, 1>, starts = array<i64: 1, 2>, ends = array<i64: 3, 5>} : tensor<4x6xf32>
  %ab = graph.abs %x : tensor<4x6xf32>
  %mx = graph.max %x, %y : tensor<4x6xf32>, tensor<4x6xf32>
  %mn = graph.min %x, %y : tensor<4x6xf32>, tensor<4x6xf32>
  %mm = graph.add %mx, %mn : tensor<4x6xf32>, tensor<4x6xf32>
  %cr = graph.mul %c, %r1 : tensor<2x5xf32>, tensor<2x5xf32>
  %sr = graph.mul %s, %r2 : tensor<2x3xf32>, tensor<2x3xf32>
  %ar = graph.mul %ab, %r3 : tensor<4x6xf32>, tensor<4x6xf32>
  %mr = graph.mul %mm, %r4 : tensor<4x6xf32>, tensor<4x6xf32>
  %l1 = graph.reduce_sum %cr : tensor<2x5xf32>
  %l2 = graph.reduce_sum %sr : tensor<2x3xf32>
  %l3 = graph.reduce_sum %ar : tensor<4x6xf32>
  %l4 = graph.reduce_sum %mr : tensor<4x6xf32>
  %s1 = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  %s2 = graph.add %s1, %l3 : tensor<f32>, tensor<f32>
  %loss = graph.add %s2, %l4 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {}},
    {"gather",
     R"(
graph.weight @w : tensor<5x3xf32>
graph.weight @r1 {frozen} : tensor<6x3xf32>
graph.weight @r2 {frozen} : tensor<5x4xf32>
func.func @loss(%t: tensor<6xi64>, %u: tensor<4xi64>) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<5x3xf32>
  %r1 = graph.weight_ref @r1 : tensor<6x3xf32>
  %r2 = graph.weight_ref @r2 : tensor<5x4xf32>
  %e = graph.gather %w, %t : tensor<5x3xf32>, tensor<6xi64>
  %c = graph.gather %w, %u {axis = 1} : tensor<5x3xf32>, tensor<4xi64>
  %er = graph.mul %e, %r1 : tensor<6x3xf32>, tensor<6x3xf32>
  %cr = graph.mul %c, %r2 : tensor<5x4xf32>, tensor<5x4xf32>
  %l1 = graph.reduce_sum %er : tensor<6x3xf32>
  %l2 = graph.reduce_sum %cr : tensor<5x4xf32>
  %loss = graph.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
})",
     {{4, 0, 4, -1, 2, 4}, {2, 0, -3, 2}}},
    // Slices with steps: x[1:5:2, 0:7:3] (the last step's gaps run past
    // the end of the columns).
    {"strided_slice",
     R"(
graph.weight @x : tensor<5x7xf32>
graph.weight @r {frozen} : tensor<2x3xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<5x7xf32>
  %r = graph.weight_ref @r : tensor<2x3xf32>
  %s = graph.slice %x {axes = array<i64: 0, 1>, starts = array<i64: 1, 0>, ends = array<i64: 5, 7>, steps = array<i64: 2, 3>} : tensor<5x7xf32>
  %m = graph.mul %s, %r : tensor<2x3xf32>, tensor<2x3xf32>
  %loss = graph.reduce_sum %m : tensor<2x3xf32>
  return %loss : tensor<f32>
})",
     {}},
    // The sum over the ranks (one process here: the input itself), as
    // SyncBatchNorm's statistics use it: its rule all-reduces the
    // gradient.
    {"all_reduce",
     R"(
graph.weight @x : tensor<4x3xf32>
graph.weight @r {frozen} : tensor<4x3xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<4x3xf32>
  %r = graph.weight_ref @r : tensor<4x3xf32>
  %s = graph.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : tensor<4x3xf32>
  %a = graph.all_reduce %s : tensor<1x3xf32>
  %c = graph.sub %x, %a : tensor<4x3xf32>, tensor<1x3xf32>
  %t = graph.tanh %c : tensor<4x3xf32>
  %m = graph.mul %t, %r : tensor<4x3xf32>, tensor<4x3xf32>
  %loss = graph.reduce_sum %m : tensor<4x3xf32>
  return %loss : tensor<f32>
})",
     {}},
    // Dropout in training (a step given): the same mask on the gradient.
    {"dropout",
     R"(
graph.weight @x : tensor<4x8xf32>
graph.weight @r {frozen} : tensor<4x8xf32>
func.func @loss() -> tensor<f32> {
  %x = graph.weight_ref @x : tensor<4x8xf32>
  %r = graph.weight_ref @r : tensor<4x8xf32>
  %s = graph.constant dense<3> : tensor<i64>
  %d = graph.dropout %x, %s {ratio = 0.5, site = 2} : tensor<4x8xf32>, tensor<i64>
  %t = graph.tanh %d : tensor<4x8xf32>
  %e = graph.dropout %t, %s {ratio = 0.25, site = 3} : tensor<4x8xf32>, tensor<i64>
  %m = graph.mul %e, %r : tensor<4x8xf32>, tensor<4x8xf32>
  %loss = graph.reduce_sum %m : tensor<4x8xf32>
  return %loss : tensor<f32>
})",
     {}},
};

/// gtest names a case by its name, not its bytes.
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class GradientCheck : public ::testing::TestWithParam<Case> {};

TEST_P(GradientCheck, MatchesCentralDifferences) {
  const Case &c = GetParam();
  DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(c.ir, &context);
  ASSERT_TRUE(module) << c.name << ": the case does not parse";
  PassManager pm(&context);
  pm.addPass(modelc::createTrainingModePass());
  pm.addPass(modelc::createDifferentiatePass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << c.name;

  // Deterministic values: positive for `pos*`, away from relu's kink else.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.3, 1.3);
  std::map<std::string, modelc::RefTensor> weights;
  for (auto weight : module->getOps<modelc::graph::WeightOp>()) {
    modelc::RefTensor t;
    t.shape.assign(weight.getTensorType().getShape().begin(),
                   weight.getTensorType().getShape().end());
    bool positive =
        weight.getSymName().starts_with("pos") || weight.getSymName() == "cw";
    for (int64_t i = 0; i < weight.getTensorType().getNumElements(); ++i)
      t.data.push_back(positive || rng() % 2 ? unit(rng) : -unit(rng));
    weights[weight.getSymName().str()] = std::move(t);
  }
  auto provider = [&](StringRef name) -> FailureOr<modelc::RefTensor> {
    return weights.at(name.str());
  };
  std::vector<modelc::RefTensor> inputs;
  for (const std::vector<double> &values : c.inputs)
    inputs.push_back({{static_cast<int64_t>(values.size())}, values});

  auto lossFn = module->lookupSymbol<func::FuncOp>("loss");
  auto gradFn = module->lookupSymbol<func::FuncOp>("gradients");
  FailureOr<std::vector<modelc::RefTensor>> grads =
      modelc::interpret(gradFn, inputs, provider, /*roundResults=*/false);
  ASSERT_TRUE(succeeded(grads)) << c.name;
  auto loss = [&]() {
    FailureOr<std::vector<modelc::RefTensor>> out =
        modelc::interpret(lossFn, inputs, provider, /*roundResults=*/false);
    EXPECT_TRUE(succeeded(out));
    return succeeded(out) ? (*out)[0].data[0] : NAN;
  };
  EXPECT_NEAR((*grads)[0].data[0], loss(), 1e-12) << c.name << ": the loss";

  auto parameters = gradFn->getAttrOfType<ArrayAttr>("graph.parameters");
  int checked = 0;
  for (auto [index, attr] : llvm::enumerate(parameters)) {
    std::string name = cast<FlatSymbolRefAttr>(attr).getValue().str();
    const modelc::RefTensor &g = (*grads)[index + 1];
    std::vector<double> &w = weights.at(name).data;
    ASSERT_EQ(g.data.size(), w.size()) << name;
    for (size_t i = 0; i < w.size(); ++i) {
      const double h = 1e-6, saved = w[i];
      w[i] = saved + h;
      double up = loss();
      w[i] = saved - h;
      double down = loss();
      w[i] = saved;
      double difference = (up - down) / (2 * h);
      EXPECT_NEAR(g.data[i], difference, 1e-6 + 1e-6 * std::fabs(difference))
          << c.name << ": d loss / d " << name << "[" << i << "]";
      ++checked;
    }
  }
  // Every weight but the frozen ones is a parameter.
  EXPECT_EQ(parameters.size(),
            weights.size() -
                llvm::count_if(module->getOps<modelc::graph::WeightOp>(),
                               [](auto w) { return w.getFrozen(); }));
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, GradientCheck, ::testing::ValuesIn(cases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace
