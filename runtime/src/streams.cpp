// streams.cpp - in-order work queues and events for multi-device plans.
#include "streams.hpp"

#include <cstring>
#include <exception>
#include <utility>

namespace modelc {

void EventSet::reset(std::size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_.assign(count, 0);
}

void EventSet::set(uint32_t event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (event < done_.size())
      done_[event] = 1;
  }
  changed_.notify_all();
}

void EventSet::wait(uint32_t event) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return event >= done_.size() || done_[event]; });
}

Stream::Stream() {
  worker_ = std::thread([this] { run(); });
}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void Stream::enqueue(const Task &task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(task);
  }
  wake_.notify_one();
}

void Stream::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void Stream::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_)
      return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    switch (task.kind) {
    case Task::Launch:
      task.task(task.ctx); // errors arrive through report_error
      break;
    case Task::Copy:
      if (task.bytes)
        std::memcpy(task.dst, task.src, task.bytes);
      break;
    case Task::Record:
      task.events->set(task.event);
      break;
    case Task::Wait:
      task.events->wait(task.event);
      break;
    case Task::Call:
      try {
        task.call();
      } catch (const std::exception &e) {
        task.onError(e.what());
      }
      break;
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty())
      idle_.notify_all();
  }
}

} // namespace modelc
