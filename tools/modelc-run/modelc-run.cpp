//===- modelc-run.cpp - load, run, time and check a compiled model --------===//
//
//   modelc-run model.so --input x=x.npy --output y=y.npy
//   modelc-run model.so --random-inputs --bench 100
//   modelc-run model.so --random-inputs --compare-reference model.ir
//
// Runs through the public runtime API (modelc/runtime.hpp); the reference
// comparison evaluates the model's IR with the compiler's interpreter on the
// same inputs and the same weights (read back from the loaded model).
//
// Built twice: modelc-run, and modelc-run-lite without the reference
// interpreter (MODELC_RUN_WITH_REFERENCE=0), which links the runtime alone
// and so runs on machines with no LLVM or MLIR (the GPU check kit).
//
//===----------------------------------------------------------------------===//

#include "modelc/calibrate.hpp"
#include "modelc/half.h"
#include "modelc/npy.hpp"
#include "modelc/runtime.hpp"

#if MODELC_RUN_WITH_REFERENCE
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Reference/Interpreter.h"
#include "compiler/Transforms/BatchValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *usage = R"(usage: modelc-run MODEL.so [options]
       modelc-run --devices

Loads a model compiled by modelc, runs one entry point and reports its outputs.

  --entry NAME              entry point to run (default: the first)
  --input NAME=FILE.npy     an input from a .npy file (repeat per input)
  --random-inputs           fill inputs that were not given with random data
  --seed N                  seed of --random-inputs (default 0)
  --dim NAME=N              random inputs' size of dynamic dimension NAME
                            (default: its max; --info lists them)
  --output NAME=FILE.npy    write an output to a .npy file (repeat)
  --output-dir DIR          write every output to DIR/NAME.npy
  --weights FILE            load weights from a safetensors file instead
  --plan NAME|GPUS          the plan to run: a name, GPUs ("cuda:1",
                            "cuda:0,cuda:2") or a mapping ("cuda:0=cuda:2");
                            default: the most GPUs this machine has, else cpu
  --cuda-graphs             run the GPU plan as CUDA graphs: captured on the
                            first run, replayed after (needs every op on a
                            GPU: modelc --place-all=cuda:0)
  --threads N               CPU threads (default: the CPUs this process may
                            run on, its affinity mask, capped by its
                            cgroup CPU quota)
  --bench N                 time N runs after 3 warm-up runs
  --concurrent T            run the entry point N times (--bench N, else 25)
                            from each of T threads at once; every result
                            must equal the first run's, bit for bit
  --compare-reference IR    also run MODEL's IR in the reference interpreter
                            and compare (exit status 1 on a mismatch)
  --repeat N                with --random-inputs: run N times, the K-th
                            run on inputs of seed --seed + K, and compare
                            every run (--compare-reference, or --expect
                            with {seed} in the file name, replaced by each
                            run's seed); with --cuda-graphs the second run
                            captures the graph, later ones replay it
  --expect NAME=FILE.npy    also compare output NAME with a saved .npy
                            (exit status 1 on a mismatch; repeat)
  --rtol R, --atol A        comparison tolerances: |got - want| <= A + R*|want|
                            (default: by the precision the output was
                            computed in, its dtype's or the model's
                            --precision: f32 1e-4 and 1e-5, f16 1e-2 and
                            5e-3, bf16 5e-2 and 2e-2; each line prints the
                            ones used)
  --trace FILE              record every run as a timeline in Chrome's
                            trace-event JSON (open it in Perfetto or
                            chrome://tracing): a track per device stream,
                            a slice per op and copy, flows for event waits
                            (rank 0's runs with --distributed)
  --profile[=json]          per-op times: the median over --bench N runs
                            (default 20) after 3 warm-up runs, each op's
                            share, its track and the compiler's estimate,
                            slowest first; =json prints them as JSON
  --calibrate=FILE          measure this machine (the CPU: memory bandwidth,
                            the cost of a parallel loop, matrix products in
                            f32, f16, bf16; each GPU: bandwidth, kernel
                            launch, cuBLASLt products, links to the host and
                            between GPUs) and write a target JSON that
                            modelc --target=FILE takes; needs no model
  --train-steps N           training (a model built with modelc --train):
                            run train_step (or --entry) N times on the
                            same inputs, printing "step K loss L" per step
  --data DIR                with --train-steps: a batch per step from
                            DIR/0, DIR/1, ... (each a folder of NAME.npy,
                            one per input it gives), in order, round and
                            round; the next batch is read while a step
                            runs; without --train-steps, one pass
  --lr R                    the learning rate of these steps (train_step's
                            `lr` input; default: modelc's --lr)
  --save-weights FILE       after the run(s), write every weight as the
                            model holds it then (parameters and optimizer
                            state) to a safetensors file; --weights FILE
                            resumes from it
  --save-every N            with --train-steps and --save-weights: also
                            write the checkpoint after every N-th step
                            (replacing the file, never half-written), so
                            that a stopped run resumes with --load-weights
  --load-weights FILE       before running, read a --save-weights file into
                            the model's trained weights and optimizer state
                            (Model::load_weights: weights it does not train
                            must hold the model's own values)
  --distributed[=mpi]       join the distributed run this process was
                            started in (mpirun -np N modelc-run ...) through
                            the backend plugin (libmodelc_comm_mpi.so): the
                            model's all-reduces (modelc --train
                            --distributed) sum over the ranks; every rank
                            checks that all run the same model and plan;
                            only rank 0 prints steps and writes files
  --shard-inputs            with --distributed: each rank takes its part of
                            dimension 0 of every input file (--input,
                            --data): rank R of N the R-th of N equal parts
  --collective-timeout S    with --distributed: a rank that does not answer
                            within S seconds (default 300) is an error
  --info                    print the model's entry points, weights and plan
  --devices                 list the GPUs this machine shows the runtime
                            (after CUDA_VISIBLE_DEVICES), or why there are none
  --help
)";

struct Options {
  std::string model, entry, weights, reference, plan, outputDir, trace;
  std::string profile; // "", "text" or "json"
  std::string saveWeights, loadWeights;
  int trainSteps = 0;
  int saveEvery = 0;
  std::optional<double> lr; // --lr: train_step's `lr` input
  std::string data;         // --data DIR: a batch per step
  std::string calibrate;    // --calibrate=FILE
  std::map<std::string, std::string> inputs, outputs, expect;
  std::map<std::string, std::string> dims; // --dim NAME=N
  bool randomInputs = false, info = false, devices = false;
  uint64_t seed = 0;
  int threads = 0, bench = 0, concurrent = 0;
  int repeat = 1; // --repeat N: runs, each on new random inputs
  bool cudaGraphs = false;
  /// Unset: by the precision the output was computed in.
  std::optional<double> rtol, atol;
  std::string distributed; // --distributed: the backend
  bool shardInputs = false;
  double collectiveTimeout = 300.0;
  // The run's rank and size, once the model has joined it.
  int rank = 0, ranks = 1;
};

[[noreturn]] void usageError(const std::string &message) {
  std::cerr << "modelc-run: error: " << message << "\n"
            << "(modelc-run --help shows the options)\n";
  std::exit(1);
}

void checkCombinations(const Options &o);

Options parseArgs(int argc, char **argv) {
  Options o;
  auto value = [&](int &i) -> std::string {
    if (i + 1 >= argc)
      usageError(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto number = [&](const std::string &flag, const std::string &text) {
    try {
      size_t used = 0;
      double v = std::stod(text, &used);
      if (used != text.size())
        throw std::invalid_argument(text);
      return v;
    } catch (...) {
      usageError(flag + " takes a number, got '" + text + "'");
    }
  };
  auto pair = [&](const std::string &flag, const std::string &text,
                  std::map<std::string, std::string> &into) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      usageError(flag + " takes NAME=FILE, got '" + text + "'");
    into[text.substr(0, eq)] = text.substr(eq + 1);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (a == "--entry") {
      o.entry = value(i);
    } else if (a == "--input") {
      pair(a, value(i), o.inputs);
    } else if (a == "--output") {
      pair(a, value(i), o.outputs);
    } else if (a == "--output-dir") {
      o.outputDir = value(i);
    } else if (a == "--random-inputs") {
      o.randomInputs = true;
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(number(a, value(i)));
    } else if (a == "--weights") {
      o.weights = value(i);
    } else if (a == "--cuda-graphs") {
      o.cudaGraphs = true;
    } else if (a == "--plan") {
      o.plan = value(i);
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number(a, value(i)));
    } else if (a == "--concurrent") {
      o.concurrent = static_cast<int>(number(a, value(i)));
    } else if (a == "--bench") {
      o.bench = static_cast<int>(number(a, value(i)));
    } else if (a == "--dim") {
      pair(a, value(i), o.dims);
    } else if (a == "--compare-reference") {
      o.reference = value(i);
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(number(a, value(i)));
      if (o.repeat < 1)
        usageError("--repeat takes a count of at least 1");
    } else if (a == "--expect") {
      pair(a, value(i), o.expect);
    } else if (a == "--rtol") {
      o.rtol = number(a, value(i));
    } else if (a == "--atol") {
      o.atol = number(a, value(i));
    } else if (a == "--trace") {
      o.trace = value(i);
    } else if (a == "--profile" || a == "--profile=text") {
      o.profile = "text";
    } else if (a == "--profile=json") {
      o.profile = "json";
    } else if (a.rfind("--profile=", 0) == 0) {
      usageError("--profile takes text or json, got '" + a.substr(10) + "'");
    } else if (a.rfind("--calibrate=", 0) == 0) {
      o.calibrate = a.substr(12);
      if (o.calibrate.empty())
        usageError("--calibrate takes a file: --calibrate=machine.json");
    } else if (a == "--calibrate") {
      o.calibrate = value(i);
    } else if (a == "--train-steps") {
      o.trainSteps = static_cast<int>(number(a, value(i)));
      if (o.trainSteps < 1)
        usageError("--train-steps takes a count of at least 1");
    } else if (a == "--data") {
      o.data = value(i);
    } else if (a == "--lr") {
      o.lr = number(a, value(i));
      if (!std::isfinite(*o.lr))
        usageError("--lr takes a finite number");
    } else if (a == "--save-weights") {
      o.saveWeights = value(i);
    } else if (a == "--save-every") {
      o.saveEvery = static_cast<int>(number(a, value(i)));
      if (o.saveEvery < 1)
        usageError("--save-every takes a number of steps of at least 1");
    } else if (a == "--load-weights") {
      o.loadWeights = value(i);
    } else if (a == "--distributed") {
      o.distributed = "mpi";
    } else if (a.rfind("--distributed=", 0) == 0) {
      o.distributed = a.substr(14);
      if (o.distributed != "mpi")
        usageError("--distributed takes mpi (the one backend so far), got '" +
                   o.distributed + "'");
    } else if (a == "--shard-inputs") {
      o.shardInputs = true;
    } else if (a == "--collective-timeout") {
      o.collectiveTimeout = number(a, value(i));
      if (!(o.collectiveTimeout > 0))
        usageError("--collective-timeout takes a positive number of seconds");
    } else if (a == "--info") {
      o.info = true;
    } else if (a == "--devices") {
      o.devices = true;
    } else if (!a.empty() && a[0] == '-') {
      usageError("unknown option '" + a + "'");
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      usageError("more than one model given ('" + o.model + "', '" + a + "')");
    }
  }
  checkCombinations(o);
  return o;
}

/// The options' combinations parseArgs refuses (each option alone is
/// checked where it is read).
void checkCombinations(const Options &o) {
  if (o.model.empty() && !o.devices && o.calibrate.empty())
    usageError("no model given");
  if (!o.distributed.empty() && (o.bench > 0 || o.concurrent > 0 ||
                                 !o.profile.empty() || !o.reference.empty()))
    usageError("--distributed with --bench, --profile, --concurrent or "
               "--compare-reference is not supported yet");
  if (o.repeat > 1 &&
      (!o.randomInputs || (o.reference.empty() && o.expect.empty()) ||
       o.trainSteps > 0 || !o.data.empty() || !o.distributed.empty()))
    usageError("--repeat runs an entry point again on new random inputs "
               "and compares every run: it needs --random-inputs and "
               "--compare-reference or --expect (and no --train-steps, "
               "--data or --distributed)");
  for (const auto &[name, path] : o.expect)
    if (o.repeat > 1 && path.find("{seed}") == std::string::npos)
      usageError("--expect " + name + "=" + path +
                 ": with --repeat, every run is compared with its own file: "
                 "put {seed} in the name (replaced by each run's seed)");
  if (o.saveEvery > 0 &&
      (o.saveWeights.empty() || (o.trainSteps == 0 && o.data.empty())))
    usageError("--save-every writes the --save-weights checkpoint during "
               "training: it needs --save-weights and --train-steps (or "
               "--data)");
  if (o.shardInputs && o.distributed.empty())
    usageError("--shard-inputs splits the inputs over the ranks of a "
               "distributed run: add --distributed");
}

modelc::Tensor randomTensor(const modelc::TensorInfo &info,
                            const std::map<std::string, int64_t> &dims,
                            std::mt19937_64 &rng) {
  std::vector<int64_t> shape = info.shape;
  for (std::size_t a = 0; a < info.dims.size(); ++a)
    if (auto it = dims.find(info.dims[a]); it != dims.end())
      shape[a] = it->second;
  modelc::Tensor t = modelc::Tensor::zeros(shape, info.dtype);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  int64_t n = t.numel();
  bool isFloat =
      info.dtype == modelc::DType::F32 || info.dtype == modelc::DType::F16 ||
      info.dtype == modelc::DType::BF16 || info.dtype == modelc::DType::F64;
  // Floats uniform in [-1, 1); integers and bools 0 or 1 (valid indices).
  for (int64_t i = 0; i < n; ++i)
    modelc::storeDouble(info.dtype, t.mutable_data(), i,
                        isFloat ? uniform(rng)
                                : static_cast<double>(rng() % 2));
  return t;
}

/// Element i of a host tensor as double.
double elementAt(const modelc::Tensor &t, int64_t i) {
  return modelc::elementAsDouble(t.dtype(), t.data(), i);
}

std::vector<double> elements(const modelc::Tensor &t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = elementAt(t, i);
  return v;
}

/// The tolerances for an output of `dtype` of `model`: --rtol/--atol, else
/// those of the lowest precision it was computed in (its own dtype or the
/// model's, Model::compute_precision): f32 1e-4 and 1e-5, f16 1e-2 and
/// 5e-3, bf16 5e-2 and 2e-2.
std::pair<double, double>
tolerances(const Options &o, const modelc::Model &model, modelc::DType dtype) {
  std::string precision = model.compute_precision();
  if (dtype == modelc::DType::BF16)
    precision = "bf16";
  else if (dtype == modelc::DType::F16 && precision != "bf16")
    precision = "f16";
  double rtol = 1e-4, atol = 1e-5;
  if (precision == "f16")
    rtol = 1e-2, atol = 5e-3;
  else if (precision == "bf16")
    rtol = 5e-2, atol = 2e-2;
  return {o.rtol.value_or(rtol), o.atol.value_or(atol)};
}

/// Compares an output of `model` with what it should be; prints one line
/// (and the first difference); returns false on a mismatch.
bool compareOutput(const Options &o, const modelc::Model &model,
                   const char *label, const std::string &name,
                   const modelc::Tensor &got, const std::vector<double> &want) {
  auto [rtol, atol] = tolerances(o, model, got.dtype());
  if (static_cast<int64_t>(want.size()) != got.numel()) {
    std::printf("%s: output '%s': %lld elements, expected %zu: MISMATCH\n",
                label, name.c_str(), static_cast<long long>(got.numel()),
                want.size());
    return false;
  }
  double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, firstBad = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = elementAt(got, i), w = want[i];
    double err = std::fabs(g - w);
    // A NaN matches only a NaN and an infinity only itself; the tolerance
    // test below cannot decide those (it is false for a NaN or an infinite
    // `w`).
    bool special = !std::isfinite(g) || !std::isfinite(w);
    bool specialMismatch =
        special && g != w && !(std::isnan(g) && std::isnan(w));
    if (special)
      err = specialMismatch ? INFINITY : 0;
    maxAbs = std::max(maxAbs, err);
    if (w != 0 && std::isfinite(w))
      maxRel = std::max(maxRel, err / std::fabs(w));
    if (specialMismatch || err > atol + rtol * std::fabs(w)) {
      if (firstBad < 0)
        firstBad = i;
      ++bad;
    }
  }
  std::printf("%s: output '%s': max abs error %.3g, max rel error %.3g (atol "
              "%g, rtol %g): %s\n",
              label, name.c_str(), maxAbs, maxRel, atol, rtol,
              bad ? "MISMATCH" : "OK");
  if (bad)
    std::printf("  %lld of %lld elements differ; first at index %lld: got "
                "%.9g, want %.9g\n",
                static_cast<long long>(bad),
                static_cast<long long>(got.numel()),
                static_cast<long long>(firstBad), elementAt(got, firstBad),
                want[firstBad]);
  return bad == 0;
}

/// The index of `entry`'s output `name`; an error names the entry otherwise.
size_t outputIndex(const modelc::EntryInfo &entry, const std::string &name) {
  for (size_t k = 0; k < entry.outputs.size(); ++k)
    if (entry.outputs[k].name == name)
      return k;
  throw modelc::Error("entry point '" + entry.name + "' has no output '" +
                      name + "'");
}

/// The index of `entry`'s input `name`.
size_t inputIndex(const modelc::EntryInfo &entry, const std::string &name) {
  for (size_t k = 0; k < entry.inputs.size(); ++k)
    if (entry.inputs[k].name == name)
      return k;
  throw modelc::Error("entry point '" + entry.name + "' has no input '" + name +
                      "'");
}

/// Compares outputs with saved .npy files (--expect).
bool compareWithFiles(const Options &o, const modelc::Model &model,
                      const modelc::EntryInfo &entry,
                      const std::vector<modelc::Tensor> &outputs) {
  bool ok = true;
  for (const auto &[name, pattern] : o.expect) {
    const modelc::Tensor &got = outputs[outputIndex(entry, name)];
    // "{seed}" in the file name: the run's --seed (runs of --repeat).
    std::string path = pattern;
    if (size_t at = path.find("{seed}"); at != std::string::npos)
      path.replace(at, 6, std::to_string(o.seed));
    modelc::Tensor want = modelc::read_npy(path);
    if (want.shape() != got.shape())
      throw modelc::Error("--expect " + name + ": " + path + " holds " +
                          want.describe() + ", the output is " +
                          got.describe());
    ok &= compareOutput(o, model, "expect", name, got, elements(want));
  }
  return ok;
}

#if MODELC_RUN_WITH_REFERENCE
modelc::RefTensor toReference(const modelc::Tensor &t) {
  return modelc::RefTensor{t.shape(), elements(t)};
}
#endif

void summarize(const std::string &name, const modelc::Tensor &t) {
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = elementAt(t, i);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
  }
  std::printf("output '%s': %s min %.6g max %.6g mean %.6g\n", name.c_str(),
              t.describe().c_str(), mn, mx, t.numel() ? sum / t.numel() : 0.0);
}

#if MODELC_RUN_WITH_REFERENCE
/// Runs the reference interpreter; returns false on a mismatch.
bool compareWithReference(const Options &o, const modelc::Model &model,
                          const modelc::EntryInfo &entry,
                          const std::vector<modelc::Tensor> &inputs,
                          const std::vector<modelc::Tensor> &outputs) {
  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(o.reference, sourceMgr, &context);
  if (!module)
    throw modelc::Error("cannot read the reference IR '" + o.reference + "'");
  mlir::PassManager pm(&context);
  modelc::buildGraphPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    throw modelc::Error("the reference IR '" + o.reference + "' is invalid");
  // Dynamic dimensions: the IR at this run's sizes.
  std::vector<std::pair<llvm::StringRef, int64_t>> sizes;
  for (std::size_t i = 0; i < entry.inputs.size() && i < inputs.size(); ++i)
    for (std::size_t a = 0; a < entry.inputs[i].dims.size(); ++a)
      if (!entry.inputs[i].dims[a].empty())
        sizes.emplace_back(entry.inputs[i].dims[a], inputs[i].shape()[a]);
  if (!sizes.empty() &&
      mlir::failed(modelc::graph::specializeDims(*module, sizes)))
    throw modelc::Error("the reference IR '" + o.reference +
                        "' cannot be evaluated at this run's sizes");
  auto function = module->lookupSymbol<mlir::func::FuncOp>(entry.name);
  if (!function)
    throw modelc::Error("the reference IR has no entry point '" + entry.name +
                        "'");
  // The interpreter holds every value in double: a model near the memory
  // limit runs out of it here, which is an error, not an abort.
  uint64_t weightBytes = 0;
  for (const std::string &name : model.weight_names())
    weightBytes +=
        static_cast<uint64_t>(model.weight(name).numel()) * sizeof(double);
  mlir::FailureOr<std::vector<modelc::RefTensor>> expected;
  try {
    std::vector<modelc::RefTensor> refInputs;
    for (const modelc::Tensor &t : inputs)
      refInputs.push_back(toReference(t));
    modelc::WeightProvider weights =
        [&](llvm::StringRef name) -> mlir::FailureOr<modelc::RefTensor> {
      return toReference(model.weight(name.str()));
    };
    expected = modelc::interpret(function, refInputs, weights);
  } catch (const std::bad_alloc &) {
    throw modelc::Error(
        "--compare-reference: out of memory in the reference interpreter, "
        "which holds every value in double (" +
        std::to_string(weightBytes) +
        " bytes for the weights alone); compare with saved outputs "
        "(--expect) instead");
  }
  if (mlir::failed(expected))
    throw modelc::Error("the reference interpreter failed");
  bool ok = true;
  for (size_t k = 0; k < outputs.size(); ++k)
    ok &= compareOutput(o, model, "compare-reference", entry.outputs[k].name,
                        outputs[k], (*expected)[k].data);
  return ok;
}
#else
bool compareWithReference(const Options &, const modelc::Model &,
                          const modelc::EntryInfo &,
                          const std::vector<modelc::Tensor> &,
                          const std::vector<modelc::Tensor> &) {
  throw modelc::Error("this build (modelc-run-lite) has no reference "
                      "interpreter; use modelc-run for --compare-reference, "
                      "or --expect with saved outputs");
}
#endif

int listDevices() {
  const modelc::GpuInventory &inv = modelc::visible_gpus();
  std::printf("cpu\n");
  for (const modelc::GpuInfo &gpu : inv.gpus)
    std::printf("cuda:%d  %s, %.1f GiB, compute capability %d.%d\n",
                gpu.ordinal, gpu.name.c_str(),
                static_cast<double>(gpu.memory_bytes) / (1u << 30),
                gpu.compute_major, gpu.compute_minor);
  std::printf("GPUs: %s", inv.status.c_str());
  if (inv.driver_version)
    std::printf(" (driver CUDA %d.%d)", inv.driver_version / 1000,
                inv.driver_version % 1000 / 10);
  std::printf("\n");
  return 0;
}

/// --bench N: 3 warm-up runs, then N timed runs: min, median and p90.
void bench(const Options &o, modelc::Model &model,
           const modelc::EntryInfo &entry,
           const std::vector<modelc::Tensor> &inputs,
           std::vector<modelc::Tensor> &outputs) {
  for (int i = 0; i < 3; ++i)
    model.run_into(entry.name, inputs, outputs);
  std::vector<double> ms;
  for (int i = 0; i < o.bench; ++i) {
    auto start = std::chrono::steady_clock::now();
    model.run_into(entry.name, inputs, outputs);
    auto end = std::chrono::steady_clock::now();
    ms.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))];
  };
  std::printf("bench: %d runs, %d threads: min %.3f ms, median %.3f ms, p90 "
              "%.3f ms\n",
              o.bench, model.num_threads(), ms.front(), pct(0.5), pct(0.9));
}

