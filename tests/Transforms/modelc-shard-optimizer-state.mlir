// RUN: modelc-opt %s --split-input-file --modelc-shard-optimizer-state --verify-diagnostics | FileCheck %s

// SGD with momentum over two parameters, as modelc-build-optimizer writes
// it. The larger parameter (@big, 64 bytes) is shard 0 although
// graph.parameters lists it second; @small is shard 1. Each momentum
// buffer is read by its own update alone: it gets its parameter's shard,
// and every op of that update runs on the owner alone (graph.shard). The
// new value reaches every rank through graph.owner_broadcast before the
// unguarded assign. The learning rate's cast serves both updates: every
// rank computes it. The step count is read by no update: every rank.
// CHECK: graph.weight @step {frozen, writable, zeros}
// CHECK: graph.weight @small.momentum_buffer {frozen, shard = 1 : i64, writable, zeros}
// CHECK: graph.weight @big.momentum_buffer {frozen, shard = 0 : i64, writable, zeros}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: graph.state_shards = {bytes = 80 : i64, most_per_rank = [64, 64, 64], ranks = [2, 4, 8], weights = 2 : i64}
// CHECK: graph.weight_ref @big {graph.shard = 0 : i64}
// CHECK: graph.weight_ref @small {graph.shard = 1 : i64}
// CHECK: %[[BM:.*]] = graph.weight_ref @big.momentum_buffer {graph.shard = 0 : i64}
// CHECK: %[[SM:.*]] = graph.weight_ref @small.momentum_buffer {graph.shard = 1 : i64}
// CHECK: %[[STEP:.*]] = graph.weight_ref @step :
// CHECK: %[[LR:.*]] = graph.mul %arg2, %{{.*}} : tensor<f32>
// CHECK: %[[B1:.*]] = graph.mul %[[BM]], %{{.*}} {graph.shard = 0 : i64}
// CHECK: %[[B2:.*]] = graph.add %[[B1]], %arg0 {graph.shard = 0 : i64}
// CHECK: graph.assign @big.momentum_buffer, %[[B2]] {graph.shard = 0 : i64}
// CHECK: %[[B3:.*]] = graph.mul %[[B2]], %[[LR]] {graph.shard = 0 : i64}
// CHECK: %[[B4:.*]] = graph.sub %{{.*}}, %[[B3]] {graph.shard = 0 : i64}
// CHECK: %[[S1:.*]] = graph.mul %[[SM]], %{{.*}} {graph.shard = 1 : i64}
// CHECK: %[[S4:.*]] = graph.sub %{{.*}}, %{{.*}} {graph.shard = 1 : i64}
// CHECK: %[[NEXT:.*]] = graph.add %[[STEP]], %{{.*}} : tensor<f32>
// CHECK: graph.assign @step, %[[NEXT]] :
// The broadcasts, with their assigns, wait until every update is done:
// each rank computes its shards back to back.
// CHECK: %[[BB:.*]] = graph.owner_broadcast %[[B4]] {shard = 0 : i64}
// CHECK: graph.assign @big, %[[BB]] :
// CHECK: %[[SB:.*]] = graph.owner_broadcast %[[S4]] {shard = 1 : i64}
// CHECK: graph.assign @small, %[[SB]] :
// CHECK: return %[[NEXT]]
graph.weight @small {writable} : tensor<4xf32>
graph.weight @big {writable} : tensor<4x4xf32>
graph.weight @step {frozen, writable, zeros} : tensor<f32>
graph.weight @small.momentum_buffer {frozen, writable, zeros} : tensor<4xf32>
graph.weight @big.momentum_buffer {frozen, writable, zeros} : tensor<4x4xf32>
func.func @gradients(%gb: tensor<4x4xf32>, %gs: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) attributes {graph.parameters = [@small, @big]} {
  return %gb, %gs : tensor<4x4xf32>, tensor<4xf32>
}
func.func @train_step(%gb: tensor<4x4xf32>, %gs: tensor<4xf32>, %lr: tensor<f32>) -> tensor<f32> {
  %momentum = graph.constant dense<0.9> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %big = graph.weight_ref @big : tensor<4x4xf32>
  %small = graph.weight_ref @small : tensor<4xf32>
  %bm = graph.weight_ref @big.momentum_buffer : tensor<4x4xf32>
  %sm = graph.weight_ref @small.momentum_buffer : tensor<4xf32>
  %step = graph.weight_ref @step : tensor<f32>
  %rate = graph.mul %lr, %one : tensor<f32>, tensor<f32>
  %b1 = graph.mul %bm, %momentum : tensor<4x4xf32>, tensor<f32>
  %b2 = graph.add %b1, %gb : tensor<4x4xf32>, tensor<4x4xf32>
  graph.assign @big.momentum_buffer, %b2 : tensor<4x4xf32>
  %b3 = graph.mul %b2, %rate : tensor<4x4xf32>, tensor<f32>
  %b4 = graph.sub %big, %b3 : tensor<4x4xf32>, tensor<4x4xf32>
  graph.assign @big, %b4 : tensor<4x4xf32>
  %s1 = graph.mul %sm, %momentum : tensor<4xf32>, tensor<f32>
  %s2 = graph.add %s1, %gs : tensor<4xf32>, tensor<4xf32>
  graph.assign @small.momentum_buffer, %s2 : tensor<4xf32>
  %s3 = graph.mul %s2, %rate : tensor<4xf32>, tensor<f32>
  %s4 = graph.sub %small, %s3 : tensor<4xf32>, tensor<4xf32>
  graph.assign @small, %s4 : tensor<4xf32>
  %next = graph.add %step, %one : tensor<f32>, tensor<f32>
  graph.assign @step, %next : tensor<f32>
  return %next : tensor<f32>
}

