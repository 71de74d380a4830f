//===- Placement.cpp - device placement of a task graph -------------------===//

#include "compiler/Analysis/Placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

using namespace modelc;

const char *modelc::reasonName(PlacementReason reason) {
  switch (reason) {
  case PlacementReason::Pinned:
    return "pinned";
  case PlacementReason::NoKernel:
    return "no kernel";
  case PlacementReason::Tiny:
    return "tiny";
  case PlacementReason::Alias:
    return "alias";
  case PlacementReason::Cost:
    return "cost";
  case PlacementReason::Memory:
    return "memory";
  case PlacementReason::Boundary:
    return "boundary";
  case PlacementReason::RankSums:
    return "rank sums";
  }
  return "?";
}

namespace {

using Problem = PlacementProblem;

std::vector<std::vector<unsigned>> successorsOf(const Problem &p) {
  std::vector<std::vector<unsigned>> succ(p.nodes.size());
  for (unsigned n = 0; n < p.nodes.size(); ++n)
    for (unsigned in : p.nodes[n].inputs)
      succ[in].push_back(n);
  return succ;
}

/// The device a following node takes: its first input's, when that device
/// can run it.
std::optional<unsigned> followedDevice(const Problem &p, unsigned n,
                                       const std::vector<unsigned> &device) {
  const Problem::Node &node = p.nodes[n];
  if (!node.follows || node.inputs.empty())
    return std::nullopt;
  unsigned d = device[node.inputs.front()];
  if (std::isinf(node.time[d]))
    return std::nullopt;
  return d;
}

bool isFree(const Problem::Node &node) { return !node.pinned && !node.follows; }

} // namespace

std::vector<unsigned> modelc::placementOrder(const Problem &p) {
  unsigned n = p.nodes.size(), devices = p.numDevices;
  std::vector<std::vector<unsigned>> succ = successorsOf(p);
  // Average communication cost per byte-count over ordered device pairs,
  // weighted by the chance that two random devices differ.
  auto avgComm = [&](uint64_t bytes) {
    if (devices < 2 || bytes == 0)
      return 0.0;
    double sum = 0;
    for (unsigned a = 0; a < devices; ++a)
      for (unsigned b = 0; b < devices; ++b)
        if (a != b)
          sum += p.transferTime(a, b, bytes);
    return sum / (devices * devices);
  };
  std::vector<double> rank(n, 0.0);
  for (unsigned i = n; i-- > 0;) {
    const Problem::Node &node = p.nodes[i];
    double total = 0;
    unsigned count = 0;
    for (double t : node.time)
      if (!std::isinf(t)) {
        total += t;
        ++count;
      }
    double best = 0;
    double comm = avgComm(node.outputBytes);
    for (unsigned s : succ[i])
      best = std::max(best, comm + rank[s]);
    rank[i] = (count ? total / count : 0) + best;
  }
  std::vector<unsigned> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    if (rank[a] != rank[b])
      return rank[a] > rank[b];
    return a < b;
  });
  return order;
}

void modelc::simulatePlacement(const Problem &p, PlacementResult &r) {
  unsigned n = p.nodes.size(), devices = p.numDevices;
  std::vector<unsigned> order = placementOrder(p);
  // Followers take their input's device (inputs come earlier in program
  // order, so one pass in that order settles chains).
  for (unsigned i = 0; i < n; ++i)
    if (std::optional<unsigned> d = followedDevice(p, i, r.device))
      r.device[i] = *d;
  r.start.assign(n, 0);
  r.finish.assign(n, 0);
  std::vector<double> available(devices, 0);
  r.busy.assign(devices, 0);
  for (unsigned i : order) {
    const Problem::Node &node = p.nodes[i];
    unsigned d = r.device[i];
    double ready = 0;
    for (unsigned in : node.inputs)
      ready = std::max(ready,
                       r.finish[in] + p.transferTime(r.device[in], d,
                                                     p.nodes[in].outputBytes));
    double time = node.time[d];
    r.start[i] = time > 0 ? std::max(ready, available[d]) : ready;
    r.finish[i] = r.start[i] + time;
    if (time > 0)
      available[d] = r.finish[i];
    r.busy[d] += time;
  }
  r.makespan = 0;
  for (double f : r.finish)
    r.makespan = std::max(r.makespan, f);

  // Memory: distinct weights per device, activation peak by liveness.
  r.weightBytes.assign(devices, 0);
  std::vector<std::set<unsigned>> resident(devices);
  for (unsigned i = 0; i < n; ++i)
    for (unsigned w : p.nodes[i].weights)
      if (resident[r.device[i]].insert(w).second)
        r.weightBytes[r.device[i]] += p.weightBytes[w];
  std::vector<std::vector<unsigned>> succ = successorsOf(p);
  // delta[d][pos]: bytes that become live at pos (positive) or die after it.
  std::vector<std::vector<int64_t>> delta(devices,
                                          std::vector<int64_t>(n + 1, 0));
  for (unsigned i = 0; i < n; ++i) {
    uint64_t bytes = p.nodes[i].outputBytes;
    if (!bytes)
      continue;
    std::vector<int64_t> lastOn(devices, -1);
    lastOn[r.device[i]] = i;
    for (unsigned s : succ[i])
      lastOn[r.device[s]] = std::max<int64_t>(lastOn[r.device[s]], s);
    for (unsigned d = 0; d < devices; ++d)
      if (lastOn[d] >= 0) {
        delta[d][i] += static_cast<int64_t>(bytes);
        delta[d][lastOn[d] + 1] -= static_cast<int64_t>(bytes);
      }
  }
  r.activationPeak.assign(devices, 0);
  r.fits = true;
  for (unsigned d = 0; d < devices; ++d) {
    int64_t live = 0;
    for (unsigned pos = 0; pos < n; ++pos) {
      live += delta[d][pos];
      r.activationPeak[d] = std::max<uint64_t>(r.activationPeak[d], live);
    }
    if (r.weightBytes[d] + r.activationPeak[d] > p.capacity[d])
      r.fits = false;
  }
}

