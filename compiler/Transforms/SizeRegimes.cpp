//===- SizeRegimes.cpp - cuts a dynamic range where placement changes -----===//
//
// Places copies of the module at sample sizes of its dynamic dimension
// with modelc-place, cuts the range where the chosen devices change, and
// merges ranges down to the number asked for (docs/dynamic.md, "Size
// regimes").
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Target.h"
#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Device/IR/DeviceOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>
#include <optional>

namespace modelc {
#define GEN_PASS_DEF_SIZEREGIMESPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// The devices modelc-place chose, one per placed op in program order; or
/// the batch split over the accelerators (modelc-data-parallel, whose
/// replicas are pinned: one split placement per size).
struct Placement {
  bool split = false;
  std::vector<Attribute> devices;
  bool empty() const { return devices.empty(); }
  bool operator==(const Placement &other) const {
    return split == other.split && (split || devices == other.devices);
  }
};

/// Ops modelc-place gives a device of its own (weights and constants
/// follow their users).
bool placedItself(Operation &op) {
  return !isa<WeightRefOp, ConstantOp, AssignOp, func::ReturnOp>(op);
}

/// "cpu 3 ops, cuda:0 1 op": where a placement puts the ops.
std::string describe(const Placement &placement) {
  std::vector<std::pair<std::string, unsigned>> counts;
  for (Attribute d : placement.devices) {
    std::string name = isa<StringAttr>(d) ? cast<StringAttr>(d).str()
                                          : cast<device::DeviceAttr>(d).str();
    auto it = llvm::find_if(counts, [&](auto &c) { return c.first == name; });
    if (it == counts.end())
      counts.push_back({name, 1});
    else
      ++it->second;
  }
  std::string text, accelerators;
  for (auto &[name, count] : counts) {
    text += (text.empty() ? "" : ", ") + name + " " + std::to_string(count) +
            (count == 1 ? " op" : " ops");
    if (name != "cpu")
      accelerators += (accelerators.empty() ? "" : ", ") + name;
  }
  if (text.empty())
    return "no ops";
  if (placement.split)
    return "data parallel over " + accelerators + " (" + text + ")";
  return text;
}

/// The least share of the estimated time over a cut's samples that keeps
/// the cut (else one plan serves both sides): a regime costs compile time,
/// code and weights on more devices.
constexpr double kMinGain = 0.05;

std::string microseconds(double seconds) {
  if (!std::isfinite(seconds))
    return "does not fit";
  return llvm::formatv("{0:F2} us", seconds * 1e6).str();
}

struct SizeRegimesPass : modelc::impl::SizeRegimesPassBase<SizeRegimesPass> {
  using SizeRegimesPassBase::SizeRegimesPassBase;

  struct Trial {
    Placement placement;
    double seconds = std::numeric_limits<double>::infinity();
  };
  struct Range {
    int64_t min, max, at;
    Placement placement;
    std::string why;
  };

  ModuleOp module;
  DimOp dim;
  /// The target's accelerators: the smallest size that splits.
  int64_t accelerators = 0;
  bool considerSplit = false, alwaysSplit = false;
  std::map<int64_t, Trial> free;  ///< placed freely, per size
  std::map<int64_t, Trial> whole; ///< placed freely without a split
  std::map<int64_t, Trial> split; ///< placed split, per size
  std::map<std::pair<int64_t, size_t>, double> pinnedTimes;
  std::vector<Placement> known; ///< pinned placements seen

