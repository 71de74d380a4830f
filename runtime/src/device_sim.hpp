// device_sim.hpp - the "sim:N" device: a simulated GPU with memory of its
// own in the host's address space and host workers as its streams.
#ifndef MODELC_RUNTIME_DEVICE_SIM_HPP
#define MODELC_RUNTIME_DEVICE_SIM_HPP

#include "device_host.hpp"

#include "modelc/runtime.hpp"

#include <list>

namespace modelc::detail {

/// A simulated GPU: its own copy of its weights, its own arenas; its tasks
/// run CPU code. Checked builds verify that a task touches only its memory.
class SimDevice : public HostDevice {
public:
  using HostDevice::HostDevice;

  std::unique_ptr<DeviceRun> allocate(uint64_t bytes,
                                      const std::string &entry) override;

protected:
  const void *upload(const void *host, const modelc_weight_desc &desc) override;

private:
  std::list<Tensor> ownedWeights_; // copies resident here, made at load
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DEVICE_SIM_HPP
