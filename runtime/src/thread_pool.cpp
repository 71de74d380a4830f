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
  std::atomic<int64_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;
};

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)) {
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

bool ThreadPool::run_one_chunk(Job &job) {
  int64_t index = job.next.fetch_add(1);
  if (index >= job.num_chunks)
    return false;
  int64_t begin = index * job.chunk;
  int64_t end = std::min(job.n, begin + job.chunk);
  job.fn(job.arg, begin, end);
  if (job.done.fetch_add(1) + 1 == job.num_chunks) {
    std::lock_guard<std::mutex> lock(job.mutex);
    job.finished.notify_all();
  }
  return true;
}

void ThreadPool::worker() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_)
        return;
      job = jobs_.front();
      // A job leaves the queue once all its chunks are taken.
      if (job->next.load() >= job->num_chunks) {
        jobs_.pop_front();
        continue;
      }
    }
    while (run_one_chunk(*job)) {
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, ChunkFn fn,
                              void *arg) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(1, grain);
  int64_t max_chunks = (n + grain - 1) / grain;
  int64_t num_chunks = std::min<int64_t>(max_chunks, num_threads_ * 4);
  if (num_chunks <= 1 || workers_.empty()) {
    fn(arg, 0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = fn;
  job->arg = arg;
  job->n = n;
  job->chunk = (n + num_chunks - 1) / num_chunks;
  job->num_chunks = (n + job->chunk - 1) / job->chunk;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(job);
  }
  wake_.notify_all();
  while (run_one_chunk(*job)) {
  }
  std::unique_lock<std::mutex> lock(job->mutex);
  job->finished.wait(lock,
                     [&] { return job->done.load() == job->num_chunks; });
}

} // namespace modelc
