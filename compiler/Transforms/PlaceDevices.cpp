//===- PlaceDevices.cpp - assigns every graph op to a device --------------===//
//
// Builds the task graph of each entry point (compiler/Analysis/Placement.h),
// places it, writes `device` attributes, and the report and picture.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/CostModel.h"
#include "compiler/Analysis/Placement.h"
#include "compiler/Codegen/Backends.h"
#include "compiler/Target/Target.h"
#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <set>

namespace modelc {
#define GEN_PASS_DEF_PLACEDEVICESPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// The task graph of one function and how its nodes map back to the IR.
struct FunctionGraph {
  PlacementProblem problem;
  std::vector<Operation *> ops;    ///< node -> op (null: input/output)
  std::vector<std::string> labels; ///< node -> name for reports
  llvm::DenseMap<Value, unsigned> producer;
  std::vector<std::string> weightNames;
};

struct PlaceDevicesPass : modelc::impl::PlaceDevicesPassBase<PlaceDevicesPass> {
  using PlaceDevicesPassBase::PlaceDevicesPassBase;

  void runOnOperation() override;

  LogicalResult buildGraph(func::FuncOp function, const TargetDescription &t,
                           FunctionGraph &g);
  LogicalResult placeFunction(func::FuncOp function, func::FuncOp sizedFunction,
                              const TargetDescription &t, FunctionGraph &g,
                              PlacementResult &r);
  /// The GPU an entry point placed its sums over the ranks on: every
  /// entry point's go there (gatherRankSums).
  std::optional<unsigned> rankSumsGpu;
  void writeReport(llvm::json::Array &functions, func::FuncOp function,
                   const TargetDescription &t, const FunctionGraph &g,
                   const PlacementResult &r);
  void writeDot(llvm::raw_ostream &os, func::FuncOp function,
                const TargetDescription &t, const FunctionGraph &g,
                const PlacementResult &r);
};

LogicalResult PlaceDevicesPass::buildGraph(func::FuncOp function,
                                           const TargetDescription &t,
                                           FunctionGraph &g) {
  PlacementProblem &p = g.problem;
  unsigned devices = t.devices.size();
  p.numDevices = devices;
  for (const DeviceDesc &d : t.devices)
    p.capacity.push_back(d.memory);
  p.transferTime = [&t](unsigned a, unsigned b, uint64_t bytes) {
    return t.transferTime(a, b, bytes);
  };
  llvm::StringMap<unsigned> weightIndex;
  llvm::DenseMap<Operation *, unsigned> constantIndex;

  auto addNode = [&](Operation *op, std::string label) {
    g.ops.push_back(op);
    g.labels.push_back(std::move(label));
    p.nodes.emplace_back();
    p.nodes.back().time.assign(devices, 0.0);
    return static_cast<unsigned>(p.nodes.size() - 1);
  };
  // Function inputs: on the host.
  for (BlockArgument arg : function.getArguments()) {
    unsigned n =
        addNode(nullptr, "input #" + std::to_string(arg.getArgNumber()));
    p.nodes[n].pinned = 0;
    p.nodes[n].outputBytes = valueBytes(arg);
    g.producer[arg] = n;
  }
  for (Operation &op : function.getBody().front()) {
    if (isa<WeightRefOp, ConstantOp, AssignOp>(op))
      continue; // they sit where their users or their weight are
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      unsigned n = addNode(nullptr, "outputs");
      p.nodes[n].pinned = 0;
      for (Value v : ret.getOperands())
        if (g.producer.count(v))
          p.nodes[n].inputs.push_back(g.producer[v]);
      continue;
    }
    unsigned n = addNode(&op, describeOp(&op));
    PlacementProblem::Node &node = p.nodes[n];
    for (auto [d, desc] : llvm::enumerate(t.devices))
      node.time[d] = hasKernel(&op, desc.kind) ? estimateOpTime(&op, desc)
                                               : PlacementProblem::kNoKernel;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (auto ref = dyn_cast_or_null<WeightRefOp>(def)) {
        auto [it, inserted] =
            weightIndex.try_emplace(ref.getName(), p.weightBytes.size());
        if (inserted) {
          p.weightBytes.push_back(valueBytes(operand));
          g.weightNames.push_back(ref.getName().str());
        }
        node.weights.push_back(it->second);
      } else if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
        auto [it, inserted] =
            constantIndex.try_emplace(constant, p.weightBytes.size());
        if (inserted) {
          p.weightBytes.push_back(valueBytes(operand));
          g.weightNames.push_back("constant");
        }
        node.weights.push_back(it->second);
      } else {
        node.inputs.push_back(g.producer.lookup(operand));
      }
    }
    node.outputBytes = valueBytes(op.getResult(0));
    g.producer[op.getResult(0)] = n;

    if (Attribute pin = op.getAttr(kDeviceAttrName)) {
      std::string name = isa<StringAttr>(pin)
                             ? cast<StringAttr>(pin).str()
                             : cast<device::DeviceAttr>(pin).str();
      std::optional<unsigned> index = t.find(name);
      if (!index)
        return op.emitError("pinned to '")
               << name << "', which target '" << t.name
               << "' does not have (it has " << t.deviceNames() << ")";
      if (std::isinf(node.time[*index]))
        return op.emitError("pinned to '")
               << name << "', but '" << op.getName()
               << "' has no kernel there for these element types";
      node.pinned = *index;
      continue;
    }
    if (!placeAll.empty()) {
      // --place-all: the named device wherever it has a kernel.
      std::optional<unsigned> index = t.find(placeAll);
      if (index && !std::isinf(node.time[*index]) && !getViewOffset(&op)) {
        node.pinned = *index;
        continue;
      }
    }
    bool runnable =
        llvm::any_of(node.time, [](double x) { return !std::isinf(x); });
    if (!runnable) {
      SmallVector<std::string> names;
      for (Type type : op.getOperandTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type)) {
          std::string name;
          llvm::raw_string_ostream os(name);
          os << tensor.getElementType();
          if (!llvm::is_contained(names, name))
            names.push_back(name);
        }
      std::string types = llvm::join(names, ", ");
      return op.emitError("'")
             << op.getName() << "' on " << types
             << " is not supported yet: no device of target '" << t.name
             << "' has a kernel for these element types";
    }
    if (getViewOffset(&op)) {
      node.follows = PlacementReason::Alias;
    } else {
      // No accelerator round trip for a scalar: small results with little
      // work stay with their input.
      OpWork work = estimateOpWork(&op);
      if (node.outputBytes <= 4096 && work.flops <= 65536 &&
          !node.inputs.empty())
        node.follows = PlacementReason::Tiny;
    }
  }
  // Boundary nodes have no time anywhere but the host.
  for (auto [n, op] : llvm::enumerate(g.ops))
    if (!op)
      p.nodes[n].time.assign(devices, 0.0);
  return success();
}

