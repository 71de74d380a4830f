// streams.hpp - in-order work queues and events for multi-device plans.
//
// Each device of a multi-device plan has a compute stream and a copy
// stream: a worker thread that runs its tasks in the order they were
// enqueued. Events (per run) order work across streams. The simulated `sim`
// devices execute CPU code on their streams, on memory of their own.
#ifndef MODELC_RUNTIME_STREAMS_HPP
#define MODELC_RUNTIME_STREAMS_HPP

#include "modelc/abi.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace modelc {

/// The events of one run: set once, waited on by any stream.
class EventSet {
public:
  void reset(std::size_t count);
  void set(uint32_t event);
  void wait(uint32_t event);

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint8_t> done_;
};

/// One in-order queue with its worker thread.
class Stream {
public:
  struct Task {
    enum Kind { Launch, Copy, Record, Wait, Call } kind;
    modelc_run_ctx *ctx = nullptr;
    modelc_task_fn task = nullptr;
    void *dst = nullptr;
    const void *src = nullptr;
    uint64_t bytes = 0;
    uint32_t event = 0;
    EventSet *events = nullptr;
    /// Call: work of a GPU device (a driver call); errors go to `onError`.
    std::function<void()> call;
    std::function<void(const std::string &)> onError;
  };

  Stream();
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  void enqueue(const Task &task);
  /// Returns when every enqueued task has run.
  void drain();

private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Task> queue_;
  bool busy_ = false, stopping_ = false;
  std::thread worker_; // last: it starts once everything above exists
};

} // namespace modelc

#endif // MODELC_RUNTIME_STREAMS_HPP
