//===- MemoryPlan.h - arena offsets from buffer lifetimes -------*- C++ -*-===//
//
// Places buffers in one arena so that buffers whose lifetimes overlap never
// overlap in memory. Lifetimes are closed intervals of op positions.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_MEMORYPLAN_H
#define MODELC_COMPILER_CODEGEN_MEMORYPLAN_H

#include <cstdint>
#include <vector>

namespace modelc {

struct BufferRequest {
  uint64_t bytes;
  int64_t firstUse; ///< position of the op that writes it
  int64_t lastUse;  ///< position of the last op that reads it
};

struct MemoryPlan {
  std::vector<uint64_t> offsets; ///< one per request, 64-byte aligned
  uint64_t peakBytes = 0;        ///< arena size
};

/// Greedy best-fit by decreasing size: each buffer goes at the lowest
/// aligned offset that does not overlap a placed buffer alive at the same
/// time. Deterministic.
MemoryPlan planMemory(const std::vector<BufferRequest> &requests,
                      uint64_t alignment = 64);

} // namespace modelc

#endif // MODELC_COMPILER_CODEGEN_MEMORYPLAN_H