void PlaceDevicesPass::writeReport(llvm::json::Array &functions,
                                   func::FuncOp function,
                                   const TargetDescription &t,
                                   const FunctionGraph &g,
                                   const PlacementResult &r) {
  const PlacementProblem &p = g.problem;
  llvm::json::Array ops, transfers, devices;
  for (unsigned n = 0; n < p.nodes.size(); ++n) {
    if (!g.ops[n])
      continue;
    unsigned d = r.device[n];
    ops.push_back(llvm::json::Object{
        {"op", g.labels[n]},
        {"device", t.devices[d].name()},
        {"reason", reasonName(r.reason[n])},
        {"time_s", p.nodes[n].time[d]},
        {"start_s", r.start[n]},
    });
  }
  // One transfer per (value, destination device).
  std::vector<std::set<unsigned>> destinations(p.nodes.size());
  for (unsigned m = 0; m < p.nodes.size(); ++m)
    for (unsigned in : p.nodes[m].inputs)
      if (r.device[m] != r.device[in])
        destinations[in].insert(r.device[m]);
  for (unsigned n = 0; n < p.nodes.size(); ++n) {
    for (unsigned d : destinations[n])
      transfers.push_back(llvm::json::Object{
          {"value", g.labels[n]},
          {"from", t.devices[r.device[n]].name()},
          {"to", t.devices[d].name()},
          {"bytes", static_cast<int64_t>(p.nodes[n].outputBytes)},
          {"time_s", t.transferTime(r.device[n], d, p.nodes[n].outputBytes)},
      });
  }
  for (unsigned d = 0; d < t.devices.size(); ++d)
    devices.push_back(llvm::json::Object{
        {"device", t.devices[d].name()},
        {"memory_bytes", static_cast<int64_t>(t.devices[d].memory)},
        {"weight_bytes", static_cast<int64_t>(r.weightBytes[d])},
        {"activation_peak_bytes", static_cast<int64_t>(r.activationPeak[d])},
        // What the function needs there at once (a training step: its
        // parameters, optimizer state and buffers, then the activations
        // kept for the backward and the gradients).
        {"peak_bytes",
         static_cast<int64_t>(r.weightBytes[d] + r.activationPeak[d])},
        {"busy_s", r.busy[d]},
    });
  llvm::json::Object entry{
      {"function", function.getSymName()},
      {"makespan_s", r.makespan},
      {"ops", std::move(ops)},
      {"transfers", std::move(transfers)},
      {"devices", std::move(devices)},
  };
  // What modelc-recompute did: the ops it copied into the backward and the
  // live bytes at the peak before and after (program order, all devices).
  if (auto recompute =
          function->getAttrOfType<DictionaryAttr>("graph.recompute")) {
    llvm::json::Object summary;
    for (NamedAttribute a : recompute)
      if (auto value = dyn_cast<IntegerAttr>(a.getValue()))
        summary[a.getName().getValue()] = value.getInt();
    entry["recompute"] = std::move(summary);
  }
  // What modelc-shard-optimizer-state did: the state weights one rank
  // holds, their bytes, and the most a rank holds at 2, 4 and 8 ranks.
  if (auto shards =
          function->getAttrOfType<DictionaryAttr>("graph.state_shards")) {
    llvm::json::Object summary;
    for (StringRef key : {"weights", "bytes"})
      if (auto value = shards.getAs<IntegerAttr>(key))
        summary[key] = value.getInt();
    auto ranks = shards.getAs<ArrayAttr>("ranks");
    auto most = shards.getAs<ArrayAttr>("most_per_rank");
    if (ranks && most && ranks.size() == most.size()) {
      llvm::json::Object perRank;
      for (auto [r, m] : llvm::zip(ranks, most))
        perRank[std::to_string(cast<IntegerAttr>(r).getInt())] =
            cast<IntegerAttr>(m).getInt();
      summary["most_bytes_per_rank"] = std::move(perRank);
    }
    entry["state_shards"] = std::move(summary);
  }
  // What modelc-replicate did: each replica's device, and how many
  // all-reduces became sums over the replicas (on `host`, or on their own
  // devices: sums_on).
  if (auto replicas =
          function->getAttrOfType<DictionaryAttr>("graph.replicas")) {
    llvm::json::Array names;
    if (auto list = replicas.getAs<ArrayAttr>("devices"))
      for (Attribute d : list)
        names.push_back(cast<StringAttr>(d).str());
    llvm::json::Object summary{{"devices", std::move(names)}};
    if (auto sums = replicas.getAs<IntegerAttr>("sums"))
      summary["sums"] = sums.getInt();
    if (auto host = replicas.getAs<StringAttr>("host"))
      summary["host"] = host.str();
    summary["sums_on"] = replicas.get("on_devices") ? "devices" : "host";
    summary["optimizer_state_sharded"] =
        static_cast<bool>(replicas.get("sharded"));
    entry["replicas"] = std::move(summary);
  }
  functions.push_back(std::move(entry));
}