/// --profile: runs the entry point (3 warm-up runs, then --bench N or 20)
/// and prints, per op and track, the median over those runs of its time
/// in a run, its share of all ops' time and the compiler's estimate.
void profile(const Options &o, modelc::Model &model,
             const modelc::EntryInfo &entry,
             const std::vector<modelc::Tensor> &inputs,
             std::vector<modelc::Tensor> &outputs, modelc::Trace &trace) {
  for (int i = 0; i < 3; ++i)
    model.run_into(entry.name, inputs, outputs);
  std::vector<modelc::Trace::Slice> before = trace.slices();
  int runs = o.bench > 0 ? o.bench : 20;
  for (int i = 0; i < runs; ++i)
    model.run_into(entry.name, inputs, outputs);
  std::vector<modelc::Trace::Slice> all = trace.slices();
  struct Row {
    std::string name, track, category;
    double estimate = -1;
    std::map<int, double> perRun, estimates; // run -> microseconds
    double median = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  std::map<int, double> runTimes;
  for (size_t i = before.size(); i < all.size(); ++i) {
    const modelc::Trace::Slice &s = all[i];
    if (s.category == "run") {
      runTimes[s.run] = s.duration_us;
      continue;
    }
    Row &row = rows[{s.name, s.track}];
    row.name = s.name;
    row.track = s.track;
    row.category = s.category;
    row.perRun[s.run] += s.duration_us;
    // Ops of one line on one track add up, and so do their estimates.
    if (s.estimate_us >= 0)
      row.estimates[s.run] += s.estimate_us;
  }
  auto median = [](std::vector<double> v) {
    if (v.empty())
      return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<Row> sorted;
  double total = 0;
  for (auto &[key, row] : rows) {
    std::vector<double> times;
    for (const auto &[run, us] : row.perRun)
      times.push_back(us);
    times.resize(runTimes.size(), 0.0); // runs where it did not appear
    row.median = median(times);
    if (!row.estimates.empty())
      row.estimate = row.estimates.begin()->second;
    total += row.median;
    sorted.push_back(row);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Row &a, const Row &b) { return a.median > b.median; });
  std::vector<double> runList;
  for (const auto &[run, us] : runTimes)
    runList.push_back(us);
  double runMedian = median(runList);
  // The size regime these inputs ran (docs/dynamic.md).
  std::string regime;
  if (int r = model.regime_of(entry.name, inputs); r >= 0) {
    modelc::RegimeInfo info = model.regimes()[r];
    regime = "regime " + info.dim + " " + std::to_string(info.min) + ".." +
             std::to_string(info.max);
  }
  if (o.profile == "json") {
    std::printf(
        "{\"entry\": \"%s\", \"plan\": \"%s\", %s\"runs\": %zu, "
        "\"run_median_us\": %.3f, \"ops\": [\n",
        entry.name.c_str(), model.plan().c_str(),
        regime.empty()
            ? ""
            : ("\"regime\": " + modelc::Trace::json_string(regime) + ", ")
                  .c_str(),
        runTimes.size(), runMedian);
    for (size_t i = 0; i < sorted.size(); ++i) {
      const Row &r = sorted[i];
      std::printf("  {\"name\": %s, \"track\": %s, \"category\": "
                  "\"%s\", \"median_us\": %.3f, \"share\": %.4f, "
                  "\"estimate_us\": %s}%s\n",
                  modelc::Trace::json_string(r.name).c_str(),
                  modelc::Trace::json_string(r.track).c_str(),
                  r.category.c_str(), r.median,
                  total > 0 ? r.median / total : 0.0,
                  r.estimate >= 0 ? std::to_string(r.estimate).c_str() : "null",
                  i + 1 < sorted.size() ? "," : "");
    }
    std::printf("]}\n");
    return;
  }
  std::printf("profile: entry '%s', plan '%s'%s, %zu runs: median run %.3f "
              "ms, ops and copies %.3f ms in all (over every track)\n",
              entry.name.c_str(), model.plan().c_str(),
              regime.empty() ? "" : (", " + regime).c_str(), runTimes.size(),
              runMedian / 1e3, total / 1e3);
  std::printf("%10s %7s %12s  %-16s %s\n", "median ms", "share", "estimate ms",
              "track", "op");
  for (const Row &r : sorted) {
    char estimate[32] = "-";
    if (r.estimate >= 0)
      std::snprintf(estimate, sizeof estimate, "%.3f", r.estimate / 1e3);
    std::printf("%10.3f %6.1f%% %12s  %-16s %s\n", r.median / 1e3,
                total > 0 ? 100.0 * r.median / total : 0.0, estimate,
                r.track.c_str(), r.name.c_str());
  }
}

/// --calibrate=FILE: measures the CPU and writes its target JSON.
void calibrate(const Options &o) {
  modelc::CalibrationResult r = modelc::calibrate_cpu(o.threads);
  modelc::calibrate_gpus(r);
  std::string json = modelc::calibration_target_json(r, "calibrated");
  std::ofstream file(o.calibrate, std::ios::binary | std::ios::trunc);
  file << json;
  file.close();
  if (!file)
    throw modelc::Error("cannot write '" + o.calibrate + "'");
  std::printf("calibrate: cpu, %d threads: %.1f GB/s, %.2f us per parallel "
              "loop, f32 %.1f GFLOP/s, f16 %.1f, bf16 %.1f; wrote %s "
              "(modelc --target=%s)\n",
              r.threads, r.bandwidth / 1e9, r.launch_overhead * 1e6,
              r.peak_f32 / 1e9, r.peak_f16 / 1e9, r.peak_bf16 / 1e9,
              o.calibrate.c_str(), o.calibrate.c_str());
  for (const modelc::CalibrationResult::Gpu &g : r.gpus)
    std::printf("calibrate: cuda:%d (%s): %.1f GB/s, %.2f us per launch, "
                "f32 %.1f TFLOP/s, f16 %.1f, bf16 %.1f; from the host %.1f "
                "GB/s, to it %.1f GB/s\n",
                g.ordinal, g.name.c_str(), g.bandwidth / 1e9,
                g.launch_overhead * 1e6, g.peak_f32 / 1e12, g.peak_f16 / 1e12,
                g.peak_bf16 / 1e12, g.to_gpu.bandwidth / 1e9,
                g.to_host.bandwidth / 1e9);
  for (const modelc::CalibrationResult::Peer &p : r.peers)
    std::printf("calibrate: cuda:%d -> cuda:%d: %.1f GB/s\n", p.from, p.to,
                p.bandwidth / 1e9);
}

/// --shard-inputs: this rank's part of dimension 0 of `t`, a file's
/// tensor for input `info` (the whole batch: the model's dimension 0 times
/// the ranks).
modelc::Tensor shardOf(const Options &o, const modelc::TensorInfo &info,
                       modelc::Tensor t, const std::string &from) {
  if (!o.shardInputs || o.ranks == 1)
    return t;
  if (info.shape.empty() || t.shape().size() != info.shape.size())
    throw modelc::Error("--shard-inputs: input '" + info.name + "' (" +
                        modelc::describe(info.dtype, info.shape) + ") from " +
                        from + " (" + t.describe() +
                        ") has no batch dimension to split");
  int64_t part = info.shape[0];
  if (t.shape()[0] != part * o.ranks)
    throw modelc::Error(
        "--shard-inputs: input '" + info.name + "' from " + from + " has " +
        std::to_string(t.shape()[0]) + " rows in dimension 0; " +
        std::to_string(o.ranks) + " ranks of " + std::to_string(part) +
        " each (the model's " + modelc::describe(info.dtype, info.shape) +
        ") need " + std::to_string(part * o.ranks) +
        " (every rank takes as many rows)");
  std::vector<int64_t> shape = t.shape();
  shape[0] = part;
  size_t bytes = t.nbytes() / static_cast<size_t>(o.ranks);
  return modelc::Tensor::copy_of(static_cast<const unsigned char *>(t.data()) +
                                     bytes * static_cast<size_t>(o.rank),
                                 shape, t.dtype());
}

/// --data DIR: the batches DIR/0, DIR/1, ... (folders of NAME.npy), read
/// one at a time, the next on a thread of its own while a step runs.
class BatchReader {
public:
  BatchReader(const std::string &dir, const modelc::EntryInfo &entry)
      : dir(dir), entry(entry) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(dir))
      throw modelc::Error("--data: '" + dir + "' is not a directory");
    while (fs::is_directory(batchDir(count)))
      ++count;
    if (count == 0)
      throw modelc::Error("--data: '" + dir +
                          "' has no batch folder '0' (batches are DIR/0, "
                          "DIR/1, ..., each with NAME.npy per input)");
    // The inputs the batches give: those of the first.
    for (const modelc::TensorInfo &info : entry.inputs)
      if (fs::exists(batchDir(0) + "/" + info.name + ".npy"))
        names.push_back(info.name);
    if (names.empty())
      throw modelc::Error("--data: '" + batchDir(0) +
                          "' has no NAME.npy for "
                          "any input of entry point '" +
                          entry.name + "'");
    next = std::async(std::launch::async, [this] { return read(0); });
  }

  int batches() const { return count; }
  const std::vector<std::string> &inputs() const { return names; }

  /// The batch of step `step` (0-based): the one read ahead, checked
  /// against the entry's inputs; starts reading the following one.
  std::map<std::string, modelc::Tensor> take(int step) {
    std::map<std::string, modelc::Tensor> batch = next.get();
    next = std::async(std::launch::async,
                      [this, step] { return read((step + 1) % count); });
    return batch;
  }

  ~BatchReader() {
    if (next.valid())
      next.wait();
  }

