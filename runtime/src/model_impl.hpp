// model_impl.hpp - a loaded model: its library and descriptor, the chosen
// plan with its devices, its weights, and the pool of run resources.
#ifndef MODELC_RUNTIME_MODEL_IMPL_HPP
#define MODELC_RUNTIME_MODEL_IMPL_HPP

#include "comm.hpp"
#include "device.hpp"
#include "dnnl_conv.hpp"
#include "loader.hpp"
#include "modelc/abi.h"
#include "modelc/runtime.hpp"
#include "nccl.hpp"
#include "packed_product.hpp"
#include "run_queue.hpp"
#include "run_state.hpp"
#include "weights.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace modelc {

struct Model::Impl {
  std::string path;
  std::shared_ptr<detail::Library> library;
  const modelc_model_desc *desc = nullptr;
  /// The seal of the model file (checked at load; see integrity.hpp).
  modelc_file_seal seal{};
  const modelc_plan_desc *plan = nullptr;
  /// Size regimes (docs/dynamic.md): the plans of the chosen plan's name,
  /// each for a range of one dynamic dimension, in order (`plan` is the
  /// first); empty when one plan runs every size. They share the devices;
  /// a device holds the weights any of them keeps there, and a run's
  /// arenas are the largest any of them plans.
  std::vector<const modelc_plan_desc *> regimes;
  /// The chosen target's plans: its regimes, or the one plan.
  struct Plans {
    const modelc_plan_desc *const *first, *const *last;
    const modelc_plan_desc *const *begin() const { return first; }
    const modelc_plan_desc *const *end() const { return last; }
  };
  Plans targetPlans() const {
    return regimes.empty()
               ? Plans{&plan, &plan + 1}
               : Plans{regimes.data(), regimes.data() + regimes.size()};
  }
  /// Bytes of `entry`'s arena on `device`: the most any regime plans.
  uint64_t arenaBytes(std::size_t entry, uint32_t device) const;
  /// The plan that runs sizes `sizes` of the dynamic dimensions.
  const modelc_plan_desc *planFor(const std::vector<int64_t> &sizes) const {
    for (const modelc_plan_desc *r : regimes)
      if (sizes[r->regime_dim] <= r->regime_max)
        return r;
    return plan;
  }
  std::string planName, compilerVersion, compilerFlags;
  // Why the default choice fell back from a GPU plan, or empty.
  std::string planNote;
  std::vector<EntryInfo> entries;
  std::vector<DimInfo> dims;
  detail::HostWeights weights;
  int numThreads = 1;
  PackedProductCache packedProducts;
  detail::DnnlConvs convs;
  modelc_runtime_api api{};

  // Per entry point: run resources not in use by a run.
  std::vector<std::vector<std::unique_ptr<detail::RunResources>>> freeResources;
  std::mutex resourceMutex;
  // save_weights and load_weights, one at a time.
  mutable std::mutex weightMutex;

  // The plan's devices, in its order; per device the weights resident
  // there. A plan of more than the host alone runs on streams.
  std::vector<std::unique_ptr<detail::Device>> devices;
  std::vector<const void *const *> deviceWeightTables;
  bool multiDevice = false;
  // A device whose page-locked host memory the inputs are staged in (a GPU
  // of the plan), or null.
  const detail::Device *stagingDevice = nullptr;
  // LoadOptions::cuda_graphs: the device where a run's capture starts.
  detail::Device *captureOrigin = nullptr;
  // LoadOptions::trace, or null.
  std::shared_ptr<Trace> trace;

  // LoadOptions::distributed: this process's place in the run (null: a
  // run of one), and how long a collective waits for the other ranks.
  std::shared_ptr<detail::Communicator> comm;
  double collectiveTimeout = 300.0;

  // A plan that sums over replicas on their devices
  // (MODELC_PLAN_REPLICA_SUMS): the NCCL communicators of the plan's GPUs
  // (null: none, or NCCL not loaded), and what sums them (Model::
  // replica_sums).
  std::unique_ptr<detail::NcclClique> nccl;
  std::string replicaSums;

  // A plan that sums over the ranks on a GPU (MODELC_PLAN_RANK_SUMS) in a
  // distributed run: NCCL's communicator across the ranks for that GPU
  // (null: the host and the backend sum), and what sums (Model::
  // rank_sums).
  std::unique_ptr<detail::NcclClique> rankNccl;
  std::string rankSums;

  // Model::run_async's thread, started by its first call.
  std::unique_ptr<detail::RunQueue> asyncRuns;
  std::mutex asyncMutex;

  ~Impl() {
    // Runs started by run_async finish first (they use everything below).
    asyncRuns.reset();
    // Runs' resources first, then the weights and the devices.
    freeResources.clear();
    nccl.reset(); // before the GPUs' contexts go
    rankNccl.reset();
    devices.clear();
    comm.reset(); // last: leaving the run ends MPI in this process
  }

  /// The index of entry point `name`; an Error naming the available ones
  /// otherwise.
  std::size_t entryIndex(const std::string &name) const;
  /// Run resources of `entry`, from the pool or new.
  std::unique_ptr<detail::RunResources> acquireResources(std::size_t entry);
  void releaseResources(std::size_t entry,
                        std::unique_ptr<detail::RunResources> resources);
};

} // namespace modelc

#endif // MODELC_RUNTIME_MODEL_IMPL_HPP
