//===- Placement.h - device placement of a task graph -----------*- C++ -*-===//
//
// The placement algorithm on an abstract task graph, free of MLIR so that
// the pass (compiler/Transforms/PlaceDevices.cpp) and the quality benchmark
// (bench/placement) run the same code.
//
// Nodes have a time per device (infinity: no kernel there), edges carry
// bytes, nodes use weights (resident on every device that runs a node using
// them, counted once per device). Placement is HEFT (upward-rank list
// scheduling, each node on the device where it finishes first) followed by
// local improvement (move one node at a time while the simulated makespan
// drops), under each device's memory capacity: resident weights plus the
// activation peak from liveness in program order.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_ANALYSIS_PLACEMENT_H
#define MODELC_COMPILER_ANALYSIS_PLACEMENT_H

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace modelc {

enum class PlacementReason {
  Pinned,   ///< the user pinned it
  NoKernel, ///< only one device has a kernel for it
  Tiny,     ///< too small to be worth a move: stays with its input
  Alias,    ///< a view (reshape): stays with its input
  Cost,     ///< finishes first there
  Memory,   ///< a faster device lacked the memory
  Boundary, ///< a function input or output: on the host
  RankSums, ///< a sum over the ranks: with the others, on one device
};
const char *reasonName(PlacementReason reason);

struct PlacementProblem {
  static constexpr double kNoKernel = std::numeric_limits<double>::infinity();

  struct Node {
    std::vector<double> time;     ///< seconds per device
    std::vector<unsigned> inputs; ///< producing nodes, one entry per use
    std::vector<unsigned> weights;
    uint64_t outputBytes = 0;
    std::optional<unsigned> pinned;
    /// Placed with its first input's producer (tiny and alias nodes).
    std::optional<PlacementReason> follows;
  };

  unsigned numDevices = 1;
  std::vector<uint64_t> capacity; ///< bytes per device
  std::vector<uint64_t> weightBytes;
  std::vector<Node> nodes; ///< in a topological (program) order
  /// Seconds to move `bytes` between two devices (0 when equal).
  std::function<double(unsigned, unsigned, uint64_t)> transferTime;
};

struct PlacementResult {
  std::vector<unsigned> device;
  std::vector<PlacementReason> reason;
  std::vector<double> start, finish;
  double makespan = 0;
  std::vector<uint64_t> weightBytes;    ///< per device
  std::vector<uint64_t> activationPeak; ///< per device
  std::vector<double> busy;             ///< per device, seconds
  /// Whether every device's weights plus activation peak fit its capacity.
  bool fits = true;
};

struct PlacementOptions {
  bool improve = true; ///< run local improvement after HEFT
  unsigned improveRounds = 4;
  unsigned improveMaxNodes = 500; ///< HEFT alone above this size
};

/// Places every node. Deterministic: ties go to the lower device index.
PlacementResult placeNodes(const PlacementProblem &problem,
                           const PlacementOptions &options = {});

/// Simulates `assignment` as a list schedule in HEFT priority order and
/// fills times, memory and makespan (reasons are left untouched).
void simulatePlacement(const PlacementProblem &problem,
                       PlacementResult &result);

/// The priority order HEFT uses (decreasing upward rank, then program
/// order); a topological order.
std::vector<unsigned> placementOrder(const PlacementProblem &problem);

} // namespace modelc

#endif // MODELC_COMPILER_ANALYSIS_PLACEMENT_H
