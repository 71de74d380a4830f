// thread_pool.cpp - chunked parallel loops on a fixed set of workers.
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>

namespace modelc {

struct ThreadPool::Job {
  ChunkFn fn;
  void *arg;
  int64_t n;
  int64_t chunk;
  int64_t num_chunks;
  std::atomic<int64_t> next{0};
  int64_t done = 0; // chunks finished; guarded by the pool's mutex
  int helpers = 0;  // workers inside runChunks; guarded by the mutex
};

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)) {
  jobs_.reserve(64);
  for (int i = 1; i < num_threads_; ++i)
    workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::runChunks(Job &job) {
  int64_t finished = 0;
  for (;;) {
    int64_t index = job.next.fetch_add(1);
    if (index >= job.num_chunks)
      break;
    int64_t begin = index * job.chunk;
    job.fn(job.arg, begin, std::min(job.n, begin + job.chunk));
    ++finished;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  job.done += finished;
}

void ThreadPool::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_)
      return;
    Job *job = jobs_.front();
    if (job->next.load() >= job->num_chunks) {
      jobs_.erase(jobs_.begin()); // all chunks taken
      continue;
    }
    ++job->helpers;
    lock.unlock();
    runChunks(*job);
    lock.lock();
    --job->helpers;
    finished_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, ChunkFn fn, void *arg) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(1, grain);
  int64_t max_chunks = (n + grain - 1) / grain;
  int64_t num_chunks = std::min<int64_t>(max_chunks, num_threads_ * 4);
  if (num_chunks <= 1 || workers_.empty()) {
    fn(arg, 0, n);
    return;
  }
  Job job;
  job.fn = fn;
  job.arg = arg;
  job.n = n;
  job.chunk = (n + num_chunks - 1) / num_chunks;
  job.num_chunks = (n + job.chunk - 1) / job.chunk;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(&job);
  }
  wake_.notify_all();
  runChunks(job);
  std::unique_lock<std::mutex> lock(mutex_);
  // No worker may see the job once this returns: take it off the queue and
  // wait for the workers inside it.
  jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), &job), jobs_.end());
  finished_.wait(
      lock, [&] { return job.done == job.num_chunks && job.helpers == 0; });
}

} // namespace modelc
