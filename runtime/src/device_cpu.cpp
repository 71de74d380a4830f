// device_cpu.cpp - the "cpu" device: the host itself.
#include "device_cpu.hpp"

namespace modelc::detail {

void CpuDevice::connect(const std::vector<Device *> &devices) {
  // Page-locked memory of any GPU of the plan (it is portable): the GPUs
  // copy to and from it directly.
  for (const Device *d : devices)
    if (!hostMemoryFrom_ && d->providesHostMemory())
      hostMemoryFrom_ = d;
}

std::unique_ptr<DeviceRun> CpuDevice::allocate(uint64_t bytes,
                                               const std::string &entry) {
  struct HostRun : DeviceRun {
    std::unique_ptr<HostMemory> memory;
  };
  auto run = std::make_unique<HostRun>();
  if (hostMemoryFrom_)
    run->memory = hostMemoryFrom_->allocateHost(
        bytes, "the host arena of entry '" + entry + "'");
  else
    run->memory = std::make_unique<HostArena>(bytes);
  run->arena = run->memory->memory;
  run->arenaBytes = bytes;
  return run;
}

const void *CpuDevice::upload(const void *host, const modelc_weight_desc &) {
  return host;
}

} // namespace modelc::detail
