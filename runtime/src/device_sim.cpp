// device_sim.cpp - the "sim:N" device: a simulated GPU with memory of its
// own in the host's address space and host workers as its streams.
#include "device_sim.hpp"

namespace modelc::detail {

std::unique_ptr<DeviceRun> SimDevice::allocate(uint64_t bytes,
                                               const std::string &) {
  struct SimRun : DeviceRun {
    HostArena memory;
    explicit SimRun(uint64_t bytes) : memory(bytes) {}
  };
  auto run = std::make_unique<SimRun>(bytes);
  run->arena = run->memory.memory;
  run->arenaBytes = bytes;
  return run;
}

const void *SimDevice::upload(const void *host,
                              const modelc_weight_desc &desc) {
  // The device holds its own copy, made once at load.
  ownedWeights_.push_back(Tensor::copy_of(
      host, std::vector<int64_t>(desc.shape, desc.shape + desc.rank),
      *dtypeFromCode(desc.dtype)));
  return ownedWeights_.back().data();
}

} // namespace modelc::detail
