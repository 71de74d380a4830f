// parallel.hpp - the runtime's parallel loops
// (modelc_runtime_api::parallel_for).
#ifndef MODELC_RUNTIME_PARALLEL_HPP
#define MODELC_RUNTIME_PARALLEL_HPP

#include <cstdint>

namespace modelc {

/// Calls fn(arg, begin, end) on up to `threads` disjoint chunks covering
/// [0, n), each of at least `grain` iterations, and returns when all are
/// done. Runs on OpenMP: the threads oneDNN (linear layers, convolutions)
/// uses too, so that a single set of threads does all the work and none
/// spins against another. Callers on several threads get a team each.
void parallelFor(int threads, int64_t n, int64_t grain,
                 void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);

/// The CPU pool's threads when the caller names none: the CPUs this
/// process may run on (its affinity mask: taskset, a cpuset), no more than
/// its CPU quota allows (cgroup v2 cpu.max, v1 cpu.cfs_quota_us, rounded
/// up), at least 1. A container given 4 CPUs of a 64-core machine gets 4
/// threads, not 64 threads spinning against its quota. `root` is where
/// cgroup files are read (tests give a directory of their own).
int defaultThreads(const char *root = "/sys/fs/cgroup");
/// The online CPUs capped by the cgroup's quota, whatever the affinity
/// (modelc::machine_cpus).
int machineCpus(const char *root = "/sys/fs/cgroup");

/// The CPU quota in `root` as a number of CPUs rounded up, or 0 for none:
/// cgroup v2's `cpu.max` ("QUOTA PERIOD" or "max PERIOD") at `root` or at
/// the process's own cgroup below it (/proc/self/cgroup's "0::PATH"), else
/// v1's `cpu/cpu.cfs_quota_us` and `cpu/cpu.cfs_period_us`.
int cgroupCpuLimit(const char *root);

} // namespace modelc

#endif // MODELC_RUNTIME_PARALLEL_HPP
