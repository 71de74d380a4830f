// runtime_test.cpp - the parts of the runtime that need no compiled model:
// tensors, the thread pool (.npy files: npy_test.cpp).
#include "modelc/runtime.hpp"

#include "parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

using modelc::DType;
using modelc::Tensor;

TEST(Tensor, ZerosOwnsAlignedZeroedMemory) {
  Tensor t = Tensor::zeros({3, 5}, DType::F32);
  EXPECT_TRUE(t.owns_data());
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int i = 0; i < 15; ++i)
    EXPECT_EQ(t.data_as<float>()[i], 0.0f);
  EXPECT_EQ(t.describe(), "f32[3,5]");
  EXPECT_EQ(t.device(), "cpu");
}

TEST(Tensor, BorrowedReadOnlyDataCannotBeWritten) {
  const float data[2] = {1, 2};
  Tensor t =
      Tensor::from_host(static_cast<const void *>(data), {2}, DType::F32);
  EXPECT_FALSE(t.owns_data());
  EXPECT_EQ(t.data(), data);
  EXPECT_THROW(t.mutable_data(), modelc::Error);
}

TEST(Tensor, NegativeDimensionIsAnError) {
  float x;
  EXPECT_THROW(Tensor::from_host(&x, {-1}, DType::F32), modelc::Error);
}

TEST(Tensor, ShapeBeyondInt64IsAnError) {
  float x;
  try {
    Tensor::from_host(&x, {1 << 30, 1 << 30, 1 << 30}, DType::F32);
    FAIL() << "no error";
  } catch (const modelc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("more elements than fit in 64 bits"),
              std::string::npos)
        << e.what();
  }
}

TEST(ParallelFor, EveryIndexRunsExactlyOnce) {
  std::vector<std::atomic<int>> hits(10007);
  struct Arg {
    std::vector<std::atomic<int>> *hits;
  } arg{&hits};
  for (int threads : {1, 2, 4})
    modelc::parallelFor(
        threads, static_cast<int64_t>(hits.size()), 7,
        [](void *p, int64_t begin, int64_t end) {
          auto *a = static_cast<Arg *>(p);
          for (int64_t i = begin; i < end; ++i)
            (*a->hits)[i]++;
        },
        &arg);
  for (auto &h : hits)
    ASSERT_EQ(h.load(), 3);
}

TEST(ParallelFor, SmallRangesRunOnTheCaller) {
  std::thread::id caller = std::this_thread::get_id(), seen;
  modelc::parallelFor(
      4, 10, 100,
      [](void *p, int64_t, int64_t) {
        *static_cast<std::thread::id *>(p) = std::this_thread::get_id();
      },
      &seen);
  EXPECT_EQ(seen, caller);
}

TEST(ParallelFor, ConcurrentCallers) {
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 8; ++t)
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r)
        modelc::parallelFor(
            2, 1000, 10,
            [](void *p, int64_t begin, int64_t end) {
              static_cast<std::atomic<int64_t> *>(p)->fetch_add(end - begin);
            },
            &total);
    });
  for (auto &c : callers)
    c.join();
  EXPECT_EQ(total.load(), 8 * 50 * 1000);
}
