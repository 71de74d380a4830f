// nccl.hpp - NCCL, opened lazily with dlopen like the driver
// (cuda_driver.hpp): the sums over the replicas of data-parallel training
// on the GPUs of one process (graph.replica_all_reduce), and over the ranks
// of a distributed run on a GPU per rank (graph.all_reduce on a GPU). Only the
// calls the runtime makes are declared, with nccl.h's C signatures and values
// (NCCL 2.x; its C ABI is stable across 2.x). A plan runs without NCCL:
// its replicas are then summed through host memory (replica_sums.hpp).
#ifndef MODELC_RUNTIME_NCCL_HPP
#define MODELC_RUNTIME_NCCL_HPP

#include "cuda_driver.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace modelc::detail {

using ncclResult = int;
using ncclComm = struct ncclCommOpaque *;
/// nccl.h's ncclUniqueId: what ncclGetUniqueId makes on one rank and every
/// rank passes to ncclCommInitRank (by value).
struct NcclUniqueId {
  char internal[128];
};

struct NcclApi {
  ncclResult (*getVersion)(int *version);
  ncclResult (*commInitAll)(ncclComm *comms, int ndev, const int *devlist);
  ncclResult (*getUniqueId)(NcclUniqueId *id);
  ncclResult (*commInitRank)(ncclComm *comm, int nranks, NcclUniqueId id,
                             int rank);
  ncclResult (*commDestroy)(ncclComm comm);
  ncclResult (*commAbort)(ncclComm comm);
  ncclResult (*allReduce)(const void *sendbuff, void *recvbuff, size_t count,
                          int datatype, int op, ncclComm comm, CUstream stream);
  const char *(*getErrorString)(ncclResult result);
  std::string library; // what was loaded
  int version = 0;     // ncclGetVersion: 22703 is 2.27.3
};

/// NCCL, loaded once per process: MODELC_NCCL names the library (a path,
/// or "none": do not use NCCL), else libnccl.so.2. Null when it cannot be
/// loaded, with `why`.
const NcclApi *ncclApi(std::string &why);

/// "ncclInvalidUsage (5)" and NCCL's own words for a result.
std::string ncclErrorText(const NcclApi &nccl, ncclResult result);

/// The communicators of the GPUs of a plan (ncclCommInitAll), made at load
/// for a model whose plans sum over replicas: rank r is the plan's device
/// devices[r]. A group of replicas over exactly these devices, in this
/// order, sums with NCCL; any other through host memory.
class NcclClique {
public:
  /// `physical` are the GPUs' visible ordinals, in member order. Throws
  /// modelc::Error when NCCL fails to make the communicators (the runtime
  /// then sums through host memory).
  NcclClique(const NcclApi &nccl, std::vector<uint32_t> devices,
             const std::vector<int> &physical);
  /// The communicator across the ranks of a distributed run of the GPU
  /// `device` of the plan (ncclCommInitRank: `rank` of `ranks`, every rank
  /// passing rank 0's `id`), made with that GPU's context current on the
  /// calling thread. Member 0 is this rank's. Throws modelc::Error when
  /// NCCL fails to make it.
  NcclClique(const NcclApi &nccl, uint32_t device, const NcclUniqueId &id,
             int rank, int ranks);
  ~NcclClique();
  NcclClique(const NcclClique &) = delete;
  NcclClique &operator=(const NcclClique &) = delete;

  const NcclApi &api() const { return nccl_; }
  const std::vector<uint32_t> &devices() const { return devices_; }
  ncclComm comm(uint32_t member) const { return comms_[member]; }

  /// ncclAllReduce (f32 sum) of `member` on `stream`, unless the clique
  /// was aborted (false: nothing was called). Never at once with abort():
  /// a communicator is not used while, or after, it is aborted.
  bool allReduce(uint32_t member, const void *src, void *dst, size_t count,
                 CUstream stream, ncclResult &rc) const;
  /// After a member's NCCL call failed: ncclCommAbort on every
  /// communicator, which ends the other GPUs' NCCL kernels of that
  /// collective (they would wait for the failed one for ever). Once; the
  /// clique is then never used again (runs that start later sum through
  /// host memory). `why` is kept for aborted(). Waits for calls being
  /// issued (they return at once) for up to 10 s; one blocked past that
  /// (NCCL connecting to the failed GPU) is aborted under it, as NCCL's
  /// own watchdogs do, rather than the process hanging.
  void abort(const std::string &why) const;
  /// Why the clique was aborted; empty while it is usable.
  std::string aborted() const;
  bool usable() const { return !aborted_.load(std::memory_order_acquire); }

private:
  const NcclApi &nccl_;
  std::vector<uint32_t> devices_;
  std::vector<ncclComm> comms_;
  mutable std::mutex abortMutex_;
  mutable std::shared_timed_mutex calls_; // shared: a call; unique: abort
  mutable std::atomic<bool> aborted_{false};
  mutable std::string abortReason_;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_NCCL_HPP