private:
  std::string batchDir(int k) const { return dir + "/" + std::to_string(k); }

  std::map<std::string, modelc::Tensor> read(int k) const {
    std::map<std::string, modelc::Tensor> batch;
    for (const std::string &name : names) {
      std::string path = batchDir(k) + "/" + name + ".npy";
      if (!std::filesystem::exists(path))
        throw modelc::Error("--data: batch " + std::to_string(k) + " has no '" +
                            path + "' (batch 0 gives input '" + name + "')");
      batch[name] = modelc::read_npy(path);
    }
    return batch;
  }

  std::string dir;
  const modelc::EntryInfo &entry;
  int count = 0;
  std::vector<std::string> names;
  std::future<std::map<std::string, modelc::Tensor>> next;
};

/// --train-steps N: N training steps on the same inputs (or, with --data,
/// a batch each), each printing its loss (the first output), then
/// --save-weights and --expect.
int trainSteps(const Options &o, modelc::Model &model,
               const modelc::EntryInfo &entry,
               std::vector<modelc::Tensor> inputs, BatchReader *reader) {
  if (entry.outputs.empty() ||
      entry.outputs.front().dtype != modelc::DType::F32 ||
      !entry.outputs.front().shape.empty())
    throw modelc::Error("--train-steps: entry point '" + entry.name +
                        "' does not return a scalar f32 loss first");
  if (o.bench > 0 || o.concurrent > 0 || !o.reference.empty())
    throw modelc::Error("--train-steps with --bench, --concurrent or "
                        "--compare-reference is not supported (each run "
                        "changes the weights)");
  std::vector<modelc::Tensor> outputs;
  int steps = o.trainSteps > 0 ? o.trainSteps : reader->batches();
  // Each step is started with Model::run_async: while it runs, the next
  // batch is taken (read ahead on the reader's thread) and sharded.
  auto batch = [&](int step) {
    if (reader)
      for (auto &[name, tensor] : reader->take(step - 1)) {
        std::size_t index = inputIndex(entry, name);
        inputs[index] = shardOf(
            o, entry.inputs[index], std::move(tensor),
            "--data batch " + std::to_string((step - 1) % reader->batches()));
      }
  };
  batch(1);
  for (int step = 1; step <= steps; ++step) {
    modelc::PendingRun pending = model.run_async(entry.name, inputs);
    // A bad next batch is reported after this step's loss.
    std::exception_ptr nextBatch;
    if (step < steps) {
      try {
        batch(step + 1);
      } catch (const modelc::Error &) {
        nextBatch = std::current_exception();
      }
    }
    outputs = pending.wait();
    // Every rank computes the same loss and weights: rank 0 speaks.
    if (o.rank == 0)
      std::printf("step %d loss %.9g\n", step,
                  static_cast<double>(*outputs.front().data_as<float>()));
    // --save-every: between steps (no run in progress), on every rank
    // (sharded optimizer state comes to rank 0), before a bad next batch
    // is reported (the steps so far are kept); the last step's is the one
    // after the loop.
    if (o.saveEvery > 0 && step % o.saveEvery == 0 && step < steps) {
      model.save_weights(o.saveWeights);
      if (o.rank == 0)
        std::printf("  saved %s after step %d\n", o.saveWeights.c_str(), step);
    }
    if (nextBatch) {
      std::fflush(stdout);
      std::rethrow_exception(nextBatch);
    }
  }
  std::fflush(stdout);
  // Every rank takes part (optimizer state sharded over the ranks comes
  // to rank 0 from its owners); rank 0 writes.
  if (!o.saveWeights.empty())
    model.save_weights(o.saveWeights);
  if (o.rank != 0)
    return 0;
  for (const auto &[name, path] : o.outputs)
    modelc::write_npy(path, outputs[outputIndex(entry, name)]);
  return compareWithFiles(o, model, entry, outputs) ? 0 : 1;
}

