// Which of a model's plans runs on this machine, and on which GPUs.
#ifndef MODELC_RUNTIME_PLAN_CHOICE_HPP
#define MODELC_RUNTIME_PLAN_CHOICE_HPP

#include "device_name.hpp"
#include "modelc/abi.h"

#include <string>
#include <vector>

namespace modelc::detail {

struct PlanDevices {
  std::string name;
  std::vector<std::string> devices; // "cpu", "sim:N", "cuda:N"
};

struct MachineGpus {
  int count = 0;
  std::string status;    // why there are none, for messages
  bool drivable = false; // the driver has every call the cuda device needs
};

struct PlanChoice {
  size_t plan = 0;
  /// Per device of the plan: its kind and ordinal, as read from its name.
  std::vector<DeviceName> names;
  /// Per device of the plan: the physical (visible) GPU ordinal for a
  /// "cuda:N" device, -1 for the host and simulated devices.
  std::vector<int> physical;
};

/// The devices of every plan of `desc` (checked by checkDescriptor), for
/// plan choice.
std::vector<PlanDevices> planDevicesOf(const modelc_model_desc &desc);

/// Chooses a plan. `request` is empty (the plan with the most GPUs this
/// machine has, else "cpu", else the first plan of host and simulated
/// devices), a plan name, "cpu", a list of GPUs ("cuda:1" or
/// "cuda:0,cuda:2": a plan on that many GPUs, its devices taken in order onto
/// those), or a mapping ("cuda:0=cuda:2,cuda:1=cuda:3": the plan on exactly
/// those devices). `where` prefixes messages. Throws modelc::Error.
PlanChoice choosePlan(const std::vector<PlanDevices> &plans,
                      const std::string &request, const MachineGpus &gpus,
                      const std::string &where);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_PLAN_CHOICE_HPP
