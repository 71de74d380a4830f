#include "plan_choice.hpp"

#include "modelc/runtime.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace modelc::detail {

std::vector<PlanDevices> planDevicesOf(const modelc_model_desc &desc) {
  std::vector<PlanDevices> plans;
  for (uint32_t i = 0; i < desc.num_plans; ++i) {
    const modelc_plan_desc &p = desc.plans[i];
    PlanDevices pd{p.name, {}};
    for (uint32_t d = 0; d < p.num_devices; ++d)
      pd.devices.push_back(p.devices[d] ? p.devices[d] : "");
    plans.push_back(std::move(pd));
  }
  return plans;
}

namespace {

/// The name modelc gives the plan of the host alone (--target=cpu).
constexpr const char *kCpuPlanName = "cpu";

/// N for "cuda:N", -1 otherwise.
int cudaOrdinal(const std::string &device) {
  std::optional<DeviceName> name = parseDeviceName(device);
  return name && name->kind == DeviceKind::Cuda ? name->ordinal : -1;
}

/// Whether the device runs in host memory ("cpu", "sim:N").
bool inHostMemory(const DeviceName &name) {
  return name.kind == DeviceKind::Cpu || name.kind == DeviceKind::Sim;
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + 1;
  }
}

/// The plan's "cuda:N" devices, in ascending N.
std::vector<int> planGpus(const PlanDevices &plan) {
  std::vector<int> gpus;
  for (const std::string &d : plan.devices)
    if (int n = cudaOrdinal(d); n >= 0)
      gpus.push_back(n);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  return gpus;
}

bool hostOnly(const PlanDevices &plan) {
  for (const std::string &d : plan.devices) {
    std::optional<DeviceName> name = parseDeviceName(d);
    if (!name || !inHostMemory(*name))
      return false;
  }
  return true;
}

std::string planList(const std::vector<PlanDevices> &plans) {
  std::string known;
  for (size_t i = 0; i < plans.size(); ++i)
    if (i == 0 || plans[i].name != plans[i - 1].name) // a target's regimes
      known += (i ? ", '" : "'") + plans[i].name + "'";
  return known;
}

std::string gpuWord(size_t n) {
  return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
}

/// Maps the plan's cuda devices through `map` (plan ordinal -> physical)
/// and checks that this machine has them and can drive them.
PlanChoice finish(const std::vector<PlanDevices> &plans, size_t index,
                  const std::map<int, int> &map, const MachineGpus &gpus,
                  const std::string &where) {
  const PlanDevices &plan = plans[index];
  PlanChoice choice;
  choice.plan = index;
  for (const std::string &d : plan.devices) {
    std::optional<DeviceName> name = parseDeviceName(d);
    if (!name)
      throw Error(where + ": plan '" + plan.name +
                  "' names an unknown device '" + d + "'");
    choice.names.push_back(*name);
    if (inHostMemory(*name)) {
      choice.physical.push_back(-1);
      continue;
    }
    int n = name->ordinal;
    int physical = map.count(n) ? map.at(n) : n;
    if (physical >= gpus.count)
      throw Error(where + ": plan '" + plan.name +
                  "' needs GPU cuda:" + std::to_string(physical) +
                  (physical != n ? " (for its " + d + ")" : std::string()) +
                  ", but this machine has " + std::to_string(gpus.count) +
                  " visible (" + gpus.status + ")");
    choice.physical.push_back(physical);
  }
  if (!hostOnly(plan) && !gpus.drivable)
    throw Error(where + ": plan '" + plan.name +
                "' needs CUDA devices, which the runtime cannot drive on this "
                "machine (" +
                gpus.status + ")");
  return choice;
}

} // namespace

PlanChoice choosePlan(const std::vector<PlanDevices> &plans,
                      const std::string &request, const MachineGpus &gpus,
                      const std::string &where) {
  const std::map<int, int> identity;
  if (request.empty()) {
    // The plan with the most GPUs that this machine has and can drive.
    std::optional<size_t> best;
    size_t bestGpus = 0;
    if (gpus.drivable)
      for (size_t i = 0; i < plans.size(); ++i) {
        std::vector<int> used = planGpus(plans[i]);
        if (used.empty() || used.back() >= gpus.count)
          continue;
        if (!best || used.size() > bestGpus) {
          best = i;
          bestGpus = used.size();
        }
      }
    // A plan named "cpu" (a plan name, not a device) first.
    for (size_t i = 0; i < plans.size() && !best; ++i)
      if (plans[i].name == kCpuPlanName)
        best = i;
    for (size_t i = 0; i < plans.size() && !best; ++i)
      if (hostOnly(plans[i]))
        best = i;
    if (!best)
      throw Error(where + " has no plan this machine can run: it has " +
                  planList(plans) + ", all on GPUs, and this machine has " +
                  gpuWord(gpus.count) + " (" + gpus.status + ")");
    return finish(plans, *best, identity, gpus, where);
  }

  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].name == request)
      return finish(plans, i, identity, gpus, where);

  // A list of GPUs, or a mapping of plan devices onto GPUs.
  if (deviceKindOf(request) == DeviceKind::Cuda) {
    std::vector<std::pair<int, int>> pairs; // plan ordinal (-1: any) -> GPU
    std::set<int> sources, targets;
    bool mapping = request.find('=') != std::string::npos;
    for (const std::string &item : split(request, ',')) {
      std::vector<std::string> sides = split(item, '=');
      int from = mapping && sides.size() == 2 ? cudaOrdinal(sides[0]) : -1;
      int to = cudaOrdinal(sides.back());
      if (to < 0 || sides.size() > 2 ||
          (mapping && (sides.size() != 2 || from < 0)))
        throw Error(where + ": cannot read the device request '" + request +
                    "' at '" + item +
                    "'; expected a plan name, 'cuda:N', 'cuda:A,cuda:B' or "
                    "'cuda:0=cuda:A,cuda:1=cuda:B'");
      if (mapping && !sources.insert(from).second)
        throw Error(where + ": the device request '" + request +
                    "' maps cuda:" + std::to_string(from) + " twice");
      if (!targets.insert(to).second)
        throw Error(where + ": the device request '" + request +
                    "' names cuda:" + std::to_string(to) + " twice");
      pairs.emplace_back(from, to);
    }
    for (size_t i = 0; i < plans.size(); ++i) {
      std::vector<int> used = planGpus(plans[i]);
      std::map<int, int> map;
      if (mapping) {
        std::vector<int> keys;
        for (auto [from, to] : pairs) {
          keys.push_back(from);
          map[from] = to;
        }
        std::sort(keys.begin(), keys.end());
        if (keys != used)
          continue;
      } else {
        if (used.size() != pairs.size())
          continue;
        for (size_t k = 0; k < used.size(); ++k)
          map[used[k]] = pairs[k].second;
      }
      return finish(plans, i, map, gpus, where);
    }
    throw Error(where + " has no plan '" + request + "' (" +
                (mapping ? std::string("a plan on exactly those devices")
                         : "a plan on " + gpuWord(pairs.size())) +
                "); it has " + planList(plans));
  }
  throw Error(where + " has no plan '" + request + "'; it has " +
              planList(plans));
}

} // namespace modelc::detail
