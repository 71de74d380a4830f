// model_test.cpp - loading, checking and running compiled models through
// the public API. Fixtures (built by tests/CMakeLists.txt with modelc):
// mlp1.so and mlp2.so (examples/mlp.ir with random weights, seeds 1 and 2),
// their weights as safetensors, mlp1_dynamic.so (examples/mlp_dynamic.ir
// with mlp1's weights) and hand-made broken libraries.
#include "modelc/abi.h"
#include "modelc/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <memory>
#include <new>
#include <random>
#include <thread>

// Counts operator new calls of buffer size (4 KB or more) while
// `countAllocations` is set, and the small ones apart.
static std::atomic<bool> countAllocations{false};
static std::atomic<long> allocations{0}, smallAllocations{0};
void *operator new(std::size_t size) {
  if (countAllocations)
    ++(size >= 4096 ? allocations : smallAllocations);
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

using modelc::DType;
using modelc::Model;
using modelc::Tensor;

// GPUs here come from the stand-in driver (fixtures/fakecuda): set before
// any test looks for GPUs (the runtime probes once per process).
static const bool kFakeDriver = [] {
  setenv("MODELC_CUDA_DRIVER", MODELC_FIXTURE_DIR "/fakecuda/libcuda.so.1", 1);
  setenv("FAKE_CUDA_GPUS", "2", 1);
  setenv("MODELC_CUBLASLT", MODELC_FIXTURE_DIR "/fakecuda/libcublasLt.so.13",
         1);
  return true;
}();

namespace {

std::string fixture(const std::string &name) {
  return std::string(MODELC_FIXTURE_DIR) + "/" + name;
}

/// Expects `fn` to throw modelc::Error whose message contains `text`.
template <typename Fn> void expectError(Fn fn, const std::string &text) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << text;
  } catch (const modelc::Error &e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << text;
  }
}

