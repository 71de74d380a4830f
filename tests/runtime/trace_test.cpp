// trace_test.cpp - modelc::Trace and its JSON, a run's recorder
// (runtime/src/trace.hpp), and the descriptor's trace point checks.
#include "loader.hpp"
#include "trace.hpp"
#include "weights.hpp"

#include <gtest/gtest.h>

#include <limits>

using namespace modelc;

namespace {

int runEntry(modelc_run_ctx *) { return 0; }

TEST(Trace, JsonHasTracksSlicesAndFlows) {
  Trace trace;
  Trace::Slice op;
  op.name = "graph.linear (line 3) \"quoted\"";
  op.track = "sim:0 compute";
  op.category = "op";
  op.start_us = 10;
  op.duration_us = 5;
  op.estimate_us = 4.5;
  Trace::Slice copy;
  copy.name = "device.transfer (line 2)";
  copy.track = "sim:0 copy";
  copy.category = "copy";
  copy.start_us = 2;
  copy.duration_us = 4;
  copy.bytes = 8000;
  trace.add({op, copy}, {{7, 0, "sim:0 copy", "sim:0 compute", 6, 10}});
  std::string json = trace.json();
  // The host's track first, then the devices' by name.
  size_t host = json.find("{\"name\": \"host\"}");
  size_t compute = json.find("{\"name\": \"sim:0 compute\"}");
  size_t copyTrack = json.find("{\"name\": \"sim:0 copy\"}");
  ASSERT_NE(host, std::string::npos);
  ASSERT_NE(compute, std::string::npos);
  EXPECT_LT(host, compute);
  EXPECT_LT(compute, copyTrack);
  EXPECT_NE(json.find("\"name\": \"graph.linear (line 3) \\\"quoted\\\"\""),
            std::string::npos);
  EXPECT_NE(json.find("\"estimate_us\": 4.500"), std::string::npos);
  // 8000 bytes in 4 us: 2 GB/s.
  EXPECT_NE(json.find("\"bytes\": 8000, \"GB/s\": 2.000"), std::string::npos);
  EXPECT_NE(json.find("\"ph\": \"s\""), std::string::npos);
  EXPECT_NE(json.find("\"ph\": \"f\", \"bp\": \"e\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"wait 7\""), std::string::npos);
  trace.clear();
  EXPECT_TRUE(trace.slices().empty());
  EXPECT_TRUE(trace.flows().empty());
  EXPECT_EQ(trace.begin_run(), 0);
  EXPECT_EQ(trace.begin_run(), 1);
}

TEST(Trace, JsonStringEscapes) {
  EXPECT_EQ(Trace::json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
  EXPECT_EQ(Trace::json_string(""), "\"\"");
}

TEST(Trace, WriteNamesAFileItCannotWrite) {
  Trace trace;
  try {
    trace.write("/nonexistent-dir/t.json");
    FAIL() << "wrote into a missing folder";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/t.json"),
              std::string::npos);
  }
}

TEST(RunTrace, PairsBeginsAndEndsPerTrack) {
  const char *devices[] = {"cpu", "sim:0"};
  modelc_trace_point points[] = {{"graph.add (line 1)", 0, -1.0},
                                 {"graph.mul (line 2)", 1, 2.0}};
  modelc_plan_desc plan{};
  plan.num_devices = 2;
  plan.devices = devices;
  plan.num_trace_points = 2;
  plan.trace_points = points;
  Trace trace;
  detail::RunTrace run(trace, plan, {"cpu", "sim:0"}, /*multiDevice=*/true);
  run.begin("forward");
  run.point(1, MODELC_TRACE_BEGIN);
  run.point(0, MODELC_TRACE_BEGIN);
  run.point(0, MODELC_TRACE_END);
  run.copy(1, "device.transfer (line 4)", 64, false);
  run.event(1, MODELC_STREAM_COPY, 3, false);
  run.copy(1, "device.transfer (line 4)", 64, true);
  run.point(1, MODELC_TRACE_END);
  run.event(0, MODELC_STREAM_COMPUTE, 3, true);
  run.end();
  std::vector<Trace::Slice> slices = trace.slices();
  ASSERT_EQ(slices.size(), 4u);
  EXPECT_EQ(slices[0].name, "graph.add (line 1)");
  EXPECT_EQ(slices[0].track, "cpu compute");
  EXPECT_EQ(slices[1].track, "sim:0 copy");
  EXPECT_EQ(slices[1].bytes, 64u);
  EXPECT_EQ(slices[2].name, "graph.mul (line 2)");
  EXPECT_EQ(slices[2].track, "sim:0 compute");
  EXPECT_EQ(slices[2].estimate_us, 2.0);
  EXPECT_GE(slices[2].duration_us, slices[0].duration_us);
  EXPECT_EQ(slices[3].name, "run forward");
  EXPECT_EQ(slices[3].track, "host");
  std::vector<Trace::Flow> flows = trace.flows();
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].from_track, "sim:0 copy");
  EXPECT_EQ(flows[0].to_track, "cpu compute");
  EXPECT_LE(flows[0].from_us, flows[0].to_us);
}

