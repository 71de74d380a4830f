//===- Driver.h - the stages of one modelc compilation ---------*- C++ -*-===//
//
// What modelc's command line asks for, as plain data, and the compilation
// that carries it out: parse and verify, graph passes, placement per target,
// weights, code generation, and the build of model.so.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_TOOLS_MODELC_DRIVER_H
#define MODELC_TOOLS_MODELC_DRIVER_H

#include "compiler/Pipelines/Pipelines.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::driver {

/// What modelc produces (--emit).
enum class EmitKind { Library, Graph, Placed, Scheduled, Cpp, Cuda };

/// The command line of modelc; each field is the option of the same name
/// (modelc.cpp describes them).
struct DriverOptions {
  std::string inputPath;
  std::string outputPath;
  EmitKind emitKind = EmitKind::Library;
  std::vector<std::string> targets;
  std::string placementReport;
  std::string placementDot;
  /// --placement-svg: the DOT picture drawn by Graphviz's dot.
  std::string placementSvg;
  std::string weightsPath;
  /// Set when --random-weights is given: its seed as written ("" for 0).
  std::optional<std::string> randomWeights;
  bool externalWeights = false;
  std::string saveWeights;
  std::string saveTemps;
  bool dataParallel = false;
  /// --data-parallel=false: not even the cost model's own split.
  bool noDataParallel = false;
  bool checked = false;
  /// --no-winograd clears it.
  bool winograd = true;
  /// A CPU plan's all-reduces run beside the backward
  /// (modelc-overlap-all-reduce); --no-overlap-all-reduce clears it.
  bool overlapAllReduce = true;
  /// --gpu-relu-epilogue: cuBLASLt computes a ReLU after a GPU product.
  bool reluEpilogue = false;
  /// --precision: f32 (as the model is), f16 or bf16.
  std::string precision = "f32";
  std::string placeAll;
  /// --input-shape NAME=D0xD1x...: shapes of an ONNX model's dynamic inputs.
  std::vector<std::string> inputShapes;
  /// --dim NAME=MIN..MAX[@OPT]: ranges of dynamic dimensions.
  std::vector<std::string> dims;
  /// --regimes: the most size regimes (plans per target) of a dynamic
  /// dimension; 1: one plan covers the range.
  unsigned regimes = 4;
  bool cudaEmulation = false;
  bool allowTf32 = false;
  int debugDropTransfer = -1;
  bool timeStages = false;
  /// C++ compiler processes at once; 0: one per hardware thread.
  unsigned jobs = 0;
  bool verbose = false;
  /// --train[=ENTRY] and its optimizer's flags (training.entry empty: no
  /// training); --betas as written, parsed by the driver.
  modelc::TrainingOptions training;
  std::string betas = "0.9,0.999";
  /// --train=ENTRY named the loss entry (not the default).
  bool trainEntryGiven = false;
  /// --loss-weight: the class weights' .npy.
  std::string lossWeightPath;
  /// The whole command line, recorded in model.so as its provenance.
  std::string flags;
};

/// Compiles as `options` say. Every failure has been reported (a located
/// diagnostic, or "modelc: error: ...") when this returns failure.
mlir::LogicalResult runDriver(const DriverOptions &options);

} // namespace modelc::driver

#endif // MODELC_TOOLS_MODELC_DRIVER_H
