// replica_sums.hpp - graph.replica_all_reduce through host memory: the
// members of a group (one per replica, each on its device's copy stream)
// meet here, the last to arrive adds their parts in member order, and each
// takes the sum back to its device. Used by sim devices, and by GPUs where
// NCCL is absent (nccl.hpp). One per run's resources.
#ifndef MODELC_RUNTIME_REPLICA_SUMS_HPP
#define MODELC_RUNTIME_REPLICA_SUMS_HPP

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace modelc::detail {

/// One member of a group, as generated code enqueued it.
struct ReplicaMember {
  uint32_t group = 0, member = 0, members = 0;
  const uint32_t *devices = nullptr; // per member, its plan device
  const float *src = nullptr;
  float *dst = nullptr;
  int64_t count = 0;
  const char *what = nullptr;
};

class ReplicaSums {
public:
  /// Before a run: no group has met.
  void reset();
  /// Host memory for member `m`'s part when its device's memory is not
  /// the host's (a GPU's part copied out first): `count` floats, kept
  /// across runs.
  float *staging(const ReplicaMember &m);
  /// Member `m` brings `part` (host memory, unchanged until this returns)
  /// and waits for the group's other members; returns the sum, in host
  /// memory valid until the next reset, or null with `error` after waiting
  /// `timeout_s` seconds for them (or when a member gave up before).
  const float *meet(const ReplicaMember &m, const float *part, double timeout_s,
                    std::string &error);

private:
  struct Group {
    std::vector<const float *> parts;
    std::vector<std::vector<float>> staging;
    std::vector<float> sum;
    uint32_t arrived = 0;
    bool done = false, failed = false;
  };
  Group &group(const ReplicaMember &m);

  std::mutex mutex_;
  std::condition_variable met_;
  std::map<uint32_t, Group> groups_;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_REPLICA_SUMS_HPP
