//===- PlacementSummary.cpp - a one-screen table of a placement -----------===//

#include "compiler/Transforms/PlacementSummary.h"
#include "compiler/Analysis/CostModel.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
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
    llvm::MapVector<StringRef, Row> rows;
    std::vector<std::string> names;
    if (target)
      for (Attribute d : target.getDevices())
        names.push_back(cast<device::DeviceSpecAttr>(d).getDevice().str());
    for (const std::string &n : names)
      rows[StringRef(n)];
    function.walk([&](Operation *op) {
      if (auto transfer = dyn_cast<device::TransferOp>(op)) {
        names.push_back(transfer.getTarget().str());
        Row &row = rows[StringRef(names.back())];
        ++row.transfersIn;
        row.transferBytes += valueBytes(transfer.getResult());
        return;
      }
      auto device =
          op->getAttrOfType<device::DeviceAttr>(graph::kDeviceAttrName);
      if (!device)
        return;
      names.push_back(device.str());
      Row &row = rows[StringRef(names.back())];
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
      os << llvm::format("    %-10s %6u %12s %10u %14s\n", name.str().c_str(),
                         row.ops, formatBytes(row.weightBytes).c_str(),
                         row.transfersIn,
                         formatBytes(row.transferBytes).c_str());
  }
}
