// parallel.cpp - the runtime's parallel loops, on OpenMP.
#include "parallel.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sched.h>
#include <string>
#include <thread>
#include <unistd.h>

namespace modelc {

void parallelFor(int threads, int64_t n, int64_t grain,
                 void (*fn)(void *, int64_t, int64_t), void *arg) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(1, grain);
  int64_t chunks =
      std::min<int64_t>((n + grain - 1) / grain, std::max(1, threads));
  if (chunks <= 1) {
    fn(arg, 0, n);
    return;
  }
  int64_t step = (n + chunks - 1) / chunks;
#pragma omp parallel for num_threads(static_cast <int>(chunks))                \
    schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = c * step;
    if (begin < n)
      fn(arg, begin, std::min(n, begin + step));
  }
}

namespace {

/// ceil(quota / period) for a positive quota and period, else 0.
int quotaCpus(double quota, double period) {
  if (!(quota > 0) || !(period > 0))
    return 0;
  return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

/// cgroup v2's limit in `dir`/cpu.max, or 0 (no file, "max", unreadable).
int cpuMax(const std::string &dir) {
  std::ifstream in(dir + "/cpu.max");
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max")
    return 0;
  try {
    return quotaCpus(std::stod(quota), period);
  } catch (...) {
    return 0;
  }
}

} // namespace

int cgroupCpuLimit(const char *root) {
  std::string base = root;
  // v2: the process's own cgroup and every one above it (a limit on a
  // parent holds for its children), up to the root of the mount (a
  // container's cgroup namespace shows its own cgroup there): the
  // smallest.
  std::string path;
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);)
    if (line.rfind("0::", 0) == 0)
      path = line.substr(3);
  int smallest = 0;
  auto take = [&](int limit) {
    if (limit > 0 && (smallest == 0 || limit < smallest))
      smallest = limit;
  };
  while (!path.empty() && path != "/") {
    take(cpuMax(base + path));
    std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos)
      break;
    path.erase(slash);
  }
  take(cpuMax(base));
  if (smallest)
    return smallest;
  // v1.
  std::ifstream quota(base + "/cpu/cpu.cfs_quota_us"),
      period(base + "/cpu/cpu.cfs_period_us");
  double q = 0, p = 0;
  if (quota >> q && period >> p)
    return quotaCpus(q, p);
  return 0;
}

int machineCpus(const char *root) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int cpus = online > 0 ? static_cast<int>(online)
                        : static_cast<int>(std::thread::hardware_concurrency());
  if (int limit = cgroupCpuLimit(root); limit > 0)
    cpus = std::min(cpus, limit);
  return std::max(1, cpus);
}

int defaultThreads(const char *root) {
  int cpus = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    cpus = CPU_COUNT(&set);
  if (cpus <= 0)
    cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (int limit = cgroupCpuLimit(root); limit > 0)
    cpus = std::min(cpus, limit);
  return std::max(1, cpus);
}

int machine_cpus() { return machineCpus(); }

} // namespace modelc
