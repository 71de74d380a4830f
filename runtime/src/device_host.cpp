// device_host.cpp - the streams of the devices whose memory is host memory
// (cpu, sim): host workers running the plan's CPU code.
#include "device_host.hpp"

#include "run_state.hpp"

namespace modelc::detail {

void HostDevice::syncGpuWaits(RunState &run, int which) {
  bool &issued = run.on(*this).gpuWaitIssued[which == MODELC_STREAM_COPY];
  if (!issued)
    return;
  issued = false;
  run.on(*this).stream(which).enqueue(deviceCall(run, [&run, this, which] {
    // While a graph is captured nothing runs, and the list still orders
    // the copies from the GPU that follow.
    if (run.resources->capture.capturing)
      return;
    RunEvents &events = run.resources->events;
    std::vector<uint32_t> &waited = run.on(*this).gpuWaitsOf(which);
    for (uint32_t e : waited)
      events.owner(e)->synchronizeEvent(run, e, name());
    waited.clear();
  }));
}

void HostDevice::stamp(RunState &run, int which, std::function<void()> at) {
  // Traced runs: the stream's timeline shows its waits passing when the
  // GPU work they wait for is done.
  syncGpuWaits(run, which);
  Device::stamp(run, which, std::move(at));
}

void HostDevice::launch(RunState &run, modelc_task_fn task) {
  if (run.resources->capture.capturing) {
    // Graph mode: host tasks (the outputs task) run after each replay.
    run.resources->capture.hostTasks.push_back(task);
    return;
  }
  syncGpuWaits(run, MODELC_STREAM_COMPUTE);
  Stream::Task t{Stream::Task::Launch};
  t.ctx = run.ctx;
  t.task = task;
  run.on(*this).stream(MODELC_STREAM_COMPUTE).enqueue(t);
}

void HostDevice::copy(RunState &run, Device &to, void *dst, Device &,
                      const void *src, uint64_t bytes, const char *) {
  // Both sides are host memory: a memcpy on the destination's copy stream.
  syncGpuWaits(run, MODELC_STREAM_COPY); // this is `to` (copyEngine)
  Stream::Task t{Stream::Task::Copy};
  t.ctx = run.ctx;
  t.dst = dst;
  t.src = src;
  t.bytes = bytes;
  run.on(to).stream(MODELC_STREAM_COPY).enqueue(t);
}

void HostDevice::record(RunState &run, int which, uint32_t event) {
  // What the event releases (host work, a GPU's copy from host memory)
  // comes after the GPU work this stream waited for.
  syncGpuWaits(run, which);
  Stream::Task t{Stream::Task::Record};
  t.ctx = run.ctx;
  t.event = event;
  t.events = &run.resources->events.host();
  run.on(*this).stream(which).enqueue(t);
}

void HostDevice::wait(RunState &run, int which, uint32_t event) {
  RunEvents &events = run.resources->events;
  if (events.deviceEvents()) {
    // The event may be a GPU's: noted, and waited for on the host before
    // the stream's next host work (syncGpuWaits), or ordered on the GPU by
    // the copy from it that comes first.
    run.on(*this).gpuWaitIssued[which == MODELC_STREAM_COPY] = true;
    run.on(*this).stream(which).enqueue(
        deviceCall(run, [&run, this, which, event] {
          RunEvents &events = run.resources->events;
          events.host().wait(event);
          if (events.native(event))
            run.on(*this).gpuWaitsOf(which).push_back(event);
        }));
    return;
  }
  Stream::Task t{Stream::Task::Wait};
  t.ctx = run.ctx;
  t.event = event;
  t.events = &events.host();
  run.on(*this).stream(which).enqueue(t);
}

} // namespace modelc::detail