  /// modelc-place on a copy with the dimension at `size` (static there),
  /// pinned to `pins` when given, split over the accelerators first when
  /// `dataParallel`. A copy that does not fit (or split) costs infinity.
  Trial place(int64_t size, const Placement *pins, bool dataParallel = false,
              bool quiet = true) {
    OwningOpRef<ModuleOp> copy(module.clone());
    for (DimOp d : copy->getOps<DimOp>())
      if (d.getSymName() == dim.getSymName()) { // (the others stay)
        OpBuilder b(d);
        d.setMinAttr(b.getI64IntegerAttr(size));
        d.setMaxAttr(b.getI64IntegerAttr(size));
        d.setOptAttr(b.getI64IntegerAttr(size));
      }
    // (modelc-check-dynamic-dims inferred these shapes before.)
    if (failed(specializeDim(*copy, dim.getSymName(), size)))
      return Trial{};
    if (pins) {
      size_t next = 0;
      for (auto function : copy->getOps<func::FuncOp>())
        if (!function.isExternal())
          for (Operation &op : function.getBody().front())
            if (placedItself(op) && next < pins->devices.size())
              op.setAttr(kDeviceAttrName, pins->devices[next++]);
    }
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    if (dataParallel) {
      DataParallelPassOptions split;
      split.target = target;
      pm.addPass(createDataParallelPass(split));
    }
    PlaceDevicesPassOptions options;
    options.target = target;
    options.placeAll = placeAll;
    pm.addPass(createPlaceDevicesPass(options));
    Trial trial;
    {
      std::optional<ScopedDiagnosticHandler> silence;
      if (quiet)
        silence.emplace(module.getContext(),
                        [](Diagnostic &) { return success(); });
      if (failed(pm.run(*copy)))
        return trial;
    }
    trial.placement.split = dataParallel;
    for (auto function : copy->getOps<func::FuncOp>())
      if (!function.isExternal())
        for (Operation &op : function.getBody().front())
          if (placedItself(op))
            trial.placement.devices.push_back(op.getAttr(kDeviceAttrName));
    if (auto time =
            (*copy)->getAttrOfType<FloatAttr>("device.estimated_makespan"))
      trial.seconds = time.getValueAsDouble();
    return trial;
  }

  /// modelc-place's placement at `size` without a split (cached).
  const Trial &wholeAt(int64_t size) {
    auto it = whole.find(size);
    if (it == whole.end())
      it = whole.emplace(size, place(size, nullptr)).first;
    return it->second;
  }

  /// The batch split at `size` (cached): infinity where it cannot be.
  const Trial &splitAt(int64_t size) {
    auto it = split.find(size);
    if (it == split.end())
      it = split
               .emplace(size, size < accelerators
                                  ? Trial{}
                                  : place(size, nullptr, /*dataParallel=*/true))
               .first;
    return it->second;
  }

  /// The placement chosen at `size` (cached): modelc-place's, or the
  /// split where it is considered and estimated faster, or where it is
  /// always taken.
  const Trial &freeAt(int64_t size) {
    auto it = free.find(size);
    if (it != free.end())
      return it->second;
    Trial choice = wholeAt(size);
    if ((considerSplit || alwaysSplit) && size >= accelerators) {
      const Trial &parts = splitAt(size);
      if (!parts.placement.empty() &&
          (alwaysSplit || parts.seconds < choice.seconds))
        choice = parts;
    }
    return free.emplace(size, choice).first->second;
  }

  /// The estimated time of `placement` at `size` (cached).
  double timeOf(const Placement &placement, int64_t size) {
    if (placement.split)
      return splitAt(size).seconds;
    // With data-parallel=always, a size that splits is never run whole.
    if (alwaysSplit && size >= accelerators)
      return std::numeric_limits<double>::infinity();
    if (const Trial &own = wholeAt(size); own.placement == placement)
      return own.seconds;
    size_t index = llvm::find(known, placement) - known.begin();
    if (index == known.size())
      known.push_back(placement);
    auto key = std::make_pair(size, index);
    auto it = pinnedTimes.find(key);
    if (it == pinnedTimes.end())
      it = pinnedTimes.emplace(key, place(size, &placement).seconds).first;
    return it->second;
  }

  /// Placements modelc-place chose at the samples, each with the largest
  /// sample that chose it; per size, the index of the best of them.
  std::vector<std::pair<Placement, int64_t>> candidates;
  std::map<int64_t, size_t> best;
  size_t bestAt(int64_t size);
  int64_t placedAt(const Range &r, const std::vector<int64_t> &samples);

  void runOnOperation() override;
  std::vector<Range> cut(const std::vector<int64_t> &samples);
  void merge(std::vector<Range> &ranges, const std::vector<int64_t> &samples);
  void recut(std::vector<Range> &ranges, const std::vector<int64_t> &samples);
  std::string why(const Range &left, const Range &right);
  LogicalResult writeReport(const std::vector<int64_t> &samples,
                            const std::vector<Range> &ranges);
};

/// The candidate placements (those modelc-place chose at the samples) and
/// the best of them at `size` by the cost model's estimate: HEFT's choice
/// at one size can be beaten there by its choice at another.
size_t SizeRegimesPass::bestAt(int64_t size) {
  auto it = best.find(size);
  if (it != best.end())
    return it->second;
  size_t choice = 0;
  double fastest = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < candidates.size(); ++c)
    if (double t = timeOf(candidates[c].first, size); t < fastest) {
      fastest = t;
      choice = c;
    }
  return best[size] = choice;
}