/// A default value for --info: the number of a scalar, else its type.
std::string scalarText(const modelc::Tensor &t) {
  if (t.numel() != 1 || t.dtype() != modelc::DType::F32)
    return t.describe();
  char text[32];
  std::snprintf(text, sizeof text, "%.9g",
                static_cast<double>(*t.data_as<float>()));
  return text;
}

/// --info: the model's plans, entry points and weights.
void printInfo(const Options &o, const modelc::Model &model) {
  std::printf("model %s: plan %s, %d threads, built by modelc %s\n",
              o.model.c_str(), model.plan().c_str(), model.num_threads(),
              model.compiler_version().c_str());
  if (!model.plan_note().empty())
    std::printf("note: %s\n", model.plan_note().c_str());
  if (!model.replica_sums().empty())
    std::printf("replica sums: %s\n", model.replica_sums().c_str());
  if (!model.rank_sums().empty())
    std::printf("rank sums: %s\n", model.rank_sums().c_str());
  if (!model.state_shards().empty())
    std::printf("optimizer state: %s\n", model.state_shards().c_str());
  std::string planList;
  for (const std::string &p : model.plans())
    planList += (planList.empty() ? "" : ", ") + p;
  std::printf("plans: %s", planList.c_str());
  if (model.gpu_kernels())
    std::printf("; GPU code: %zu kernels", model.gpu_kernels());
  std::printf("\n");
  // The chosen plan's size regimes: a plan each, chosen per run.
  std::string regimeList;
  for (const modelc::RegimeInfo &r : model.regimes())
    regimeList += (regimeList.empty() ? "" : ", ") + std::to_string(r.min) +
                  ".." + std::to_string(r.max);
  if (!regimeList.empty())
    std::printf("plan %s: size regimes of '%s': %s (a plan each, chosen per "
                "run from the size)\n",
                model.plan().c_str(), model.regimes().front().dim.c_str(),
                regimeList.c_str());
  for (const modelc::DimInfo &d : model.dims())
    std::printf("dynamic dimension '%s': %lld..%lld (placement aims at %lld; "
                "memory planned for %lld)\n",
                d.name.c_str(), static_cast<long long>(d.min),
                static_cast<long long>(d.max), static_cast<long long>(d.opt),
                static_cast<long long>(d.max));
  for (const modelc::EntryInfo &e : model.entries()) {
    std::printf("entry '%s' (arena %llu bytes)\n", e.name.c_str(),
                static_cast<unsigned long long>(model.arena_bytes(e.name)));
    for (const auto &in : e.inputs)
      std::printf("  input '%s': %s%s\n", in.name.c_str(),
                  modelc::describe(in, model.dims()).c_str(),
                  in.has_default() ? (" (optional, default " +
                                      scalarText(in.default_value) + ")")
                                         .c_str()
                                   : "");
    for (const auto &out : e.outputs)
      std::printf("  output '%s': %s\n", out.name.c_str(),
                  modelc::describe(out, model.dims()).c_str());
  }
  std::printf("%zu weights\n", model.weight_names().size());
}

