#include "replica_sums.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace modelc::detail {

void ReplicaSums::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[id, g] : groups_) {
    g.arrived = 0;
    g.done = g.failed = false;
  }
}

ReplicaSums::Group &ReplicaSums::group(const ReplicaMember &m) {
  Group &g = groups_[m.group];
  if (g.parts.size() != m.members) {
    g.parts.assign(m.members, nullptr);
    g.staging.resize(m.members);
  }
  return g;
}

float *ReplicaSums::staging(const ReplicaMember &m) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<float> &buffer = group(m).staging[m.member];
  buffer.resize(static_cast<std::size_t>(m.count));
  return buffer.data();
}

const float *ReplicaSums::meet(const ReplicaMember &m, const float *part,
                               double timeout_s, std::string &error) {
  std::unique_lock<std::mutex> lock(mutex_);
  Group &g = group(m);
  auto n = static_cast<std::size_t>(m.count);
  if (g.failed) {
    error = "another member gave up waiting";
    return nullptr;
  }
  g.parts[m.member] = part;
  if (++g.arrived == m.members) {
    // The last to arrive adds the parts in member order: the bits of the
    // host's own sum of the replicas, on every plan.
    g.sum.resize(n);
    if (n)
      std::memcpy(g.sum.data(), g.parts[0], n * sizeof(float));
    for (uint32_t r = 1; r < m.members; ++r) {
      const float *p = g.parts[r];
      for (std::size_t i = 0; i < n; ++i)
        g.sum[i] += p[i];
    }
    g.done = true;
    met_.notify_all();
    return g.sum.data();
  }
  auto limit = std::chrono::duration<double>(timeout_s);
  if (!met_.wait_for(lock, limit, [&] { return g.done || g.failed; })) {
    g.failed = true;
    met_.notify_all();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
    error = "member " + std::to_string(m.member) + " of " +
            std::to_string(m.members) + " waited " + seconds +
            " s for the others (" + std::to_string(g.arrived) + " of " +
            std::to_string(m.members) + " arrived)";
    return nullptr;
  }
  if (g.failed) {
    error = "another member gave up waiting";
    return nullptr;
  }
  return g.sum.data();
}

} // namespace modelc::detail