/// Ranges of one best placement over the samples, cut by bisection where
/// the smaller sample's stops being the best.
std::vector<SizeRegimesPass::Range>
SizeRegimesPass::cut(const std::vector<int64_t> &samples) {
  for (int64_t s : samples) {
    const Placement &p = freeAt(s).placement;
    auto known =
        llvm::find_if(candidates, [&](auto &c) { return c.first == p; });
    if (known == candidates.end())
      candidates.push_back({p, s});
    else
      known->second = s; // the largest sample that chose it
  }
  std::vector<Range> ranges;
  size_t current = bestAt(samples.front());
  int64_t start = samples.front();
  for (size_t i = 1; i < samples.size(); ++i) {
    size_t here = bestAt(samples[i]);
    if (here == current)
      continue;
    // The first size past samples[i - 1] where another placement is best.
    int64_t lo = samples[i - 1], hi = samples[i];
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      (bestAt(mid) == current ? lo : hi) = mid;
    }
    ranges.push_back({start, hi - 1, 0, candidates[current].first, ""});
    start = hi;
    current = here;
  }
  ranges.push_back({start, samples.back(), 0, candidates[current].first, ""});
  for (Range &r : ranges)
    r.at = placedAt(r, samples);
  return ranges;
}

/// The size the driver places `r` at to get its placement: opt when inside
/// and placed so, else the largest sample inside placed so, else the
/// sample where its placement was found.
int64_t SizeRegimesPass::placedAt(const Range &r,
                                  const std::vector<int64_t> &samples) {
  int64_t opt = dim.getOpt();
  if (opt >= r.min && opt <= r.max && freeAt(opt).placement == r.placement)
    return opt;
  for (auto s = samples.rbegin(); s != samples.rend(); ++s)
    if (*s >= r.min && *s <= r.max && freeAt(*s).placement == r.placement)
      return *s;
  for (auto &[placement, found] : candidates)
    if (placement == r.placement)
      return found;
  return r.max;
}

/// Merges neighbours until at most `regimes` ranges are left: each time
/// the pair whose merge adds the least estimated time over their samples.
void SizeRegimesPass::merge(std::vector<Range> &ranges,
                            const std::vector<int64_t> &samples) {
  auto samplesIn = [&](int64_t min, int64_t max) {
    std::vector<int64_t> in;
    for (int64_t s : samples)
      if (s >= min && s <= max)
        in.push_back(s);
    return in;
  };
  auto total = [&](const Placement &p, const std::vector<int64_t> &sizes) {
    double sum = 0;
    for (int64_t s : sizes)
      sum += timeOf(p, s);
    return sum;
  };
  unsigned limit = std::max(1u, regimes.getValue());
  while (ranges.size() > 1) {
    double cheapest = std::numeric_limits<double>::infinity();
    size_t best = 0;
    bool keepLeft = true;
    for (size_t i = 0; i + 1 < ranges.size(); ++i) {
      std::vector<int64_t> sizes = samplesIn(ranges[i].min, ranges[i + 1].max);
      double own =
          total(ranges[i].placement, samplesIn(ranges[i].min, ranges[i].max)) +
          total(ranges[i + 1].placement,
                samplesIn(ranges[i + 1].min, ranges[i + 1].max));
      double left = total(ranges[i].placement, sizes) - own;
      double right = total(ranges[i + 1].placement, sizes) - own;
      // What the merge adds, relative to the two ranges' own time.
      double cost = std::min(left, right) / std::max(own, 1e-12);
      if (cost < cheapest || (i == 0 && !std::isfinite(cheapest))) {
        cheapest = cost;
        best = i;
        keepLeft = left <= right;
      }
    }
    // A cut must pay: below kMinGain of the estimated time over its
    // samples, one plan serves both ranges.
    if (ranges.size() <= limit && cheapest > kMinGain)
      break;
    Range &a = ranges[best], &b = ranges[best + 1];
    Range merged = keepLeft ? a : b;
    merged.min = a.min;
    merged.max = b.max;
    ranges[best] = merged;
    ranges.erase(ranges.begin() + best + 1);
  }
}

