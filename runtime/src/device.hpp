// device.hpp - one device of a plan, as the runtime drives it: the Device
// interface, with one implementation per kind (device_cpu.cpp,
// device_sim.cpp, device_cuda.cpp). Private to the runtime; generated code
// reaches a Device only through the ABI callbacks (abi_callbacks.cpp).
#ifndef MODELC_RUNTIME_DEVICE_HPP
#define MODELC_RUNTIME_DEVICE_HPP

#include "device_name.hpp"
#include "modelc/abi.h"
#include "replica_sums.hpp"
#include "streams.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace modelc::detail {

struct CudaApi;
struct RunState; // run_state.hpp

/// Host memory: 64-byte aligned (HostArena), or page-locked for a GPU.
struct HostMemory {
  virtual ~HostMemory() = default;
  unsigned char *memory = nullptr;
};

/// 64-byte aligned host memory; an arena of 2 MiB or more in transparent
/// huge pages (host_memory.hpp).
struct HostArena : HostMemory {
  explicit HostArena(uint64_t bytes);
  ~HostArena() override;
  HostArena(const HostArena &) = delete;
  HostArena &operator=(const HostArena &) = delete;

private:
  std::size_t mapped_ = 0; // bytes of its own mapping; 0: the C heap
};

/// One device's share of one run: its scratch arena and, in a multi-device
/// plan, its compute and copy streams (host workers, in order). A kind adds
/// its own queues (a GPU's CUDA streams) by deriving.
struct DeviceRun {
  virtual ~DeviceRun() = default;
  unsigned char *arena = nullptr;
  uint64_t arenaBytes = 0;
  std::unique_ptr<Stream> compute, copy;
  /// The compute or copy stream (MODELC_STREAM_*).
  Stream &stream(int which) {
    return which == MODELC_STREAM_COPY ? *copy : *compute;
  }
  /// A host device's streams: the GPU events each has waited on and not yet
  /// waited for on the host (HostDevice::syncGpuWaits does before host
  /// work) nor passed to a copy from a GPU (whose GPU stream waits on them:
  /// inside a CUDA graph that is the only order there is). A host event
  /// recorded between the wait and a copy issued from another stream does
  /// not carry them into a graph; no captured plan does that (they run
  /// every op on GPUs: the host only copies the outputs back). Touched only
  /// by the stream's own worker.
  std::vector<uint32_t> gpuWaits[2];
  std::vector<uint32_t> &gpuWaitsOf(int which) {
    return gpuWaits[which == MODELC_STREAM_COPY ? 1 : 0];
  }
  /// Whether a wait that may be a GPU's was issued on the stream since the
  /// host last queued a wait for them (syncGpuWaits): host work on a stream
  /// that waited on none queues nothing more. Touched only by the thread
  /// issuing the run.
  bool gpuWaitIssued[2] = {false, false};
};

/// What the devices of a plan are made with.
struct DeviceSetup {
  DeviceName name;
  std::string label;  // the plan's spelling: "cuda:0"
  uint32_t index = 0; // in the plan's device list
  int physical = -1;  // a GPU: the visible ordinal it runs on
  std::string where;  // "model 'mlp.so'", for messages
  std::string planName;
  const modelc_model_desc *desc = nullptr;
  const CudaApi *cuda = nullptr; // the driver, for GPU devices
};

/// A device of the chosen plan. Made at load (no resources until setUp),
/// it holds what lives as long as the model (weights resident on it, GPU
/// code), makes each run's DeviceRun, and carries out the ABI's scheduling
/// callbacks for its index. Work is enqueued on the device's streams of the
/// run; the run ends when every stream has drained (and finish returned).
class Device {
public:
  explicit Device(const DeviceSetup &setup);
  virtual ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  DeviceKind kind() const { return kind_; }
  /// The plan's name of the device ("cuda:0").
  const std::string &name() const { return name_; }
  uint32_t index() const { return index_; }

