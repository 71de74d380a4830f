//===- Target.cpp - the machine a plan runs on ----------------------------===//

#include "compiler/Target/Target.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace modelc;
using modelc::device::DeviceKind;

std::string DeviceDesc::name() const {
  if (kind == DeviceKind::cpu)
    return "cpu";
  return (device::stringifyDeviceKind(kind) + ":" + llvm::Twine(index)).str();
}

double DeviceDesc::peakFor(Type elementType) const {
  std::string key;
  llvm::raw_string_ostream(key) << elementType;
  auto it = peakFlops.find(key);
  if (it != peakFlops.end())
    return it->second;
  it = peakFlops.find("f32");
  if (it != peakFlops.end())
    return it->second;
  return peakFlops.empty() ? 1e9 : peakFlops.begin()->second;
}

std::string TargetDescription::deviceNames() const {
  std::string names;
  for (const DeviceDesc &d : devices)
    names += (names.empty() ? "" : ", ") + d.name();
  return names;
}

std::optional<unsigned> TargetDescription::find(StringRef deviceName) const {
  for (auto [i, d] : llvm::enumerate(devices))
    if (d.name() == deviceName)
      return static_cast<unsigned>(i);
  return std::nullopt;
}

std::optional<unsigned> TargetDescription::find(device::DeviceAttr attr) const {
  return find(attr.str());
}

device::DeviceAttr TargetDescription::deviceAttr(MLIRContext *context,
                                                 unsigned index) const {
  return device::DeviceAttr::get(context, devices[index].kind,
                                 devices[index].index);
}

double TargetDescription::transferTime(unsigned from, unsigned to,
                                       uint64_t bytes) const {
  if (from == to)
    return 0.0;
  auto direct = [&](unsigned a, unsigned b) -> const LinkDesc * {
    for (const LinkDesc &l : links)
      if (l.from == a && l.to == b)
        return &l;
    return nullptr;
  };
  auto hop = [&](const LinkDesc &l) {
    return l.latency + static_cast<double>(bytes) / l.bandwidth;
  };
  if (const LinkDesc *l = direct(from, to))
    return hop(*l);
  // Staged through the host.
  const LinkDesc *a = direct(from, 0), *b = direct(0, to);
  if (a && b)
    return hop(*a) + hop(*b);
  // No path described: assume the slowest link the target has, twice.
  double slowest = 1e9, latency = 1e-5;
  for (const LinkDesc &l : links) {
    slowest = std::min(slowest, l.bandwidth);
    latency = std::max(latency, l.latency);
  }
  return 2 * (latency + static_cast<double>(bytes) / slowest);
}

device::TargetAttr TargetDescription::toAttr(MLIRContext *context) const {
  Builder b(context);
  SmallVector<Attribute> deviceAttrs, linkAttrs;
  for (auto [i, d] : llvm::enumerate(devices)) {
    SmallVector<NamedAttribute> flops;
    for (const auto &entry : d.peakFlops)
      flops.push_back(
          b.getNamedAttr(entry.getKey(), b.getF64FloatAttr(entry.getValue())));
    deviceAttrs.push_back(device::DeviceSpecAttr::get(
        context, deviceAttr(context, i), d.memory,
        b.getF64FloatAttr(d.bandwidth), b.getF64FloatAttr(d.launchOverhead),
        b.getDictionaryAttr(flops)));
  }
  for (const LinkDesc &l : links)
    linkAttrs.push_back(device::LinkSpecAttr::get(
        context, deviceAttr(context, l.from), deviceAttr(context, l.to),
        b.getF64FloatAttr(l.bandwidth), b.getF64FloatAttr(l.latency)));
  return device::TargetAttr::get(context, name, b.getArrayAttr(deviceAttrs),
                                 b.getArrayAttr(linkAttrs));
}

