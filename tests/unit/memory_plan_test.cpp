// memory_plan_test.cpp - planMemory (compiler/Codegen/MemoryPlan.h): buffers
// alive at the same time never share bytes, offsets are aligned, the arena is
// exactly as large as its highest buffer end, and the plan is deterministic.
#include "compiler/Codegen/MemoryPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using modelc::BufferRequest;
using modelc::MemoryPlan;
using modelc::planMemory;

namespace {

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool livesOverlap(const BufferRequest &a, const BufferRequest &b) {
  return !(a.lastUse < b.firstUse || b.lastUse < a.firstUse);
}

/// Checks every property a plan must have; `what` names the case.
void expectValidPlan(const std::vector<BufferRequest> &requests,
                     const MemoryPlan &plan, uint64_t alignment,
                     const std::string &what) {
  ASSERT_EQ(plan.offsets.size(), requests.size()) << what;
  uint64_t highestEnd = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << what << ": buffer " << i;
    uint64_t end = plan.offsets[i] + requests[i].bytes;
    EXPECT_LE(end, plan.peakBytes) << what << ": buffer " << i;
    highestEnd = std::max(
        highestEnd, plan.offsets[i] + alignUp(requests[i].bytes, alignment));
  }
  EXPECT_EQ(plan.peakBytes, highestEnd) << what;
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!livesOverlap(requests[i], requests[j]) || requests[i].bytes == 0 ||
          requests[j].bytes == 0)
        continue;
      uint64_t iEnd = plan.offsets[i] + requests[i].bytes;
      uint64_t jEnd = plan.offsets[j] + requests[j].bytes;
      EXPECT_TRUE(iEnd <= plan.offsets[j] || jEnd <= plan.offsets[i])
          << what << ": buffers " << i << " [" << plan.offsets[i] << ", "
          << iEnd << ") and " << j << " [" << plan.offsets[j] << ", " << jEnd
          << ") are alive at the same time and overlap";
    }
}

std::vector<BufferRequest> randomRequests(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> count(1, 40), position(0, 30),
      length(0, 8), sizeKind(0, 9);
  std::uniform_int_distribution<uint64_t> small(0, 300), large(1, 1 << 20);
  std::vector<BufferRequest> requests(count(rng));
  for (BufferRequest &r : requests) {
    // Mostly small odd sizes, some large, some empty, and repeated sizes.
    int kind = sizeKind(rng);
    r.bytes = kind == 0   ? 0
              : kind == 1 ? 256
              : kind < 4  ? large(rng)
                          : small(rng);
    r.firstUse = position(rng);
    r.lastUse = r.firstUse + length(rng);
  }
  return requests;
}

} // namespace

TEST(MemoryPlan, EmptyRequestList) {
  MemoryPlan plan = planMemory({});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.peakBytes, 0u);
}

TEST(MemoryPlan, SingleBuffer) {
  MemoryPlan plan = planMemory({{100, 0, 3}});
  ASSERT_EQ(plan.offsets.size(), 1u);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.peakBytes, 128u);
}

TEST(MemoryPlan, ZeroByteBuffers) {
  std::vector<BufferRequest> requests = {{0, 0, 5}, {64, 0, 5}, {0, 2, 2}};
  MemoryPlan plan = planMemory(requests);
  expectValidPlan(requests, plan, 64, "zero-byte buffers");
  EXPECT_EQ(plan.peakBytes, 64u);
  EXPECT_EQ(planMemory({{0, 0, 0}}).peakBytes, 0u);
}

TEST(MemoryPlan, DisjointLifetimesShareMemory) {
  // One after another: every buffer at offset 0.
  std::vector<BufferRequest> requests = {
      {1000, 0, 1}, {500, 2, 3}, {1000, 4, 4}};
  MemoryPlan plan = planMemory(requests);
  expectValidPlan(requests, plan, 64, "a chain");
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(plan.peakBytes, 1024u);
}