Tensor randomInput(uint64_t seed) {
  Tensor x = Tensor::zeros({64, 784}, DType::F32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.mutable_data_as<float>()[i] = u(rng);
  return x;
}

bool sameData(const Tensor &a, const Tensor &b) {
  return a.nbytes() == b.nbytes() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

std::string writeFile(const std::string &name, const std::string &bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

} // namespace

TEST(Load, DescribesTheModel) {
  Model model = Model::load(fixture("mlp1.so"));
  ASSERT_EQ(model.entries().size(), 1u);
  const modelc::EntryInfo &forward = model.entry("forward");
  ASSERT_EQ(forward.inputs.size(), 1u);
  EXPECT_EQ(forward.inputs[0].name, "x");
  EXPECT_EQ(forward.inputs[0].dtype, DType::F32);
  EXPECT_EQ(forward.inputs[0].shape, (std::vector<int64_t>{64, 784}));
  EXPECT_EQ(forward.outputs[0].shape, (std::vector<int64_t>{64, 10}));
  EXPECT_EQ(model.plan(), "cpu");
  EXPECT_EQ(model.compiler_version(), MODELC_VERSION_STRING);
  EXPECT_NE(model.compiler_flags().find("--random-weights=1"),
            std::string::npos);
  EXPECT_GT(model.arena_bytes("forward"), 0u);
  EXPECT_EQ(model.weight_names().size(), 6u);
  EXPECT_EQ(model.weight("fc1.weight").shape(),
            (std::vector<int64_t>{1024, 784}));
}

TEST(Load, MissingFile) {
  expectError([] { Model::load(fixture("no-such-model.so")); },
              "No such file or directory");
}

TEST(Load, NotASharedLibrary) {
  std::string path = writeFile("text.so", "just text, not ELF");
  expectError([&] { Model::load(path); }, "not a compiled model");
}

TEST(Load, TruncatedLibrary) {
  std::ifstream in(fixture("mlp1.so"), std::ios::binary);
  std::string bytes(4096, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::string path = writeFile("truncated.so", bytes);
  expectError([&] { Model::load(path); }, "is truncated or corrupt");
}

TEST(Load, LibraryWithoutTheEntrySymbol) {
  expectError([] { Model::load(fixture("not_a_model.so")); },
              "does not export modelc_model_v1");
}

TEST(Load, AbiVersionMismatchReportsBothVersions) {
  expectError([] { Model::load(fixture("abi_mismatch.so")); },
              "was built for modelc ABI version 99; this runtime supports "
              "version " +
                  std::to_string(MODELC_ABI_VERSION));
}

TEST(Load, TruncatedDescriptor) {
  expectError([] { Model::load(fixture("truncated_descriptor.so")); },
              "has a truncated descriptor");
}

TEST(Load, WeightSizeDisagreeingWithItsShape) {
  expectError([] { Model::load(fixture("bad_weight_size.so")); },
              "weight 'w' has 8 bytes, its shape takes 16");
}

TEST(Load, InputWithADefaultBeforeOneWithout) {
  expectError([] { Model::load(fixture("default_first.so")); },
              "entry point 'scale': input 'x' has no default but follows one "
              "that has");
}

// ABI 8: an input with a default (train_step's `lr`) may be left out.
TEST(Run, InputWithADefaultMayBeLeftOut) {
  Model model = Model::load(fixture("default_input.so"));
  const modelc::EntryInfo &entry = model.entry("scale");
  ASSERT_EQ(entry.inputs.size(), 2u);
  EXPECT_FALSE(entry.inputs[0].has_default());
  ASSERT_TRUE(entry.inputs[1].has_default());
  EXPECT_EQ(*entry.inputs[1].default_value.data_as<float>(), 0.5f);
  float x[4] = {1, 2, 3, 4};
  Tensor input = Tensor::from_host(x, {4}, DType::F32);
  std::vector<Tensor> y = model.run("scale", {input});
  EXPECT_EQ(y[0].data_as<float>()[3], 2.0f);
  float rate = 3;
  y = model.run("scale", {input, Tensor::from_host(&rate, {}, DType::F32)});
  EXPECT_EQ(y[0].data_as<float>()[3], 12.0f);
  expectError([&] { model.run("scale", {}); },
              "entry point 'scale' takes 2 inputs (the last 1 optional), "
              "got 0");
  expectError(
      [&] {
        model.run("scale", {input, Tensor::from_host(x, {4}, DType::F32)});
      },
      "input 'lr': expected f32[], got f32[4]");
}

// Model::run_async: returns at once with the inputs copied; runs in the
// order started; errors of the inputs at the call; a model destroyed with
// runs in flight finishes them.
TEST(RunAsync, RunsInOrderOnCopiedInputs) {
  modelc::PendingRun last;
  {
    Model model = Model::load(fixture("default_input.so"));
    float x[4] = {1, 2, 3, 4};
    std::vector<modelc::PendingRun> runs;
    for (int k = 0; k < 8; ++k) {
      float rate = static_cast<float>(k);
      x[3] = static_cast<float>(k);
      runs.push_back(
          model.run_async("scale", {Tensor::from_host(x, {4}, DType::F32),
                                    Tensor::from_host(&rate, {}, DType::F32)}));
      x[3] = -1; // the run took its own copy
    }
    for (int k = 0; k < 8; ++k) {
      std::vector<Tensor> y = runs[k].wait();
      EXPECT_EQ(y[0].data_as<float>()[3], static_cast<float>(k * k));
      EXPECT_FALSE(runs[k].valid());
      expectError([&] { runs[k].wait(); }, "no run to wait for");
    }
    // A defaulted input left out, as in run().
    EXPECT_EQ(model.run_async("scale", {Tensor::from_host(x, {4}, DType::F32)})
                  .wait()[0]
                  .data_as<float>()[0],
              0.5f);
    expectError([&] { model.run_async("scale", {}); },
                "entry point 'scale' takes 2 inputs (the last 1 optional), "
                "got 0");
    expectError([&] { model.run_async("nope", {}); },
                "has no entry point 'nope'");
    x[0] = 10;
    last = model.run_async("scale", {Tensor::from_host(x, {4}, DType::F32)});
  }
  ASSERT_TRUE(last.valid());
  EXPECT_TRUE(last.ready());
  EXPECT_EQ(last.wait()[0].data_as<float>()[0], 5.0f);
}

TEST(Load, UnknownPlan) {
  modelc::LoadOptions options;
  options.plan = "h200";
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "has no plan 'h200'; it has 'cpu'");
  options.plan = "cuda:0";
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "has no plan 'cuda:0' (a plan on 1 GPU); it has 'cpu'");
}

TEST(Load, WeightFileErrorsNameTheWeight) {
  modelc::LoadOptions options;
  options.weights = fixture("missing.safetensors");
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "cannot open weights");
  options.weights =
      writeFile("tiny.safetensors", std::string("\x02\0\0\0\0\0\0\0{}", 10));
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "weight 'fc1.weight' is missing from");
  options.weights = writeFile("short.safetensors", "abc");
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "fewer than the 8-byte header length");
  options.weights = writeFile("badjson.safetensors",
                              std::string("\x05\0\0\0\0\0\0\0{\"a\":", 13));
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "is not a valid safetensors file");
  // Malformed headers that used to escape as std:: exceptions or crash
  // (issue 15); tests/runtime/safetensors_test.cpp has every case.
  options.weights =
      writeFile("escape.safetensors",
                std::string("\x0c\0\0\0\0\0\0\0{\"\\uZZZZ\":1}", 20));
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "escape.safetensors' is not a valid safetensors file: bad \\u "
              "escape in a string");
  std::string deep = "{\"__metadata__\":" + std::string(1000000, '[') + "}";
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<char>((deep.size() >> (8 * i)) & 0xff);
  options.weights = writeFile("deep.safetensors", length + deep);
  expectError([&] { Model::load(fixture("mlp1.so"), options); },
              "deep.safetensors' is not a valid safetensors file: unexpected "
              "'}' in the header");
}