  /// The host: its memory is the caller's (inputs and outputs live there),
  /// and a plan of the host alone runs on the caller's thread.
  virtual bool isHost() const { return false; }
  /// Whether the host reads and writes this device's memory directly (a
  /// copy between two such devices is a memcpy).
  virtual bool hostAddressable() const { return true; }
  /// Copies `bytes` of a weight resident on this device (at `resident`, as
  /// weightTable gives it) into host memory, between runs (save_weights).
  virtual void readResident(void *host, const void *resident,
                            uint64_t bytes) const;
  /// Overwrites a weight resident on this device with `bytes` of host
  /// memory, between runs (load_weights).
  virtual void writeResident(void *resident, const void *host,
                             uint64_t bytes) const;
  /// Whether runs on this device can be captured as a graph and replayed;
  /// `why` says why not.
  virtual bool supportsCapture(std::string &why) const;

  //===--- Load
  //------------------------------------------------------------===//

  /// Takes the device's resources (a GPU: its context and the model's GPU
  /// code). Throws modelc::Error.
  virtual void setUp() {}
  /// Called once every device of the plan is set up, with all of them
  /// (GPUs enable peer access; the host takes page-locked memory).
  virtual void connect(const std::vector<Device *> &devices) { (void)devices; }
  /// Makes weight `w` (`host` in host memory) resident on this device, once.
  void makeResident(uint32_t w, const void *host,
                    const modelc_weight_desc &desc);
  /// Per weight of the table: where it is resident on this device, or null.
  const void *const *weights() const { return weights_.data(); }

  //===--- Runs
  //------------------------------------------------------------===//

  /// A run's share of the device with an arena of `bytes` (allocate):
  /// `entry` names the entry point for messages. Throws modelc::Error.
  virtual std::unique_ptr<DeviceRun> allocate(uint64_t bytes,
                                              const std::string &entry) = 0;
  /// Whether the device copies faster to and from host memory of its own
  /// (page-locked, for a GPU): the host's arenas and the run's inputs then
  /// come from allocateHost.
  virtual bool providesHostMemory() const { return false; }
  /// `bytes` of such host memory; `what` names them for messages.
  virtual std::unique_ptr<HostMemory>
  allocateHost(uint64_t bytes, const std::string &what) const;
  /// Whether [ptr, ptr + bytes) lies in this device's arena of `run` or in a
  /// weight resident on it.
  bool holds(const DeviceRun &run, const void *ptr, uint64_t bytes) const;

  /// Runs `task` (host code of the plan) on the compute stream.
  virtual void launch(RunState &run, modelc_task_fn task) = 0;
  /// Issues kernel `kernel` of the model's GPU code on the compute stream.
  virtual void launchKernel(RunState &run, uint32_t kernel,
                            const uint32_t grid[3], const uint32_t block[3],
                            uint32_t sharedBytes, void **args);
  /// Issues the matrix product `g` on the compute stream.
  virtual void gemm(RunState &run, const modelc_gemm &g);
  /// Copies `bytes` from `src` (memory of `from`) to `dst` (memory of `to`)
  /// on `to`'s copy stream; called on copyEngine(to, from).
  virtual void copy(RunState &run, Device &to, void *dst, Device &from,
                    const void *src, uint64_t bytes, const char *what) = 0;
  /// This device's member of a sum over the replicas (graph.
  /// replica_all_reduce), on its copy stream: through host memory
  /// (ReplicaSums) unless the device has a faster way (a GPU: NCCL).
  virtual void replicaSum(RunState &run, const ReplicaMember &m);
  /// The plan's sum over the ranks on this device (graph.all_reduce on a
  /// GPU, rank_all_reduce), on its copy stream; only a GPU has one.
  virtual void rankSum(RunState &run, const float *src, float *dst,
                       int64_t count, const char *what);
  /// Marks `event` done when stream `which` reaches this point.
  virtual void record(RunState &run, int which, uint32_t event) = 0;
  /// Holds stream `which` here until `event` is done.
  virtual void wait(RunState &run, int which, uint32_t event) = 0;
  /// After the run's streams have drained: waits for the device's own
  /// queues (a GPU's CUDA streams), reporting failures for the run.
  virtual void finish(RunState &run) { (void)run; }
  /// Traced runs: calls `at` when stream `which` of the run reaches the
  /// work enqueued on it so far (host devices: a task on the stream).
  virtual void stamp(RunState &run, int which, std::function<void()> at);
  /// Traced runs, from a task running on this device's compute stream:
  /// calls `at` when the device reaches the work issued so far (host
  /// devices: now; a GPU: when its stream gets there).
  virtual void stampInTask(RunState &run, std::function<void()> at);

