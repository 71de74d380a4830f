// RUN: modelc-opt %s --split-input-file --modelc-differentiate --modelc-build-optimizer='optimizer=sgd lr=0.5 momentum=0.9' --cse | FileCheck %s --check-prefix=SGD
// RUN: modelc-opt %s --split-input-file --modelc-differentiate --modelc-build-optimizer='optimizer=adamw lr=0.01 weight-decay=0.1' --cse | FileCheck %s --check-prefix=ADAMW
// RUN: modelc-opt %s --split-input-file --modelc-differentiate --modelc-build-optimizer='clip-grad-norm=1.5' --cse | FileCheck %s --check-prefix=CLIP
// RUN: modelc-opt %s --split-input-file --modelc-differentiate --modelc-build-optimizer='accumulate=2' --cse | FileCheck %s --check-prefix=ACC

// SGD with momentum: the buffer is state (zeros), the parameter and the
// buffer are written back, and the write of w waits for the op that reads
// the old w (the matmul's gradient for x is dropped: x is no parameter).
// SGD-DAG: graph.weight @w {writable} : tensor<4x4xf32>
// SGD-DAG: graph.weight @step {frozen, writable, zeros} : tensor<f32>
// SGD-DAG: graph.weight @w.momentum_buffer {frozen, writable, zeros} : tensor<4x4xf32>
// The rate is the last input, `lr`, with --lr as its default: each update
// reads it (it is no constant).
// SGD-LABEL: func.func @train_step
// SGD-SAME: %[[LR:arg[0-9]+]]: tensor<f32> {graph.default = dense<5.000000e-01> : tensor<f32>, graph.name = "lr"}
// SGD-SAME: -> (tensor<f32> {graph.name = "loss"})
// SGD: %[[W:.*]] = graph.weight_ref @w :
// SGD: %[[Y:.*]] = graph.matmul %arg0, %[[W]]
// SGD: %[[DW:.*]] = graph.gemm %arg0, %{{.*}} {transpose_a = true}
// SGD: %[[BUF:.*]] = graph.add %{{.*}}, %[[DW]]
// SGD: graph.assign @w.momentum_buffer, %[[BUF]] : tensor<4x4xf32>
// SGD: %[[S:.*]] = graph.mul %[[BUF]], %[[LR]] : tensor<4x4xf32>, tensor<f32>
// SGD: %[[P:.*]] = graph.sub %[[W]], %[[S]]
// SGD: graph.assign @w, %[[P]] after(%[[Y]]) : tensor<4x4xf32>, tensor<2x4xf32>
// SGD: graph.assign @step,
// SGD: return %{{.*}} : tensor<f32>

// AdamW: exp_avg and exp_avg_sq, the decoupled decay p * (1 - lr wd).
// ADAMW-DAG: graph.weight @w.exp_avg {frozen, writable, zeros} : tensor<4x4xf32>
// ADAMW-DAG: graph.weight @w.exp_avg_sq {frozen, writable, zeros} : tensor<4x4xf32>
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %[[LR:arg[0-9]+]]: tensor<f32> {graph.default = dense<0.00999999977> : tensor<f32>, graph.name = "lr"}
// ADAMW: graph.constant dense<9.990000e-01> : tensor<f32>
// ADAMW: graph.pow
// ADAMW: %[[DECAY:.*]] = graph.mul %[[LR]], %{{.*}} : tensor<f32>, tensor<f32>
// ADAMW: %[[KEEP:.*]] = graph.sub %{{.*}}, %[[DECAY]]
// ADAMW: %[[P:.*]] = graph.mul %{{.*}}, %[[KEEP]] : tensor<4x4xf32>, tensor<f32>
// ADAMW: graph.assign @w.exp_avg,
// ADAMW: graph.assign @w.exp_avg_sq,
// ADAMW: graph.sqrt
// ADAMW: %[[STEP:.*]] = graph.div %[[LR]],
// ADAMW: graph.mul %[[STEP]],
// ADAMW: graph.assign @w,
graph.weight @w : tensor<4x4xf32>
func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<4x4xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = graph.reduce_mean %y : tensor<2x4xf32>
  return %l : tensor<f32>
}

// --clip-grad-norm: the norm of the per-parameter norms, then each gradient
// times min(max_norm / (norm + 1e-6), 1) before the update.
// CLIP-LABEL: func.func @train_step
// CLIP: %[[DW:.*]] = graph.gemm
// CLIP: %[[SQ:.*]] = graph.mul %[[DW]], %[[DW]]
// CLIP: %[[SS:.*]] = graph.reduce_sum %[[SQ]] {axes = array<i64: 0, 1>}
// CLIP: %[[N:.*]] = graph.sqrt %[[SS]]
// CLIP: %[[N2:.*]] = graph.mul %[[N]], %[[N]]
// CLIP: %[[T:.*]] = graph.sqrt %[[N2]]
// CLIP: graph.constant dense<9.99999997E-7>
// CLIP: %[[D:.*]] = graph.add %[[T]],
// CLIP: graph.constant dense<1.500000e+00>
// CLIP: %[[C:.*]] = graph.div %{{.*}}, %[[D]]
// CLIP: %[[M:.*]] = graph.min %[[C]],
// CLIP: %[[G:.*]] = graph.mul %[[DW]], %[[M]]
// CLIP: graph.mul %[[G]],

// --accumulate 2: the gradient summed into w.grad, counted by micro_step;
// w and step change only on the second call, when w.grad is cleared.
// ACC-DAG: graph.weight @micro_step {frozen, writable, zeros} : tensor<f32>
// ACC-DAG: graph.weight @w.grad {frozen, writable, zeros} : tensor<4x4xf32>
// ACC-LABEL: func.func @train_step
// ACC: %[[DW:.*]] = graph.gemm
// ACC: %[[APPLY:.*]] = graph.compare eq, %[[CALLS:.*]], %{{.*}} : tensor<f32>, tensor<f32>
// ACC: graph.select %[[APPLY]], %{{.*}}, %[[CALLS]]
// ACC: graph.assign @micro_step,
// ACC: %[[SUM:.*]] = graph.add %{{.*}}, %[[DW]] : tensor<4x4xf32>, tensor<4x4xf32>
// ACC: %[[CLEARED:.*]] = graph.select %[[APPLY]], %{{.*}}, %[[SUM]]
// ACC: graph.assign @w.grad, %[[CLEARED]]
// ACC: graph.mul %[[SUM]],
// ACC: %[[NEW:.*]] = graph.select %[[APPLY]], %{{.*}}, %{{.*}} : tensor<i1>, tensor<4x4xf32>, tensor<4x4xf32>
// ACC: graph.assign @w, %[[NEW]]
// ACC: graph.select %[[APPLY]]
// ACC: graph.assign @step,
