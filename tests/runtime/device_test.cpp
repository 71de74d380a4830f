// device_test.cpp - the runtime's Device interface driven directly, for the
// cpu and sim kinds (runtime/src/device.hpp): device names, resident
// weights, arenas, host tasks, copies between devices and the ordering of
// record and wait.
#include "device.hpp"
#include "run_state.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

using namespace modelc::detail;

namespace {

TEST(DeviceName, ParsesTheThreeKinds) {
  auto cpu = parseDeviceName("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->kind, DeviceKind::Cpu);
  auto sim = parseDeviceName("sim:3");
  ASSERT_TRUE(sim);
  EXPECT_EQ(sim->kind, DeviceKind::Sim);
  EXPECT_EQ(sim->ordinal, 3);
  auto gpu = parseDeviceName("cuda:12");
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->kind, DeviceKind::Cuda);
  EXPECT_EQ(gpu->ordinal, 12);
  for (const char *bad : {"", "cpu:0", "sim:", "cuda:x", "gpu:0", "cuda"})
    EXPECT_FALSE(parseDeviceName(bad)) << bad;
  EXPECT_EQ(deviceKindOf("cuda:0=cuda:2,cuda:1=cuda:3"), DeviceKind::Cuda);
  EXPECT_EQ(deviceKindOf("cpu"), DeviceKind::Cpu);
  EXPECT_FALSE(deviceKindOf("h200x2"));
}

// One weight of 4 floats, for the resident copies.
const int64_t kWeightShape[] = {4};
const modelc_weight_desc kWeight = {"w", MODELC_DTYPE_F32, 1, kWeightShape, 0,
                                    16};
modelc_model_desc oneWeightModel() {
  modelc_model_desc desc{};
  desc.abi_version = MODELC_ABI_VERSION;
  desc.struct_size = sizeof(desc);
  desc.num_weights = 1;
  desc.weights = &kWeight;
  return desc;
}

std::unique_ptr<Device> device(const std::string &label, uint32_t index,
                               const modelc_model_desc &desc) {
  DeviceSetup setup;
  setup.name = *parseDeviceName(label);
  setup.label = label;
  setup.index = index;
  setup.where = "model 'test.so'";
  setup.planName = "test";
  setup.desc = &desc;
  auto made = makeDevice(setup);
  made->setUp();
  return made;
}

TEST(Device, KindsAndProperties) {
  modelc_model_desc desc = oneWeightModel();
  auto cpu = device("cpu", 0, desc);
  auto sim = device("sim:0", 1, desc);
  EXPECT_EQ(cpu->kind(), DeviceKind::Cpu);
  EXPECT_EQ(sim->kind(), DeviceKind::Sim);
  EXPECT_EQ(sim->name(), "sim:0");
  EXPECT_EQ(sim->index(), 1u);
  EXPECT_TRUE(cpu->isHost());
  EXPECT_FALSE(sim->isHost());
  EXPECT_TRUE(cpu->hostAddressable());
  EXPECT_TRUE(sim->hostAddressable());
  std::string why;
  EXPECT_FALSE(sim->supportsCapture(why));
  EXPECT_FALSE(why.empty());
  // Copies between host-memory devices run on the destination.
  EXPECT_EQ(&copyEngine(*cpu, *sim), cpu.get());
  EXPECT_EQ(&copyEngine(*sim, *cpu), sim.get());
}

TEST(Device, WeightsAreResidentOnTheHostInPlaceAndCopiedToSim) {
  modelc_model_desc desc = oneWeightModel();
  auto cpu = device("cpu", 0, desc);
  auto sim = device("sim:0", 1, desc);
  alignas(64) float host[4] = {1, 2, 3, 4};
  EXPECT_EQ(cpu->weights()[0], nullptr);
  cpu->makeResident(0, host, kWeight);
  sim->makeResident(0, host, kWeight);
  EXPECT_EQ(cpu->weights()[0], host);
  ASSERT_NE(sim->weights()[0], nullptr);
  EXPECT_NE(sim->weights()[0], host);
  EXPECT_EQ(std::memcmp(sim->weights()[0], host, sizeof(host)), 0);
  auto run = sim->allocate(64, "forward");
  EXPECT_TRUE(sim->holds(*run, sim->weights()[0], 16));
  EXPECT_FALSE(sim->holds(*run, host, 16));
  EXPECT_TRUE(cpu->holds(*run, host, 16)); // a weight resident in place
}

TEST(Device, AllocateGivesAlignedArenasOfTheirOwn) {
  modelc_model_desc desc = oneWeightModel();
  for (const char *label : {"cpu", "sim:0"}) {
    auto d = device(label, 0, desc);
    auto a = d->allocate(1000, "forward");
    auto b = d->allocate(0, "forward");
    ASSERT_NE(a->arena, nullptr) << label;
    ASSERT_NE(b->arena, nullptr) << label;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a->arena) % 64, 0u) << label;
    EXPECT_EQ(a->arenaBytes, 1000u);
    EXPECT_NE(a->arena, b->arena);
    std::memset(a->arena, 0xab, 1000); // all of it is writable
    EXPECT_TRUE(d->holds(*a, a->arena + 10, 990));
    EXPECT_FALSE(d->holds(*a, a->arena + 10, 991));
    EXPECT_FALSE(d->holds(*a, b->arena, 1));
  }
}

