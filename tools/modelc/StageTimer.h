//===- StageTimer.h - wall time per stage of modelc ------------*- C++ -*-===//
//
// For --time-stages: the time since the previous stage ended, per stage,
// printed to stderr when the timer goes away.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_TOOLS_MODELC_STAGETIMER_H
#define MODELC_TOOLS_MODELC_STAGETIMER_H

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace modelc::driver {

/// Wall time per stage for --time-stages; a disabled timer prints nothing.
class StageTimer {
public:
  explicit StageTimer(bool enabled) : enabled(enabled) {}
  /// Prints the stages and their total to stderr, when enabled.
  ~StageTimer() {
    if (!enabled)
      return;
    llvm::errs() << "modelc: stage times\n";
    double total = 0;
    for (auto &[name, seconds] : stages) {
      llvm::errs() << llvm::format("  %-22s %10.3f ms\n", name.c_str(),
                                   seconds * 1e3);
      total += seconds;
    }
    llvm::errs() << llvm::format("  %-22s %10.3f ms\n", "total", total * 1e3);
  }
  /// Ends the stage `name`, which began where the previous one ended.
  void stop(const std::string &name) {
    auto now = std::chrono::steady_clock::now();
    stages.push_back({name, std::chrono::duration<double>(now - last).count()});
    last = now;
  }

private:
  bool enabled;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> stages;
};

} // namespace modelc::driver

#endif // MODELC_TOOLS_MODELC_STAGETIMER_H
