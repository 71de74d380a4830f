// The host's sums over replicas (runtime/src/replica_sums.hpp): members
// meeting from their own threads, in any order of arrival, add in member
// order; a member left waiting for one that never comes gives up after
// its timeout with a message, and so does every later member of the group.
#include "replica_sums.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace modelc::detail {
namespace {

ReplicaMember member(uint32_t group, uint32_t m, uint32_t members,
                     int64_t count) {
  ReplicaMember r;
  r.group = group;
  r.member = m;
  r.members = members;
  r.count = count;
  r.what = "test sum";
  return r;
}

TEST(ReplicaSums, AddInMemberOrderWhateverTheArrival) {
  // (1e8 + -1e8) + 1 is 1 in f32; 1e8 + (-1e8 + 1) would be 0.
  std::vector<std::vector<float>> parts = {
      {1e8f, 2.0f}, {-1e8f, 3.0f}, {1.0f, 4.0f}};
  ReplicaSums sums;
  for (int run = 0; run < 3; ++run) {
    sums.reset();
    std::vector<const float *> got(3, nullptr);
    std::vector<std::string> errors(3);
    std::vector<std::thread> threads;
    // Member 2 first, member 0 last: the last to arrive adds.
    for (int m = 2; m >= 0; --m)
      threads.emplace_back([&, m] {
        ReplicaMember r = member(7, static_cast<uint32_t>(m), 3, 2);
        got[m] = sums.meet(r, parts[m].data(), 30.0, errors[m]);
      });
    for (std::thread &t : threads)
      t.join();
    for (int m = 0; m < 3; ++m) {
      ASSERT_NE(got[m], nullptr) << errors[m];
      EXPECT_EQ(got[m], got[0]); // one sum, read by every member
    }
    EXPECT_EQ(got[0][0], 1.0f);
    EXPECT_EQ(got[0][1], 9.0f);
  }
}

TEST(ReplicaSums, StagingIsPerMemberAndKept) {
  ReplicaSums sums;
  float *a = sums.staging(member(1, 0, 2, 16));
  float *b = sums.staging(member(1, 1, 2, 16));
  EXPECT_NE(a, b);
  sums.reset();
  EXPECT_EQ(sums.staging(member(1, 0, 2, 16)), a);
}

TEST(ReplicaSums, AMemberThatNeverComesEndsTheWait) {
  ReplicaSums sums;
  sums.reset();
  float part[2] = {1.0f, 2.0f};
  std::string error;
  EXPECT_EQ(sums.meet(member(3, 0, 2, 2), part, 0.2, error), nullptr);
  EXPECT_EQ(error, "member 0 of 2 waited 0.2 s for the others (1 of 2 "
                   "arrived)");
  // The late member does not wait for a sum that will not come.
  error.clear();
  EXPECT_EQ(sums.meet(member(3, 1, 2, 2), part, 30.0, error), nullptr);
  EXPECT_EQ(error, "another member gave up waiting");
  // The next run starts afresh.
  sums.reset();
  std::thread other([&] {
    std::string e;
    EXPECT_NE(sums.meet(member(3, 1, 2, 2), part, 30.0, e), nullptr) << e;
  });
  const float *sum = sums.meet(member(3, 0, 2, 2), part, 30.0, error);
  other.join();
  ASSERT_NE(sum, nullptr) << error;
  EXPECT_EQ(sum[1], 4.0f);
}

} // namespace
} // namespace modelc::detail