/// --concurrent T: T threads run `entry` at once; each run must give
/// `outputs` exactly. False on a mismatch.
bool concurrentRuns(const Options &o, const modelc::Model &model,
                    const modelc::EntryInfo &entry,
                    const std::vector<modelc::Tensor> &inputs,
                    const std::vector<modelc::Tensor> &outputs) {
  // Runs in flight at once share nothing (each takes its own arena and
  // streams): every one must give the first run's outputs exactly.
  int runs = o.bench > 0 ? o.bench : 25;
  std::vector<std::thread> workers;
  std::atomic<int> mismatches{0}, failures{0};
  std::mutex errorMutex;
  std::string firstError;
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < o.concurrent; ++t)
    workers.emplace_back([&] {
      try {
        std::vector<modelc::Tensor> mine = model.run(entry.name, inputs);
        for (int r = 0; r < runs; ++r) {
          model.run_into(entry.name, inputs, mine);
          for (size_t k = 0; k < mine.size(); ++k)
            if (std::memcmp(mine[k].data(), outputs[k].data(),
                            outputs[k].nbytes()) != 0)
              ++mismatches;
        }
      } catch (const std::exception &e) {
        ++failures;
        std::lock_guard<std::mutex> lock(errorMutex);
        if (firstError.empty())
          firstError = e.what();
      }
    });
  for (std::thread &w : workers)
    w.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (failures)
    throw modelc::Error("concurrent runs failed: " + firstError);
  std::printf("concurrent: %d threads x %d runs in %.3f s (%.1f runs/s): "
              "%s\n",
              o.concurrent, runs, seconds, o.concurrent * runs / seconds,
              mismatches ? "MISMATCH" : "all identical");
  return mismatches == 0;
}