// -----

// Adam's bias correction reads the step count and serves both updates:
// every rank computes it; each update after it is its owner's alone.
// A state weight another entry point reads (@a.exp_avg, read by @peek)
// stays on every rank, and so do the ops that compute its new value; the
// update of @a that reads it is still its owner's. The loss's all-reduce
// runs on every rank.
// CHECK: graph.weight @a.exp_avg {frozen, writable, zeros}
// CHECK: graph.weight @b.exp_avg {frozen, shard = 1 : i64, writable, zeros}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: weights = 1 : i64
// CHECK: %[[BIAS:.*]] = graph.sub %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: %[[AM:.*]] = graph.add %{{.*}}, %arg0 : tensor<8xf32>
// CHECK: graph.assign @a.exp_avg, %[[AM]] :
// CHECK: %[[AD:.*]] = graph.div %[[AM]], %[[BIAS]] {graph.shard = 0 : i64}
// CHECK: %[[BM:.*]] = graph.add %{{.*}}, %arg1 {graph.shard = 1 : i64}
// CHECK: graph.assign @b.exp_avg, %[[BM]] {graph.shard = 1 : i64}
// CHECK: graph.div %[[BM]], %[[BIAS]] {graph.shard = 1 : i64}
// CHECK: graph.all_reduce %{{.*}} :
// CHECK: graph.owner_broadcast %{{.*}} {shard = 0 : i64}
// CHECK: graph.owner_broadcast %{{.*}} {shard = 1 : i64}
graph.weight @a {writable} : tensor<8xf32>
graph.weight @b {writable} : tensor<4xf32>
graph.weight @step {frozen, writable, zeros} : tensor<f32>
graph.weight @a.exp_avg {frozen, writable, zeros} : tensor<8xf32>
graph.weight @b.exp_avg {frozen, writable, zeros} : tensor<4xf32>
func.func @gradients(%ga: tensor<8xf32>, %gb: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) attributes {graph.parameters = [@a, @b]} {
  return %ga, %gb : tensor<8xf32>, tensor<4xf32>
}
func.func @peek() -> tensor<8xf32> {
  %m = graph.weight_ref @a.exp_avg : tensor<8xf32>
  return %m : tensor<8xf32>
}
func.func @train_step(%ga: tensor<8xf32>, %gb: tensor<4xf32>, %l: tensor<f32>) -> tensor<f32> {
  %beta = graph.constant dense<0.9> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %a = graph.weight_ref @a : tensor<8xf32>
  %b = graph.weight_ref @b : tensor<4xf32>
  %am0 = graph.weight_ref @a.exp_avg : tensor<8xf32>
  %bm0 = graph.weight_ref @b.exp_avg : tensor<4xf32>
  %step = graph.weight_ref @step : tensor<f32>
  %t = graph.add %step, %one : tensor<f32>, tensor<f32>
  %power = graph.pow %beta, %t : tensor<f32>, tensor<f32>
  %bias = graph.sub %one, %power : tensor<f32>, tensor<f32>
  %am1 = graph.mul %am0, %beta : tensor<8xf32>, tensor<f32>
  %am = graph.add %am1, %ga : tensor<8xf32>, tensor<8xf32>
  graph.assign @a.exp_avg, %am : tensor<8xf32>
  %ad = graph.div %am, %bias : tensor<8xf32>, tensor<f32>
  %an = graph.sub %a, %ad : tensor<8xf32>, tensor<8xf32>
  graph.assign @a, %an : tensor<8xf32>
  %bm1 = graph.mul %bm0, %beta : tensor<4xf32>, tensor<f32>
  %bm = graph.add %bm1, %gb : tensor<4xf32>, tensor<4xf32>
  graph.assign @b.exp_avg, %bm : tensor<4xf32>
  %bd = graph.div %bm, %bias : tensor<4xf32>, tensor<f32>
  %bn = graph.sub %b, %bd : tensor<4xf32>, tensor<4xf32>
  graph.assign @b, %bn : tensor<4xf32>
  graph.assign @step, %t : tensor<f32>
  %sum = graph.all_reduce %l : tensor<f32>
  return %sum : tensor<f32>
}