PlacementResult modelc::placeNodes(const Problem &p,
                                   const PlacementOptions &options) {
  unsigned n = p.nodes.size(), devices = p.numDevices;
  PlacementResult r;
  r.device.assign(n, 0);
  r.reason.assign(n, PlacementReason::Cost);
  r.finish.assign(n, 0);
  std::vector<double> available(devices, 0);
  std::vector<std::set<unsigned>> resident(devices);
  std::vector<uint64_t> residentBytes(devices, 0);

  // HEFT: in priority order, each node where it finishes first.
  for (unsigned i : placementOrder(p)) {
    const Problem::Node &node = p.nodes[i];
    auto finishOn = [&](unsigned d) {
      double ready = 0;
      for (unsigned in : node.inputs)
        ready = std::max(ready, r.finish[in] +
                                    p.transferTime(r.device[in], d,
                                                   p.nodes[in].outputBytes));
      double time = node.time[d];
      return (time > 0 ? std::max(ready, available[d]) : ready) + time;
    };
    auto fitsOn = [&](unsigned d) {
      uint64_t extra = 0;
      for (unsigned w : node.weights)
        if (!resident[d].count(w))
          extra += p.weightBytes[w];
      uint64_t working = node.outputBytes;
      for (unsigned in : node.inputs)
        working += p.nodes[in].outputBytes;
      return residentBytes[d] + extra + working <= p.capacity[d];
    };
    std::optional<unsigned> chosen;
    if (node.pinned) {
      chosen = *node.pinned;
      r.reason[i] = PlacementReason::Pinned;
    } else if (std::optional<unsigned> d = followedDevice(p, i, r.device)) {
      chosen = *d;
      r.reason[i] = *node.follows;
    } else {
      unsigned runnable = 0;
      std::optional<unsigned> fastest, fastestFitting;
      for (unsigned d = 0; d < devices; ++d) {
        if (std::isinf(node.time[d]))
          continue;
        ++runnable;
        double f = finishOn(d);
        if (!fastest || f < finishOn(*fastest))
          fastest = d;
        if (fitsOn(d) && (!fastestFitting || f < finishOn(*fastestFitting)))
          fastestFitting = d;
      }
      chosen = fastestFitting ? fastestFitting : fastest;
      if (!chosen)
        chosen = 0; // no kernel anywhere: the caller has reported it
      r.reason[i] = runnable == 1 ? PlacementReason::NoKernel
                    : (fastestFitting && fastest && *fastest != *fastestFitting)
                        ? PlacementReason::Memory
                        : PlacementReason::Cost;
    }
    unsigned d = *chosen;
    r.device[i] = d;
    r.finish[i] = finishOn(d);
    if (node.time[d] > 0 && !std::isinf(node.time[d]))
      available[d] = r.finish[i];
    for (unsigned w : node.weights)
      if (resident[d].insert(w).second)
        residentBytes[d] += p.weightBytes[w];
  }
  simulatePlacement(p, r);

  // Never worse than running everything on one device that can.
  auto tryAllOn = [&](unsigned d) {
    PlacementResult single = r;
    for (unsigned i = 0; i < n; ++i) {
      const Problem::Node &node = p.nodes[i];
      if (node.pinned)
        continue; // pins, and the host's inputs and outputs, stay
      if (std::isinf(node.time[d]))
        return;
      single.device[i] = d;
    }
    simulatePlacement(p, single);
    if (single.fits && single.makespan < r.makespan * (1 - 1e-9)) {
      for (unsigned i = 0; i < n; ++i)
        if (!p.nodes[i].pinned && !p.nodes[i].follows)
          single.reason[i] = PlacementReason::Cost;
      r = std::move(single);
    }
  };

  // Local improvement: move one free node at a time while the makespan
  // drops and memory still fits.
  if (!options.improve || n > options.improveMaxNodes || devices < 2) {
    for (unsigned d = 0; d < devices; ++d)
      tryAllOn(d);
    return r;
  }
  std::vector<unsigned> order = placementOrder(p);
  for (unsigned round = 0; round < options.improveRounds; ++round) {
    bool improved = false;
    for (unsigned i : order) {
      const Problem::Node &node = p.nodes[i];
      if (!isFree(node))
        continue;
      for (unsigned d = 0; d < devices; ++d) {
        if (d == r.device[i] || std::isinf(node.time[d]))
          continue;
        PlacementResult trial = r;
        trial.device[i] = d;
        simulatePlacement(p, trial);
        if ((trial.fits || !r.fits) &&
            trial.makespan < r.makespan * (1 - 1e-9)) {
          trial.reason[i] = PlacementReason::Cost;
          r = std::move(trial);
          improved = true;
        }
      }
    }
    if (!improved)
      break;
  }
  for (unsigned d = 0; d < devices; ++d)
    tryAllOn(d);
  return r;
}