void PlaceDevicesPass::writeDot(llvm::raw_ostream &os, func::FuncOp function,
                                const TargetDescription &t,
                                const FunctionGraph &g,
                                const PlacementResult &r) {
  static const char *colors[] = {"lightgray",   "lightblue",  "palegreen",
                                 "khaki",       "lightpink",  "plum",
                                 "lightsalmon", "aquamarine", "wheat"};
  const PlacementProblem &p = g.problem;
  os << "  subgraph \"cluster_" << function.getSymName() << "\" {\n"
     << "    label=\"" << function.getSymName() << " (" << t.name
     << ", estimated " << llvm::formatv("{0:F3}", r.makespan * 1e3)
     << " ms)\";\n";
  std::string prefix = function.getSymName().str() + "_";
  // One cluster per device, in its colour; each op with its estimated time
  // there.
  for (unsigned d = 0; d < t.devices.size(); ++d) {
    if (llvm::none_of(r.device, [&](unsigned placed) { return placed == d; }))
      continue;
    os << "    subgraph \"cluster_" << prefix << t.devices[d].name()
       << "\" {\n      label=\"" << t.devices[d].name()
       << "\"; style=filled; fillcolor=" << colors[d % 9] << ";\n";
    for (unsigned n = 0; n < p.nodes.size(); ++n) {
      if (r.device[n] != d)
        continue;
      os << "      \"" << prefix << n << "\" [label=\"" << g.labels[n];
      if (g.ops[n])
        os << "\\n"
           << llvm::formatv("{0:F1}", p.nodes[n].time[d] * 1e6) << " us";
      os << "\", style=filled, fillcolor=white"
         << (g.ops[n] ? "" : ", shape=box") << "];\n";
    }
    os << "    }\n";
  }
  // Transfers: bold red edges with their bytes.
  for (unsigned n = 0; n < p.nodes.size(); ++n)
    for (unsigned in : p.nodes[n].inputs) {
      os << "    \"" << prefix << in << "\" -> \"" << prefix << n << "\"";
      if (r.device[in] != r.device[n])
        os << " [color=red, style=bold, penwidth=2, label=\"transfer "
           << formatBytes(p.nodes[in].outputBytes) << "\"]";
      os << ";\n";
    }
  os << "  }\n";
}

