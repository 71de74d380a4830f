#include "nccl.hpp"
#include "dl_symbol.hpp"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>

namespace modelc::detail {
namespace {

struct Loaded {
  NcclApi api{};
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded result;
  std::string name = "libnccl.so.2";
  if (const char *env = std::getenv("MODELC_NCCL"); env && *env)
    name = env;
  if (name == "none") {
    result.why = "MODELC_NCCL=none";
    return result;
  }
  void *handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    result.why = "cannot load NCCL (" + name +
                 (why ? std::string(": ") + why : std::string()) +
                 "); install libnccl2 or set MODELC_NCCL to its path";
    return result;
  }
  NcclApi &a = result.api;
  a.library = name;
  std::string missing;
  resolveSymbol(handle, "ncclGetVersion", a.getVersion, missing);
  resolveSymbol(handle, "ncclCommInitAll", a.commInitAll, missing);
  resolveSymbol(handle, "ncclGetUniqueId", a.getUniqueId, missing);
  resolveSymbol(handle, "ncclCommInitRank", a.commInitRank, missing);
  resolveSymbol(handle, "ncclCommDestroy", a.commDestroy, missing);
  resolveSymbol(handle, "ncclCommAbort", a.commAbort, missing);
  resolveSymbol(handle, "ncclAllReduce", a.allReduce, missing);
  resolveSymbol(handle, "ncclGetErrorString", a.getErrorString, missing);
  if (!missing.empty()) {
    result.why = name + " is not a usable NCCL: it has no " + missing;
    return result;
  }
  if (a.getVersion(&a.version) != 0 || a.version < 20000) {
    result.why = name + " reports version " + std::to_string(a.version) +
                 "; NCCL 2 is needed";
    return result;
  }
  result.ok = true;
  return result;
}

} // namespace

const NcclApi *ncclApi(std::string &why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

std::string ncclErrorText(const NcclApi &nccl, ncclResult result) {
  static const char *const names[] = {
      "ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
      "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
      "ncclRemoteError",   "ncclInProgress"};
  std::string text = result >= 0 && result < 8 ? names[result] : "ncclResult";
  text += " (" + std::to_string(result) + ")";
  if (const char *words = nccl.getErrorString(result); words && *words)
    text += std::string(": ") + words;
  return text;
}

NcclClique::NcclClique(const NcclApi &nccl, std::vector<uint32_t> devices,
                       const std::vector<int> &physical)
    : nccl_(nccl), devices_(std::move(devices)), comms_(physical.size()) {
  ncclResult rc = nccl_.commInitAll(
      comms_.data(), static_cast<int>(physical.size()), physical.data());
  if (rc != 0) {
    comms_.clear();
    throw Error("ncclCommInitAll over " + std::to_string(physical.size()) +
                " GPUs failed: " + ncclErrorText(nccl_, rc));
  }
}

NcclClique::NcclClique(const NcclApi &nccl, uint32_t device,
                       const NcclUniqueId &id, int rank, int ranks)
    : nccl_(nccl), devices_{device}, comms_(1) {
  ncclResult rc = nccl_.commInitRank(&comms_[0], ranks, id, rank);
  if (rc != 0) {
    comms_.clear();
    throw Error("ncclCommInitRank (rank " + std::to_string(rank) + " of " +
                std::to_string(ranks) +
                ") failed: " + ncclErrorText(nccl_, rc));
  }
}

NcclClique::~NcclClique() {
  // An aborted communicator's resources went with ncclCommAbort.
  if (usable())
    for (ncclComm comm : comms_)
      nccl_.commDestroy(comm);
}

bool NcclClique::allReduce(uint32_t member, const void *src, void *dst,
                           size_t count, CUstream stream,
                           ncclResult &rc) const {
  std::shared_lock<std::shared_timed_mutex> call(calls_);
  if (!usable())
    return false;
  rc = nccl_.allReduce(src, dst, count, 7 /* ncclFloat32 */, 0 /* ncclSum */,
                       comms_[member], stream);
  return true;
}

void NcclClique::abort(const std::string &why) const {
  std::lock_guard<std::mutex> lock(abortMutex_);
  if (!usable())
    return;
  // No call is issued from here on; those being issued finish first.
  aborted_.store(true, std::memory_order_release);
  abortReason_ = why;
  std::unique_lock<std::shared_timed_mutex> calls(calls_, std::defer_lock);
  (void)calls.try_lock_for(std::chrono::seconds(10));
  for (ncclComm comm : comms_)
    nccl_.commAbort(comm);
}

std::string NcclClique::aborted() const {
  std::lock_guard<std::mutex> lock(abortMutex_);
  return abortReason_;
}

} // namespace modelc::detail
