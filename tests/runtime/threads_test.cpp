// threads_test.cpp - the CPU pool's default size (runtime/src/parallel.hpp):
// the affinity mask, capped by a cgroup CPU quota read from a directory of
// the test's own.
#include "parallel.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct CgroupDir {
  fs::path root;
  CgroupDir() {
    root = fs::temp_directory_path() /
           ("modelc-threads-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~CgroupDir() { fs::remove_all(root); }
  void write(const std::string &file, const std::string &text) {
    fs::create_directories((root / file).parent_path());
    std::ofstream(root / file) << text;
  }
};

int affinityCpus() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(Threads, NoCgroupFilesMeansTheAffinityMask) {
  CgroupDir dir;
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 0);
  EXPECT_EQ(modelc::defaultThreads(dir.root.c_str()), affinityCpus());
}

TEST(Threads, CgroupV2QuotaRoundsUp) {
  CgroupDir dir;
  dir.write("cpu.max", "150000 100000\n");
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 2);
  dir.write("cpu.max", "50000 100000\n");
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 1);
  EXPECT_EQ(modelc::defaultThreads(dir.root.c_str()), 1);
  dir.write("cpu.max", "max 100000\n");
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 0);
  EXPECT_EQ(modelc::defaultThreads(dir.root.c_str()), affinityCpus());
  dir.write("cpu.max", "garbage\n");
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 0);
}

TEST(Threads, QuotaAboveTheMaskKeepsTheMask) {
  CgroupDir dir;
  dir.write("cpu.max", "100000000 100000\n"); // 1000 CPUs
  EXPECT_EQ(modelc::defaultThreads(dir.root.c_str()), affinityCpus());
}

TEST(Threads, CgroupV1Quota) {
  CgroupDir dir;
  dir.write("cpu/cpu.cfs_quota_us", "300000\n");
  dir.write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 3);
  dir.write("cpu/cpu.cfs_quota_us", "-1\n"); // no limit
  EXPECT_EQ(modelc::cgroupCpuLimit(dir.root.c_str()), 0);
}

} // namespace
