// modelc/calibrate.hpp - measures this machine for the compiler's cost
// model (modelc-run --calibrate=machine.json; modelc --target=machine.json).
#ifndef MODELC_CALIBRATE_HPP
#define MODELC_CALIBRATE_HPP

#include "modelc/runtime.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace modelc {

/// The CPU's figures, measured with the code modelc's plans run: memory
/// bandwidth (a parallel copy, bytes read plus written per second), the
/// cost of one parallel loop (the CPU's launch overhead), and matrix
/// products of constant weights (oneDNN, as packed products run) in f32 at
/// 256, 512 and 1024 and in f16 and bf16 at 1024; peak_* is the best rate.
struct CalibrationResult {
  struct Gemm {
    std::string dtype;
    int64_t n = 0;
    double flops = 0; ///< op/s
  };
  int threads = 0;
  uint64_t memory = 0; ///< bytes (the machine's, or its cgroup's limit)
  double bandwidth = 0, launch_overhead = 0;
  double peak_f32 = 0, peak_f16 = 0, peak_bf16 = 0;
  std::vector<Gemm> gemm;
};

/// Measures the CPU with `num_threads` threads (0: every core); an Error if
/// a product fails. Takes about a second.
CalibrationResult calibrate_cpu(int num_threads = 0);

/// A target JSON (docs/placement.md) of the CPU `r` measured, named `name`;
/// i32 and i64 peaks are f32's halved and quartered (the presets' ratios:
/// no integer kernel is measured). GPUs are not measured yet.
std::string calibration_target_json(const CalibrationResult &r,
                                    const std::string &name);

} // namespace modelc

#endif // MODELC_CALIBRATE_HPP