TargetDescription TargetDescription::fromAttr(device::TargetAttr attr) {
  TargetDescription t;
  t.name = attr.getName().str();
  for (Attribute a : attr.getDevices()) {
    auto spec = cast<device::DeviceSpecAttr>(a);
    DeviceDesc d;
    d.kind = spec.getDevice().getKind();
    d.index = spec.getDevice().getIndex();
    d.memory = spec.getMemory();
    d.bandwidth = spec.getBandwidth().getValueAsDouble();
    d.launchOverhead = spec.getLaunchOverhead().getValueAsDouble();
    for (NamedAttribute f : spec.getPeakFlops())
      d.peakFlops[f.getName()] =
          cast<FloatAttr>(f.getValue()).getValueAsDouble();
    t.devices.push_back(std::move(d));
  }
  // The CPU first, as everywhere else.
  std::stable_partition(t.devices.begin(), t.devices.end(),
                        [](const DeviceDesc &d) { return d.isHost(); });
  for (Attribute a : attr.getLinks()) {
    auto link = cast<device::LinkSpecAttr>(a);
    t.links.push_back({*t.find(link.getFrom()), *t.find(link.getTo()),
                       link.getBandwidth().getValueAsDouble(),
                       link.getLatency().getValueAsDouble()});
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

namespace {

DeviceDesc hostCpu() {
  // A 2-core AVX-512 server slice: ~300 GFLOP/s f32 GEMM, ~20 GB/s.
  DeviceDesc d;
  d.kind = DeviceKind::cpu;
  d.memory = 256ull << 30;
  d.bandwidth = 2.0e10;
  d.launchOverhead = 2.0e-6;
  d.peakFlops["f32"] = 3.0e11;
  d.peakFlops["f16"] = 1.5e11;
  d.peakFlops["bf16"] = 1.5e11;
  d.peakFlops["i32"] = 1.5e11;
  d.peakFlops["i64"] = 7.5e10;
  return d;
}

DeviceDesc h200Gpu(unsigned index) {
  // H200 datasheet: 141 GB HBM3e at 4.8 TB/s, ~990 TFLOP/s dense bf16/f16,
  // ~67 TFLOP/s f32 (FP32 non-tensor), a few microseconds per launch.
  DeviceDesc d;
  d.kind = DeviceKind::cuda;
  d.index = index;
  d.memory = 141000000000ull;
  d.bandwidth = 4.8e12;
  d.launchOverhead = 4.0e-6;
  d.peakFlops["f32"] = 6.7e13;
  d.peakFlops["f16"] = 9.9e14;
  d.peakFlops["bf16"] = 9.9e14;
  d.peakFlops["i32"] = 3.3e13;
  d.peakFlops["i64"] = 1.0e13;
  return d;
}

DeviceDesc simGpu(unsigned index) {
  // GPU-like figures scaled down so that runs on the simulated devices of a
  // small machine are plausible: 8 GB, 1 TB/s, 20 TFLOP/s f32.
  DeviceDesc d;
  d.kind = DeviceKind::sim;
  d.index = index;
  d.memory = 8ull << 30;
  d.bandwidth = 1.0e12;
  d.launchOverhead = 5.0e-6;
  d.peakFlops["f32"] = 2.0e13;
  d.peakFlops["f16"] = 1.6e14;
  d.peakFlops["bf16"] = 1.6e14;
  d.peakFlops["i32"] = 1.0e13;
  d.peakFlops["i64"] = 5.0e12;
  return d;
}

/// Host <-> each accelerator, and accelerator <-> accelerator.
TargetDescription withLinks(std::string name, std::vector<DeviceDesc> devices,
                            double hostBandwidth, double hostLatency,
                            double peerBandwidth, double peerLatency) {
  TargetDescription t;
  t.name = std::move(name);
  t.devices = std::move(devices);
  unsigned n = t.devices.size();
  for (unsigned i = 1; i < n; ++i) {
    t.links.push_back({0, i, hostBandwidth, hostLatency});
    t.links.push_back({i, 0, hostBandwidth, hostLatency});
  }
  for (unsigned i = 1; i < n; ++i)
    for (unsigned j = 1; j < n; ++j)
      if (i != j)
        t.links.push_back({i, j, peerBandwidth, peerLatency});
  return t;
}

std::optional<TargetDescription> preset(StringRef name) {
  if (name == "cpu")
    return withLinks("cpu", {hostCpu()}, 0, 0, 0, 0);
  if (name == "h200" || name == "h200x2" || name == "h200x4" ||
      name == "h200x8") {
    unsigned gpus = name == "h200" ? 1 : name.back() - '0';
    std::vector<DeviceDesc> devices = {hostCpu()};
    for (unsigned i = 0; i < gpus; ++i)
      devices.push_back(h200Gpu(i));
    // PCIe 5 x16 to the host (~64 GB/s), NVLink between GPUs (~900 GB/s).
    return withLinks(name.str(), std::move(devices), 6.4e10, 1.0e-5, 9.0e11,
                     2.0e-6);
  }
  if (name == "cpu+sim2" || name == "cpu+sim4") {
    unsigned sims = name.back() - '0';
    std::vector<DeviceDesc> devices = {hostCpu()};
    for (unsigned i = 0; i < sims; ++i)
      devices.push_back(simGpu(i));
    return withLinks(name.str(), std::move(devices), 3.2e10, 1.0e-5, 3.0e11,
                     3.0e-6);
  }
  return std::nullopt;
}

} // namespace

std::vector<std::string> modelc::targetPresetNames() {
  return {"cpu", "h200", "h200x2", "h200x4", "h200x8", "cpu+sim2", "cpu+sim4"};
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

std::optional<TargetDescription>
modelc::parseTargetJson(StringRef text, StringRef source, std::string &error) {
  auto fail =
      [&](const llvm::Twine &message) -> std::optional<TargetDescription> {
    error = ("target '" + source + "': " + message).str();
    return std::nullopt;
  };
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return fail("invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("expected a JSON object with \"devices\" and \"links\"");
  TargetDescription t;
  t.name = root->getString("name").value_or(source).str();
  const llvm::json::Array *devices = root->getArray("devices");
  if (!devices || devices->empty())
    return fail("\"devices\" must be a non-empty array");
  for (auto [i, value] : llvm::enumerate(*devices)) {
    const llvm::json::Object *d = value.getAsObject();
    std::string where = "device #" + std::to_string(i);
    if (!d)
      return fail(where + " must be an object");
    std::optional<StringRef> name = d->getString("device");
    if (!name)
      return fail(where +
                  " lacks \"device\" (\"cpu\", \"cuda:N\" or \"sim:N\")");
    DeviceDesc desc;
    if (*name == "cpu") {
      desc.kind = DeviceKind::cpu;
    } else {
      auto [kindName, indexText] = name->split(':');
      std::optional<DeviceKind> kind = device::symbolizeDeviceKind(kindName);
      if (!kind || *kind == DeviceKind::cpu ||
          indexText.getAsInteger(10, desc.index))
        return fail(where + " has device \"" + *name +
                    "\"; expected \"cpu\", \"cuda:N\" or \"sim:N\"");
      desc.kind = *kind;
    }
    where = "device '" + desc.name() + "'";
    std::optional<double> memory = d->getNumber("memory");
    std::optional<double> bandwidth = d->getNumber("bandwidth");
    std::optional<double> overhead = d->getNumber("launch_overhead");
    if (!memory || !(*memory > 0))
      return fail(where + ": \"memory\" must be a positive number of bytes");
    if (!bandwidth || !(*bandwidth > 0))
      return fail(where +
                  ": \"bandwidth\" must be a positive number of bytes/s");
    if (!overhead || !(*overhead >= 0))
      return fail(where + ": \"launch_overhead\" must be >= 0 seconds");
    desc.memory = static_cast<uint64_t>(*memory);
    desc.bandwidth = *bandwidth;
    desc.launchOverhead = *overhead;
    const llvm::json::Object *flops = d->getObject("peak_flops");
    if (!flops || flops->empty())
      return fail(where + ": \"peak_flops\" must map element types to op/s");
    for (const auto &entry : *flops) {
      StringRef key = entry.first;
      std::optional<double> v = entry.second.getAsNumber();
      if (!llvm::is_contained({"f32", "f16", "bf16", "i32", "i64"}, key))
        return fail(where + ": peak_flops key '" + key +
                    "' is not an element type (f32, f16, bf16, i32, i64)");
      if (!v || !(*v > 0))
        return fail(where + ": peak_flops." + key + " must be positive");
      desc.peakFlops[key] = *v;
    }
    if (t.find(desc.name()))
      return fail(where + " is listed twice");
    t.devices.push_back(std::move(desc));
  }
  if (!t.find("cpu"))
    return fail("it has no \"cpu\" device; every target has one");
  std::stable_partition(t.devices.begin(), t.devices.end(),
                        [](const DeviceDesc &d) { return d.isHost(); });
  if (const llvm::json::Array *links = root->getArray("links")) {
    for (auto [i, value] : llvm::enumerate(*links)) {
      const llvm::json::Object *l = value.getAsObject();
      std::string where = "link #" + std::to_string(i);
      if (!l)
        return fail(where + " must be an object");
      std::optional<StringRef> from = l->getString("from"),
                               to = l->getString("to");
      if (!from || !to)
        return fail(where + " needs \"from\" and \"to\"");
      std::optional<unsigned> a = t.find(*from), b = t.find(*to);
      if (!a || !b)
        return fail(where + " joins '" + *from + "' and '" + *to +
                    "', but the target lacks '" + (a ? *to : *from) + "'");
      if (*a == *b)
        return fail(where + " joins '" + *from + "' to itself");
      std::optional<double> bandwidth = l->getNumber("bandwidth");
      std::optional<double> latency = l->getNumber("latency");
      if (!bandwidth || !(*bandwidth > 0) || !latency || !(*latency >= 0))
        return fail(where + " needs a positive \"bandwidth\" (bytes/s) and a "
                            "\"latency\" >= 0 (seconds)");
      t.links.push_back({*a, *b, *bandwidth, *latency});
      if (l->getBoolean("both").value_or(false))
        t.links.push_back({*b, *a, *bandwidth, *latency});
    }
  }
  for (unsigned i = 0; i < t.links.size(); ++i)
    for (unsigned j = 0; j < i; ++j)
      if (t.links[i].from == t.links[j].from && t.links[i].to == t.links[j].to)
        return fail("link " + t.devices[t.links[i].from].name() + " -> " +
                    t.devices[t.links[i].to].name() + " is listed twice");
  return t;
}

std::optional<TargetDescription> modelc::loadTarget(StringRef nameOrPath,
                                                    mlir::Operation *where) {
  std::string error;
  std::optional<TargetDescription> t = loadTarget(nameOrPath, error);
  if (!t)
    where->emitError(error);
  return t;
}

std::optional<TargetDescription> modelc::loadTarget(StringRef nameOrPath,
                                                    std::string &error) {
  if (std::optional<TargetDescription> t = preset(nameOrPath))
    return t;
  if (!nameOrPath.ends_with(".json")) {
    std::string names;
    for (const std::string &n : targetPresetNames())
      names += (names.empty() ? "" : ", ") + n;
    error = ("unknown target '" + nameOrPath + "'; expected a preset (" +
             names + ") or a .json file")
                .str();
    return std::nullopt;
  }
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer) {
    error = ("cannot read target '" + nameOrPath +
             "': " + buffer.getError().message())
                .str();
    return std::nullopt;
  }
  return parseTargetJson((*buffer)->getBuffer(), nameOrPath, error);
}