// -----

// A parameter's new value that something else reads too (here the
// returned value) is every rank's work: no broadcast, no guard.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: state_shards
// CHECK-NOT: graph.shard
// CHECK-NOT: graph.owner_broadcast
// CHECK: graph.assign @w, %{{.*}} :
graph.weight @w {writable} : tensor<4xf32>
func.func @gradients(%g: tensor<4xf32>) -> tensor<4xf32> attributes {graph.parameters = [@w]} {
  return %g : tensor<4xf32>
}
func.func @train_step(%g: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight_ref @w : tensor<4xf32>
  %n = graph.sub %w, %g : tensor<4xf32>, tensor<4xf32>
  graph.assign @w, %n : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// --accumulate: the gradient sum @w.grad and the momentum @w.momentum
// are @w's alone; the momentum keeps its old value on the calls that do
// not apply (a select that reads it and feeds only its own write). The
// call counter's test serves both parameters' updates: every rank.
// CHECK: graph.weight @micro_step {frozen, writable, zeros}
// CHECK: graph.weight @w.grad {frozen, shard = 0 : i64, writable, zeros}
// CHECK: graph.weight @w.momentum {frozen, shard = 0 : i64, writable, zeros}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[NOW:.*]] = graph.compare eq, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// CHECK: %[[SUM:.*]] = graph.add %{{.*}}, %arg0 {graph.shard = 0 : i64}
// CHECK: graph.select %[[NOW]], %{{.*}}, %[[SUM]] {graph.shard = 0 : i64}
// CHECK: graph.assign @w.grad, %{{.*}} {graph.shard = 0 : i64}
// CHECK: %[[KEPT:.*]] = graph.select %[[NOW]], %{{.*}}, %{{.*}} {graph.shard = 0 : i64}
// CHECK: graph.assign @w.momentum, %[[KEPT]] {graph.shard = 0 : i64}
// CHECK: graph.owner_broadcast %{{.*}} {shard = 0 : i64}
// CHECK: graph.owner_broadcast %{{.*}} {shard = 1 : i64}
graph.weight @w {writable} : tensor<4xf32>
graph.weight @v {writable} : tensor<2xf32>
graph.weight @micro_step {frozen, writable, zeros} : tensor<f32>
graph.weight @w.grad {frozen, writable, zeros} : tensor<4xf32>
graph.weight @w.momentum {frozen, writable, zeros} : tensor<4xf32>
func.func @gradients(%g: tensor<4xf32>, %h: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {graph.parameters = [@w, @v]} {
  return %g, %h : tensor<4xf32>, tensor<2xf32>
}
func.func @train_step(%g: tensor<4xf32>, %h: tensor<2xf32>) -> tensor<f32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %zero = graph.constant dense<0.0> : tensor<4xf32>
  %w = graph.weight_ref @w : tensor<4xf32>
  %v = graph.weight_ref @v : tensor<2xf32>
  %micro = graph.weight_ref @micro_step : tensor<f32>
  %old = graph.weight_ref @w.grad : tensor<4xf32>
  %buf = graph.weight_ref @w.momentum : tensor<4xf32>
  %calls = graph.add %micro, %one : tensor<f32>, tensor<f32>
  %now = graph.compare eq, %calls, %two : tensor<f32>, tensor<f32>
  %sum = graph.add %old, %g : tensor<4xf32>, tensor<4xf32>
  %cleared = graph.select %now, %zero, %sum : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  graph.assign @w.grad, %cleared : tensor<4xf32>
  %decayed = graph.mul %buf, %two : tensor<4xf32>, tensor<f32>
  %newbuf = graph.add %decayed, %sum : tensor<4xf32>, tensor<4xf32>
  %kept = graph.select %now, %newbuf, %buf : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  graph.assign @w.momentum, %kept : tensor<4xf32>
  %new = graph.sub %w, %newbuf : tensor<4xf32>, tensor<4xf32>
  %applied = graph.select %now, %new, %w : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  graph.assign @w, %applied : tensor<4xf32>
  %vn = graph.sub %v, %h : tensor<2xf32>, tensor<2xf32>
  %va = graph.select %now, %vn, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  graph.assign @v, %va : tensor<2xf32>
  graph.assign @micro_step, %calls : tensor<f32>
  return %calls : tensor<f32>
}

// -----

// An op after the assign reads the parameter (the new value): that
// broadcast and assign stay where they are; the other goes to the end.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[VB:.*]] = graph.owner_broadcast %{{.*}} {shard = 1 : i64}
// CHECK: graph.assign @v, %[[VB]] :
// CHECK: graph.relu %{{.*}} : tensor<2xf32>
// CHECK: %[[WB:.*]] = graph.owner_broadcast %{{.*}} {shard = 0 : i64}
// CHECK: graph.assign @w, %[[WB]] :
// CHECK: return
graph.weight @w {writable} : tensor<4xf32>
graph.weight @v {writable} : tensor<2xf32>
graph.weight @w.m {frozen, writable, zeros} : tensor<4xf32>
graph.weight @v.m {frozen, writable, zeros} : tensor<2xf32>
func.func @gradients(%g: tensor<4xf32>, %h: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {graph.parameters = [@w, @v]} {
  return %g, %h : tensor<4xf32>, tensor<2xf32>
}
func.func @train_step(%g: tensor<4xf32>, %h: tensor<2xf32>) -> tensor<2xf32> {
  %w = graph.weight_ref @w : tensor<4xf32>
  %v = graph.weight_ref @v : tensor<2xf32>
  %wm = graph.weight_ref @w.m : tensor<4xf32>
  %vm = graph.weight_ref @v.m : tensor<2xf32>
  %wm2 = graph.add %wm, %g : tensor<4xf32>, tensor<4xf32>
  graph.assign @w.m, %wm2 : tensor<4xf32>
  %wn = graph.sub %w, %wm2 : tensor<4xf32>, tensor<4xf32>
  graph.assign @w, %wn : tensor<4xf32>
  %vm2 = graph.add %vm, %h : tensor<2xf32>, tensor<2xf32>
  graph.assign @v.m, %vm2 : tensor<2xf32>
  %vn = graph.sub %v, %vm2 : tensor<2xf32>, tensor<2xf32>
  graph.assign @v, %vn : tensor<2xf32>
  %r = graph.relu %v : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Plain SGD (no optimizer state): sharding would only add broadcasts, so
// every rank computes every update, as without the pass.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: graph.shard
// CHECK-NOT: graph.owner_broadcast
// CHECK: return
graph.weight @w {writable} : tensor<4xf32>
graph.weight @v {writable} : tensor<2xf32>
func.func @gradients(%g: tensor<4xf32>, %h: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {graph.parameters = [@w, @v]} {
  return %g, %h : tensor<4xf32>, tensor<2xf32>
}
func.func @train_step(%g: tensor<4xf32>, %h: tensor<2xf32>) -> tensor<f32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %w = graph.weight_ref @w : tensor<4xf32>
  %v = graph.weight_ref @v : tensor<2xf32>
  %wn = graph.sub %w, %g : tensor<4xf32>, tensor<4xf32>
  graph.assign @w, %wn : tensor<4xf32>
  %vn = graph.sub %v, %h : tensor<2xf32>, tensor<2xf32>
  graph.assign @v, %vn : tensor<2xf32>
  return %one : tensor<f32>
}

// -----

// A state read through a view by an op whose value only orders a write
// (an `after` operand), the view also read by the update: the op runs on
// every rank, so the state stays on every rank; the other parameter's
// state goes to its owner.
// CHECK: graph.weight @w.m {frozen, writable, zeros}
// CHECK: graph.weight @v.m {frozen, shard = 1 : i64, writable, zeros}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.*]] = graph.reshape %{{.*}} to [2, 2] : tensor<4xf32>
// CHECK: %[[E:.*]] = graph.exp %[[R]] : tensor<2x2xf32>
graph.weight @w {writable} : tensor<4xf32>
graph.weight @v {writable} : tensor<2xf32>
graph.weight @w.m {frozen, writable, zeros} : tensor<4xf32>
graph.weight @v.m {frozen, writable, zeros} : tensor<2xf32>
func.func @gradients(%g: tensor<4xf32>, %h: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {graph.parameters = [@w, @v]} {
  return %g, %h : tensor<4xf32>, tensor<2xf32>
}
func.func @train_step(%g: tensor<4xf32>, %h: tensor<2xf32>) -> tensor<f32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %w = graph.weight_ref @w : tensor<4xf32>
  %v = graph.weight_ref @v : tensor<2xf32>
  %wm = graph.weight_ref @w.m : tensor<4xf32>
  %vm = graph.weight_ref @v.m : tensor<2xf32>
  %r = graph.reshape %wm to [2, 2] : tensor<4xf32>
  %e = graph.exp %r : tensor<2x2xf32>
  %rf = graph.reshape %r to [4] : tensor<2x2xf32>
  %wm2 = graph.add %rf, %g : tensor<4xf32>, tensor<4xf32>
  graph.assign @w.m, %wm2 after(%e) : tensor<4xf32>, tensor<2x2xf32>
  %wn = graph.sub %w, %wm2 : tensor<4xf32>, tensor<4xf32>
  graph.assign @w, %wn : tensor<4xf32>
  %vm2 = graph.add %vm, %h : tensor<2xf32>, tensor<2xf32>
  graph.assign @v.m, %vm2 : tensor<2xf32>
  %vn = graph.sub %v, %vm2 : tensor<2xf32>, tensor<2xf32>
  graph.assign @v, %vn : tensor<2xf32>
  return %one : tensor<f32>
}

// -----

// expected-error @below {{modelc-shard-optimizer-state: no entry points 'gradients' (with graph.parameters) and 'train_step' (run modelc-differentiate and modelc-build-optimizer first)}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