TEST(Run, MatchesAcrossCallsAndEntryLookup) {
  Model model = Model::load(fixture("mlp1.so"));
  Tensor x = randomInput(1);
  std::vector<Tensor> a = model.run("forward", {x});
  std::vector<Tensor> b = model.run("forward", {x});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].shape(), (std::vector<int64_t>{64, 10}));
  EXPECT_TRUE(sameData(a[0], b[0]));
  expectError([&] { model.run("backward", {x}); },
              "has no entry point 'backward'; it has 'forward'");
}

TEST(Run, InputsAreChecked) {
  Model model = Model::load(fixture("mlp1.so"));
  expectError([&] { model.run("forward", {}); },
              "entry point 'forward' takes 1 inputs, got 0");
  Tensor wrongShape = Tensor::zeros({64, 785}, DType::F32);
  expectError([&] { model.run("forward", {wrongShape}); },
              "input 'x': expected f32[64,784], got f32[64,785]");
  Tensor wrongDType = Tensor::zeros({64, 784}, DType::I32);
  expectError([&] { model.run("forward", {wrongDType}); },
              "input 'x': expected f32[64,784], got i32[64,784]");
  Tensor x = randomInput(2);
  std::vector<Tensor> outputs = {Tensor::zeros({64, 11}, DType::F32)};
  expectError([&] { model.run_into("forward", {x}, outputs); },
              "output 'output0': expected f32[64,10], got f32[64,11]");
}

TEST(Run, RunIntoWritesCallerBuffers) {
  Model model = Model::load(fixture("mlp1.so"));
  Tensor x = randomInput(3);
  std::vector<float> storage(640);
  std::vector<Tensor> outputs = {
      Tensor::from_host(storage.data(), {64, 10}, DType::F32)};
  model.run_into("forward", {x}, outputs);
  std::vector<Tensor> expected = model.run("forward", {x});
  EXPECT_EQ(std::memcmp(storage.data(), expected[0].data(), 640 * 4), 0);
}