/// Moves each cut between the two placements left after merging to where
/// they cross: at the sample where the total estimate over both ranges'
/// samples is least, then by bisection from the sample before it to the
/// first size where the right placement is no slower (a merge keeps one
/// neighbour's placement; its old cut was against another).
void SizeRegimesPass::recut(std::vector<Range> &ranges,
                            const std::vector<int64_t> &samples) {
  for (size_t i = 0; i + 1 < ranges.size(); ++i) {
    Range &a = ranges[i], &b = ranges[i + 1];
    std::vector<int64_t> in;
    for (int64_t s : samples)
      if (s >= a.min && s <= b.max)
        in.push_back(s);
    if (in.size() < 2)
      continue;
    double best = std::numeric_limits<double>::infinity();
    size_t at = 0;
    for (size_t k = 1; k < in.size(); ++k) {
      double total = 0;
      for (size_t j = 0; j < in.size(); ++j)
        total += timeOf(j < k ? a.placement : b.placement, in[j]);
      if (total < best) {
        best = total;
        at = k;
      }
    }
    if (at == 0)
      continue;
    int64_t lo = in[at - 1], hi = in[at];
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      (timeOf(b.placement, mid) <= timeOf(a.placement, mid) ? hi : lo) = mid;
    }
    a.max = hi - 1;
    b.min = hi;
  }
  for (Range &r : ranges)
    r.at = placedAt(r, samples);
}

/// Why `right` starts where it does: both placements' estimates on the
/// two sides of the cut.
std::string SizeRegimesPass::why(const Range &left, const Range &right) {
  int64_t before = right.min - 1, at = right.min;
  if (alwaysSplit && right.placement.split && at == accelerators)
    return llvm::formatv("from {0} the batch is split over the {0} "
                         "accelerators (modelc --data-parallel): {1} "
                         "there; a smaller batch leaves one without a sample",
                         at, microseconds(timeOf(right.placement, at)))
        .str();
  return llvm::formatv("from {0} the placement at {1} ({2}) is estimated "
                       "{3} against {4} for the placement at {5} ({6}); at "
                       "{7}, {8} against {9}",
                       at, right.at, describe(right.placement),
                       microseconds(timeOf(right.placement, at)),
                       microseconds(timeOf(left.placement, at)), left.at,
                       describe(left.placement), before,
                       microseconds(timeOf(right.placement, before)),
                       microseconds(timeOf(left.placement, before)))
      .str();
}

