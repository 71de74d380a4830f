// RUN: modelc-opt %s --modelc-attach-loss | FileCheck %s --check-prefix=CE
// RUN: modelc-opt %s --modelc-attach-loss='class-weights=0.5,1,2 ignore-index=1 label-smoothing=0.1' --cse | FileCheck %s --check-prefix=SMOOTH
// RUN: modelc-opt %s --modelc-attach-loss='loss=nll reduction=sum' | FileCheck %s --check-prefix=NLL
// RUN: modelc-opt %s --modelc-attach-loss='loss=mse' | FileCheck %s --check-prefix=MSE
// RUN: modelc-opt %s --modelc-attach-loss='loss=bce_with_logits' | FileCheck %s --check-prefix=BCE
// RUN: modelc-opt %s --modelc-attach-loss='distributed=true class-weights=0.5,1,2 ignore-index=1' | FileCheck %s --check-prefix=DIST
// RUN: modelc-opt %s --modelc-attach-loss='distributed=true loss=mse' | FileCheck %s --check-prefix=DISTMSE
// RUN: not modelc-opt %s --modelc-attach-loss='loss=hinge' 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not modelc-opt %s --modelc-attach-loss='reduction=none' 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not modelc-opt %s --modelc-attach-loss='class-weights=1,2' 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not modelc-opt %s --modelc-attach-loss='entry=missing' 2>&1 | FileCheck %s --check-prefix=ENTRY

graph.weight @w : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.name = "x"}) -> tensor<2x3xf32> {
  %w = graph.weight_ref @w : tensor<3x4xf32>
  %y = graph.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>
  return %y : tensor<2x3xf32>
}

// Distributed: a mean divides by its denominator summed over the ranks
// (the weights of the targets kept; for mse the element count), so each
// rank's loss is its share of the whole batch's.
// DIST-LABEL: func.func @loss
// DIST-SAME: attributes {graph.loss_share}
// DIST: %[[DEN:.*]] = graph.reduce_sum %{{.*}} {axes = array<i64: 0, 1>} : tensor<2x3xf32>
// DIST-NEXT: %[[ALL:.*]] = graph.all_reduce %[[DEN]] : tensor<f32>
// DIST-NEXT: %[[SUM:.*]] = graph.cross_entropy %{{.*}}, %{{.*}} weight %{{.*}} reduction sum {ignore_index = 1 : i64}
// DIST-NEXT: %[[L:.*]] = graph.div %[[SUM]], %[[ALL]]
// DIST-NEXT: return %[[L]]
// DISTMSE-LABEL: func.func @loss
// DISTMSE: %[[SUM:.*]] = graph.reduce_sum
// DISTMSE-NEXT: %[[N:.*]] = graph.constant dense<6.000000e+00> : tensor<f32>
// DISTMSE-NEXT: %[[ALL:.*]] = graph.all_reduce %[[N]] : tensor<f32>
// DISTMSE: graph.div %[[SUM]], %[[ALL]]

// The forward entry stays; `loss` takes its inputs and `target`.
// CE: func.func @forward
// CE-LABEL: func.func @loss
// CE-SAME: (%{{.*}}: tensor<2x4xf32> {graph.name = "x"}, %[[T:.*]]: tensor<2xi64> {graph.name = "target"})
// CE-SAME: -> (tensor<f32> {graph.name = "loss"})
// CE: %[[Y:.*]] = graph.linear
// CE: %[[L:.*]] = graph.cross_entropy %[[Y]], %[[T]] : tensor<2x3xf32>, tensor<2xi64>
// CE: return %[[L]] : tensor<f32>

// Label smoothing: (1 - eps) CE + eps / C times the weighted sum of
// -log_softmax, ignored samples masked, divided by the weights of the
// targets.
// SMOOTH-LABEL: func.func @loss
// SMOOTH: %[[W:[0-9]+]] = graph.constant dense<{{\[}}5.000000e-01, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
// SMOOTH: %[[XENT:.*]] = graph.cross_entropy %{{.*}}, %{{.*}} weight %[[W]] {ignore_index = 1 : i64}
// SMOOTH: %[[LS:.*]] = graph.log_softmax %{{.*}} {axis = 1 : i64}
// SMOOTH: graph.mul %[[LS]], %[[W]]
// SMOOTH: graph.select
// SMOOTH: %[[DEN:.*]] = graph.reduce_sum %{{.*}} {axes = array<i64: 0, 1>} : tensor<2x3xf32>
// SMOOTH: graph.div %{{.*}}, %[[DEN]]
// SMOOTH: graph.constant dense<0.0333333351> : tensor<f32>
// SMOOTH: graph.constant dense<0.899999976> : tensor<f32>
// SMOOTH: return

// The negative log-likelihood: -sum of the one-hot (ignored samples masked) times the scores.
// NLL-LABEL: func.func @loss
// NLL: graph.compare eq, %{{.*}}, %{{.*}} : tensor<2x1xi64>, tensor<3xi64>
// NLL: %[[P:.*]] = graph.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>
// NLL: %[[S:.*]] = graph.reduce_sum %[[P]] {axes = array<i64: 1>}
// NLL: %[[N:.*]] = graph.neg %[[S]]
// NLL: %[[L:.*]] = graph.reduce_sum %[[N]] {axes = array<i64: 0>}
// NLL: return %[[L]]

// Mean squared error: the target has the output's type.
// MSE-LABEL: func.func @loss
// MSE-SAME: tensor<2x3xf32> {graph.name = "target"}
// MSE: %[[D:.*]] = graph.sub
// MSE: %[[Q:.*]] = graph.mul %[[D]], %[[D]]
// MSE: %[[L:.*]] = graph.reduce_mean %[[Q]] {axes = array<i64: 0, 1>}
// MSE: return %[[L]]

// BCE with logits: max(x, 0) - x t + log(1 + e^-|x|).
// BCE-LABEL: func.func @loss
// BCE: graph.abs
// BCE: graph.exp
// BCE: graph.log
// BCE: graph.relu
// BCE: graph.reduce_mean

// KIND: error: unknown loss 'hinge' (expected cross_entropy, nll, mse or bce_with_logits)
// NONE: error: loss reduction 'none' is not supported for training
// COUNT: error: the loss has 2 class weights for 3 classes
// ENTRY: error: modelc-attach-loss: no entry point 'missing' to attach the loss to