TEST(MemoryPlan, LifetimesAreClosedIntervals) {
  // The last use of one and the first use of the other are the same op: that
  // op reads one and writes the other, so they must not share bytes.
  std::vector<BufferRequest> requests = {{64, 0, 2}, {64, 2, 4}};
  MemoryPlan plan = planMemory(requests);
  expectValidPlan(requests, plan, 64, "touching lifetimes");
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.peakBytes, 128u);
}

TEST(MemoryPlan, AllAliveAtOnceStackUp) {
  std::vector<BufferRequest> requests = {{10, 0, 9}, {200, 0, 9}, {64, 0, 9}};
  MemoryPlan plan = planMemory(requests);
  expectValidPlan(requests, plan, 64, "all alive");
  // Sizes rounded up to 64: 64 + 256 + 64.
  EXPECT_EQ(plan.peakBytes, 384u);
  // Largest first, at the bottom.
  EXPECT_EQ(plan.offsets[1], 0u);
}

TEST(MemoryPlan, SmallBufferFillsAGap) {
  // a and c are alive with b; b ends before d starts, so d reuses b's bytes
  // between a and c.
  std::vector<BufferRequest> requests = {
      {256, 0, 10}, {256, 0, 3}, {256, 0, 10}, {128, 5, 10}};
  MemoryPlan plan = planMemory(requests);
  expectValidPlan(requests, plan, 64, "gap");
  EXPECT_EQ(plan.peakBytes, 768u);
  EXPECT_EQ(plan.offsets[3], plan.offsets[1]);
}

TEST(MemoryPlan, OtherAlignments) {
  std::vector<BufferRequest> requests = {
      {3, 0, 2}, {5, 1, 3}, {7, 2, 4}, {1, 0, 4}};
  for (uint64_t alignment : {1u, 4u, 16u, 24u, 256u}) {
    MemoryPlan plan = planMemory(requests, alignment);
    expectValidPlan(requests, plan, alignment,
                    "alignment " + std::to_string(alignment));
  }
  EXPECT_EQ(planMemory(requests, 1).peakBytes, 3u + 5 + 7 + 1);
}

TEST(MemoryPlan, RandomRequestsAreValid) {
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    std::vector<BufferRequest> requests = randomRequests(seed);
    uint64_t alignment = seed % 3 == 0 ? 64 : seed % 3 == 1 ? 16 : 1;
    MemoryPlan plan = planMemory(requests, alignment);
    expectValidPlan(requests, plan, alignment, "seed " + std::to_string(seed));
    if (HasFailure())
      return;
  }
}

TEST(MemoryPlan, PeakIsAtLeastTheLargestLiveSet) {
  // No plan can use less than the bytes alive at the busiest op.
  for (uint32_t seed = 0; seed < 500; ++seed) {
    std::vector<BufferRequest> requests = randomRequests(seed);
    MemoryPlan plan = planMemory(requests);
    uint64_t busiest = 0;
    for (int64_t op = 0; op <= 40; ++op) {
      uint64_t alive = 0;
      for (const BufferRequest &r : requests)
        if (r.firstUse <= op && op <= r.lastUse)
          alive += alignUp(r.bytes, 64);
      busiest = std::max(busiest, alive);
    }
    EXPECT_GE(plan.peakBytes, busiest) << "seed " << seed;
    // Never worse than giving every buffer its own bytes.
    uint64_t total = 0;
    for (const BufferRequest &r : requests)
      total += alignUp(r.bytes, 64);
    EXPECT_LE(plan.peakBytes, total) << "seed " << seed;
  }
}

TEST(MemoryPlan, Deterministic) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::vector<BufferRequest> requests = randomRequests(seed);
    MemoryPlan first = planMemory(requests), second = planMemory(requests);
    EXPECT_EQ(first.offsets, second.offsets) << "seed " << seed;
    EXPECT_EQ(first.peakBytes, second.peakBytes) << "seed " << seed;
  }
  // Equal sizes keep their request order (a stable sort): the first request
  // of a size is placed first, at the lowest offset.
  MemoryPlan plan = planMemory({{64, 0, 1}, {64, 0, 1}, {64, 0, 1}});
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 64, 128}));
}
