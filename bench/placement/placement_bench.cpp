//===- placement_bench.cpp - quality and speed of device placement --------===//
//
// Generates random task graphs and machines and compares the makespan of
// modelc's placement (HEFT + local improvement) with: the best single
// device, plain HEFT, and, on small graphs (<= 12 ops, 3 devices), the
// optimum found by trying every assignment. All makespans come from the same
// evaluator (simulatePlacement: list scheduling in HEFT priority order), so
// "optimum" is the best assignment under that evaluator. Then times the
// placement of 1k and 10k-op graphs.
//
//   placement_bench [--seed N] [--graphs N]
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/Placement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace modelc;

namespace {

struct Machine {
  unsigned devices;
  double hostBandwidth, peerBandwidth, latency;
};

/// A random DAG in topological order: each op reads 1-3 earlier values
/// (mostly recent ones), runs 1-50x faster on an accelerator than on the
/// CPU plus a launch overhead, and outputs 1 KB to 8 MB.
PlacementProblem randomProblem(std::mt19937_64 &rng, unsigned ops,
                               const Machine &m) {
  std::uniform_real_distribution<double> u(0, 1);
  PlacementProblem p;
  p.numDevices = m.devices;
  p.capacity.assign(m.devices, ~0ull);
  p.transferTime = [m](unsigned a, unsigned b, uint64_t bytes) {
    if (a == b)
      return 0.0;
    double bw = (a == 0 || b == 0) ? m.hostBandwidth : m.peerBandwidth;
    return m.latency + static_cast<double>(bytes) / bw;
  };
  // The input lives on the host.
  PlacementProblem::Node input;
  input.time.assign(m.devices, 0.0);
  input.pinned = 0;
  input.outputBytes = static_cast<uint64_t>(std::pow(2.0, 10 + u(rng) * 13));
  p.nodes.push_back(input);
  for (unsigned i = 0; i < ops; ++i) {
    PlacementProblem::Node node;
    double cpu = std::pow(10.0, -5 + 3 * u(rng));
    node.time.push_back(cpu);
    for (unsigned d = 1; d < m.devices; ++d) {
      double speedup = 1 + 49 * u(rng);
      node.time.push_back(5e-6 + cpu / speedup);
    }
    unsigned fanIn = 1 + static_cast<unsigned>(u(rng) * 3);
    unsigned available = p.nodes.size();
    for (unsigned k = 0; k < fanIn; ++k) {
      // Mostly recent producers: a chain with some long edges.
      unsigned back =
          1 + static_cast<unsigned>(std::pow(u(rng), 3) * available);
      node.inputs.push_back(available - std::min(back, available));
    }
    std::sort(node.inputs.begin(), node.inputs.end());
    node.inputs.erase(std::unique(node.inputs.begin(), node.inputs.end()),
                      node.inputs.end());
    node.outputBytes = static_cast<uint64_t>(std::pow(2.0, 10 + u(rng) * 13));
    p.nodes.push_back(node);
  }
  // The output goes back to the host.
  PlacementProblem::Node output;
  output.time.assign(m.devices, 0.0);
  output.pinned = 0;
  output.inputs.push_back(p.nodes.size() - 1);
  p.nodes.push_back(output);
  return p;
}

double makespanOf(const PlacementProblem &p, std::vector<unsigned> devices) {
  PlacementResult r;
  r.device = std::move(devices);
  r.reason.assign(r.device.size(), PlacementReason::Cost);
  simulatePlacement(p, r);
  return r.makespan;
}

double bestSingleDevice(const PlacementProblem &p) {
  double best = INFINITY;
  for (unsigned d = 0; d < p.numDevices; ++d) {
    std::vector<unsigned> devices(p.nodes.size(), d);
    for (unsigned i = 0; i < p.nodes.size(); ++i)
      if (p.nodes[i].pinned)
        devices[i] = *p.nodes[i].pinned;
    best = std::min(best, makespanOf(p, devices));
  }
  return best;
}

double optimum(const PlacementProblem &p) {
  std::vector<unsigned> free;
  for (unsigned i = 0; i < p.nodes.size(); ++i)
    if (!p.nodes[i].pinned)
      free.push_back(i);
  std::vector<unsigned> devices(p.nodes.size(), 0);
  uint64_t total = 1;
  for (size_t k = 0; k < free.size(); ++k)
    total *= p.numDevices;
  double best = INFINITY;
  for (uint64_t code = 0; code < total; ++code) {
    uint64_t c = code;
    for (unsigned i : free) {
      devices[i] = c % p.numDevices;
      c /= p.numDevices;
    }
    best = std::min(best, makespanOf(p, devices));
  }
  return best;
}

struct Stats {
  double sum = 0, worst = 0;
  unsigned count = 0, atOrBelow = 0;
  void add(double ratio) {
    sum += ratio;
    worst = std::max(worst, ratio);
    ++count;
    if (ratio <= 1.0 + 1e-9)
      ++atOrBelow;
  }
};

} // namespace

