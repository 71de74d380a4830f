// host_memory.cpp - host memory in transparent huge pages
// (host_memory.hpp).
#include "host_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace modelc::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

} // namespace

bool hugePagesWanted() {
  static const bool wanted = [] {
    const char *setting = std::getenv("MODELC_HUGE_PAGES");
    return !kSanitized && !(setting && std::strcmp(setting, "0") == 0);
  }();
  return wanted;
}

unsigned char *mapHuge(std::size_t bytes) {
  void *base = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return nullptr;
  auto start = reinterpret_cast<std::uintptr_t>(base);
  std::uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start)
    ::munmap(base, aligned - start);
  std::size_t tail = kHugePage - (aligned - start);
  if (tail)
    ::munmap(reinterpret_cast<void *>(aligned + bytes), tail);
  auto *memory = reinterpret_cast<unsigned char *>(aligned);
  ::madvise(memory, bytes, MADV_HUGEPAGE);
  return memory;
}

void unmapHuge(unsigned char *memory, std::size_t bytes) {
  ::munmap(memory, bytes);
}

HostPool::~HostPool() {
  for (const Mapping &m : mappings_)
    unmapHuge(m.memory, m.bytes);
  for (void *block : heap_)
    std::free(block);
}

void *HostPool::allocate(std::size_t bytes) {
  std::size_t rounded = std::max<std::size_t>((bytes + 63) / 64 * 64, 64);
  if (!hugePagesWanted()) {
    void *block = std::aligned_alloc(64, rounded);
    if (block)
      heap_.push_back(block);
    return block;
  }
  if (mappings_.empty() || used_ + rounded > mappings_.back().bytes) {
    std::size_t size = std::max<std::size_t>(rounded, std::size_t(8) << 20);
    size = (size + kHugePage - 1) / kHugePage * kHugePage;
    unsigned char *memory = mapHuge(size);
    if (!memory)
      return nullptr;
    mappings_.push_back({memory, size});
    used_ = 0;
  }
  void *block = mappings_.back().memory + used_;
  used_ += rounded;
  return block;
}

} // namespace modelc::detail
