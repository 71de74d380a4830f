// host_memory_test.cpp - the runtime's large host buffers
// (runtime/src/host_memory.hpp): arenas of 2 MiB or more and the packed
// weights' pool in huge-page mappings where huge pages are wanted, every
// block 64-byte aligned, apart from every other and writable.
#include "device.hpp"
#include "host_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

using namespace modelc::detail;

namespace {

std::uintptr_t address(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

TEST(HostMemory, LargeArenasStartOnAHugePage) {
  for (uint64_t bytes : {uint64_t(64), uint64_t(1) << 20, uint64_t(2) << 20,
                         (uint64_t(5) << 20) + 7}) {
    HostArena arena(bytes);
    ASSERT_NE(arena.memory, nullptr);
    EXPECT_EQ(address(arena.memory) % 64, 0u) << bytes;
    if (hugePagesWanted() && bytes >= kHugePage)
      EXPECT_EQ(address(arena.memory) % kHugePage, 0u) << bytes;
    // Every byte is the arena's: the first and the last written and read.
    arena.memory[0] = 1;
    arena.memory[bytes - 1] = 2;
    EXPECT_EQ(arena.memory[0] + arena.memory[bytes - 1], 3);
  }
}

TEST(HostMemory, PoolBlocksAreAlignedApartAndWritable) {
  HostPool pool;
  // Small and large blocks, one larger than a mapping's 8 MiB.
  std::vector<std::size_t> sizes = {
      432, 1, 64, 1u << 20, 5u << 20, 100, 9u << 20, 4096, (3u << 20) + 5};
  std::vector<std::pair<unsigned char *, std::size_t>> blocks;
  for (std::size_t bytes : sizes) {
    auto *block = static_cast<unsigned char *>(pool.allocate(bytes));
    ASSERT_NE(block, nullptr) << bytes;
    EXPECT_EQ(address(block) % 64, 0u) << bytes;
    std::memset(block, static_cast<int>(blocks.size() + 1), bytes);
    blocks.push_back({block, bytes});
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    // Each keeps what was written into it: no block overlaps another.
    const auto &[block, bytes] = blocks[i];
    EXPECT_EQ(block[0], static_cast<unsigned char>(i + 1));
    EXPECT_EQ(block[bytes - 1], static_cast<unsigned char>(i + 1));
    for (std::size_t j = 0; j < i; ++j) {
      std::uintptr_t a = address(block), b = address(blocks[j].first);
      EXPECT_TRUE(a + bytes <= b || b + blocks[j].second <= a) << i << " " << j;
    }
  }
}

} // namespace
