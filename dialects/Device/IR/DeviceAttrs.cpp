//===- DeviceAttrs.cpp - device, target and link attributes -----*- C++ -*-===//

#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Device/IR/DeviceDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace modelc::device;

#include "dialects/Device/IR/DeviceEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Device/IR/DeviceAttrs.cpp.inc"

void DeviceDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Device/IR/DeviceAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DeviceAttr
//===----------------------------------------------------------------------===//

LogicalResult DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 DeviceKind kind, unsigned index) {
  if (kind == DeviceKind::cpu && index != 0)
    return emitError() << "the CPU device has no index; expected 'cpu', got "
                          "'cpu:"
                       << index << "'";
  return success();
}

Attribute DeviceAttr::parse(AsmParser &parser, Type) {
  // <cpu> | <cuda:N> | <sim:N>
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<DeviceKind> kind = symbolizeDeviceKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown device kind '" << kindName
                          << "'; expected 'cpu', 'cuda' or 'sim'";
    return {};
  }
  // The index is required for GPUs; "cpu:N" parses so that the verifier can
  // say what is wrong with it.
  unsigned index = 0;
  bool hasIndex = *kind == DeviceKind::cpu
                      ? succeeded(parser.parseOptionalColon())
                      : succeeded(parser.parseColon());
  if (*kind != DeviceKind::cpu && !hasIndex)
    return {};
  if (hasIndex && parser.parseInteger(index))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<DeviceAttr>(loc, parser.getContext(), *kind, index);
}

void DeviceAttr::print(AsmPrinter &printer) const {
  printer << "<" << str() << ">";
}

std::string DeviceAttr::str() const {
  if (getKind() == DeviceKind::cpu)
    return "cpu";
  return (stringifyDeviceKind(getKind()) + ":" + llvm::Twine(getIndex())).str();
}

DeviceAttr DeviceAttr::parseFromString(MLIRContext *context, StringRef text) {
  if (text == "cpu")
    return DeviceAttr::get(context, DeviceKind::cpu, 0);
  auto [kindName, indexText] = text.split(':');
  std::optional<DeviceKind> kind = symbolizeDeviceKind(kindName);
  unsigned index;
  if (!kind || *kind == DeviceKind::cpu || indexText.empty() ||
      indexText.getAsInteger(10, index))
    return {};
  return DeviceAttr::get(context, *kind, index);
}

//===----------------------------------------------------------------------===//
// DeviceSpecAttr, LinkSpecAttr
//===----------------------------------------------------------------------===//

static bool isKnownDTypeName(StringRef name) {
  return llvm::is_contained({"f32", "f16", "bf16", "i32", "i64"}, name);
}

LogicalResult
DeviceSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       DeviceAttr device, uint64_t memory,
                       FloatAttr bandwidthAttr, FloatAttr launchOverheadAttr,
                       DictionaryAttr peakFlops) {
  double bandwidth = bandwidthAttr.getValueAsDouble();
  double launchOverhead = launchOverheadAttr.getValueAsDouble();
  if (memory == 0)
    return emitError() << "device '" << device.str()
                       << "': memory must be positive, got 0";
  if (!(bandwidth > 0) || !std::isfinite(bandwidth))
    return emitError() << "device '" << device.str()
                       << "': bandwidth must be a positive number of bytes/s, "
                          "got "
                       << bandwidth;
  if (!(launchOverhead >= 0) || !std::isfinite(launchOverhead))
    return emitError() << "device '" << device.str()
                       << "': launch_overhead must be >= 0 seconds, got "
                       << launchOverhead;
  if (peakFlops.empty())
    return emitError() << "device '" << device.str()
                       << "': peak_flops must name at least one element type";
  for (NamedAttribute entry : peakFlops) {
    if (!isKnownDTypeName(entry.getName()))
      return emitError() << "device '" << device.str() << "': peak_flops key '"
                         << entry.getName().getValue()
                         << "' is not an element type; expected one of f32, "
                            "f16, bf16, i32, i64";
    auto value = dyn_cast<FloatAttr>(entry.getValue());
    if (!value || !(value.getValueAsDouble() > 0))
      return emitError() << "device '" << device.str() << "': peak_flops."
                         << entry.getName().getValue()
                         << " must be a positive float, got "
                         << entry.getValue();
  }
  return success();
}

LogicalResult LinkSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   DeviceAttr from, DeviceAttr to,
                                   FloatAttr bandwidthAttr,
                                   FloatAttr latencyAttr) {
  double bandwidth = bandwidthAttr.getValueAsDouble();
  double latency = latencyAttr.getValueAsDouble();
  if (from == to)
    return emitError() << "link from device '" << from.str() << "' to itself";
  if (!(bandwidth > 0) || !std::isfinite(bandwidth))
    return emitError() << "link " << from.str() << " -> " << to.str()
                       << ": bandwidth must be a positive number of bytes/s, "
                          "got "
                       << bandwidth;
  if (!(latency >= 0) || !std::isfinite(latency))
    return emitError() << "link " << from.str() << " -> " << to.str()
                       << ": latency must be >= 0 seconds, got " << latency;
  return success();
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, ArrayAttr devices,
                                 ArrayAttr links) {
  llvm::DenseSet<Attribute> seen;
  bool hasCpu = false;
  for (Attribute entry : devices) {
    auto spec = dyn_cast<DeviceSpecAttr>(entry);
    if (!spec)
      return emitError() << "target '" << name
                         << "': devices must be #device.device_spec, got "
                         << entry;
    if (!seen.insert(spec.getDevice()).second)
      return emitError() << "target '" << name << "': device '"
                         << spec.getDevice().str() << "' is listed twice";
    hasCpu |= spec.getDevice().getKind() == DeviceKind::cpu;
  }
  if (!hasCpu)
    return emitError() << "target '" << name
                       << "' has no 'cpu' device; every target has one";
  llvm::DenseSet<std::pair<Attribute, Attribute>> seenLinks;
  for (Attribute entry : links) {
    auto link = dyn_cast<LinkSpecAttr>(entry);
    if (!link)
      return emitError() << "target '" << name
                         << "': links must be #device.link, got " << entry;
    for (DeviceAttr end : {link.getFrom(), link.getTo()})
      if (!seen.contains(end))
        return emitError() << "target '" << name << "': link "
                           << link.getFrom().str() << " -> "
                           << link.getTo().str() << " names device '"
                           << end.str() << "', which the target lacks";
    if (!seenLinks.insert({link.getFrom(), link.getTo()}).second)
      return emitError() << "target '" << name << "': link "
                         << link.getFrom().str() << " -> " << link.getTo().str()
                         << " is listed twice";
  }
  return success();
}

DeviceSpecAttr TargetAttr::lookup(DeviceAttr device) const {
  for (Attribute entry : getDevices())
    if (auto spec = cast<DeviceSpecAttr>(entry); spec.getDevice() == device)
      return spec;
  return {};
}

LinkSpecAttr TargetAttr::lookupLink(DeviceAttr from, DeviceAttr to) const {
  for (Attribute entry : getLinks())
    if (auto link = cast<LinkSpecAttr>(entry);
        link.getFrom() == from && link.getTo() == to)
      return link;
  return {};
}
