// device_cpu.hpp - the "cpu" device: the host itself.
#ifndef MODELC_RUNTIME_DEVICE_CPU_HPP
#define MODELC_RUNTIME_DEVICE_CPU_HPP

#include "device_host.hpp"

namespace modelc::detail {

/// The host: weights are used where they were loaded, and its arenas are
/// host memory (page-locked when the plan has a GPU to copy to and from).
class CpuDevice : public HostDevice {
public:
  using HostDevice::HostDevice;

  bool isHost() const override { return true; }
  void connect(const std::vector<Device *> &devices) override;
  std::unique_ptr<DeviceRun> allocate(uint64_t bytes,
                                      const std::string &entry) override;

protected:
  const void *upload(const void *host, const modelc_weight_desc &desc) override;

private:
  const Device *hostMemoryFrom_ = nullptr; // a GPU of the plan, or null
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DEVICE_CPU_HPP
