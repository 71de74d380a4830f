// modelc/runtime.hpp - load a compiled model.so and run it.
//
//   auto model = modelc::Model::load("mlp.so");
//   auto y = model.run("forward", {modelc::Tensor::from_host(x, {64, 784},
//                                                           modelc::DType::F32)});
//
// Every failure (a missing or corrupt file, an ABI mismatch, a bad weight, a
// wrong input) is a modelc::Error with a message; nothing aborts.
#ifndef MODELC_RUNTIME_HPP
#define MODELC_RUNTIME_HPP

#include "modelc/dtype.hpp"

#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace modelc {

/// The one exception type of the runtime.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// "f32[64,784]"
std::string describe(DType dtype, const std::vector<int64_t> &shape);
struct TensorInfo;
struct DimInfo;
/// An input or output as a run takes it: "f32[batch in 1..64,784]" where
/// an axis has a dynamic dimension of `dims`, else as describe().
std::string describe(const TensorInfo &t, const std::vector<DimInfo> &dims);

/// A dense row-major tensor in host memory, owning its data or borrowing it.
class Tensor {
public:
  Tensor() = default;
  /// A new zero-filled tensor.
  static Tensor zeros(std::vector<int64_t> shape, DType dtype);
  /// Borrows `data`, which must outlive the tensor and every copy of it.
  static Tensor from_host(void *data, std::vector<int64_t> shape, DType dtype);
  /// Borrows read-only `data` (writing through data() is then an error).
  static Tensor from_host(const void *data, std::vector<int64_t> shape,
                          DType dtype);
  /// An owning copy of the data at `data`.
  static Tensor copy_of(const void *data, std::vector<int64_t> shape,
                        DType dtype);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numel() const;
  std::size_t nbytes() const;
  /// Where the data lives: "cpu" (host memory).
  const std::string &device() const { return device_; }
  bool owns_data() const { return static_cast<bool>(storage_); }
  bool defined() const { return data_ != nullptr || numel() == 0; }

  const void *data() const { return data_; }
  void *mutable_data();
  template <typename T> const T *data_as() const {
    return static_cast<const T *>(data_);
  }
  template <typename T> T *mutable_data_as() {
    return static_cast<T *>(mutable_data());
  }
  std::string describe() const { return modelc::describe(dtype_, shape_); }

private:
  std::shared_ptr<void> storage_;
  void *data_ = nullptr;
  bool read_only_ = false;
  std::vector<int64_t> shape_;
  DType dtype_ = DType::F32;
  std::string device_ = "cpu";
};

struct TensorInfo {
  std::string name;
  DType dtype;
  /// The shape; an axis with a dynamic dimension holds the dimension's max.
  std::vector<int64_t> shape;
  /// Per axis, the name of its dynamic dimension (Model::dims) or "" for a
  /// static axis; empty when every axis is static. A run takes any size
  /// of the dimension in its range there.
  std::vector<std::string> dims;
  /// An input a run may leave out (train_step's `lr`): the value it then
  /// reads, a read-only view of the model's own bytes. Not defined()
  /// (Tensor()) for every other input and output.
  Tensor default_value;
  bool has_default() const { return default_value.data() != nullptr; }
};

/// A dynamic dimension (modelc --dim NAME=MIN..MAX@OPT): a run gives its
/// size, in [min, max], through the inputs that have it; the outputs that
/// have it are sized from it.
struct DimInfo {
  std::string name;
  int64_t min = 0, max = 0, opt = 0;
};

/// A size regime of the chosen plan (modelc --regimes, docs/dynamic.md):
/// the plan of its target that runs sizes min..max of dimension `dim`.
struct RegimeInfo {
  std::string dim;
  int64_t min = 0, max = 0;
};