TEST(Run, ConcurrentRunsFromEightThreadsGiveIdenticalResults) {
  modelc::LoadOptions options;
  options.num_threads = 2;
  Model model = Model::load(fixture("mlp1.so"), options);
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < 8; ++t) {
    inputs.push_back(randomInput(100 + t));
    expected.push_back(model.run("forward", {inputs.back()})[0]);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<Tensor> out = {Tensor::zeros({64, 10}, DType::F32)};
      for (int r = 0; r < 100; ++r) {
        model.run_into("forward", {inputs[t]}, out);
        if (!sameData(out[0], expected[t]))
          ++mismatches;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Weights, SwapAtLoadMatchesTheModelBuiltWithThem) {
  Tensor x = randomInput(4);
  Model one = Model::load(fixture("mlp1.so"));
  Model two = Model::load(fixture("mlp2.so"));
  modelc::LoadOptions options;
  options.weights = fixture("mlp2.safetensors");
  Model swapped = Model::load(fixture("mlp1.so"), options);
  Tensor y1 = one.run("forward", {x})[0];
  Tensor y2 = two.run("forward", {x})[0];
  Tensor ys = swapped.run("forward", {x})[0];
  EXPECT_FALSE(sameData(y1, y2));
  EXPECT_TRUE(sameData(ys, y2));
}

TEST(Weights, ExternalWeightsAreMappedAtLoad) {
  Tensor x = randomInput(5);
  Model embedded = Model::load(fixture("mlp1.so"));
  Model external = Model::load(fixture("mlp1_external.so"));
  EXPECT_TRUE(sameData(embedded.run("forward", {x})[0],
                       external.run("forward", {x})[0]));
}

TEST(Run, RunIntoAllocatesNoBuffersOnceWarm) {
  modelc::LoadOptions options;
  options.num_threads = 2;
  Model model = Model::load(fixture("mlp1.so"), options);
  Tensor x = randomInput(6);
  std::vector<Tensor> inputs = {x};
  std::vector<Tensor> outputs = {Tensor::zeros({64, 10}, DType::F32)};
  for (int i = 0; i < 3; ++i)
    model.run_into("forward", inputs, outputs);
  allocations = 0;
  smallAllocations = 0;
  countAllocations = true;
  for (int i = 0; i < 20; ++i)
    model.run_into("forward", inputs, outputs);
  countAllocations = false;
  // No arena, tensor or weight is allocated per run. (oneDNN's matmul, which
  // runs the linear layers, makes a few small bookkeeping allocations per
  // call; they stay small.)
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_LT(smallAllocations.load(), 20 * 3 * 16);
  // The counter works.
  countAllocations = true;
  std::vector<float> probe(4096);
  countAllocations = false;
  EXPECT_EQ(allocations.load(), 1);
}

TEST(Plans, SimulatedPlanRunsFromManyThreadsAndMatchesTheCpuPlan) {
  Model cpu = Model::load(fixture("mlp1_sim.so"));
  modelc::LoadOptions options;
  options.plan = "cpu+sim2";
  Model sim = Model::load(fixture("mlp1_sim.so"), options);
  EXPECT_EQ(cpu.plan(), "cpu");
  EXPECT_EQ(sim.plan(), "cpu+sim2");
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  for (int t = 0; t < 8; ++t) {
    inputs.push_back(randomInput(200 + t));
    expected.push_back(sim.run("forward", {inputs.back()})[0]);
    // The plans may split the work differently (data parallelism): equal
    // up to rounding.
    Tensor reference = cpu.run("forward", {inputs.back()})[0];
    for (int64_t i = 0; i < reference.numel(); ++i)
      ASSERT_NEAR(expected.back().data_as<float>()[i],
                  reference.data_as<float>()[i], 1e-5);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 25; ++r) {
        Tensor y = sim.run("forward", {inputs[t]})[0];
        if (!sameData(y, expected[t]))
          ++mismatches;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Product descriptors a modelc would not write (a newer or corrupted
// model.so) fail the run with a clear error naming the op; a valid one in
// the same model runs.
TEST(Products, MalformedDescriptorsAreRunErrors) {
  auto run = [](const std::string &plan) {
    modelc::LoadOptions options;
    options.plan = plan;
    Model model = Model::load(fixture("bad_products.so"), options);
    Tensor x = Tensor::zeros({1, 4}, DType::F32);
    for (int i = 0; i < 4; ++i)
      x.mutable_data_as<float>()[i] = float(i) - 1.5f;
    return model.run("main", {x});
  };
  std::vector<Tensor> good = run("good");
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(good[0].data_as<float>()[i], std::max(float(i) - 1.5f, 0.0f));
  expectError([&] { run("bad_post_op"); },
              "graph.linear (line 1): unknown post-op 7/0 (a model.so from "
              "a newer modelc?)");
  expectError([&] { run("layout_on_matmul"); },
              "graph.linear (line 1): convolution flags on a matrix product");
  expectError([&] { run("bad_kind"); },
              "graph.conv2d (line 2): unknown product kind 9");
  expectError([&] { run("unknown_source"); },
              "graph.conv2d (line 3): reads the layout of call site 99, "
              "which has not run");
  expectError([&] { run("small_buffer"); },
              "graph.conv2d (line 4): the output's layout needs");
  expectError([&] { run("unknown_flags"); },
              "graph.linear (line 1): unknown product flags 128 (a model.so "
              "from a newer modelc?)");
  expectError([&] { run("f32_result"); },
              "graph.linear (line 1): an f32 result flag on an f32 product");
  expectError([&] { run("both_halves"); },
              "graph.linear (line 1): both f16 and bf16 flags");
  expectError([&] { run("kept_bf16"); },
              "graph.conv2d (line 6): a kept layout on an f16 or bf16 "
              "product (only f32 products keep oneDNN's layout)");
  std::vector<Tensor> direct = run("winograd_fallback");
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(direct[0].data_as<float>()[i], float(i) - 1.5f);
}

TEST(Plans, GpuPlansOnTheStandInDriverRunFromManyThreads) {
  ASSERT_TRUE(kFakeDriver);
  ASSERT_EQ(modelc::visible_gpus().gpus.size(), 2u);
  Model model = Model::load(fixture("cuda_plan.so"));
  EXPECT_EQ(model.plan(), "cuda2"); // the most GPUs this machine has
  modelc::LoadOptions options;
  options.plan = "cuda1";
  Model one = Model::load(fixture("cuda_plan.so"), options);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 25; ++r) {
        Tensor x = Tensor::zeros({4}, DType::F32);
        for (int i = 0; i < 4; ++i)
          x.mutable_data_as<float>()[i] = float(t * 100 + r * 4 + i);
        for (const Model *m : {&model, &one}) {
          std::vector<Tensor> out = m->run("main", {x});
          for (int i = 0; i < 4; ++i)
            if (out[0].data_as<float>()[i] != x.data_as<float>()[i] ||
                out[1].data_as<float>()[i] != float(10 * (i + 1)))
              ++mismatches;
        }
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// A model made and run on one thread and dropped on another, which has no
// CUDA context current: every GPU buffer, page-locked host buffer and CUDA
// graph is freed, each in its context (the stand-in driver, like the real
// one, refuses calls without a context, and they would stay taken). A plan
// with copies and events, and a plan replayed as a CUDA graph (the graph
// is the first thing dropped).
TEST(Plans, GpuModelDroppedOnAnotherThreadFreesEverything) {
  ASSERT_TRUE(kFakeDriver);
  ASSERT_EQ(modelc::visible_gpus().gpus.size(), 2u);
  void *driver = dlopen(MODELC_FIXTURE_DIR "/fakecuda/libcuda.so.1",
                        RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(driver, nullptr);
  using Counters = void (*)(long *);
  auto counters = reinterpret_cast<Counters>(dlsym(driver, "fakeCudaCounters"));
  ASSERT_NE(counters, nullptr);
  struct Case {
    const char *model, *plan, *entry;
    bool graphs;
    std::vector<int64_t> shape;
  };
  for (const Case &c :
       {Case{"cuda_plan.so", "cuda2", "main", false, {4}},
        Case{"mlp1_gpu.so", "h200", "forward", true, {64, 784}}}) {
    SCOPED_TRACE(c.model);
    long before[4], after[4];
    counters(before);
    std::unique_ptr<Model> model;
    std::thread([&] {
      modelc::LoadOptions options;
      options.plan = c.plan;
      options.cuda_graphs = c.graphs;
      model = std::make_unique<Model>(Model::load(fixture(c.model), options));
      Tensor x = Tensor::zeros(c.shape, DType::F32);
      for (int run = 0; run < 3; ++run) // with graphs: captured, replayed
        model->run(c.entry, {x});
    }).join();
    counters(after);
    EXPECT_GT(after[0], before[0]); // it holds page-locked buffers
    if (c.graphs)
      EXPECT_GT(after[3], before[3]); // and a graph
    std::thread([&] { model.reset(); }).join();
    counters(after);
    EXPECT_EQ(after[0], before[0]) << "page-locked buffers left";
    EXPECT_EQ(after[1], before[1]) << "driver calls without a context";
    EXPECT_EQ(after[2], before[2]) << "GPU bytes left";
    EXPECT_EQ(after[3], before[3]) << "CUDA graphs left";
  }
  dlclose(driver);
}

// CUDA graphs: the first run captures, later runs replay the graph with
// their own inputs (copied into the staging buffers the graph reads) and
// outputs; from many threads, each pooled run resources has its own graph.
TEST(Plans, CudaGraphReplaysWithEachRunsInputs) {
  ASSERT_TRUE(kFakeDriver);
  modelc::LoadOptions cpuOptions;
  cpuOptions.plan = "cpu";
  Model cpu = Model::load(fixture("mlp1_gpu.so"), cpuOptions);
  modelc::LoadOptions graphOptions;
  graphOptions.plan = "h200";
  graphOptions.cuda_graphs = true;
  Model graph = Model::load(fixture("mlp1_gpu.so"), graphOptions);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 4; ++r) {
        Tensor x = Tensor::zeros({64, 784}, DType::F32);
        for (int i = 0; i < 64 * 784; ++i)
          x.mutable_data_as<float>()[i] =
              float((i * 7 + t * 13 + r * 29) % 101) / 101.0f - 0.5f;
        std::vector<Tensor> want = cpu.run("forward", {x});
        std::vector<Tensor> got = graph.run("forward", {x});
        for (int i = 0; i < 64 * 10; ++i)
          if (std::fabs(got[0].data_as<float>()[i] -
                        want[0].data_as<float>()[i]) > 1e-4f)
            ++mismatches;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Plans, CudaGraphsNeedAGpuPlan) {
  ASSERT_TRUE(kFakeDriver);
  modelc::LoadOptions options;
  options.plan = "cpu";
  options.cuda_graphs = true;
  expectError([&] { Model::load(fixture("mlp1_gpu.so"), options); },
              "CUDA graphs need a plan with GPUs; plan 'cpu' has none");
}

// A dynamic batch (docs/dynamic.md): several sizes through one Model, each
// equal to the rows of the static model's run at 64 (the same weights).
TEST(DynamicDims, SeveralSizesInOneProcess) {
  Model dynamic = Model::load(fixture("mlp1_dynamic.so"));
  Model fixed = Model::load(fixture("mlp1.so"));
  ASSERT_EQ(dynamic.dims().size(), 1u);
  EXPECT_EQ(dynamic.dims()[0].name, "batch");
  EXPECT_EQ(dynamic.dims()[0].min, 1);
  EXPECT_EQ(dynamic.dims()[0].max, 64);
  EXPECT_EQ(dynamic.dims()[0].opt, 8);
  const modelc::EntryInfo &forward = dynamic.entry("forward");
  EXPECT_EQ(forward.inputs[0].dims, (std::vector<std::string>{"batch", ""}));
  EXPECT_EQ(forward.outputs[0].dims, (std::vector<std::string>{"batch", ""}));
  EXPECT_EQ(modelc::describe(forward.inputs[0], dynamic.dims()),
            "f32[batch in 1..64,784]");
  EXPECT_TRUE(fixed.dims().empty());
  EXPECT_TRUE(fixed.entry("forward").inputs[0].dims.empty());

  Tensor x = randomInput(5);
  Tensor want = fixed.run("forward", {x})[0];
  for (int64_t n : {64, 3, 1, 17, 3}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    Tensor part = Tensor::from_host(x.data(), {n, 784}, DType::F32);
    EXPECT_EQ(dynamic.output_shapes("forward", {part}),
              (std::vector<std::vector<int64_t>>{{n, 10}}));
    Tensor y = dynamic.run("forward", {part})[0];
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{n, 10}));
    for (int64_t i = 0; i < n * 10; ++i)
      EXPECT_NEAR(y.data_as<float>()[i], want.data_as<float>()[i], 1e-5)
          << "element " << i;
  }
  // run_into checks the outputs against the inputs' size.
  Tensor part = Tensor::from_host(x.data(), {4, 784}, DType::F32);
  std::vector<Tensor> wrong = {Tensor::zeros({64, 10}, DType::F32)};
  expectError([&] { dynamic.run_into("forward", {part}, wrong); },
              "output 'output0': expected f32[batch in 1..64,10], got "
              "f32[64,10]");
  std::vector<Tensor> right = {Tensor::zeros({4, 10}, DType::F32)};
  dynamic.run_into("forward", {part}, right);
  for (int64_t i = 0; i < 40; ++i)
    EXPECT_NEAR(right[0].data_as<float>()[i], want.data_as<float>()[i], 1e-5);
  // Out of range: nothing runs.
  Tensor big = Tensor::zeros({65, 784}, DType::F32);
  expectError([&] { dynamic.run("forward", {big}); },
              "input 'x': dimension 'batch' (axis 0) is 65, outside its "
              "range 1..64");
  expectError([&] { dynamic.run_async("forward", {big}); },
              "outside its range 1..64");
  Tensor empty = Tensor::zeros({0, 784}, DType::F32);
  expectError([&] { dynamic.output_shapes("forward", {empty}); },
              "dimension 'batch' (axis 0) is 0, outside its range 1..64");
}
