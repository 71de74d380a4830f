// device_host.hpp - what the devices whose memory is host memory (cpu,
// sim) share: their streams are host workers that run the plan's CPU code,
// copy with memcpy and order work with the run's host events.
#ifndef MODELC_RUNTIME_DEVICE_HOST_HPP
#define MODELC_RUNTIME_DEVICE_HOST_HPP

#include "device.hpp"

namespace modelc::detail {

/// A device whose memory the host addresses and whose work the host runs.
class HostDevice : public Device {
public:
  using Device::Device;

  void launch(RunState &run, modelc_task_fn task) override;
  void copy(RunState &run, Device &to, void *dst, Device &from, const void *src,
            uint64_t bytes, const char *what) override;
  void record(RunState &run, int which, uint32_t event) override;
  void wait(RunState &run, int which, uint32_t event) override;
  void stamp(RunState &run, int which, std::function<void()> at) override;

private:
  /// Plans with GPUs: before host work on stream `which`, the host waits
  /// for the GPU events that stream waited on (a wait only notes them: a
  /// copy from the GPU that comes first orders itself after them on the
  /// GPU, and its own synchronisation covers them).
  void syncGpuWaits(RunState &run, int which);
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DEVICE_HOST_HPP
