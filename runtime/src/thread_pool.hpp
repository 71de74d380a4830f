// thread_pool.hpp - the CPU pool behind modelc_runtime_api::parallel_for.
#ifndef MODELC_RUNTIME_THREAD_POOL_HPP
#define MODELC_RUNTIME_THREAD_POOL_HPP

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace modelc {

/// A fixed set of workers. parallel_for() splits [0, n) into chunks that the
/// calling thread and the workers take in turn; several callers (concurrent
/// runs) may use the pool at once. A call allocates nothing: its job lives
/// on the caller's stack until every worker has let go of it.
class ThreadPool {
public:
  /// `num_threads` counts the caller: 1 means no workers.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int num_threads() const { return num_threads_; }

  using ChunkFn = void (*)(void *arg, int64_t begin, int64_t end);
  void parallel_for(int64_t n, int64_t grain, ChunkFn fn, void *arg);

private:
  struct Job;
  void worker();
  void runChunks(Job &job);

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;     // workers: a job arrived
  std::condition_variable finished_; // callers: a job may be complete
  std::vector<Job *> jobs_;          // jobs with chunks left to take
  bool stopping_ = false;
};

} // namespace modelc

#endif // MODELC_RUNTIME_THREAD_POOL_HPP
