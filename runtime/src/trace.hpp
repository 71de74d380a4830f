// trace.hpp - what one traced run records (LoadOptions::trace): the begin
// and end of each trace point (generated code's ctx->trace calls), of each
// copy, and where events were recorded and waits passed, per track (a
// device's compute or copy stream). Merged into the model's Trace when the
// run ends.
#ifndef MODELC_RUNTIME_TRACE_HPP
#define MODELC_RUNTIME_TRACE_HPP

#include "modelc/abi.h"
#include "modelc/runtime.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace modelc::detail {

class RunTrace {
public:
  /// Tracks of `deviceNames` (the plan's devices): "DEVICE compute" and
  /// "DEVICE copy" each, or the device's name alone for the compute track
  /// of a single-device plan.
  RunTrace(Trace &trace, const modelc_plan_desc &plan,
           const std::vector<std::string> &deviceNames, bool multiDevice);

  /// A run of `entry` by `runPlan` (a size regime's plan, named in the
  /// run's slice by `regime`; else the plan it was made for) begins.
  void begin(const std::string &entry,
             const modelc_plan_desc *runPlan = nullptr,
             const std::string &regime = std::string());
  /// Trace point `point` began or ended (MODELC_TRACE_*), now.
  void point(uint32_t point, uint32_t phase);
  /// A copy on `device`'s copy stream began (or, `end`, ended) now.
  void copy(uint32_t device, const char *what, uint64_t bytes, bool end);
  /// The communication thread began (or, `end`, ended) the sum of
  /// all_reduce_start's trace point `point` (`bytes` of it), now: a slice
  /// on the track "DEVICE comm" of the point's device.
  void collective(uint32_t point, uint64_t bytes, bool end);
  /// `event` was recorded on (or, `wait`, a wait for it passed) the stream
  /// `stream` of `device`, now.
  void event(uint32_t device, int stream, uint32_t event, bool wait);
  /// The run ended: its slices and flows go to the Trace.
  void end();

private:
  struct Mark {
    uint32_t event;
    std::size_t track;
    double time;
  };
  Trace &trace;
  const modelc_plan_desc *plan;
  std::mutex mutex;                 // streams of several devices record at once
  std::vector<std::string> devices; // the plan's device names
  std::vector<std::string> tracks;  // [2 * device + stream]
  std::vector<double> open;         // per track: when its slice began, or -1
  double openCollective = -1;       // the communication thread's
  std::vector<Trace::Slice> slices;
  std::vector<Mark> records, waits;
  int run = 0;
  std::string runName;
  double runStart = 0;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_TRACE_HPP