/// A mutable weight (one a training step writes) has one copy: every read
/// of it in `function` sits where its first read does, and so does the
/// write (transfer insertion copies the value to other users), in every
/// function: where the first function to read it reads it (`home`).
static void placeWritableWeights(func::FuncOp function,
                                 const TargetDescription &t,
                                 llvm::StringMap<Attribute> &home) {
  // Views of a weight (a reshape: no code, the weight's own memory) sit there
  // too, so that every read of its memory is on that device.
  std::function<void(Value, Attribute)> placeViews = [&](Value v, Attribute d) {
    for (Operation *user : v.getUsers())
      if (getViewOffset(user)) {
        user->setAttr(kDeviceAttrName, d);
        placeViews(user->getResult(0), d);
      }
  };
  // The device of the first op that computes with `v` (through views).
  std::function<Attribute(Value)> firstReader = [&](Value v) -> Attribute {
    for (Operation *user : v.getUsers()) {
      if (!getViewOffset(user))
        return user->getAttr(kDeviceAttrName);
      if (Attribute d = firstReader(user->getResult(0)))
        return d;
    }
    return nullptr;
  };
  // A device's own copy in a data-parallel step (modelc-replicate)
  // stays on the device of its replica.
  function.walk([&](WeightRefOp ref) {
    if (!isWritableWeight(ref) || ref->hasAttr(kReplicaCopyAttrName))
      return;
    Attribute reader = firstReader(ref.getResult());
    Attribute d =
        home.try_emplace(ref.getName(),
                         reader ? reader : ref->getAttr(kDeviceAttrName))
            .first->second;
    ref->setAttr(kDeviceAttrName, d);
    placeViews(ref.getResult(), d);
  });
  function.walk([&](AssignOp assign) {
    if (assign->hasAttr(kReplicaCopyAttrName)) {
      // Pinned by modelc-replicate: its replica's device.
      auto pin = dyn_cast_or_null<StringAttr>(assign->getAttr(kDeviceAttrName));
      if (std::optional<unsigned> index =
              pin ? t.find(pin.getValue()) : std::nullopt)
        assign->setAttr(kDeviceAttrName,
                        t.deviceAttr(function.getContext(), *index));
      return;
    }
    auto it = home.find(assign.getName());
    assign->setAttr(kDeviceAttrName,
                    it != home.end() ? it->second
                                     : t.deviceAttr(function.getContext(), 0));
  });
}