int main(int argc, char **argv) {
  uint64_t seed = 1;
  unsigned graphs = 200;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--graphs") && i + 1 < argc)
      graphs = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else {
      std::fprintf(stderr, "usage: placement_bench [--seed N] [--graphs N]\n");
      return 2;
    }
  }
  std::mt19937_64 rng(seed);
  PlacementOptions heftOnly;
  heftOnly.improve = false;

  // Small graphs: against the optimum.
  Stats vsOptimum, heftVsOptimum, vsSingleSmall;
  for (unsigned g = 0; g < graphs; ++g) {
    Machine m{3, 3.2e10, 3e11, 1e-5};
    unsigned ops = 4 + g % 9; // 4..12
    PlacementProblem p = randomProblem(rng, ops, m);
    double best = optimum(p);
    double ours = placeNodes(p).makespan;
    double heft = placeNodes(p, heftOnly).makespan;
    vsOptimum.add(ours / best);
    heftVsOptimum.add(heft / best);
    vsSingleSmall.add(ours / bestSingleDevice(p));
  }
  // Larger graphs and machines: against the best single device and HEFT.
  Stats vsSingle, vsHeft;
  for (unsigned g = 0; g < graphs; ++g) {
    Machine m{2 + g % 7, 3.2e10, 3e11, 1e-5}; // 1..7 accelerators
    unsigned ops = 10 + (g * 37) % 291;       // 10..300
    PlacementProblem p = randomProblem(rng, ops, m);
    double ours = placeNodes(p).makespan;
    vsSingle.add(ours / bestSingleDevice(p));
    vsHeft.add(ours / placeNodes(p, heftOnly).makespan);
  }
  std::printf("placement quality (seed %llu, %u graphs per row; ratio of "
              "makespans, lower is better)\n",
              static_cast<unsigned long long>(seed), graphs);
  std::printf("| comparison | graphs | mean | worst | share <= 1 |\n"
              "| --- | --- | --- | --- | --- |\n");
  auto row = [](const char *name, const Stats &s) {
    std::printf("| %s | %u | %.4f | %.4f | %.0f%% |\n", name, s.count,
                s.sum / s.count, s.worst, 100.0 * s.atOrBelow / s.count);
  };
  row("modelc / optimum (4-12 ops, 3 devices)", vsOptimum);
  row("plain HEFT / optimum (4-12 ops, 3 devices)", heftVsOptimum);
  row("modelc / best single device (4-12 ops)", vsSingleSmall);
  row("modelc / best single device (10-300 ops, 2-8 devices)", vsSingle);
  row("modelc / plain HEFT (10-300 ops, 2-8 devices)", vsHeft);

  std::printf("\nplacement time (HEFT + local improvement up to %u ops)\n"
              "| ops | devices | ms |\n| --- | --- | --- |\n",
              PlacementOptions().improveMaxNodes);
  for (unsigned ops : {1000u, 10000u})
    for (unsigned devices : {3u, 9u}) {
      Machine m{devices, 3.2e10, 3e11, 1e-5};
      PlacementProblem p = randomProblem(rng, ops, m);
      auto start = std::chrono::steady_clock::now();
      PlacementResult r = placeNodes(p);
      auto end = std::chrono::steady_clock::now();
      std::printf(
          "| %u | %u | %.1f |\n", ops, devices,
          std::chrono::duration<double, std::milli>(end - start).count());
      (void)r;
    }
  return 0;
}