/// The entry's inputs from the command line: --input files, --lr, the
/// inputs' defaults, --random-inputs; those --data's batches give are left
/// empty (each step's batch fills them).
std::vector<modelc::Tensor> gatherInputs(const Options &o,
                                         const modelc::Model &model,
                                         const modelc::EntryInfo &entry,
                                         const BatchReader *reader) {
  auto fromBatches = [&](const std::string &name) {
    return reader && std::find(reader->inputs().begin(), reader->inputs().end(),
                               name) != reader->inputs().end();
  };
  std::mt19937_64 rng(o.seed);
  // --dim: the random inputs' sizes of dynamic dimensions (Model::run
  // checks them against the range).
  std::map<std::string, int64_t> dimSizes;
  for (const auto &[name, text] : o.dims) {
    bool known = false;
    for (const modelc::DimInfo &d : model.dims())
      known |= d.name == name;
    char *end = nullptr;
    long long size = std::strtoll(text.c_str(), &end, 10);
    if (!known || text.empty() || *end || size < 1)
      throw modelc::Error("--dim " + name + "=" + text +
                          ": expected a positive size of one of the model's "
                          "dynamic dimensions (--info lists them)");
    dimSizes[name] = size;
  }
  std::vector<modelc::Tensor> inputs;
  std::map<std::string, std::string> unused = o.inputs;
  if (o.lr) {
    if (o.inputs.count("lr"))
      throw modelc::Error("--lr and --input lr=... both give the rate");
    bool takesRate = false;
    for (const modelc::TensorInfo &info : entry.inputs)
      takesRate |= info.name == "lr" && info.dtype == modelc::DType::F32 &&
                   info.shape.empty();
    if (!takesRate)
      throw modelc::Error("--lr: entry point '" + entry.name +
                          "' has no f32 scalar input 'lr' (train_step of a "
                          "model built with modelc --train has)");
  }
  for (const modelc::TensorInfo &info : entry.inputs) {
    auto it = o.inputs.find(info.name);
    if (fromBatches(info.name)) {
      if (it != o.inputs.end())
        throw modelc::Error("input '" + info.name +
                            "' is given by --input and by --data's batches");
      inputs.emplace_back(); // each step's batch
    } else if (it != o.inputs.end()) {
      inputs.push_back(
          shardOf(o, info, modelc::read_npy(it->second), it->second));
      unused.erase(info.name);
    } else if (o.lr && info.name == "lr") {
      modelc::Tensor rate = modelc::Tensor::zeros({}, modelc::DType::F32);
      *rate.mutable_data_as<float>() = static_cast<float>(*o.lr);
      inputs.push_back(std::move(rate));
    } else if (info.has_default()) {
      inputs.push_back(info.default_value);
    } else if (o.randomInputs) {
      inputs.push_back(randomTensor(info, dimSizes, rng));
    } else {
      throw modelc::Error("input '" + info.name + "' (" +
                          modelc::describe(info.dtype, info.shape) +
                          ") is not given; use --input " + info.name +
                          "=FILE.npy or --random-inputs");
    }
  }
  if (!unused.empty())
    throw modelc::Error("entry point '" + entry.name + "' has no input '" +
                        unused.begin()->first + "'");
  return inputs;
}

