//===- PlacementSummary.cpp - a one-screen table of a placement -----------===//

#include "compiler/Transforms/PlacementSummary.h"
#include "compiler/Analysis/CostModel.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace modelc;
using modelc::graph::elementBytes;
using modelc::graph::valueBytes;

void modelc::printPlacementSummary(ModuleOp module, llvm::raw_ostream &os) {
  auto target = module->getAttrOfType<device::TargetAttr>("device.target");
  os << "placement for target '" << (target ? target.getName() : "?") << "'\n";
  for (auto function : module.getOps<func::FuncOp>()) {
    struct Row {
      unsigned ops = 0;
      llvm::StringSet<> weights;
      uint64_t weightBytes = 0;
      unsigned transfersIn = 0;
      uint64_t transferBytes = 0;
    };
    // Rows in the order their device first appears: the target's devices,
    // then any other (a few devices; the names are owned by the rows).
    std::vector<std::pair<std::string, Row>> rows;
    auto rowOf = [&](StringRef name) -> Row & {
      for (auto &[rowName, row] : rows)
        if (rowName == name)
          return row;
      rows.emplace_back(name.str(), Row());
      return rows.back().second;
    };
    if (target)
      for (Attribute d : target.getDevices())
        rowOf(cast<device::DeviceSpecAttr>(d).getDevice().str());
    function.walk([&](Operation *op) {
      if (auto transfer = dyn_cast<device::TransferOp>(op)) {
        Row &row = rowOf(transfer.getTarget().str());
        ++row.transfersIn;
        row.transferBytes += valueBytes(transfer.getResult());
        return;
      }
      auto device =
          op->getAttrOfType<device::DeviceAttr>(graph::kDeviceAttrName);
      if (!device)
        return;
      Row &row = rowOf(device.str());
      if (auto ref = dyn_cast<graph::WeightRefOp>(op)) {
        if (row.weights.insert(ref.getName()).second)
          row.weightBytes += valueBytes(ref.getResult());
      } else if (!isa<graph::ConstantOp>(op)) {
        ++row.ops;
      }
    });
    os << "  entry '" << function.getSymName() << "'\n"
       << llvm::format("    %-10s %6s %12s %10s %14s\n", "device", "ops",
                       "weights", "transfers", "bytes in");
    for (auto &[name, row] : rows)
      os << llvm::format("    %-10s %6u %12s %10u %14s\n", name.c_str(),
                         row.ops, formatBytes(row.weightBytes).c_str(),
                         row.transfersIn,
                         formatBytes(row.transferBytes).c_str());
    if (auto replicas =
            function->getAttrOfType<DictionaryAttr>("graph.replicas")) {
      auto devices = replicas.getAs<ArrayAttr>("devices");
      auto sums = replicas.getAs<IntegerAttr>("sums");
      auto host = replicas.getAs<StringAttr>("host");
      if (devices && sums && host) {
        os << "    replicas: " << devices.size() << " on ";
        llvm::interleaveComma(devices, os, [&](Attribute d) {
          os << cast<StringAttr>(d).getValue();
        });
        os << "; " << sums.getInt() << " all-reduces summed over them ";
        if (replicas.get("on_devices"))
          os << "on their devices (NCCL where it loads, else through host "
                "memory)";
        else
          os << "on " << host.getValue();
        os << (replicas.get("sharded") ? "; optimizer state sharded" : "")
           << "\n";
      }
    }
    // The sums over the ranks of a distributed step: where they run
    // (modelc-place-devices puts an entry point's on one device).
    unsigned rankSums = 0;
    std::string sumsOn;
    function.walk([&](graph::AllReduceOp reduce) {
      ++rankSums;
      if (auto d =
              reduce->getAttrOfType<device::DeviceAttr>(graph::kDeviceAttrName))
        sumsOn = d.str();
    });
    if (rankSums && !function->hasAttr("graph.replicas")) {
      os << "    sums over the ranks: " << rankSums << " on " << sumsOn;
      if (sumsOn.rfind("cuda:", 0) == 0)
        os << " (its copy stream: NCCL across the processes where every "
              "rank loads it, else through the host)";
      os << "\n";
    }
    if (auto shards =
            function->getAttrOfType<DictionaryAttr>("graph.state_shards")) {
      auto weights = shards.getAs<IntegerAttr>("weights");
      auto bytes = shards.getAs<IntegerAttr>("bytes");
      auto ranks = shards.getAs<ArrayAttr>("ranks");
      auto most = shards.getAs<ArrayAttr>("most_per_rank");
      if (weights && bytes && ranks && most && ranks.size() == most.size()) {
        os << "    optimizer state: " << weights.getInt()
           << " weights sharded over the ranks (" << formatBytes(bytes.getInt())
           << " in all); a rank holds at most";
        for (auto [i, r] : llvm::enumerate(ranks))
          os << (i ? "," : "") << " "
             << formatBytes(cast<IntegerAttr>(most[i]).getInt()) << " at "
             << cast<IntegerAttr>(r).getInt() << " ranks";
        os << "\n";
      }
    }
    if (auto recompute =
            function->getAttrOfType<DictionaryAttr>("graph.recompute")) {
      auto number = [&](StringRef key) -> uint64_t {
        auto value = recompute.getAs<IntegerAttr>(key);
        return value ? value.getInt() : 0;
      };
      os << "    recompute: " << number("ops")
         << " ops computed again in the backward; live at the peak "
         << formatBytes(number("peak_bytes_before")) << " -> "
         << formatBytes(number("peak_bytes_after"))
         << " (estimate, all devices)\n";
    }
  }
}
