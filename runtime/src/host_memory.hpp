// host_memory.hpp - host memory in transparent huge pages, for the
// runtime's large buffers: the CPU arenas (HostArena, device.hpp) and the
// packed weights of oneDNN's products (PackedProductCache).
//
// A run streams through megabytes of activations and weights; with 4 KiB
// pages that is a TLB miss every few kilobytes. Linux's default THP mode
// ("madvise") backs a region with 2 MiB pages only where madvise asks, so
// these buffers are mapped 2 MiB aligned and advised. MODELC_HUGE_PAGES=0,
// and builds with AddressSanitizer (whose checks cover the C heap), take
// the C heap instead.
#ifndef MODELC_RUNTIME_HOST_MEMORY_HPP
#define MODELC_RUNTIME_HOST_MEMORY_HPP

#include <cstddef>
#include <vector>

namespace modelc::detail {

constexpr std::size_t kHugePage = std::size_t(2) << 20;

/// Whether large buffers go to huge pages here (not under ASan, not with
/// MODELC_HUGE_PAGES=0).
bool hugePagesWanted();

/// `bytes` (a multiple of kHugePage) mapped at a kHugePage boundary and
/// advised to take huge pages; null where the mapping fails. The kernel may
/// refuse the advice (THP off): the memory is the same, in small pages.
/// Released with unmapHuge.
unsigned char *mapHuge(std::size_t bytes);
void unmapHuge(unsigned char *memory, std::size_t bytes);

/// 64-byte aligned blocks that live as long as the pool: carved from
/// huge-page mappings of at least 8 MiB where hugePagesWanted(), else one
/// C-heap allocation each. Not thread-safe (its owner locks).
class HostPool {
public:
  HostPool() = default;
  ~HostPool();
  HostPool(const HostPool &) = delete;
  HostPool &operator=(const HostPool &) = delete;
  /// A block of `bytes`; null when out of memory.
  void *allocate(std::size_t bytes);

private:
  struct Mapping {
    unsigned char *memory;
    std::size_t bytes;
  };
  std::vector<Mapping> mappings_;
  std::vector<void *> heap_;
  std::size_t used_ = 0; // of the last mapping
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_HOST_MEMORY_HPP
