// plan_choice_test.cpp - which plan a model runs on which machine, and on
// which physical GPUs (runtime/src/plan_choice.cpp).
#include "plan_choice.hpp"

#include "modelc/runtime.hpp"

#include <gtest/gtest.h>

using modelc::detail::choosePlan;
using modelc::detail::MachineGpus;
using modelc::detail::PlanChoice;
using modelc::detail::PlanDevices;

namespace {

// A model built for cpu, cpu+sim2, h200 and h200x2.
const std::vector<PlanDevices> kPlans = {
    {"cpu", {"cpu"}},
    {"cpu+sim2", {"cpu", "sim:0", "sim:1"}},
    {"h200", {"cpu", "cuda:0"}},
    {"h200x2", {"cpu", "cuda:0", "cuda:1"}},
};

MachineGpus gpus(int count, bool drivable = true) {
  return MachineGpus{count, std::to_string(count) + " GPUs", drivable};
}

std::string errorOf(const std::vector<PlanDevices> &plans,
                    const std::string &request, const MachineGpus &machine) {
  try {
    choosePlan(plans, request, machine, "model m.so");
  } catch (const modelc::Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PlanChoice, DefaultTakesTheMostGpusTheMachineHas) {
  EXPECT_EQ(choosePlan(kPlans, "", gpus(0), "m").plan, 0u);
  EXPECT_EQ(choosePlan(kPlans, "", gpus(1), "m").plan, 2u);
  PlanChoice two = choosePlan(kPlans, "", gpus(2), "m");
  EXPECT_EQ(two.plan, 3u);
  EXPECT_EQ(two.physical, (std::vector<int>{-1, 0, 1}));
  EXPECT_EQ(choosePlan(kPlans, "", gpus(8), "m").plan, 3u);
}

TEST(PlanChoice, DefaultStaysOnTheHostWhileCudaCannotRun) {
  EXPECT_EQ(choosePlan(kPlans, "", gpus(8, /*drivable=*/false), "m").plan, 0u);
}

TEST(PlanChoice, DefaultWithoutACpuPlanTakesTheFirstHostPlan) {
  std::vector<PlanDevices> plans = {{"h200", {"cuda:0"}},
                                    {"sims", {"sim:0", "sim:1"}}};
  EXPECT_EQ(choosePlan(plans, "", gpus(0), "m").plan, 1u);
}

TEST(PlanChoice, NoRunnablePlanSaysWhy) {
  std::vector<PlanDevices> plans = {{"h200x2", {"cuda:0", "cuda:1"}}};
  EXPECT_EQ(errorOf(plans, "", MachineGpus{0, "no CUDA driver", true}),
            "model m.so has no plan this machine can run: it has 'h200x2', "
            "all on GPUs, and this machine has 0 GPUs (no CUDA driver)");
}

TEST(PlanChoice, ByName) {
  EXPECT_EQ(choosePlan(kPlans, "cpu+sim2", gpus(0), "m").plan, 1u);
  EXPECT_EQ(choosePlan(kPlans, "h200", gpus(4), "m").plan, 2u);
  EXPECT_EQ(errorOf(kPlans, "h200x4", gpus(4)),
            "model m.so has no plan 'h200x4'; it has 'cpu', 'cpu+sim2', "
            "'h200', 'h200x2'");
}

TEST(PlanChoice, ByNameNeedsTheGpus) {
  EXPECT_EQ(errorOf(kPlans, "h200x2", gpus(1)),
            "model m.so: plan 'h200x2' needs GPU cuda:1, but this machine "
            "has 1 visible (1 GPUs)");
}

TEST(PlanChoice, GpuListMapsThePlanOntoThoseGpus) {
  PlanChoice one = choosePlan(kPlans, "cuda:3", gpus(4), "m");
  EXPECT_EQ(one.plan, 2u);
  EXPECT_EQ(one.physical, (std::vector<int>{-1, 3}));
  PlanChoice two = choosePlan(kPlans, "cuda:2,cuda:1", gpus(4), "m");
  EXPECT_EQ(two.plan, 3u);
  EXPECT_EQ(two.physical, (std::vector<int>{-1, 2, 1}));
  EXPECT_EQ(errorOf(kPlans, "cuda:0,cuda:1,cuda:2", gpus(4)),
            "model m.so has no plan 'cuda:0,cuda:1,cuda:2' (a plan on 3 "
            "GPUs); it has 'cpu', 'cpu+sim2', 'h200', 'h200x2'");
  EXPECT_EQ(errorOf(kPlans, "cuda:5", gpus(4)),
            "model m.so: plan 'h200' needs GPU cuda:5 (for its cuda:0), but "
            "this machine has 4 visible (4 GPUs)");
}

TEST(PlanChoice, MappingNamesEachPlanDevice) {
  PlanChoice two =
      choosePlan(kPlans, "cuda:1=cuda:0,cuda:0=cuda:3", gpus(4), "m");
  EXPECT_EQ(two.plan, 3u);
  EXPECT_EQ(two.physical, (std::vector<int>{-1, 3, 0}));
  EXPECT_EQ(errorOf(kPlans, "cuda:1=cuda:2", gpus(4)),
            "model m.so has no plan 'cuda:1=cuda:2' (a plan on exactly "
            "those devices); it has 'cpu', 'cpu+sim2', 'h200', 'h200x2'");
}

TEST(PlanChoice, BadRequests) {
  EXPECT_EQ(errorOf(kPlans, "cuda:0,cuda:0", gpus(4)),
            "model m.so: the device request 'cuda:0,cuda:0' names cuda:0 "
            "twice");
  EXPECT_EQ(errorOf(kPlans, "cuda:0=cuda:1,cuda:0=cuda:2", gpus(4)),
            "model m.so: the device request 'cuda:0=cuda:1,cuda:0=cuda:2' "
            "maps cuda:0 twice");
  EXPECT_NE(errorOf(kPlans, "cuda:x", gpus(4))
                .find("cannot read the device request 'cuda:x' at 'cuda:x'"),
            std::string::npos);
  EXPECT_NE(errorOf(kPlans, "cuda:0=cuda:1,cuda:2", gpus(4))
                .find("cannot read the device request"),
            std::string::npos);
}

TEST(PlanChoice, CudaPlansRefusedWhereTheDriverCannotRunThem) {
  // e.g. a driver that lacks a call the cuda device needs.
  EXPECT_EQ(errorOf(kPlans, "h200", gpus(1, /*drivable=*/false)),
            "model m.so: plan 'h200' needs CUDA devices, which the runtime "
            "cannot drive on this machine (1 GPUs)");
}

TEST(PlanChoice, UnknownDeviceInAPlan) {
  std::vector<PlanDevices> plans = {{"odd", {"tpu:0"}}};
  EXPECT_EQ(errorOf(plans, "odd", gpus(0)),
            "model m.so: plan 'odd' names an unknown device 'tpu:0'");
}

} // namespace
