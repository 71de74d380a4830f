// parallel.cpp - the runtime's parallel loops, on OpenMP.
#include "parallel.hpp"

#include <algorithm>

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

} // namespace modelc