  /// Event `event` of the run, recorded on this device's own queues:
  /// waits on the host until it completes; `waiter` names the waiting
  /// device.
  virtual void synchronizeEvent(RunState &run, uint32_t event,
                                const std::string &waiter);
  /// Frees an event of this device's own.
  virtual void destroyEvent(void *native) { (void)native; }

  /// Graph capture (where supportsCapture): the first call for a run's
  /// resources captures what `issue` (the entry function, until the host
  /// streams drain) enqueues on the devices of this kind and keeps it as a
  /// graph; every call replays the graph and then the host tasks set aside
  /// during the capture. This device is the capture's origin. Errors go to
  /// the run.
  virtual void runCaptured(RunState &run, const std::function<int()> &issue);

protected:
  /// Reports `message` as the run's error.
  static void report(RunState &run, const std::string &message);
  /// Uploads weight `desc` (at `host`) and returns where it now lives; the
  /// host itself returns `host`.
  virtual const void *upload(const void *host,
                             const modelc_weight_desc &desc) = 0;

  DeviceSetup setup_;

private:
  DeviceKind kind_;
  std::string name_;
  uint32_t index_;
  std::vector<const void *> weights_;
};

/// A task for a stream that runs `work` (driver calls, host waits); what it
/// throws is reported as the run's error.
Stream::Task deviceCall(RunState &run, std::function<void()> work);

/// The device whose queues carry a copy from `from` to `to`: the one whose
/// memory the host cannot address (a GPU), else the destination.
Device &copyEngine(Device &to, Device &from);

/// Makes the device of `setup.name.kind` (without resources: setUp takes
/// them). The one place that maps a kind to its implementation.
std::unique_ptr<Device> makeDevice(const DeviceSetup &setup);

/// Per event of one run: a flag on the host and, where a device recorded it
/// on queues of its own, that device's event.
class RunEvents {
public:
  RunEvents() = default;
  RunEvents(const RunEvents &) = delete;
  RunEvents &operator=(const RunEvents &) = delete;
  ~RunEvents() { release(); }

  /// A new run with `count` events, none done (device events are kept).
  void reset(std::size_t count);
  /// Whether a device of the run records events of its own (a GPU): then a
  /// host stream's wait also waits for the device event.
  bool deviceEvents() const { return deviceEvents_; }
  void setDeviceEvents(bool any) { deviceEvents_ = any; }
  /// The host flags: set when the event is reached (on a device with queues
  /// of its own: when its device event has been issued).
  EventSet &host() { return host_; }
  /// Event `e`'s device event and the device that made it, or null.
  void *native(uint32_t e) const {
    return e < native_.size() ? native_[e] : nullptr;
  }
  Device *owner(uint32_t e) const {
    return e < owner_.size() ? owner_[e] : nullptr;
  }
  void setNative(uint32_t e, void *native, Device *owner);
  /// Frees the device events.
  void release();

private:
  EventSet host_;
  bool deviceEvents_ = false;
  std::vector<void *> native_;
  std::vector<Device *> owner_;
};

/// Graph capture of a run's resources (LoadOptions::cuda_graphs).
struct RunCapture {
  /// What a device kind keeps of a captured run (a CUDA graph).
  struct Graph {
    virtual ~Graph() = default;
  };
  bool warm = false; // a first run went without a graph
  bool capturing = false;
  std::vector<modelc_task_fn> hostTasks; // run after each replay
  std::unique_ptr<Graph> graph;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DEVICE_HPP