LogicalResult SizeRegimesPass::writeReport(const std::vector<int64_t> &samples,
                                           const std::vector<Range> &ranges) {
  llvm::json::Array sampleList, rangeList;
  for (int64_t s : samples)
    sampleList.push_back(llvm::json::Object{
        {"size", s},
        {"placement", describe(freeAt(s).placement)},
        {"estimated_s", freeAt(s).seconds},
    });
  for (const Range &r : ranges) {
    llvm::json::Object o{{"min", r.min},
                         {"max", r.max},
                         {"at", r.at},
                         {"placement", describe(r.placement)},
                         {"data_parallel", r.placement.split},
                         {"estimated_s", timeOf(r.placement, r.at)}};
    if (!r.why.empty())
      o["why"] = r.why;
    rangeList.push_back(std::move(o));
  }
  llvm::json::Object root{{"target", target},
                          {"dimension", dim.getSymName()},
                          {"min", dim.getMin()},
                          {"max", dim.getMax()},
                          {"samples", std::move(sampleList)},
                          {"regimes", std::move(rangeList)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(report, ec);
  if (ec)
    return module.emitError("cannot write '")
           << report << "': " << ec.message();
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return success();
}

void SizeRegimesPass::runOnOperation() {
  module = getOperation();
  SmallVector<DimOp> dims(module.getOps<DimOp>());
  if (dims.empty())
    return;
  dim = dims.front();
  if (dims.size() > 1) {
    // Several dimensions: the regimes cut the batch (the dimension at axis
    // 0 of every entry point's inputs); the others stay dynamic in every
    // regime's plan, placed at their opt.
    StringAttr batch;
    bool agree = true;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal() || function.getNumArguments() == 0)
        continue;
      auto attr = function.getArgAttrOfType<ArrayAttr>(0, kDimsAttrName);
      auto name =
          attr && !attr.empty() ? dyn_cast<StringAttr>(attr[0]) : StringAttr();
      if (!name || name.getValue().empty() || (batch && batch != name))
        agree = false;
      else
        batch = name;
    }
    auto found = llvm::find_if(
        dims, [&](DimOp d) { return batch && d.getSymNameAttr() == batch; });
    // No batch in common (entry points of their own dimensions): one plan
    // covers the ranges.
    if (!agree || found == dims.end())
      return;
    dim = *found;
  }
  StringRef mode = dataParallel.getValue();
  if (mode != "never" && mode != "consider" && mode != "always") {
    module.emitError("modelc-size-regimes: data-parallel is '")
        << mode << "'; expected never, consider or always";
    return signalPassFailure();
  }
  considerSplit = mode == "consider";
  alwaysSplit = mode == "always";
  if (considerSplit || alwaysSplit) {
    std::optional<TargetDescription> t = loadTarget(target, module);
    if (!t)
      return signalPassFailure();
    accelerators = llvm::count_if(
        t->devices, [](const DeviceDesc &d) { return !d.isHost(); });
    if (accelerators < 2)
      considerSplit = alwaysSplit = false;
  }
  int64_t min = dim.getMin(), max = dim.getMax();
  if (min == max || regimes.getValue() <= 1)
    return;
  // min, the powers of two inside, opt and max.
  std::vector<int64_t> samples = {min, static_cast<int64_t>(dim.getOpt()), max};
  for (int64_t p = 1; p < max; p *= 2)
    if (p > min)
      samples.push_back(p);
  // The first size that splits, where a split is an option.
  if ((considerSplit || alwaysSplit) && accelerators > min &&
      accelerators <= max)
    samples.push_back(accelerators);
  llvm::sort(samples);
  samples.erase(std::unique(samples.begin(), samples.end()), samples.end());
  for (int64_t s : samples)
    if (freeAt(s).placement.empty()) {
      module.emitError("size regimes: the model cannot be placed on '")
          << target << "' with dimension '" << dim.getSymName() << "' at " << s
          << " (modelc-place fails there; --regimes=1 builds one plan)";
      return signalPassFailure();
    }
  // Always split: a model that cannot be split says why, at its op (the
  // trial at the max is kept, as splitAt's).
  if (alwaysSplit && max >= accelerators) {
    Trial loud = place(max, nullptr, /*dataParallel=*/true, /*quiet=*/false);
    if (loud.placement.empty())
      return signalPassFailure();
    split.emplace(max, std::move(loud));
  }
  std::vector<Range> ranges = cut(samples);
  merge(ranges, samples);
  recut(ranges, samples);
  for (size_t i = 1; i < ranges.size(); ++i)
    ranges[i].why = why(ranges[i - 1], ranges[i]);
  if (!report.empty() && failed(writeReport(samples, ranges)))
    return signalPassFailure();
  if (ranges.size() < 2)
    return;
  Builder b(module.getContext());
  SmallVector<Attribute> list;
  for (const Range &r : ranges) {
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("dim", dim.getSymNameAttr()),
        b.getNamedAttr("min", b.getI64IntegerAttr(r.min)),
        b.getNamedAttr("max", b.getI64IntegerAttr(r.max)),
        b.getNamedAttr("at", b.getI64IntegerAttr(r.at)),
        b.getNamedAttr("placement", b.getStringAttr(describe(r.placement))),
        b.getNamedAttr("data_parallel", b.getBoolAttr(r.placement.split)),
        b.getNamedAttr("estimated_s",
                       b.getF64FloatAttr(timeOf(r.placement, r.at)))};
    if (!r.why.empty())
      fields.push_back(b.getNamedAttr("why", b.getStringAttr(r.why)));
    list.push_back(b.getDictionaryAttr(fields));
  }
  module->setAttr("device.regimes", b.getArrayAttr(list));
}

} // namespace