/// A device named in the IR itself (a hand-written transfer) must be one of
/// the target's: generated code would index past the plan's devices.
static LogicalResult checkTransferDevices(ModuleOp module,
                                          const TargetDescription &t) {
  WalkResult unknown = module.walk([&](device::TransferOp transfer) {
    for (device::DeviceAttr d : {transfer.getSource(), transfer.getTarget()})
      if (!t.find(d)) {
        transfer.emitError("device.transfer names '")
            << d.str() << "', which target '" << t.name
            << "' does not have (it has " << t.deviceNames() << ")";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(unknown.wasInterrupted());
}

/// Dynamic dimensions (docs/dynamic.md): a copy of `module` with each
/// dimension at the size placement aims at, or null when the types hold
/// them there already; `aims` says which ("batch 16").
static FailureOr<OwningOpRef<ModuleOp>> atPlacementSizes(ModuleOp module,
                                                         std::string &aims) {
  // Dynamic dimensions (docs/dynamic.md): the types hold each at its max;
  // placement aims at its `opt` size. The task graph is built from a copy
  // with every dimension at its opt, and the devices chosen there go to the
  // ops of this module in the same order.
  OwningOpRef<ModuleOp> atOpt;
  // A size regime's plan (modelc --regimes) aims at the size
  // `device.regime_at` names instead.
  auto regimeAt = module->getAttrOfType<DictionaryAttr>("device.regime_at");
  // The size the types hold a dimension at: its max, or a regime's own.
  auto heldSize = [&](StringRef name) -> int64_t {
    for (auto function : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        if (auto dims = function.getArgAttrOfType<ArrayAttr>(i, kDimsAttrName))
          for (auto [axis, dim] : llvm::enumerate(dims))
            if (auto text = dyn_cast<StringAttr>(dim);
                text && text.getValue() == name)
              return cast<RankedTensorType>(function.getArgumentTypes()[i])
                  .getDimSize(axis);
    return -1;
  };
  for (DimOp dim : module.getOps<DimOp>()) {
    int64_t aim = dim.getOpt();
    if (auto at = regimeAt ? regimeAt.getAs<IntegerAttr>(dim.getSymName())
                           : IntegerAttr())
      aim = at.getInt();
    int64_t held = heldSize(dim.getSymName());
    if (held > 0 && aim != held) {
      if (!atOpt)
        atOpt = module.clone();
      if (failed(specializeDim(*atOpt, dim.getSymName(), aim)))
        return failure();
      aims += (aims.empty() ? "" : ", ") + dim.getSymName().str() + " " +
              std::to_string(aim);
    }
  }
  return std::move(atOpt);
}

/// The sums over the ranks (graph.all_reduce) of placement `r` on one
/// device: every rank must meet them in one order, which one stream gives
/// (a GPU's copy stream, with NCCL or through the host; the host's compute
/// stream). Where `r` split them over devices, every one goes to the
/// device that holds most of their bytes (or the one a sum is pinned to),
/// and the rest is placed again around them. A plan sums on one GPU at
/// most (its NCCL communicator): `planGpu`, once an entry point chose one,
/// is every later one's GPU.
static LogicalResult gatherRankSums(FunctionGraph &g, PlacementResult &r,
                                    const PlacementOptions &options,
                                    const TargetDescription &t,
                                    std::optional<unsigned> &planGpu) {
  PlacementProblem &p = g.problem;
  SmallVector<unsigned> sums;
  std::map<unsigned, uint64_t> bytes;
  // A pin (the IR's, or --place-all's) decides: pins that differ are an
  // error, as a pin to another GPU than the plan's.
  std::optional<unsigned> pin;
  Operation *pinnedOp = nullptr;
  for (auto [n, op] : llvm::enumerate(g.ops)) {
    if (!op || !isa<AllReduceOp>(op))
      continue;
    sums.push_back(n);
    bytes[r.device[n]] += p.nodes[n].outputBytes;
    std::optional<unsigned> mine = p.nodes[n].pinned;
    if (mine && pin && *mine != *pin)
      return op->emitError("pinned to '")
             << t.devices[*mine].name() << "' where another sum over the "
             << "ranks of this entry point is pinned to '"
             << t.devices[*pin].name()
             << "': the sums over the ranks must share one device (every "
                "rank meets them in one order on one stream)";
    if (mine && !pin) {
      pin = mine;
      pinnedOp = op;
    }
  }
  if (bytes.empty())
    return success();
  unsigned most = bytes.begin()->first;
  for (auto [d, b] : bytes)
    if (b > bytes[most])
      most = d;
  bool gpu = t.devices[most].kind == device::DeviceKind::cuda;
  if (pin) {
    most = *pin;
    gpu = t.devices[most].kind == device::DeviceKind::cuda;
    if (gpu && planGpu && *planGpu != most)
      return pinnedOp->emitError("pinned to '")
             << t.devices[most].name() << "' where another entry point sums "
             << "over the ranks on '" << t.devices[*planGpu].name()
             << "': a plan sums over the ranks on one GPU at most (its NCCL "
                "communicator)";
  } else if (gpu && planGpu) {
    most = *planGpu;
  }
  if (gpu)
    planGpu = most;
  if (bytes.size() == 1 && bytes.begin()->first == most)
    return success();
  for (unsigned n : sums) {
    p.nodes[n].pinned = most;
    p.nodes[n].follows.reset();
  }
  r = placeNodes(p, options);
  for (unsigned n : sums)
    r.reason[n] = PlacementReason::RankSums;
  return success();
}

/// Places `function` with its task graph built from `sizedFunction` (the
/// same function at the sizes placement aims at, or itself) and checks that
/// the placement fits at the sizes `function`'s types hold.
LogicalResult PlaceDevicesPass::placeFunction(func::FuncOp function,
                                              func::FuncOp sizedFunction,
                                              const TargetDescription &t,
                                              FunctionGraph &g,
                                              PlacementResult &r) {
  if (failed(buildGraph(sizedFunction, t, g)))
    return failure();
  if (sizedFunction != function) {
    // The nodes' ops, in the copy, by position in this module's body.
    llvm::DenseMap<Operation *, Operation *> original;
    for (auto [mine, copy] :
         llvm::zip(function.getBody().front().getOperations(),
                   sizedFunction.getBody().front().getOperations()))
      original[&copy] = &mine;
    for (Operation *&op : g.ops)
      if (op) {
        op = original.lookup(op);
        assert(op && "specializeDim changed the op list");
      }
  }
  PlacementOptions options;
  options.improve = improve;
  r = placeNodes(g.problem, options);
  if (failed(gatherRankSums(g, r, options, t, rankSumsGpu)))
    return failure();
  if (sizedFunction != function && r.fits) {
    // Placed at opt, run up to the size the types hold: the devices'
    // memory must hold that.
    FunctionGraph held;
    if (failed(buildGraph(function, t, held)))
      return failure();
    for (PlacementProblem::Node &node : held.problem.nodes)
      node.follows.reset();
    PlacementResult atHeld = r;
    simulatePlacement(held.problem, atHeld);
    if (!atHeld.fits) {
      r.fits = false;
      r.weightBytes = atHeld.weightBytes;
      r.activationPeak = atHeld.activationPeak;
    }
  }
  if (!r.fits) {
    InFlightDiagnostic diag = function.emitError("entry point '")
                              << function.getSymName()
                              << "' does not fit target '" << t.name << "':";
    uint64_t weights = 0;
    for (uint64_t w : g.problem.weightBytes)
      weights += w;
    diag << " it needs " << formatBytes(weights) << " of weights";
    for (unsigned d = 0; d < t.devices.size(); ++d)
      diag << "; " << t.devices[d].name() << " has "
           << formatBytes(t.devices[d].memory) << ", placement puts "
           << formatBytes(r.weightBytes[d]) << " of weights and "
           << formatBytes(r.activationPeak[d]) << " of activations there";
    return failure();
  }
  return success();
}

void PlaceDevicesPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<TargetDescription> t = loadTarget(target, module);
  if (!t)
    return signalPassFailure();
  if (!placeAll.empty() && !t->find(placeAll)) {
    module.emitError("--place-all names '")
        << placeAll << "', which target '" << t->name
        << "' does not have (it has " << t->deviceNames() << ")";
    return signalPassFailure();
  }
  MLIRContext *context = &getContext();
  rankSumsGpu.reset();
  double totalMakespan = 0;
  llvm::json::Array functions;
  std::string dotText;
  llvm::raw_string_ostream dotStream(dotText);

  // Per mutable weight, the one device that holds it in every function.
  llvm::StringMap<Attribute> home;
  if (failed(checkTransferDevices(module, *t)))
    return signalPassFailure();
  std::string aims;
  FailureOr<OwningOpRef<ModuleOp>> specialized = atPlacementSizes(module, aims);
  if (failed(specialized))
    return signalPassFailure();
  OwningOpRef<ModuleOp> atOpt = std::move(*specialized);
  ModuleOp sized = atOpt ? *atOpt : module;
  for (auto [function, sizedFunction] :
       llvm::zip(module.getOps<func::FuncOp>(), sized.getOps<func::FuncOp>())) {
    if (function.isExternal())
      continue;
    FunctionGraph g;
    PlacementResult r;
    if (failed(placeFunction(function, sizedFunction, *t, g, r)))
      return signalPassFailure();
    for (unsigned n = 0; n < g.ops.size(); ++n)
      if (Operation *op = g.ops[n])
        op->setAttr(kDeviceAttrName, t->deviceAttr(context, r.device[n]));
    // Weights and constants sit with their first user (transfer insertion
    // gives other devices their own copy).
    function.walk([&](Operation *op) {
      if (!isa<WeightRefOp, ConstantOp>(op))
        return;
      for (Operation *user : op->getUsers())
        if (Attribute d = user->getAttr(kDeviceAttrName)) {
          op->setAttr(kDeviceAttrName, d);
          return;
        }
      op->setAttr(kDeviceAttrName, t->deviceAttr(context, 0));
    });
    placeWritableWeights(function, *t, home);
    totalMakespan += r.makespan;
    writeReport(functions, function, *t, g, r);
    writeDot(dotStream, function, *t, g, r);
  }
  if (!aims.empty())
    module->setAttr("device.placed_at", StringAttr::get(context, aims));
  module->setAttr("device.target", t->toAttr(context));
  // The estimate, for the driver's choice between placements.
  module->setAttr("device.estimated_makespan",
                  FloatAttr::get(Float64Type::get(context), totalMakespan));

  auto writeFile = [&](StringRef path, StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      module.emitError("cannot write '") << path << "': " << ec.message();
      return failure();
    }
    os << text;
    return success();
  };
  if (!report.empty()) {
    llvm::json::Array deviceList;
    for (const DeviceDesc &d : t->devices)
      deviceList.push_back(d.name());
    llvm::json::Object root{{"target", t->name},
                            {"devices", std::move(deviceList)},
                            {"functions", std::move(functions)}};
    // Estimates and placement at these sizes of the dynamic dimensions.
    if (!aims.empty())
      root["placed_at"] = aims;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    if (failed(writeFile(report, text)))
      return signalPassFailure();
  }
  if (!dot.empty()) {
    std::string text =
        "digraph placement {\n  node [fontname=Helvetica];\n" + dotText + "}\n";
    if (failed(writeFile(dot, text)))
      return signalPassFailure();
  }
}

} // namespace
