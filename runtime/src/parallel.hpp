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

} // namespace modelc

#endif // MODELC_RUNTIME_PARALLEL_HPP
