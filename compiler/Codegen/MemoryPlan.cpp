//===- MemoryPlan.cpp - arena offsets from buffer lifetimes ---------------===//

#include "compiler/Codegen/MemoryPlan.h"

#include <algorithm>
#include <numeric>

using namespace modelc;

MemoryPlan modelc::planMemory(const std::vector<BufferRequest> &requests,
                              uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });
  auto align = [&](uint64_t v) {
    return (v + alignment - 1) / alignment * alignment;
  };
  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferRequest &r = requests[index];
    // Intervals taken by placed buffers alive at the same time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t other : placed) {
      const BufferRequest &o = requests[other];
      if (o.lastUse < r.firstUse || r.lastUse < o.firstUse)
        continue;
      taken.push_back(
          {plan.offsets[other], plan.offsets[other] + align(o.bytes)});
    }
    std::sort(taken.begin(), taken.end());
    uint64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + align(r.bytes) <= begin)
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[index] = offset;
    plan.peakBytes = std::max(plan.peakBytes, offset + align(r.bytes));
    placed.push_back(index);
  }
  return plan;
}