/// A plan of the descriptor tests.
modelc_plan_desc planOf(const char *name, uint32_t numDevices,
                        const char *const *devices, const uint64_t *arena,
                        const modelc_entry_fn *run) {
  modelc_plan_desc plan{};
  plan.name = name;
  plan.num_devices = numDevices;
  plan.devices = devices;
  plan.arena_bytes = arena;
  plan.run = run;
  return plan;
}

/// A descriptor of one entry point and `numPlans` plans.
modelc_model_desc modelOf(const modelc_entry_desc *entry,
                          const modelc_plan_desc *plans, uint32_t numPlans) {
  modelc_model_desc desc{};
  desc.abi_version = MODELC_ABI_VERSION;
  desc.struct_size = sizeof desc;
  desc.num_entries = 1;
  desc.entries = entry;
  desc.num_plans = numPlans;
  desc.plans = plans;
  return desc;
}

/// checkDescriptor refuses `desc` with an error containing `text`.
void expectRefused(const modelc_model_desc &desc, const std::string &text) {
  try {
    detail::checkDescriptor(desc, "m.so");
    ADD_FAILURE() << "expected an error containing: " << text;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Descriptor, RefusesMalformedTracePoints) {
  const char *devices[] = {"cpu"};
  const uint64_t arena[] = {0};
  const modelc_entry_fn run[] = {runEntry};
  modelc_entry_desc entry{"f", 0, nullptr, 0, nullptr};
  modelc_trace_point points[] = {{"graph.add (line 1)", 1, -1.0}};
  modelc_plan_desc plan = planOf("cpu", 1, devices, arena, run);
  plan.num_trace_points = 1;
  plan.trace_points = points;
  modelc_model_desc desc = modelOf(&entry, &plan, 1);
  EXPECT_THROW(
      {
        try {
          detail::checkDescriptor(desc, "m.so");
        } catch (const Error &e) {
          EXPECT_NE(std::string(e.what()).find("malformed trace point #0"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  points[0].device = 0;
  EXPECT_NO_THROW(detail::checkDescriptor(desc, "m.so"));
  plan.trace_points = nullptr;
  EXPECT_THROW(detail::checkDescriptor(desc, "m.so"), Error);
}

// ABI 11: the table of dynamic dimensions and the per-axis indices into it.
TEST(Descriptor, RefusesMalformedDynamicDimensions) {
  const char *devices[] = {"cpu"};
  const uint64_t arena[] = {0};
  const modelc_entry_fn run[] = {runEntry};
  const int64_t shape[] = {8, 4};
  int32_t axes[] = {0, -1};
  modelc_tensor_desc input{"x", 0, 2, shape, axes};
  modelc_entry_desc entry{"f", 1, &input, 0, nullptr};
  modelc_dim_desc dims[] = {{"batch", 1, 8, 4}};
  modelc_plan_desc plan = planOf("cpu", 1, devices, arena, run);
  modelc_model_desc desc = modelOf(&entry, &plan, 1);
  desc.num_dims = 1;
  desc.dims = dims;
  auto refuses = [&](const std::string &text) { expectRefused(desc, text); };
  detail::DescriptorInfo info = detail::checkDescriptor(desc, "m.so");
  ASSERT_EQ(info.dims.size(), 1u);
  EXPECT_EQ(info.entries[0].inputs[0].dims,
            (std::vector<std::string>{"batch", ""}));
  dims[0].opt = 9; // above max
  refuses("malformed dynamic dimension #0");
  dims[0].opt = 4;
  axes[0] = 1; // no such dimension
  refuses("tensor 'x' has axis 0 of an unknown dynamic dimension, or not at "
          "its max");
  axes[0] = 0;
  dims[0].max = 16; // the shape holds 8, not the max
  dims[0].opt = 16;
  refuses("tensor 'x' has axis 0 of an unknown dynamic dimension, or not at "
          "its max");
  dims[0].max = dims[0].opt = 8;
  const float value[32] = {};
  const void *defaults[] = {value};
  entry.input_defaults = defaults; // a default has one fixed shape
  refuses("input 'x' has a default and a dynamic dimension");
  entry.input_defaults = nullptr;
  desc.dims = nullptr;
  refuses("malformed table of dynamic dimensions");
}

// ABI 12: a target's size regimes are consecutive plans of one name and
// devices whose ranges of one dimension cover its range in order.
TEST(Descriptor, RefusesMalformedSizeRegimes) {
  const char *devices[] = {"cpu", "sim:0"};
  const char *otherDevices[] = {"cpu", "sim:1"};
  const uint64_t arena[] = {0, 0};
  const modelc_entry_fn run[] = {runEntry};
  int64_t shape[] = {8, 4};
  int32_t axes[] = {0, -1};
  modelc_tensor_desc input{"x", 0, 2, shape, axes};
  modelc_entry_desc entry{"f", 1, &input, 0, nullptr};
  modelc_dim_desc dims[] = {{"batch", 1, 8, 4}};
  modelc_plan_desc plans[2] = {};
  for (modelc_plan_desc &p : plans) {
    p = planOf("cpu+sim2", 2, devices, arena, run);
    p.regime_dim = 0;
  }
  plans[0].regime_min = 1;
  plans[0].regime_max = 3;
  plans[1].regime_min = 4;
  plans[1].regime_max = 8;
  modelc_model_desc desc = modelOf(&entry, plans, 2);
  desc.num_dims = 1;
  desc.dims = dims;
  auto refuses = [&](const std::string &text) { expectRefused(desc, text); };
  EXPECT_NO_THROW(detail::checkDescriptor(desc, "m.so"));
  plans[1].regime_min = 5; // a gap: 4 runs nowhere
  refuses("plan 'cpu+sim2': malformed size regime #1 (5..8 of dimension "
          "'batch', 1..8)");
  plans[1].regime_min = 4;
  plans[1].regime_max = 7; // 8 runs nowhere
  refuses("plan 'cpu+sim2': its size regimes end at 7, before the end of "
          "dimension 'batch' (8)");
  plans[1].regime_max = 8;
  plans[1].devices = otherDevices;
  refuses("malformed size regime #1");
  plans[1].devices = devices;
  plans[0].regime_dim = plans[1].regime_dim = 1;
  refuses("size regimes of an unknown dimension #1");
  plans[0].regime_dim = plans[1].regime_dim = 0;
  plans[0].regime_max = plans[1].regime_max = 0; // two plans of one name
  refuses("plan 'cpu+sim2' appears 2 times without size regimes");

  // A dimension up to INT64_MAX: the regimes' ends are compared without
  // computing max + 1 (the descriptor fuzzer's signed overflow, 2026-12-04).
  constexpr int64_t top = std::numeric_limits<int64_t>::max();
  dims[0].max = dims[0].opt = top;
  shape[0] = top;
  plans[0].regime_max = 3;
  plans[1].regime_max = top;
  EXPECT_NO_THROW(detail::checkDescriptor(desc, "m.so"));
  plans[0].regime_max = top; // the first regime covers it all: #1 is extra
  plans[1].regime_min = top;
  refuses("malformed size regime #1");
}

// ABI 16: optimizer state sharded over the ranks is a writable weight that
// starts as zeros, on plans of one device.
TEST(Descriptor, RefusesMalformedWeightShards) {
  const char *devices[] = {"cpu", "sim:0"};
  const uint64_t arena[] = {0, 0};
  const modelc_entry_fn run[] = {runEntry};
  modelc_entry_desc entry{"f", 0, nullptr, 0, nullptr};
  const int64_t shape[] = {4};
  modelc_weight_desc weights[] = {
      {"w", MODELC_DTYPE_F32, 1, shape, 0, 16},
      {"w.momentum_buffer", MODELC_DTYPE_F32, 1, shape, 0, 16}};
  uint8_t flags[] = {MODELC_WEIGHT_WRITABLE,
                     MODELC_WEIGHT_WRITABLE | MODELC_WEIGHT_ZEROS};
  int32_t shards[] = {-1, 3};
  modelc_plan_desc plan = planOf("cpu", 1, devices, arena, run);
  modelc_model_desc desc = modelOf(&entry, &plan, 1);
  desc.num_weights = 2;
  desc.weights = weights;
  desc.weight_flags = flags;
  desc.weight_shards = shards;
  EXPECT_NO_THROW(detail::checkDescriptor(desc, "m.so"));
  // The owner of shard 3 (back and forth over the ranks): rank 0 of 2
  // (0, 1, 1, 0), rank 2 of 3 (0, 1, 2, 2), rank 3 of 4, rank 0 of 1.
  EXPECT_TRUE(detail::holdsWeight(desc, 0, 1, 2));
  EXPECT_TRUE(detail::holdsWeight(desc, 1, 0, 2));
  EXPECT_FALSE(detail::holdsWeight(desc, 1, 1, 2));
  EXPECT_TRUE(detail::holdsWeight(desc, 1, 2, 3));
  EXPECT_FALSE(detail::holdsWeight(desc, 1, 0, 3));
  EXPECT_TRUE(detail::holdsWeight(desc, 1, 3, 4));
  EXPECT_TRUE(detail::holdsWeight(desc, 1, 0, 1));
  // Shard by shard over 3 ranks: 0 1 2 2 1 0 0 1 2.
  const int64_t owners[] = {0, 1, 2, 2, 1, 0, 0, 1, 2};
  for (int64_t k = 0; k < 9; ++k)
    EXPECT_EQ(modelc_shard_owner(k, 3), owners[k]) << "shard " << k;

  shards[1] = -2;
  expectRefused(desc, "weight 'w.momentum_buffer' has a malformed shard (-2)");
  shards[1] = 3;
  shards[0] = 0; // a parameter: every rank reads it
  expectRefused(desc, "weight 'w' is sharded over the ranks but is not "
                      "optimizer state (writable, starting as zeros)");
  shards[0] = -1;
  desc.weight_flags = nullptr;
  expectRefused(desc, "weight 'w.momentum_buffer' is sharded over the ranks "
                      "but is not optimizer state");
  desc.weight_flags = flags;
  plan.num_devices = 2;
  expectRefused(desc, "plan 'cpu' is not the CPU alone and the model shards "
                      "optimizer state over the ranks");
  plan.num_devices = 1;
  devices[0] = "sim:0";
  expectRefused(desc, "is not the CPU alone and the model shards");
}

TEST(Descriptor, RefusesRankSumsOffItsGpus) {
  // MODELC_PLAN_RANK_SUMS names the GPU of the plan whose copy stream sums
  // over the ranks: another device, or one past the plan's, is refused.
  const char *devices[] = {"cpu", "cuda:0", "sim:0"};
  const uint64_t arena[] = {0, 0, 0};
  const modelc_entry_fn run[] = {runEntry};
  modelc_entry_desc entry{"f", 0, nullptr, 0, nullptr};
  modelc_plan_desc plan = planOf("h200", 3, devices, arena, run);
  modelc_model_desc desc = modelOf(&entry, &plan, 1);
  plan.plan_flags = MODELC_PLAN_RANK_SUMS;
  plan.rank_sums_device = 1;
  EXPECT_NO_THROW(detail::checkDescriptor(desc, "m.so"));
  for (uint32_t d : {0u, 2u, 3u}) {
    plan.rank_sums_device = d;
    expectRefused(desc, "plan 'h200' sums over the ranks on device #" +
                            std::to_string(d) +
                            ", which is not one of its GPUs");
  }
  // Without the flag the field means nothing.
  plan.plan_flags = 0;
  EXPECT_NO_THROW(detail::checkDescriptor(desc, "m.so"));
}

} // namespace
