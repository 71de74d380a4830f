// run_queue.hpp - the thread that runs a model's asynchronous runs
// (Model::run_async) one at a time, in the order they were started.
#ifndef MODELC_RUNTIME_RUN_QUEUE_HPP
#define MODELC_RUNTIME_RUN_QUEUE_HPP

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace modelc::detail {

class RunQueue {
public:
  RunQueue();
  /// Runs what is queued still, then stops the thread.
  ~RunQueue();
  RunQueue(const RunQueue &) = delete;
  RunQueue &operator=(const RunQueue &) = delete;

  /// Queues `work` after the work queued before it. `work` must not throw.
  void push(std::function<void()> work);

private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_RUN_QUEUE_HPP
