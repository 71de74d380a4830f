// device_name.cpp - reading the device names of plans: the one place in the
// runtime that tests device-kind strings.
#include "device_name.hpp"

namespace modelc::detail {

namespace {

struct KindPrefix {
  const char *prefix; // "cpu" is a whole name; the others take an ordinal
  DeviceKind kind;
  bool ordinal;
};
constexpr KindPrefix kKinds[] = {
    {"cpu", DeviceKind::Cpu, false},
    {"sim:", DeviceKind::Sim, true},
    {"cuda:", DeviceKind::Cuda, true},
};

} // namespace

std::optional<DeviceKind> deviceKindOf(const std::string &text) {
  for (const KindPrefix &k : kKinds)
    if (k.ordinal ? text.rfind(k.prefix, 0) == 0 : text == k.prefix)
      return k.kind;
  return std::nullopt;
}

std::optional<DeviceName> parseDeviceName(const std::string &name) {
  for (const KindPrefix &k : kKinds) {
    if (!k.ordinal) {
      if (name == k.prefix)
        return DeviceName{k.kind, 0};
      continue;
    }
    std::string prefix = k.prefix;
    if (name.rfind(prefix, 0) != 0)
      continue;
    if (name.size() == prefix.size())
      return std::nullopt;
    int n = 0;
    for (std::size_t i = prefix.size(); i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9' || n > 100000)
        return std::nullopt;
      n = n * 10 + (name[i] - '0');
    }
    return DeviceName{k.kind, n};
  }
  return std::nullopt;
}

} // namespace modelc::detail
