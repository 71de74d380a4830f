// run_state.hpp - what one run of an entry point holds: its share of every
// device (arenas, streams), its events, and its error, as the ABI callbacks
// and the devices see them.
#ifndef MODELC_RUNTIME_RUN_STATE_HPP
#define MODELC_RUNTIME_RUN_STATE_HPP

#include "device.hpp"
#include "modelc/runtime.hpp"
#include "packed_product.hpp"
#include "replica_sums.hpp"
#include "trace.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace modelc::detail {

class NcclClique;

/// Scratch of one run: per device of the plan its DeviceRun (arena and,
/// for a multi-device plan, streams), the events, and the staging buffers
/// of the inputs. Pooled per entry point, reused across runs: runs in
/// flight at once never share streams, so they cannot wait on each other.
struct RunResources {
  std::vector<std::unique_ptr<DeviceRun>> devices;
  std::vector<unsigned char *> arenaPointers;
  // A plan with GPUs: the entry's inputs are copied here first, so that
  // the GPUs read them from page-locked memory.
  std::vector<std::unique_ptr<HostMemory>> stagedInputs;
  std::vector<const void *> stagedPointers;
  RunEvents events;
  RunCapture capture;
  PackedProductRun packedProducts;
  /// graph.replica_all_reduce groups summed through host memory.
  ReplicaSums replicaSums;
  /// Traced models (LoadOptions::trace): what this run records.
  std::unique_ptr<RunTrace> trace;
  /// The plan of the last run on these resources (a size regime's): its
  /// device events belong to the devices that plan recorded them on.
  const modelc_plan_desc *lastPlan = nullptr;

  RunResources() = default;
  RunResources(const RunResources &) = delete;
  RunResources &operator=(const RunResources &) = delete;
  ~RunResources() {
    // Nothing is in flight: every run drains its streams before it ends.
    // The graph and the events first, then the devices' queues and arenas.
    capture.graph.reset();
    events.release();
    devices.clear();
  }
};

/// What report_error and the callbacks need during one run.
struct RunState {
  Model::Impl *impl = nullptr;
  /// The plan of the run: the model's, or its size regime's.
  const modelc_plan_desc *plan = nullptr;
  std::size_t entry = 0;
  const EntryInfo *entryInfo = nullptr;
  RunResources *resources = nullptr;
  modelc_run_ctx *ctx = nullptr;
  /// NCCL's communicators for this run's sums over the replicas, or null
  /// (through host memory): chosen once at the start of the run.
  const NcclClique *nccl = nullptr;
  /// The run's trace, or null when the model is not traced.
  RunTrace *trace = nullptr;
  std::mutex mutex; // tasks on several streams may report at once
  std::string error;
  /// ABI 15: per slot of all_reduce_start, the ticket of its sum on the
  /// communication thread until all_reduce_wait (0: none in flight), and
  /// what it is. The run waits for every one left before it ends.
  struct StartedSum {
    uint64_t ticket = 0;
    const char *what = nullptr;
  };
  std::vector<StartedSum> startedSums;

  /// Keeps the first error of the run.
  void reportError(const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex);
    if (error.empty())
      error = message.empty() ? "unknown error" : message;
  }
  /// The run's share of `device`.
  DeviceRun &on(const Device &device) {
    return *resources->devices[device.index()];
  }
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_RUN_STATE_HPP