struct EntryInfo {
  std::string name;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

/// A GPU the CUDA driver reports (after CUDA_VISIBLE_DEVICES).
struct GpuInfo {
  int ordinal = 0; ///< The visible ordinal: plan device "cuda:<ordinal>".
  std::string name;
  uint64_t memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
};

/// What the runtime found when it looked for GPUs.
struct GpuInventory {
  std::vector<GpuInfo> gpus;
  /// The driver library tried (MODELC_CUDA_DRIVER, else libcuda.so.1).
  std::string driver_library;
  /// The driver's CUDA version (e.g. 13000), 0 when there is no driver.
  int driver_version = 0;
  /// One line: how many GPUs, or why there are none.
  std::string status;
};

/// The GPUs visible to this process, probed once (the driver is opened
/// lazily; no GPU or no driver is not an error, just an empty list).
const GpuInventory &visible_gpus();

/// A distributed run (LoadOptions::distributed) after a failure on this
/// rank that leaves the others waiting in a collective (a bad batch, an
/// Error from a run): ends every rank of the run now with `exit_code`
/// (MPI_Abort), instead of letting them wait for the collective timeout.
/// Returns (doing nothing) when the process joined no distributed run.
void abort_distributed_run(int exit_code);

/// The CPUs this process could compute on if it were bound to none: the
/// online CPUs, capped by the cgroup's CPU quota. Against num_threads() it
/// tells whether a launcher's binding (mpirun binds each of 2 ranks to one
/// core by default) leaves cores idle.
int machine_cpus();

/// A timeline of a model's runs (LoadOptions::trace; modelc-run --trace):
/// for each run, a slice per op as the compiler named it ("graph.linear
/// (line 12)"), per copy and for the run itself, on the track of the device
/// stream it ran on, and a flow per event a stream waited for. Times are
/// host microseconds since the Trace was made; on a GPU, when its stream
/// reached the op's start and end (a host function on the stream). Runs
/// from many threads may share one Trace.
class Trace {
public:
  struct Slice {
    std::string name;     ///< the op, "device.transfer (line 3)", "run forward"
    std::string track;    ///< "host", "cpu", "sim:0 compute", "cuda:1 copy"
    std::string category; ///< "op", "copy", "collective" or "run"
    int run = 0;          ///< numbered from 0 in the order runs began
    double start_us = 0, duration_us = 0;
    uint64_t bytes = 0;      ///< a copy's (or collective's) bytes
    double estimate_us = -1; ///< the compiler's estimate of an op, or -1
  };
  /// An event recorded on one stream that another waited for.
  struct Flow {
    uint32_t event = 0;
    int run = 0;
    std::string from_track, to_track;
    double from_us = 0,
           to_us = 0; ///< when it was recorded; when the wait passed
  };

  Trace();
  ~Trace();
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;

  std::vector<Slice> slices() const;
  std::vector<Flow> flows() const;
  /// Chrome's trace-event JSON (opens in Perfetto and chrome://tracing): a
  /// track (thread) per device stream and the host.
  std::string json() const;
  /// Writes json() to `path`; an Error naming the file on failure.
  void write(const std::string &path) const;
  void clear();

