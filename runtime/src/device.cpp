// device.cpp - what every Device shares: resident weights, the defaults of
// the operations a kind may lack, the run's events, and the one mapping of
// a device kind to its implementation.
#include "device.hpp"

#include <cstring>

#include "device_cpu.hpp"
#include "device_cuda.hpp"
#include "device_sim.hpp"
#include "host_memory.hpp"
#include "model_impl.hpp"
#include "run_state.hpp"

#include <cstdlib>

namespace modelc::detail {

HostArena::HostArena(uint64_t bytes) {
  if (bytes >= kHugePage && hugePagesWanted()) {
    std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if ((memory = mapHuge(rounded))) {
      mapped_ = rounded;
      return;
    }
  }
  std::size_t rounded = ((bytes + 63) / 64) * 64;
  memory = static_cast<unsigned char *>(
      std::aligned_alloc(64, rounded ? rounded : 64));
  if (!memory)
    throw Error("out of host memory allocating a " + std::to_string(bytes) +
                "-byte arena");
}

HostArena::~HostArena() {
  if (mapped_)
    unmapHuge(memory, mapped_);
  else
    std::free(memory);
}

Device::Device(const DeviceSetup &setup)
    : setup_(setup), kind_(setup.name.kind), name_(setup.label),
      index_(setup.index),
      weights_(setup.desc ? setup.desc->num_weights : 0, nullptr) {}

Device::~Device() = default;

bool Device::supportsCapture(std::string &why) const {
  why = "not a GPU";
  return false;
}

void Device::makeResident(uint32_t w, const void *host,
                          const modelc_weight_desc &desc) {
  weights_.at(w) = upload(host, desc);
}

std::unique_ptr<HostMemory> Device::allocateHost(uint64_t bytes,
                                                 const std::string &) const {
  return std::make_unique<HostArena>(bytes);
}

bool Device::holds(const DeviceRun &run, const void *ptr,
                   uint64_t bytes) const {
  auto within = [&](const void *base, uint64_t size) {
    auto p = reinterpret_cast<uintptr_t>(ptr);
    auto b = reinterpret_cast<uintptr_t>(base);
    return base && p >= b && p + bytes <= b + size;
  };
  if (within(run.arena, run.arenaBytes))
    return true;
  for (std::size_t w = 0; w < weights_.size(); ++w)
    if (within(weights_[w], setup_.desc->weights[w].nbytes))
      return true;
  return false;
}

void Device::report(RunState &run, const std::string &message) {
  run.reportError(message);
}

void Device::launchKernel(RunState &run, uint32_t, const uint32_t *,
                          const uint32_t *, uint32_t, void **) {
  report(run, "launch_kernel on device #" + std::to_string(index_) +
                  ", which is not a GPU");
}

void Device::gemm(RunState &run, const modelc_gemm &) {
  report(run,
         "gemm on device #" + std::to_string(index_) + ", which is not a GPU");
}

void Device::synchronizeEvent(RunState &, uint32_t, const std::string &) {}

void Device::runCaptured(RunState &run, const std::function<int()> &) {
  report(run, name_ + " cannot run a captured graph");
}

void Device::stamp(RunState &run, int which, std::function<void()> at) {
  run.on(*this).stream(which).enqueue(deviceCall(run, std::move(at)));
}

void Device::stampInTask(RunState &, std::function<void()> at) { at(); }

void Device::replicaSum(RunState &run, const ReplicaMember &m) {
  // Memory the host reads and writes: the part goes to the meeting as it
  // is (the copy stream holds it unchanged until the sum is made).
  ReplicaSums *sums = &run.resources->replicaSums;
  double timeout = run.impl->collectiveTimeout;
  run.on(*this).stream(MODELC_STREAM_COPY).enqueue(deviceCall(run, [=] {
    std::string error;
    const float *sum = sums->meet(m, m.src, timeout, error);
    if (!sum)
      throw Error(std::string(m.what ? m.what : "graph.replica_all_reduce") +
                  " on " + name() + ": " + error);
    if (m.count)
      std::memcpy(m.dst, sum, static_cast<std::size_t>(m.count) * 4);
  }));
}

void Device::rankSum(RunState &run, const float *, float *, int64_t,
                     const char *what) {
  report(run, std::string(what ? what : "graph.all_reduce") + ": " + name_ +
                  " cannot sum over the ranks (only a GPU of the plan does)");
}

Stream::Task deviceCall(RunState &run, std::function<void()> work) {
  Stream::Task t{Stream::Task::Call};
  t.ctx = run.ctx;
  t.call = std::move(work);
  t.onError = [&run](const std::string &message) { run.reportError(message); };
  return t;
}

Device &copyEngine(Device &to, Device &from) {
  return !from.hostAddressable() && to.hostAddressable() ? from : to;
}

std::unique_ptr<Device> makeDevice(const DeviceSetup &setup) {
  switch (setup.name.kind) {
  case DeviceKind::Cpu:
    return std::make_unique<CpuDevice>(setup);
  case DeviceKind::Sim:
    return std::make_unique<SimDevice>(setup);
  case DeviceKind::Cuda:
    return std::make_unique<CudaDevice>(setup);
  }
  throw Error("unknown device kind of '" + setup.label + "'");
}

void RunEvents::reset(std::size_t count) {
  host_.reset(count);
  if (native_.size() < count) {
    native_.resize(count, nullptr); // made by the first record
    owner_.resize(count, nullptr);
  }
}

void RunEvents::setNative(uint32_t e, void *native, Device *owner) {
  native_.at(e) = native;
  owner_.at(e) = owner;
}

void RunEvents::release() {
  for (std::size_t e = 0; e < native_.size(); ++e)
    if (native_[e])
      owner_[e]->destroyEvent(native_[e]);
  native_.clear();
  owner_.clear();
}

void Device::readResident(void *host, const void *resident,
                          uint64_t bytes) const {
  std::memcpy(host, resident, bytes);
}

void Device::writeResident(void *resident, const void *host,
                           uint64_t bytes) const {
  std::memcpy(resident, host, bytes);
}

} // namespace modelc::detail
