// abi_callbacks.cpp - the function table generated code calls
// (modelc_runtime_api). The scheduling callbacks find the Device of the
// plan that they name and let it do the work; the host's compute helpers
// (sgemm, product, parallel_for) run on the runtime's threads.
#include "abi_callbacks.hpp"

#include "comm.hpp"
#include "host_gemm.hpp"
#include "model_impl.hpp"
#include "parallel.hpp"
#include "trace.hpp"

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>

namespace modelc::detail {

namespace {

RunState &runOf(modelc_run_ctx *ctx) {
  return *static_cast<RunState *>(ctx->runtime);
}

/// The plan's device `index`, or null after reporting that `callback`
/// names none.
Device *deviceOf(RunState &run, uint32_t index, const char *callback) {
  const auto &devices = run.impl->devices;
  if (index < devices.size())
    return devices[index].get();
  run.reportError(std::string(callback) + " on device #" +
                  std::to_string(index) + ": the plan has " +
                  std::to_string(devices.size()) + " devices");
  return nullptr;
}

void reportError(modelc_run_ctx *ctx, const char *message) {
  runOf(ctx).reportError(message ? message : "unknown error");
}

void sgemm(modelc_run_ctx *ctx, int transA, int transB, int64_t m, int64_t n,
           int64_t k, float alpha, const float *a, int64_t lda, const float *b,
           int64_t ldb, float beta, float *c, int64_t ldc) {
  RunState &run = runOf(ctx);
  if (int status = hostSgemm(run.impl->numThreads, transA, transB, m, n, k,
                             alpha, a, lda, b, ldb, beta, c, ldc))
    run.reportError("sgemm (" + std::to_string(m) + "x" + std::to_string(n) +
                    "x" + std::to_string(k) + "): oneDNN's dnnl_sgemm failed " +
                    "(status " + std::to_string(status) + ")");
}

void parallelForCallback(modelc_run_ctx *ctx, int64_t n, int64_t grain,
                         void (*fn)(void *, int64_t, int64_t), void *arg) {
  parallelFor(runOf(ctx).impl->numThreads, n, grain, fn, arg);
}

void product(modelc_run_ctx *ctx, const modelc_product *p, const void *x,
             const void *w, const void *bias, void *y,
             const void *const *operands) {
  RunState &run = runOf(ctx);
  std::string error;
  // oneDNN parallelises with OpenMP: as many threads as the pool.
  omp_set_num_threads(run.impl->numThreads);
  PackedProductSite *site =
      run.impl->packedProducts.site(*p, w, bias != nullptr, error);
  if (!site || !run.resources->packedProducts.execute(run.impl->packedProducts,
                                                      *p, *site, w, x, bias, y,
                                                      operands, error))
    run.reportError(std::string(p->what ? p->what : "product") + ": " + error);
}

void keptPool(modelc_run_ctx *ctx, const modelc_kept_pool *p, const void *x,
              void *y) {
  RunState &run = runOf(ctx);
  std::string error;
  omp_set_num_threads(run.impl->numThreads);
  if (!run.resources->packedProducts.pool(run.impl->packedProducts, *p, x, y,
                                          error))
    run.reportError(std::string(p->what ? p->what : "global_avg_pool") + ": " +
                    error);
}

void conv(modelc_run_ctx *ctx, const modelc_conv *c, const float *a,
          const float *b, const float *bias, float *out) {
  RunState &run = runOf(ctx);
  std::string error;
  if (!run.impl->convs.run(*c, a, b, bias, out, run.impl->numThreads, error))
    run.reportError(error);
}

void launch(modelc_run_ctx *ctx, uint32_t device, modelc_task_fn task) {
  RunState &run = runOf(ctx);
  if (Device *d = deviceOf(run, device, "launch"))
    d->launch(run, task);
}

void launchKernel(modelc_run_ctx *ctx, uint32_t device, uint32_t kernel,
                  const uint32_t grid[3], const uint32_t block[3],
                  uint32_t sharedBytes, void **args) {
  RunState &run = runOf(ctx);
  if (device >= run.impl->devices.size()) {
    run.reportError("launch_kernel on device #" + std::to_string(device) +
                    ", which is not a GPU");
    return;
  }
  run.impl->devices[device]->launchKernel(run, kernel, grid, block, sharedBytes,
                                          args);
}

void gemm(modelc_run_ctx *ctx, uint32_t device, const modelc_gemm *g) {
  RunState &run = runOf(ctx);
  if (device >= run.impl->devices.size()) {
    run.reportError("gemm on device #" + std::to_string(device) +
                    ", which is not a GPU");
    return;
  }
  run.impl->devices[device]->gemm(run, *g);
}

/// Enqueues `issue`'s work on `d`'s copy stream, between the slice a traced
/// run records for it (`what`, `bytes`).
template <typename Issue>
void onCopyStream(RunState &run, Device &d, uint32_t device, const char *what,
                  uint64_t bytes, Issue issue) {
  RunTrace *trace = run.trace;
  if (trace)
    d.stamp(run, MODELC_STREAM_COPY,
            [=] { trace->copy(device, what, bytes, false); });
  issue();
  if (trace)
    d.stamp(run, MODELC_STREAM_COPY,
            [=] { trace->copy(device, what, bytes, true); });
}

void copy(modelc_run_ctx *ctx, uint32_t dstDevice, void *dst,
          uint32_t srcDevice, const void *src, uint64_t bytes,
          const char *what) {
  RunState &run = runOf(ctx);
  Device *to = deviceOf(run, dstDevice, "copy");
  Device *from = deviceOf(run, srcDevice, "copy");
  if (!to || !from)
    return;
  onCopyStream(run, *to, dstDevice, what, bytes, [&] {
    copyEngine(*to, *from).copy(run, *to, dst, *from, src, bytes, what);
  });
}

void record(modelc_run_ctx *ctx, uint32_t device, int stream, uint32_t event) {
  RunState &run = runOf(ctx);
  Device *d = deviceOf(run, device, "record");
  if (!d)
    return;
  // Stamped just before the record: a wait passes after it.
  if (RunTrace *trace = run.trace)
    d->stamp(run, stream,
             [=] { trace->event(device, stream, event, /*wait=*/false); });
  d->record(run, stream, event);
}

void wait(modelc_run_ctx *ctx, uint32_t device, int stream, uint32_t event) {
  RunState &run = runOf(ctx);
  Device *d = deviceOf(run, device, "wait");
  if (!d)
    return;
  d->wait(run, stream, event);
  if (RunTrace *trace = run.trace)
    d->stamp(run, stream,
             [=] { trace->event(device, stream, event, /*wait=*/true); });
}

/// Whether [ptr, ptr + bytes) is an input or output of the run.
bool isEntryTensor(const RunState &run, const void *ptr, uint64_t bytes) {
  auto within = [&](const void *base, uint64_t size) {
    auto p = reinterpret_cast<uintptr_t>(ptr);
    auto b = reinterpret_cast<uintptr_t>(base);
    return base && p >= b && p + bytes <= b + size;
  };
  // The tensor's shape in this run: a dynamic dimension at its run size
  // (the caller's buffer is no longer).
  auto shapeOf = [&](const TensorInfo &t) {
    std::vector<int64_t> shape = t.shape;
    const std::vector<DimInfo> &dims = run.impl->dims;
    for (std::size_t a = 0; a < t.dims.size(); ++a)
      for (std::size_t d = 0; d < dims.size(); ++d)
        if (!t.dims[a].empty() && t.dims[a] == dims[d].name && run.ctx->dims)
          shape[a] = run.ctx->dims[d];
    return shape;
  };
  const EntryInfo &entry = *run.entryInfo;
  for (std::size_t i = 0; i < entry.inputs.size(); ++i) {
    const TensorInfo &t = entry.inputs[i];
    Tensor view = Tensor::from_host(run.ctx->inputs[i], shapeOf(t), t.dtype);
    if (within(run.ctx->inputs[i], view.nbytes()))
      return true;
  }
  for (std::size_t i = 0; i < entry.outputs.size(); ++i) {
    const TensorInfo &t = entry.outputs[i];
    Tensor view = Tensor::from_host(run.ctx->outputs[i], shapeOf(t), t.dtype);
    if (within(run.ctx->outputs[i], view.nbytes()))
      return true;
  }
  return false;
}

/// The device of the plan that owns [ptr, ptr + bytes) during the run, or
/// null.
const Device *ownerOf(RunState &run, const void *ptr, uint64_t bytes) {
  for (const std::unique_ptr<Device> &d : run.impl->devices) {
    if (d->holds(run.on(*d), ptr, bytes))
      return d.get();
    if (d->isHost() && isEntryTensor(run, ptr, bytes))
      return d.get();
  }
  return nullptr;
}

void check(modelc_run_ctx *ctx, uint32_t device, const void *ptr,
           uint64_t bytes, const char *what) {
  RunState &run = runOf(ctx);
  Device *d = deviceOf(run, device, "check");
  if (!d)
    return;
  const Device *owner = ownerOf(run, ptr, bytes);
  if (owner == d)
    return;
  run.reportError(std::string("checked run: ") + what + " on " + d->name() +
                  " touches " + std::to_string(bytes) + " bytes of " +
                  (owner ? "the memory of " + owner->name()
                         : std::string("memory of no device")) +
                  ": a transfer is missing");
}

} // namespace

void traceCallback(modelc_run_ctx *ctx, uint32_t point, uint32_t phase) {
  RunState &run = runOf(ctx);
  const modelc_plan_desc &plan = *run.plan;
  if (point >= plan.num_trace_points || phase > MODELC_TRACE_END) {
    run.reportError("trace point #" + std::to_string(point) + " (phase " +
                    std::to_string(phase) + "): the plan has " +
                    std::to_string(plan.num_trace_points));
    return;
  }
  uint32_t device = plan.trace_points[point].device;
  RunTrace *trace = run.trace;
  if (Device *d = deviceOf(run, device, "trace"))
    d->stampInTask(run, [=] { trace->point(point, phase); });
}

/// The run's communicator when it sums over more than one rank; else null,
/// after copying src to dst (the sum over one rank).
Communicator *ranksToSum(RunState &run, const float *src, float *dst,
                         int64_t count) {
  Communicator *comm = run.impl->comm.get();
  if (comm && comm->size() > 1)
    return comm;
  if (src != dst)
    std::memmove(dst, src, static_cast<std::size_t>(count) * sizeof(float));
  return nullptr;
}

int allReduce(modelc_run_ctx *ctx, const float *src, float *dst, int64_t count,
              const char *what) {
  RunState &run = runOf(ctx);
  Communicator *comm = ranksToSum(run, src, dst, count);
  if (!comm)
    return 0;
  std::string error;
  if (comm->allReduce(src, dst, count, run.impl->collectiveTimeout, error))
    return 0;
  run.reportError(std::string(what ? what : "graph.all_reduce") + ": " + error);
  return 1;
}

int allReduceStart(modelc_run_ctx *ctx, const float *src, float *dst,
                   int64_t count, uint32_t slot, uint32_t point,
                   const char *what) {
  RunState &run = runOf(ctx);
  std::string name = what ? what : "sched.all_reduce_start";
  // Slots are numbered from 0 in the entry point's order: a bound keeps a
  // bad one from growing the table without end.
  if (count < 0 || slot >= (1u << 20)) {
    run.reportError(name + ": malformed start (slot " + std::to_string(slot) +
                    ", " + std::to_string(count) + " elements)");
    return 1;
  }
  try {
    if (slot >= run.startedSums.size())
      run.startedSums.resize(slot + 1);
  } catch (const std::exception &e) {
    run.reportError(name + ": " + e.what());
    return 1;
  }
  RunState::StartedSum &sum = run.startedSums[slot];
  if (sum.ticket) {
    run.reportError(name + ": slot " + std::to_string(slot) +
                    " started again before its wait");
    return 1;
  }
  Communicator *comm = ranksToSum(run, src, dst, count);
  if (!comm)
    return 0;
  // Nothing may throw through the generated code: an error here leaves
  // the sums started before it to the run's final wait.
  try {
    std::function<void(bool)> around;
    const modelc_plan_desc &plan = *run.plan;
    if (RunTrace *trace = run.trace; trace && point < plan.num_trace_points)
      around = [trace, point, bytes = static_cast<uint64_t>(count) * 4](
                   bool end) { trace->collective(point, bytes, end); };
    sum.ticket = comm->startAllReduce(
        src, dst, count, run.impl->collectiveTimeout, std::move(around));
  } catch (const std::exception &e) {
    run.reportError(name + ": cannot start the sum: " + e.what());
    return 1;
  }
  sum.what = what;
  return 0;
}

/// Waits for the sum of `slot`; false after reporting its error.
bool waitForSum(RunState &run, uint32_t slot) {
  RunState::StartedSum &sum = run.startedSums[slot];
  uint64_t ticket = std::exchange(sum.ticket, 0);
  if (!ticket)
    return true;
  std::string error;
  if (run.impl->comm->wait(ticket, error))
    return true;
  run.reportError(std::string(sum.what ? sum.what : "graph.all_reduce") + ": " +
                  error);
  return false;
}

int allReduceWait(modelc_run_ctx *ctx, uint32_t slot) {
  RunState &run = runOf(ctx);
  if (slot >= run.startedSums.size())
    return 0; // summed at its start (one rank)
  return waitForSum(run, slot) ? 0 : 1;
}

int ownerBroadcast(modelc_run_ctx *ctx, const void *src, void *dst,
                   uint64_t bytes, uint32_t shard, const char *what) {
  RunState &run = runOf(ctx);
  Communicator *comm = run.impl->comm.get();
  int size = comm ? comm->size() : 1;
  int root = static_cast<int>(modelc_shard_owner(shard, size));
  int rank = comm ? comm->rank() : 0;
  // The owner's value goes out from dst (src may be its own buffer).
  if (rank == root && src != dst)
    std::memmove(dst, src, bytes);
  if (size == 1)
    return 0;
  std::string error;
  if (bytes <= static_cast<uint64_t>(INT64_MAX) &&
      comm->broadcast(dst, static_cast<int64_t>(bytes), root,
                      run.impl->collectiveTimeout, error))
    return 0;
  run.reportError(std::string(what ? what : "graph.owner_broadcast") +
                  " (from rank " + std::to_string(root) +
                  "): " + (error.empty() ? "too many bytes" : error));
  return 1;
}

void replicaAllReduce(modelc_run_ctx *ctx, uint32_t group, uint32_t member,
                      uint32_t members, const uint32_t *memberDevices,
                      const float *src, float *dst, int64_t count,
                      const char *what) {
  RunState &run = runOf(ctx);
  if (member >= members || !memberDevices || count < 0) {
    run.reportError(std::string(what ? what : "replica_all_reduce") +
                    ": member " + std::to_string(member) + " of " +
                    std::to_string(members) + " (" + std::to_string(count) +
                    " elements) is not a member");
    return;
  }
  uint32_t device = memberDevices[member];
  Device *d = deviceOf(run, device, "replica_all_reduce");
  if (!d)
    return;
  ReplicaMember m{group, member, members, memberDevices, src, dst, count, what};
  onCopyStream(run, *d, device, what, static_cast<uint64_t>(count) * 4,
               [&] { d->replicaSum(run, m); });
}

void rankAllReduce(modelc_run_ctx *ctx, uint32_t device, const float *src,
                   float *dst, int64_t count, const char *what) {
  RunState &run = runOf(ctx);
  const modelc_plan_desc &plan = *run.plan;
  if (count < 0 || !(plan.plan_flags & MODELC_PLAN_RANK_SUMS) ||
      device != plan.rank_sums_device) {
    run.reportError(std::string(what ? what : "graph.all_reduce") +
                    ": a sum over the ranks on device #" +
                    std::to_string(device) + " (" + std::to_string(count) +
                    " elements), which is not the plan's device for them");
    return;
  }
  Device *d = deviceOf(run, device, "rank_all_reduce");
  if (!d)
    return;
  onCopyStream(run, *d, device, what, static_cast<uint64_t>(count) * 4,
               [&] { d->rankSum(run, src, dst, count, what); });
}

void waitForStartedSums(RunState &run) {
  for (uint32_t slot = 0; slot < run.startedSums.size(); ++slot)
    waitForSum(run, slot);
}

modelc_runtime_api runtimeApi() {
  modelc_runtime_api api{};
  api.struct_size = sizeof(modelc_runtime_api);
  api.sgemm = sgemm;
  api.parallel_for = parallelForCallback;
  api.product = product;
  api.report_error = reportError;
  api.launch = launch;
  api.copy = copy;
  api.record = record;
  api.wait = wait;
  api.check = check;
  api.launch_kernel = launchKernel;
  api.gemm = gemm;
  api.all_reduce = allReduce;
  api.replica_all_reduce = replicaAllReduce;
  api.conv = conv;
  api.all_reduce_start = allReduceStart;
  api.all_reduce_wait = allReduceWait;
  api.owner_broadcast = ownerBroadcast;
  api.rank_all_reduce = rankAllReduce;
  api.kept_pool = keptPool;
  return api;
}

} // namespace modelc::detail