int run(Options &o) {
  if (!o.calibrate.empty()) {
    calibrate(o);
    if (o.model.empty())
      return 0;
  }
  if (o.devices && o.model.empty())
    return listDevices();
  if (o.devices)
    listDevices();
  modelc::LoadOptions load;
  load.weights = o.weights;
  load.num_threads = o.threads;
  load.plan = o.plan;
  load.cuda_graphs = o.cudaGraphs;
  load.distributed = o.distributed;
  load.collective_timeout_s = o.collectiveTimeout;
  if (!o.trace.empty() || !o.profile.empty())
    load.trace = std::make_shared<modelc::Trace>();
  modelc::Model model = modelc::Model::load(o.model, load);
  o.rank = model.rank();
  o.ranks = model.world_size();
  // mpirun binds each rank to one core by default for 2 ranks (to a
  // socket for more): a rank then computes on one thread while the
  // machine's other cores idle. Rank 0 says so, unless --threads chose.
  if (!o.distributed.empty() && o.rank == 0 && o.threads == 0) {
    int local = o.ranks;
    if (const char *size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        size && std::atoi(size) > 0)
      local = std::atoi(size);
    int threads = model.num_threads(), cpus = modelc::machine_cpus();
    if (threads * local * 2 <= cpus)
      std::fprintf(stderr,
                   "modelc-run: note: rank 0 computes on %d of this "
                   "machine's %d CPUs (%d local rank%s, bound by the "
                   "launcher): mpirun --bind-to none, or --map-by "
                   "slot:PE=%d, gives each rank %d\n",
                   threads, cpus, local, local == 1 ? "" : "s", cpus / local,
                   cpus / local);
  }
  if (!o.loadWeights.empty())
    model.load_weights(o.loadWeights);

  if (o.info) {
    printInfo(o, model);
    if (o.inputs.empty() && !o.randomInputs)
      return 0; // --info alone describes the model without running it
  }

  if (!o.data.empty() && o.trainSteps == 0 && !model.trains())
    throw modelc::Error("--data: model '" + o.model +
                        "' does not train (build it with modelc --train)");
  if (o.trainSteps > 0 && !model.trains())
    throw modelc::Error("--train-steps: model '" + o.model +
                        "' does not train (build it with modelc --train)");
  std::string entryName = o.entry;
  if (entryName.empty())
    entryName = o.trainSteps > 0 || !o.data.empty()
                    ? "train_step"
                    : model.entries().front().name;
  const modelc::EntryInfo &entry = model.entry(entryName);
  std::unique_ptr<BatchReader> reader;
  if (!o.data.empty())
    reader = std::make_unique<BatchReader>(o.data, entry);
  std::vector<modelc::Tensor> inputs =
      gatherInputs(o, model, entry, reader.get());

  if (o.trainSteps > 0 || reader) {
    int status = trainSteps(o, model, entry, std::move(inputs), reader.get());
    // Every step's runs; rank 0's in a distributed run (every rank traces
    // alike, so that all take as long).
    if (!o.trace.empty() && o.rank == 0) {
      load.trace->write(o.trace);
      std::printf("trace: %zu slices, %zu flows in %s\n",
                  load.trace->slices().size(), load.trace->flows().size(),
                  o.trace.c_str());
    }
    return status;
  }

  std::vector<modelc::Tensor> outputs = model.run(entry.name, inputs);
  // A distributed run: the other ranks computed their part; rank 0 speaks.
  if (o.rank != 0)
    return 0;
  if (o.profile != "json") // which prints JSON alone
    for (size_t k = 0; k < outputs.size(); ++k)
      summarize(entry.outputs[k].name, outputs[k]);
  if (!o.outputDir.empty()) {
    std::filesystem::create_directories(o.outputDir);
    for (size_t k = 0; k < outputs.size(); ++k)
      modelc::write_npy(o.outputDir + "/" + entry.outputs[k].name + ".npy",
                        outputs[k]);
  }
  for (const auto &[name, path] : o.outputs) {
    modelc::write_npy(path, outputs[outputIndex(entry, name)]);
  }

  if (o.bench > 0 && o.profile.empty()) // --profile takes N runs itself
    bench(o, model, entry, inputs, outputs);

  if (!o.profile.empty())
    profile(o, model, entry, inputs, outputs, *load.trace);
  if (!o.trace.empty()) {
    load.trace->write(o.trace);
    // On stderr with --profile=json, whose stdout is the JSON alone.
    std::fprintf(o.profile == "json" ? stderr : stdout,
                 "trace: %zu slices, %zu flows in %s\n",
                 load.trace->slices().size(), load.trace->flows().size(),
                 o.trace.c_str());
  }

  if (o.concurrent > 0 && !concurrentRuns(o, model, entry, inputs, outputs))
    return 1;

  if (!o.saveWeights.empty())
    model.save_weights(o.saveWeights);
  bool ok = compareWithFiles(o, model, entry, outputs);
  if (!o.reference.empty())
    ok &= compareWithReference(o, model, entry, inputs, outputs);
  // --repeat: the same model again on other inputs (with --cuda-graphs the
  // second run captures and the later ones replay the graph).
  for (int k = 1; k < o.repeat; ++k) {
    Options again = o;
    again.seed = o.seed + static_cast<uint64_t>(k);
    std::vector<modelc::Tensor> moreInputs =
        gatherInputs(again, model, entry, nullptr);
    std::vector<modelc::Tensor> more = model.run(entry.name, moreInputs);
    std::printf("repeat %d (--seed %llu):\n", k,
                static_cast<unsigned long long>(again.seed));
    ok &= compareWithFiles(again, model, entry, more);
    if (!o.reference.empty())
      ok &= compareWithReference(again, model, entry, moreInputs, more);
  }
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseArgs(argc, argv);
  try {
    return run(options);
  } catch (const std::bad_alloc &) {
    std::cerr << "modelc-run: error: out of memory (an allocation failed "
                 "outside the runtime's checked ones)\n";
    if (!options.distributed.empty()) {
      std::cerr.flush();
      modelc::abort_distributed_run(1);
    }
    return 1;
  } catch (const modelc::Error &e) {
    std::cerr << "modelc-run: error: " << e.what() << "\n";
    // The other ranks would wait in a collective for this one: end them.
    if (!options.distributed.empty()) {
      std::cerr.flush();
      modelc::abort_distributed_run(1);
    }
    return 1;
  }
}
