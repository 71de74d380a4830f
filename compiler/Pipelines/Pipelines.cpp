//===- Pipelines.cpp - registration and pass pipelines of modelc ----------===//

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Device/IR/DeviceDialect.h"
#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Sched/IR/SchedDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void modelc::registerModelcDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, device::DeviceDialect,
                  sched::SchedDialect, mlir::func::FuncDialect>();
}

void modelc::buildGraphPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createVerifyModelPass());
  pm.addPass(createFoldConstantsPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createRaiseCompositesPass());
  pm.addPass(createCheckDynamicDimsPass());
}

void modelc::buildTrainingPipeline(mlir::OpPassManager &pm,
                                   const TrainingOptions &options) {
  // Replicas in one process: the step of one replica, in the form a rank's
  // takes (its sums over the replicas are all-reduces).
  bool shared = options.distributed || options.replicas > 0;
  if (options.replicas > 0) {
    SplitBatchPassOptions split;
    split.parts = options.replicas;
    pm.addPass(createSplitBatchPass(split));
  }
  if (!options.loss.empty()) {
    AttachLossPassOptions attach;
    attach.entry = "forward";
    attach.loss = options.loss;
    attach.reduction = options.reduction;
    attach.ignoreIndex = options.ignoreIndex;
    attach.labelSmoothing = options.labelSmoothing;
    attach.distributed = shared;
    attach.classWeights.assign(options.classWeights.begin(),
                               options.classWeights.end());
    pm.addPass(createAttachLossPass(attach));
  }
  TrainingModePassOptions mode;
  mode.entry = options.entry;
  mode.syncBatchnorm = options.syncBatchnorm;
  mode.dropoutSeed = options.dropoutSeed;
  pm.addPass(createTrainingModePass(mode));
  DifferentiatePassOptions differentiate;
  differentiate.entry = options.entry;
  differentiate.frozen = options.frozen;
  pm.addPass(createDifferentiatePass(differentiate));
  if (shared) {
    AllReduceGradientsPassOptions sum;
    sum.entry = options.entry;
    sum.bucketMb = options.bucketMb;
    sum.firstBucketMb = options.firstBucketMb;
    sum.replicated = options.replicas > 0 && !options.distributed;
    pm.addPass(createAllReduceGradientsPass(sum));
  }
  BuildOptimizerPassOptions optimizer;
  optimizer.optimizer = options.optimizer;
  optimizer.lr = options.lr;
  optimizer.momentum = options.momentum;
  optimizer.dampening = options.dampening;
  optimizer.nesterov = options.nesterov;
  optimizer.weightDecay = options.weightDecay;
  optimizer.beta1 = options.beta1;
  optimizer.beta2 = options.beta2;
  optimizer.eps = options.eps;
  optimizer.clipGradNorm = options.clipGradNorm;
  optimizer.accumulate = options.accumulate;
  pm.addPass(createBuildOptimizerPass(optimizer));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // After CSE, which would merge the copies back.
  if (options.recompute)
    pm.addPass(createRecomputePass());
  // Across ranks only: with replicas, modelc-replicate shards the state
  // over them. Last: no later graph pass rewrites the step's ops (the
  // back end's passes that wrap ops carry graph.shard: keepShardGuard).
  if (options.distributed && options.shardOptimizerState &&
      options.replicas == 0)
    pm.addPass(createShardOptimizerStatePass());
}

void modelc::buildPlacementPipeline(mlir::OpPassManager &pm,
                                    llvm::StringRef target,
                                    llvm::StringRef report, llvm::StringRef dot,
                                    int dropTransfer, bool dataParallel,
                                    llvm::StringRef placeAll, int64_t replicas,
                                    bool distributed,
                                    bool shardOptimizerState) {
  if (replicas > 0) {
    ReplicatePassOptions replicate;
    replicate.target = target.str();
    replicate.replicas = replicas;
    replicate.distributed = distributed;
    replicate.shardOptimizerState = shardOptimizerState;
    pm.addPass(createReplicatePass(replicate));
  } else if (dataParallel) {
    DataParallelPassOptions split;
    split.target = target.str();
    pm.addPass(createDataParallelPass(split));
  }
  PlaceDevicesPassOptions options;
  options.target = target.str();
  options.report = report.str();
  options.dot = dot.str();
  options.placeAll = placeAll.str();
  pm.addPass(createPlaceDevicesPass(options));
  InsertTransfersPassOptions transfers;
  transfers.dropTransfer = dropTransfer;
  pm.addPass(createInsertTransfersPass(transfers));
}

void modelc::buildSchedulePipeline(mlir::OpPassManager &pm,
                                   const ScheduleOptions &options) {
  pm.addPass(createFoldCpuProductsPass());
  SelectConvAlgorithmsPassOptions algorithms;
  algorithms.winograd = options.winograd;
  pm.addPass(createSelectConvAlgorithmsPass(algorithms));
  pm.addPass(createKeepCpuLayoutsPass());
  pm.addPass(createFuseElementwisePass());
  FoldGemmPassOptions gemm;
  gemm.checked = options.checked;
  gemm.reluEpilogue = options.reluEpilogue;
  pm.addPass(createFoldGemmPass(gemm));
  pm.addPass(createUpdateWeightsInPlacePass());
  if (options.overlapAllReduce)
    pm.addPass(createOverlapAllReducePass());
  pm.addPass(createPlanMemoryPass());
  pm.addPass(createScheduleStreamsPass());
}

void modelc::registerModelcPassesAndPipelines() {
  registerModelcPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::PassPipelineRegistration<>(
      "modelc-graph-pipeline",
      "What `modelc --emit=graph` runs: verify the model, canonicalize, CSE, "
      "raise composites, follow dynamic dimensions",
      buildGraphPipeline);
  mlir::PassPipelineRegistration<>(
      "modelc-schedule-pipeline",
      "What `modelc --emit=scheduled` runs after placement: the lowering "
      "passes that write the back end's decisions into the sched dialect",
      [](mlir::OpPassManager &pm) { buildSchedulePipeline(pm); });
}
