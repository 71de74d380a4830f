// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise --modelc-fold-gemm=relu-epilogue=true | FileCheck %s
// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise '--modelc-fold-gemm=checked=true relu-epilogue=true' | FileCheck %s --check-prefix=CHECKED
// RUN: modelc-opt %s --split-input-file --modelc-fuse-elementwise --modelc-fold-gemm | FileCheck %s --check-prefix=SAFE

// A relu that alone reads a linear on the same GPU is its epilogue, when
// asked for (modelc --gpu-relu-epilogue).
// CHECK-LABEL: func.func @relu_epilogue
// CHECK: %[[G:.*]] = sched.gemm {device = #device.dev<cuda:0>, relu} : tensor<8x16xf32> {
// CHECK-NEXT: %[[P:.*]] = graph.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[P]] : tensor<8x16xf32>
// CHECK-NEXT: sched.yield %[[R]] : tensor<8x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
// The epilogue is folded in checked plans too.
// CHECKED-LABEL: func.func @relu_epilogue
// CHECKED: sched.gemm {device = #device.dev<cuda:0>, relu}
// By default it is not (cuBLASLt's epilogue may turn NaN into 0): the relu
// stays a kernel of its own, which keeps NaN.
// SAFE-LABEL: func.func @relu_epilogue
// SAFE-NOT: sched.gemm
// SAFE: graph.linear
// SAFE: sched.fused
// SAFE-NEXT: ^bb0
// SAFE-NEXT: graph.relu
// SAFE-LABEL: func.func @alpha
graph.weight @w : tensor<16x32xf32>
graph.weight @b : tensor<16xf32>
func.func @relu_epilogue(%x: tensor<8x32xf32>) -> tensor<8x16xf32> {
  %w = graph.weight_ref @w {device = #device.dev<cuda:0>} : tensor<16x32xf32>
  %b = graph.weight_ref @b {device = #device.dev<cuda:0>} : tensor<16xf32>
  %h = graph.linear %x, %w, %b {device = #device.dev<cuda:0>} : tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>
  %r = graph.relu %h {device = #device.dev<cuda:0>} : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A matmul's only user scaling it by a one-element constant is alpha; the
// constant moves before the call when it came after the product.
// CHECK-LABEL: func.func @alpha
// CHECK: %[[C:.*]] = graph.constant dense<1.250000e-01>
// CHECK-NEXT: %[[G:.*]] = sched.gemm {alpha = 1.250000e-01 : f64, device = #device.dev<cuda:0>} : tensor<4x4xf32> {
// CHECK-NEXT: %[[P:.*]] = graph.matmul
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[P]], %[[C]]
// CHECK-NEXT: sched.yield %[[M]]
// CHECK: return %[[G]]
func.func @alpha(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %p = graph.matmul %a, %b {device = #device.dev<cuda:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  %c = graph.constant dense<0.125> : tensor<f32> {device = #device.dev<cuda:0>}
  %m = graph.mul %p, %c {device = #device.dev<cuda:0>} : tensor<4x4xf32>, tensor<f32>
  return %m : tensor<4x4xf32>
}

// -----

// A residual add after a linear, of a value computed before the linear, is
// the call's C (beta = 1); checked plans keep the add a kernel of its own.
// CHECK-LABEL: func.func @residual
// CHECK: %[[X:.*]] = sched.fused
// CHECK: %[[G:.*]] = sched.gemm {beta = 1.000000e+00 : f64, device = #device.dev<cuda:0>} : tensor<8x16xf32> {
// CHECK-NEXT: %[[P:.*]] = graph.linear
// CHECK-NEXT: %[[S:.*]] = graph.add %[[X]], %[[P]]
// CHECK-NEXT: sched.yield %[[S]]
// CHECK: return %[[G]]
// CHECKED-LABEL: func.func @residual
// CHECKED: graph.linear %{{.*}} {device = #device.dev<cuda:0>}
// CHECKED-NOT: sched.gemm
// CHECKED: sched.fused
// CHECKED-NEXT: ^bb0
// CHECKED-NEXT: graph.add
graph.weight @w : tensor<16x16xf32>
func.func @residual(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = graph.exp %x {device = #device.dev<cuda:0>} : tensor<8x16xf32>
  %w = graph.weight_ref @w {device = #device.dev<cuda:0>} : tensor<16x16xf32>
  %h = graph.linear %e, %w {device = #device.dev<cuda:0>} : tensor<8x16xf32>, tensor<16x16xf32>
  %s = graph.add %e, %h {device = #device.dev<cuda:0>} : tensor<8x16xf32>, tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

// On the CPU or a sim device no epilogue, alpha or residual is folded (only
// cuBLASLt calls fold those).
// CHECK-LABEL: func.func @not_on_gpu
// CHECK: graph.linear %{{.*}} {device = #device.dev<cpu>}
// CHECK-NEXT: sched.fused
// CHECK: graph.matmul %{{.*}} {device = #device.dev<sim:0>}
// CHECK-NEXT: sched.fused
// CHECK-NOT: sched.gemm
graph.weight @w : tensor<4x4xf32>
func.func @not_on_gpu(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = graph.weight_ref @w {device = #device.dev<cpu>} : tensor<4x4xf32>
  %h = graph.linear %x, %w {device = #device.dev<cpu>} : tensor<4x4xf32>, tensor<4x4xf32>
  %r = graph.relu %h {device = #device.dev<cpu>} : tensor<4x4xf32>
  %m = graph.matmul %x, %x {device = #device.dev<sim:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  %n = graph.relu %m {device = #device.dev<sim:0>} : tensor<4x4xf32>
  return %r, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A relu on another GPU, or a product read twice, is not an epilogue.
// CHECK-LABEL: func.func @not_alone
// CHECK-NOT: sched.gemm
// CHECK: %[[P:.*]] = graph.matmul %{{.*}} {device = #device.dev<cuda:0>}
// CHECK: sched.fused(%[[P]]) {device = #device.dev<cuda:0>}
// CHECK: sched.fused(%[[P]]) {device = #device.dev<cuda:0>}
// CHECK: %[[Q:.*]] = graph.matmul %{{.*}} {device = #device.dev<cuda:0>}
// CHECK: sched.fused(%[[Q]]) {device = #device.dev<cuda:1>}
func.func @not_alone(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %p = graph.matmul %x, %x {device = #device.dev<cuda:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  %r = graph.relu %p {device = #device.dev<cuda:0>} : tensor<4x4xf32>
  %e = graph.exp %p {device = #device.dev<cuda:0>} : tensor<4x4xf32>
  %q = graph.matmul %x, %x {device = #device.dev<cuda:0>} : tensor<4x4xf32>, tensor<4x4xf32>
  %s = graph.relu %q {device = #device.dev<cuda:1>} : tensor<4x4xf32>
  return %r, %e, %s : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Attention's q·kᵀ: both operands are slices of one qkv buffer read through
// reshapes and transposes; cuBLASLt reads them in place (q as stored, kᵀ as
// the transpose of k's rows), lda 48 and one 4-element head apart.
// CHECK-LABEL: func.func @strided_views
// CHECK: %[[QKV:.*]] = graph.matmul
// CHECK-NEXT: %[[G:.*]] = sched.gemm {device = #device.dev<cuda:0>, lhs_view = #sched.view<offset = 0, ld = 48, batch_stride = 4, transposed = false>, rhs_view = #sched.view<offset = 16, ld = 48, batch_stride = 4, transposed = true>} : tensor<4x8x8xf32> {
// CHECK-NEXT: graph.slice %[[QKV]]
// CHECK-NEXT: graph.slice %[[QKV]]
// CHECK-NEXT: graph.reshape
// CHECK-NEXT: graph.transpose
// CHECK-NEXT: graph.reshape
// CHECK-NEXT: graph.transpose
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: sched.yield
// CHECK: return %[[G]]
// Checked plans read plain buffers.
// CHECKED-LABEL: func.func @strided_views
// CHECKED: graph.matmul
// CHECKED: graph.transpose
// CHECKED: graph.matmul
// CHECKED-NOT: sched.gemm
// CHECKED: return
func.func @strided_views(%x: tensor<8x16xf32>, %w: tensor<16x48xf32>) -> tensor<4x8x8xf32> {
  %qkv = graph.matmul %x, %w {device = #device.dev<cuda:0>} : tensor<8x16xf32>, tensor<16x48xf32>
  %q = graph.slice %qkv {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 16>, device = #device.dev<cuda:0>} : tensor<8x48xf32>
  %k = graph.slice %qkv {axes = array<i64: 1>, starts = array<i64: 16>, ends = array<i64: 32>, device = #device.dev<cuda:0>} : tensor<8x48xf32>
  %q4 = graph.reshape %q to [8, 4, 4] {device = #device.dev<cuda:0>} : tensor<8x16xf32>
  %qh = graph.transpose %q4 perm [1, 0, 2] {device = #device.dev<cuda:0>} : tensor<8x4x4xf32>
  %k4 = graph.reshape %k to [8, 4, 4] {device = #device.dev<cuda:0>} : tensor<8x16xf32>
  %kt = graph.transpose %k4 perm [1, 2, 0] {device = #device.dev<cuda:0>} : tensor<8x4x4xf32>
  %s = graph.matmul %qh, %kt {device = #device.dev<cuda:0>} : tensor<4x8x4xf32>, tensor<4x4x8xf32>
  return %s : tensor<4x8x8xf32>
}

// -----

// On the host (CPU, sim), an f32 matmul's strided operands fold too: the
// host's sgemm reads q in place and kᵀ with its transpose flag (the same
// views as cuBLASLt's). Not an f16 matmul (it converts a batch at a time),
// not in checked plans.
// CHECK-LABEL: func.func @strided_views_on_host
// CHECK: %[[QKV:.*]] = graph.matmul
// CHECK-NEXT: %[[G:.*]] = sched.gemm {device = #device.dev<cpu>, lhs_view = #sched.view<offset = 0, ld = 48, batch_stride = 4, transposed = false>, rhs_view = #sched.view<offset = 16, ld = 48, batch_stride = 4, transposed = true>} : tensor<4x8x8xf32> {
// CHECK: graph.matmul
// CHECK-NEXT: sched.yield
// CHECK: %[[S:.*]] = sched.gemm {device = #device.dev<sim:1>, rhs_view = #sched.view<offset = 0, ld = 8, batch_stride = 0, transposed = true>} : tensor<8x8xf32> {
// CHECK-NEXT: graph.transpose
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: sched.yield
// CHECK: graph.transpose %{{.*}} {device = #device.dev<cpu>} : tensor<4x4xf16>
// CHECK-NEXT: graph.matmul %{{.*}} {device = #device.dev<cpu>} : tensor<4x4xf16>, tensor<4x4xf16>
// CHECK: return %[[G]], %[[S]]
// CHECKED-LABEL: func.func @strided_views_on_host
// CHECKED-NOT: sched.gemm
// CHECKED: return
func.func @strided_views_on_host(%x: tensor<8x16xf32>, %w: tensor<16x48xf32>, %y: tensor<8x8xf32>, %h: tensor<4x4xf16>) -> (tensor<4x8x8xf32>, tensor<8x8xf32>, tensor<4x4xf16>) {
  %qkv = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<8x16xf32>, tensor<16x48xf32>
  %q = graph.slice %qkv {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 16>, device = #device.dev<cpu>} : tensor<8x48xf32>
  %k = graph.slice %qkv {axes = array<i64: 1>, starts = array<i64: 16>, ends = array<i64: 32>, device = #device.dev<cpu>} : tensor<8x48xf32>
  %q4 = graph.reshape %q to [8, 4, 4] {device = #device.dev<cpu>} : tensor<8x16xf32>
  %qh = graph.transpose %q4 perm [1, 0, 2] {device = #device.dev<cpu>} : tensor<8x4x4xf32>
  %k4 = graph.reshape %k to [8, 4, 4] {device = #device.dev<cpu>} : tensor<8x16xf32>
  %kt = graph.transpose %k4 perm [1, 2, 0] {device = #device.dev<cpu>} : tensor<8x4x4xf32>
  %s = graph.matmul %qh, %kt {device = #device.dev<cpu>} : tensor<4x8x4xf32>, tensor<4x4x8xf32>
  %y2 = graph.relu %y {device = #device.dev<sim:1>} : tensor<8x8xf32>
  %yt = graph.transpose %y2 perm [1, 0] {device = #device.dev<sim:1>} : tensor<8x8xf32>
  %p = graph.matmul %y2, %yt {device = #device.dev<sim:1>} : tensor<8x8xf32>, tensor<8x8xf32>
  %h2 = graph.neg %h {device = #device.dev<cpu>} : tensor<4x4xf16>
  %ht = graph.transpose %h2 perm [1, 0] {device = #device.dev<cpu>} : tensor<4x4xf16>
  %hp = graph.matmul %h, %ht {device = #device.dev<cpu>} : tensor<4x4xf16>, tensor<4x4xf16>
  return %s, %p, %hp : tensor<4x8x8xf32>, tensor<8x8xf32>, tensor<4x4xf16>
}

// -----

// The same on the host with a dynamic sequence: the views' strides and
// sizes would be the max's, so the operands are not folded (docs/dynamic.md).
// CHECK-LABEL: func.func @dynamic_sequence_on_host
// CHECK-NOT: sched.gemm
// CHECK: return
graph.dim @seq 1 to 8 at 8
func.func @dynamic_sequence_on_host(%x: tensor<8x16xf32> {graph.dims = ["seq", ""]}, %w: tensor<16x48xf32>) -> tensor<4x8x8xf32> {
  %qkv = graph.matmul %x, %w {device = #device.dev<cpu>} : tensor<8x16xf32>, tensor<16x48xf32>
  %q = graph.slice %qkv {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 16>, device = #device.dev<cpu>} : tensor<8x48xf32>
  %k = graph.slice %qkv {axes = array<i64: 1>, starts = array<i64: 16>, ends = array<i64: 32>, device = #device.dev<cpu>} : tensor<8x48xf32>
  %q4 = graph.reshape %q to [8, 4, 4] {device = #device.dev<cpu>} : tensor<8x16xf32>
  %qh = graph.transpose %q4 perm [1, 0, 2] {device = #device.dev<cpu>} : tensor<8x4x4xf32>
  %k4 = graph.reshape %k to [8, 4, 4] {device = #device.dev<cpu>} : tensor<8x16xf32>
  %kt = graph.transpose %k4 perm [1, 2, 0] {device = #device.dev<cpu>} : tensor<8x4x4xf32>
  %s = graph.matmul %qh, %kt {device = #device.dev<cpu>} : tensor<4x8x4xf32>, tensor<4x4x8xf32>
  return %s : tensor<4x8x8xf32>
}

// -----

// A slice read through a reshape only by a transpose on the same GPU is done
// by the transpose's kernel.
// CHECK-LABEL: func.func @sliced_transpose
// CHECK: %[[Y:.*]] = graph.matmul
// CHECK-NEXT: %[[T:.*]] = sched.sliced_transpose {device = #device.dev<cuda:0>} : tensor<4x8x4xf32> {
// CHECK-NEXT: %[[S:.*]] = graph.slice %[[Y]]
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[S]]
// CHECK-NEXT: %[[P:.*]] = graph.transpose %[[R]]
// CHECK-NEXT: sched.yield %[[P]]
// CHECK: sched.fused(%[[T]])
// CHECKED-LABEL: func.func @sliced_transpose
// CHECKED: graph.slice
// CHECKED-NOT: sched.sliced_transpose
// CHECKED: graph.transpose
func.func @sliced_transpose(%x: tensor<8x16xf32>, %w: tensor<16x48xf32>) -> tensor<4x8x4xf32> {
  %y = graph.matmul %x, %w {device = #device.dev<cuda:0>} : tensor<8x16xf32>, tensor<16x48xf32>
  %v = graph.slice %y {axes = array<i64: 1>, starts = array<i64: 32>, ends = array<i64: 48>, device = #device.dev<cuda:0>} : tensor<8x48xf32>
  %v4 = graph.reshape %v to [8, 4, 4] {device = #device.dev<cuda:0>} : tensor<8x16xf32>
  %vt = graph.transpose %v4 perm [1, 0, 2] {device = #device.dev<cuda:0>} : tensor<8x4x4xf32>
  %e = graph.exp %vt {device = #device.dev<cuda:0>} : tensor<4x8x4xf32>
  return %e : tensor<4x8x4xf32>
}

// -----

// An integer matmul is a generated kernel, not a cuBLASLt call: its
// scaling stays a separate op and no sched.gemm is made.
// CHECK-LABEL: func.func @integer_product
// CHECK-NOT: sched.gemm
// CHECK: graph.matmul %{{.*}}, %{{.*}} {device = #device.dev<cuda:0>} : tensor<4x4xi32>, tensor<4x4xi32>
// CHECK: return
func.func @integer_product(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %p = graph.matmul %a, %b {device = #device.dev<cuda:0>} : tensor<4x4xi32>, tensor<4x4xi32>
  %c = graph.constant dense<3> : tensor<i32> {device = #device.dev<cuda:0>}
  %m = graph.mul %p, %c {device = #device.dev<cuda:0>} : tensor<4x4xi32>, tensor<i32>
  return %m : tensor<4x4xi32>
}