  /// What runs call: the next run's number, the time now, and adding a
  /// run's slices and flows.
  int begin_run();
  double now_us() const;
  void add(std::vector<Slice> slices, std::vector<Flow> flows);
  /// `text` as a JSON string, quoted and escaped as json() writes names
  /// (for tools that write slices as JSON of their own).
  static std::string json_string(const std::string &text);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct LoadOptions {
  /// A safetensors file whose weights replace those in the model (or supply
  /// them, for a model built with --external-weights). Empty: the model's own.
  std::string weights;
  /// Threads of the CPU pool; 0 = the CPUs this process may use: its
  /// affinity mask (taskset, cpusets), no more than its cgroup's CPU quota.
  int num_threads = 0;
  /// The plan to run: empty = the best for this machine (the most GPUs it
  /// has, else "cpu"); a plan's name; GPUs ("cuda:1", "cuda:0,cuda:2": a
  /// plan on that many GPUs, run on those); or a mapping of the plan's
  /// devices onto GPUs ("cuda:0=cuda:2,cuda:1=cuda:3").
  std::string plan;
  /// Run each entry point of the (GPU) plan as a CUDA graph: the work of a
  /// run is captured once per pooled run resources and replayed by later
  /// runs, with one launch. Needs a plan whose entry points run entirely on
  /// GPUs (modelc --place-all=cuda:0 builds one); an Error at load otherwise.
  bool cuda_graphs = false;
  /// Record every run into this Trace (null: no tracing; then generated
  /// code pays one null check per op). Not with cuda_graphs.
  std::shared_ptr<Trace> trace;
  /// Join the distributed run this process was started in (mpirun) through
  /// this backend: "mpi" (the plugin libmodelc_comm_mpi.so, loaded now).
  /// Every rank then checks that all loaded the same model and plan, and
  /// graph.all_reduce (a model built with modelc --distributed) sums over
  /// the ranks. Empty: a run of one process.
  std::string distributed;
  /// How long a collective waits for the other ranks (a rank died or
  /// stopped) before this process ends with a message on stderr and exit
  /// status 1 (mpirun then ends the job), in seconds.
  double collective_timeout_s = 300.0;
};

/// A run started by Model::run_async: its outputs once it has finished.
class PendingRun {
public:
  PendingRun() = default;
  /// Whether wait() may be called (a run started, its outputs not taken).
  bool valid() const { return future_.valid(); }
  /// Whether the run has finished: wait() would not block.
  bool ready() const;
  /// Blocks until the run has finished and returns its outputs, or throws
  /// the run's Error. Once: the outputs are then the caller's.
  std::vector<Tensor> wait();

private:
  friend class Model;
  explicit PendingRun(std::future<std::vector<Tensor>> future)
      : future_(std::move(future)) {}
  std::future<std::vector<Tensor>> future_;
};

class Model {
public:
  /// Loads model.so; checks the ABI version, the descriptor and the weights.
  static Model load(const std::string &path, const LoadOptions &options = {});

  const std::vector<EntryInfo> &entries() const;
  /// The model's dynamic dimensions (empty: every shape is static).
  const std::vector<DimInfo> &dims() const;
  /// The shapes `entry`'s outputs have when it runs on `inputs` (their
  /// dynamic dimensions' sizes taken from the inputs); an Error, as run()
  /// gives, when the inputs do not fit.
  std::vector<std::vector<int64_t>>
  output_shapes(const std::string &entry,
                const std::vector<Tensor> &inputs) const;
  /// The entry point `name`; an Error naming the available ones otherwise.
  const EntryInfo &entry(const std::string &name) const;

  /// Runs `entry` and returns its outputs (new host tensors). Inputs are
  /// checked: count, dtype, shape, device; those with a default
  /// (TensorInfo::has_default, train_step's `lr`) may be left out at the
  /// end. Safe to call from many threads.
  std::vector<Tensor> run(const std::string &entry,
                          const std::vector<Tensor> &inputs) const;
  /// As run(), writing into caller-provided outputs of the right dtype and
  /// shape: no allocation once warm.
  void run_into(const std::string &entry, const std::vector<Tensor> &inputs,
                std::vector<Tensor> &outputs) const;

  /// Starts `entry` and returns at once. The inputs are checked now (an
  /// Error here, and nothing starts) and copied, so the caller may reuse
  /// their memory when this returns. The runs a model starts this way run
  /// one at a time on a thread of the model's, in the order they were
  /// started (a train_step sees the weights the one before it wrote);
  /// while one runs, the caller prepares and submits the next batch, as
  /// PyTorch's DataLoader with pin_memory and non_blocking copies. The
  /// run's own errors come from PendingRun::wait(). A model destroyed with
  /// runs in flight finishes them first.
  PendingRun run_async(const std::string &entry,
                       const std::vector<Tensor> &inputs) const;

  /// Names of the model's weights, in its weight table's order.
  std::vector<std::string> weight_names() const;
  /// A read-only view of a loaded weight (valid while the model lives).
  /// A weight the model's runs write on a GPU (a training step's
  /// parameters and state on a GPU plan) is read back into the host's copy
  /// first: the view holds its values as they are at the call.
  Tensor weight(const std::string &name) const;

