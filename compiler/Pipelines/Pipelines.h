//===- Pipelines.h - registration and pass pipelines of modelc --*- C++ -*-===//
//
// The one place that decides which dialects a model may use and in which
// order passes run; the tools only call these.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_PIPELINES_PIPELINES_H
#define MODELC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace modelc {

/// The dialects a model is written in (graph, device, func) and the
/// scheduled IR's (sched).
void registerModelcDialects(mlir::DialectRegistry &registry);

/// Every modelc pass and pipeline, plus the MLIR passes pipelines use, for
/// modelc-opt.
void registerModelcPassesAndPipelines();

/// `--emit=graph`: check the model as a whole, canonicalize, remove common
/// subexpressions. Shapes were inferred when the ops were built.
void buildGraphPipeline(mlir::OpPassManager &pm);

/// `--train`: (with `loss`, the loss entry from `forward`:
/// modelc-attach-loss;) the loss entry's training form
/// (modelc-training-mode), its gradients (modelc-differentiate),
/// the optimizer's step (modelc-build-optimizer), then canonicalize and CSE
/// over the new entry points (the backward repeats forward values).
struct TrainingOptions {
  std::string entry;
  /// With `loss` (modelc-attach-loss's kinds), `entry` is the `loss` entry
  /// point built from the model's `forward` output and a `target`.
  std::string loss;
  std::string reduction = "mean";
  int64_t ignoreIndex = -100;
  double labelSmoothing = 0.0;
  std::vector<double> classWeights;
  std::string frozen;
  std::string optimizer = "sgd";
  double lr = 0.001, momentum = 0.0, dampening = 0.0, weightDecay = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double clipGradNorm = 0.0;
  int64_t accumulate = 1;
  /// modelc-recompute after the optimizer is built (`--recompute`).
  bool recompute = false;
  /// `--distributed`: global loss means (modelc-attach-loss) and gradients
  /// summed over the ranks in buckets (modelc-all-reduce-gradients).
  bool distributed = false;
  double bucketMb = 25.0, firstBucketMb = 1.0;
  /// `--sync-batchnorm`: BatchNorm's statistics over the ranks (and the
  /// replicas).
  bool syncBatchnorm = false;
  /// `--dropout-seed`: the seed of every dropout in training (-1: each op's
  /// own, ONNX's seed attribute or 0).
  int64_t dropoutSeed = -1;
  /// `--data-parallel`: the number of replicas in one process (0: none).
  /// modelc-split-batch builds the step for one replica's part of the
  /// batch, in distributed form; modelc-replicate (placement) runs it once
  /// per replica.
  int64_t replicas = 0;
  /// `--shard-optimizer-state`: ZeRO stage 1 over the replicas.
  bool shardOptimizerState = false;
};
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingOptions &options);

/// `--emit=placed`: (with `dataParallel`, split the batch over the
/// accelerators first,) place every op on a device of `target` and insert
/// the transfers. `report` and `dot` (when not empty) receive the placement
/// report and picture. With `replicas` (a data-parallel training build),
/// modelc-replicate runs each entry point once per replica first (and,
/// with `distributed`, sums over the ranks too) instead.
void buildPlacementPipeline(mlir::OpPassManager &pm, llvm::StringRef target,
                            llvm::StringRef report = "",
                            llvm::StringRef dot = "", int dropTransfer = -1,
                            bool dataParallel = false,
                            llvm::StringRef placeAll = "", int64_t replicas = 0,
                            bool distributed = false,
                            bool shardOptimizerState = false);

/// `--emit=scheduled`: after placement, the lowering passes that take every
/// decision the printers need (elementwise fusion, what a GPU's cuBLASLt
/// calls compute, the memory plan, streams and events) and write it into
/// the sched dialect.
struct ScheduleOptions {
  /// The plan checks each op's buffers (modelc --checked).
  bool checked = false;
  /// 3x3 CPU convolutions may use Winograd's algorithm (modelc
  /// --no-winograd clears it).
  bool winograd = true;
  /// GPU products compute a following ReLU in cuBLASLt's epilogue (modelc
  /// --gpu-relu-epilogue; off: the epilogue may turn NaN into 0).
  bool reluEpilogue = false;
  /// A CPU plan's all-reduces run beside the ops that follow them
  /// (modelc-overlap-all-reduce; modelc --no-overlap-all-reduce clears it).
  bool overlapAllReduce = true;
};
void buildSchedulePipeline(mlir::OpPassManager &pm,
                           const ScheduleOptions &options = {});

} // namespace modelc

#endif // MODELC_COMPILER_PIPELINES_PIPELINES_H
