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

  /// A link's figures: bytes/s of a 64 MB copy, seconds of a 4-byte one.
  struct Link {
    double bandwidth = 0, latency = 0;
  };
  /// Per visible GPU (calibrate_gpus): memory bandwidth (a 256 MB copy on
  /// the GPU, read plus written), the time per launch of an empty kernel,
  /// cuBLASLt matrix products per dtype (n doubled from 512 while one takes
  /// under 20 ms), and its links from and to the host (page-locked memory).
  struct Gpu {
    int ordinal = 0;
    std::string name;
    uint64_t memory = 0;
    double bandwidth = 0, launch_overhead = 0;
    double peak_f32 = 0, peak_f16 = 0, peak_bf16 = 0;
    Link to_gpu, to_host;
  };
  std::vector<Gpu> gpus;
  /// Peer copies between GPUs that reach each other.
  struct Peer {
    int from = 0, to = 0;
    double bandwidth = 0, latency = 0;
  };
  std::vector<Peer> peers;
};

/// Measures the CPU with `num_threads` threads (0: the CPUs this process
/// may use, as LoadOptions::num_threads); an Error if
/// a product fails. Takes about a second. GPUs: calibrate_gpus.
CalibrationResult calibrate_cpu(int num_threads = 0);

/// Measures every GPU the CUDA driver shows (none: nothing) into `r`; an
/// Error if the driver or cuBLASLt is missing or a call fails. Takes a few
/// seconds per GPU.
void calibrate_gpus(CalibrationResult &r);

/// A target JSON (docs/placement.md) of what `r` measured, named `name`: the
/// CPU, each GPU, a link each way between the host and each GPU, and the
/// peer links. Integer peaks are not measured: the CPU's i32 and i64 are
/// f32's halved and quartered, a GPU's i32 half and i64 0.15 of f32 (the
/// presets' ratios).
std::string calibration_target_json(const CalibrationResult &r,
                                    const std::string &name);

} // namespace modelc

#endif // MODELC_CALIBRATE_HPP