  /// Training (docs/training.md): whether entry points write weights (a
  /// model built with modelc --train).
  bool trains() const;
  /// The lowest precision the model's ops compute in: "f32", "f16" or
  /// "bf16" (modelc --precision, or half-precision values of the model's
  /// own); what tolerances comparing its outputs needs.
  std::string compute_precision() const;
  /// Writes every weight as the model holds it now (parameters and
  /// optimizer state after the steps run so far) to a safetensors file
  /// under the weights' names. Not while a run is in progress. In a
  /// distributed run rank 0 writes the file; with optimizer state sharded
  /// over the ranks (modelc --distributed --shard-optimizer-state) it is a
  /// collective: every rank calls it, and the state comes to rank 0 from
  /// its owners.
  void save_weights(const std::string &path) const;
  /// Reads a safetensors file of save_weights into the model's writable
  /// weights; a weight the model does not write must equal the model's
  /// own. Checked whole first: on an Error nothing changed. Not while a
  /// run is in progress.
  void load_weights(const std::string &path);

  /// Optimizer state sharded over the ranks (modelc --distributed
  /// --shard-optimizer-state): what this rank holds, e.g. "sharded over 2
  /// ranks: rank 1 holds 2 of 4 state weights, 768 of 3348 bytes"; "" for a
  /// model without.
  std::string state_shards() const;

  /// This process's rank in the distributed run, and the number of ranks
  /// (0 and 1 without LoadOptions::distributed).
  int rank() const;
  int world_size() const;

  /// What sums the replicas of data-parallel training on the plan's
  /// accelerators (graph.replica_all_reduce): "nccl 2.27.3 (libnccl.so.2)
  /// over cuda:0, cuda:1", "host memory" (sim devices), "host memory
  /// (cannot load NCCL ...)"; empty when the plan has no such sums. After
  /// an NCCL call failed (the step that made it failed, NCCL's
  /// communicators were aborted so that no GPU waits for ever), later runs
  /// sum through host memory: "host memory (NCCL aborted: ...)".
  std::string replica_sums() const;
  /// What sums over the ranks of a distributed run on the plan's GPU
  /// (graph.all_reduce placed there: a GPU plan of a --distributed build):
  /// "nccl 2.27.3 (libnccl.so.2) across 2 ranks on cuda:0", "host memory
  /// and mpi (cannot load NCCL ...)" (the part copied out, summed by the
  /// backend, copied back); empty when the plan has no such sums or the
  /// run has one rank. After an NCCL call failed on this rank the others
  /// cannot be met another way: later runs fail, and this says "stopped
  /// (NCCL failed: ...)".
  std::string rank_sums() const;
  /// The chosen plan ("cpu").
  const std::string &plan() const;
  /// Empty, or why the default choice runs a host plan although the machine
  /// has the GPUs of a GPU plan (that plan failed to set up: its GPU code
  /// rejected by the driver, out of GPU memory, ...). A plan asked for by
  /// name never falls back: its failure is an Error.
  const std::string &plan_note() const;
  /// Every plan the model carries, in its order ("cpu", "h200"); a
  /// target's size regimes are one plan.
  std::vector<std::string> plans() const;
  /// The chosen plan's size regimes, in order; empty when one plan runs
  /// every size.
  std::vector<RegimeInfo> regimes() const;
  /// The regime (an index into regimes()) that runs `entry` on `inputs`;
  /// -1 without regimes. Throws as run() for inputs out of range.
  int regime_of(const std::string &entry,
                const std::vector<Tensor> &inputs) const;
  /// Kernels of the model's GPU code (0 without GPU code).
  std::size_t gpu_kernels() const;
  const std::string &compiler_version() const;
  const std::string &compiler_flags() const;
  /// Bytes of scratch memory one run of `entry` uses on the plan's CPU.
  uint64_t arena_bytes(const std::string &entry) const;
  int num_threads() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace modelc

#endif // MODELC_RUNTIME_HPP