/// A plan of cpu and sim:0, driven through the Device interface as the
/// ABI callbacks drive it.
struct TwoDeviceRun {
  modelc_model_desc desc = oneWeightModel();
  std::vector<std::unique_ptr<Device>> devices;
  RunResources resources;
  RunState state;
  modelc_run_ctx ctx{};

  explicit TwoDeviceRun(uint64_t arenaBytes) {
    devices.push_back(device("cpu", 0, desc));
    devices.push_back(device("sim:0", 1, desc));
    for (auto &d : devices) {
      auto run = d->allocate(arenaBytes, "forward");
      run->compute = std::make_unique<modelc::Stream>();
      run->copy = std::make_unique<modelc::Stream>();
      resources.arenaPointers.push_back(run->arena);
      resources.devices.push_back(std::move(run));
    }
    state.resources = &resources;
    state.ctx = &ctx;
    ctx.runtime = &state;
    ctx.arenas = resources.arenaPointers.data();
    ctx.arena = resources.arenaPointers[0];
  }
  Device &cpu() { return *devices[0]; }
  Device &sim() { return *devices[1]; }
  void drain() {
    for (auto &run : resources.devices) {
      run->compute->drain();
      run->copy->drain();
    }
  }
};

constexpr int kCount = 256;

/// A host task on sim:0: fills its arena with 0, 1, 2, ... late, so that a
/// copy not ordered after it would read the arena's old contents.
int fillSimArena(modelc_run_ctx *ctx) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto *out = reinterpret_cast<float *>(ctx->arenas[1]);
  for (int i = 0; i < kCount; ++i)
    out[i] = static_cast<float>(i);
  return 0;
}

/// A host task on the cpu: doubles what the copy brought to its arena.
int doubleCpuArena(modelc_run_ctx *ctx) {
  auto *data = reinterpret_cast<float *>(ctx->arenas[0]);
  for (int i = 0; i < kCount; ++i)
    data[i] *= 2;
  return 0;
}

/// Runs the ordering check with the host's waits as plain host waits or,
/// as in a plan with GPUs, as waits that also wait for device events.
void checkOrdering(bool deviceEvents) {
  TwoDeviceRun run(kCount * sizeof(float));
  run.resources.events.setDeviceEvents(deviceEvents);
  std::memset(run.resources.arenaPointers[0], 0, kCount * sizeof(float));
  std::memset(run.resources.arenaPointers[1], 0, kCount * sizeof(float));
  run.resources.events.reset(2);
  // sim:0 computes, then event 0; the cpu's copy stream waits for it,
  // copies sim:0 -> cpu, then event 1; the cpu's compute stream waits for
  // that and doubles the result.
  run.sim().launch(run.state, fillSimArena);
  run.sim().record(run.state, MODELC_STREAM_COMPUTE, 0);
  run.cpu().wait(run.state, MODELC_STREAM_COMPUTE, 1);
  run.cpu().launch(run.state, doubleCpuArena);
  run.cpu().wait(run.state, MODELC_STREAM_COPY, 0);
  copyEngine(run.cpu(), run.sim())
      .copy(run.state, run.cpu(), run.resources.arenaPointers[0], run.sim(),
            run.resources.arenaPointers[1], kCount * sizeof(float),
            "a test copy");
  run.cpu().record(run.state, MODELC_STREAM_COPY, 1);
  run.drain();
  EXPECT_EQ(run.state.error, "");
  auto *result =
      reinterpret_cast<const float *>(run.resources.arenaPointers[0]);
  for (int i = 0; i < kCount; ++i)
    ASSERT_EQ(result[i], 2.0f * i) << "at " << i;
}

TEST(Device, RecordAndWaitOrderTasksAndCopiesAcrossDevices) {
  checkOrdering(false);
  checkOrdering(true);
}

TEST(Device, HostDevicesRejectGpuWorkWithAMessage) {
  TwoDeviceRun run(64);
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  run.sim().launchKernel(run.state, 0, grid, block, 0, nullptr);
  EXPECT_EQ(run.state.error, "launch_kernel on device #1, which is not a GPU");
  run.state.error.clear();
  modelc_gemm g{};
  run.cpu().gemm(run.state, g);
  EXPECT_EQ(run.state.error, "gemm on device #0, which is not a GPU");
}

TEST(Device, HostTasksAreSetAsideWhileAGraphIsCaptured) {
  TwoDeviceRun run(64);
  run.resources.capture.capturing = true;
  run.cpu().launch(run.state, doubleCpuArena);
  run.drain();
  ASSERT_EQ(run.resources.capture.hostTasks.size(), 1u);
  EXPECT_EQ(run.resources.capture.hostTasks[0], &doubleCpuArena);
}

} // namespace
