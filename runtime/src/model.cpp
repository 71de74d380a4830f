// model.cpp - the public API of a loaded model: Model::load (the plan
// choice and the set-up of its devices) and running its entry points.
#include "abi_callbacks.hpp"
#include "device_cuda.hpp"
#include "model_impl.hpp"
#include "parallel.hpp"
#include "plan_choice.hpp"
#include "training.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

namespace modelc {

using detail::Device;
using detail::DeviceKind;
using detail::RunResources;
using detail::RunState;

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

namespace {

/// Whether choosing among `plans` for `request` needs to know the GPUs:
/// they are probed only when a plan has them or the request names them.
bool needsGpus(const std::vector<detail::PlanDevices> &plans,
               const std::string &request) {
  for (const detail::PlanDevices &p : plans)
    for (const std::string &d : p.devices)
      if (detail::deviceKindOf(d) == DeviceKind::Cuda)
        return true;
  return detail::deviceKindOf(request) == DeviceKind::Cuda;
}

/// The plan's Devices, made (without resources) from the parsed names of
/// `choice`.
void makeDevices(Model::Impl &impl, const detail::PlanChoice &choice,
                 const detail::CudaApi *cuda, const std::string &where) {
  for (uint32_t d = 0; d < impl.plan->num_devices; ++d) {
    detail::DeviceSetup setup;
    setup.name = choice.names[d];
    setup.label = impl.plan->devices[d];
    setup.index = d;
    setup.physical = choice.physical[d];
    setup.where = where;
    setup.planName = impl.planName;
    setup.desc = impl.desc;
    setup.cuda = cuda;
    impl.devices.push_back(detail::makeDevice(setup));
  }
  impl.multiDevice = impl.devices.size() > 1 || !impl.devices.front()->isHost();
}

/// Whether the plan has a device outside host memory (a GPU).
bool hasGpu(const Model::Impl &impl) {
  return std::any_of(
      impl.devices.begin(), impl.devices.end(),
      [](const std::unique_ptr<Device> &d) { return !d->hostAddressable(); });
}

/// LoadOptions::cuda_graphs: the plan must have a device that captures, and
/// every entry point must run on such devices alone.
void enableGraphs(Model::Impl &impl, const std::string &where) {
  auto origin = std::find_if(
      impl.devices.begin(), impl.devices.end(),
      [](const std::unique_ptr<Device> &d) { return !d->hostAddressable(); });
  if (origin == impl.devices.end())
    throw Error(where + ": CUDA graphs need a plan with GPUs; plan '" +
                impl.planName + "' has none");
  std::string why;
  if (!(*origin)->supportsCapture(why))
    throw Error(where + ": CUDA graphs: " + why);
  std::string hostBound;
  for (std::size_t e = 0; e < impl.entries.size(); ++e)
    if (!impl.plan->graph_capturable || !impl.plan->graph_capturable[e])
      hostBound +=
          (hostBound.empty() ? "'" : ", '") + impl.entries[e].name + "'";
  if (!hostBound.empty())
    throw Error(where + ": CUDA graphs: in plan '" + impl.planName +
                "', entry point " + hostBound +
                " runs ops on the host, which a CUDA graph cannot hold "
                "(a plan with every op on GPUs can be one: modelc "
                "--place-all=cuda:0 builds such a plan)");
  impl.captureOrigin = origin->get();
}

/// A plan that sums over replicas on their devices
/// (MODELC_PLAN_REPLICA_SUMS): with several GPUs (and no other
/// accelerators), NCCL's communicators over them, made here, where NCCL
/// loads and makes them; the plan's sums go through host memory otherwise
/// (the same sums, slower). Model::replica_sums says which, and why.
void setUpReplicaSums(Model::Impl &impl) {
  if (!(impl.plan->plan_flags & MODELC_PLAN_REPLICA_SUMS))
    return;
  std::vector<uint32_t> gpus;
  std::vector<int> physical;
  std::string names;
  std::size_t accelerators = 0;
  for (const std::unique_ptr<Device> &d : impl.devices) {
    if (d->isHost())
      continue;
    ++accelerators;
    if (auto *gpu = dynamic_cast<detail::CudaDevice *>(d.get())) {
      gpus.push_back(d->index());
      physical.push_back(gpu->physical());
      names += (names.empty() ? "" : ", ") + d->name();
    }
  }
  if (gpus.size() < accelerators || gpus.size() < 2) {
    impl.replicaSums = "host memory";
    return;
  }
  std::string why;
  const detail::NcclApi *nccl = detail::ncclApi(why);
  if (!nccl) {
    impl.replicaSums = "host memory (" + why + ")";
    return;
  }
  try {
    impl.nccl = std::make_unique<detail::NcclClique>(*nccl, gpus, physical);
  } catch (const Error &e) {
    // The same sums, slower: the plan still runs on its GPUs.
    impl.replicaSums = "host memory (" + nccl->library + ": " + e.what() + ")";
    return;
  }
  int v = nccl->version;
  impl.replicaSums = "nccl " + std::to_string(v / 10000) + "." +
                     std::to_string(v / 100 % 100) + "." +
                     std::to_string(v % 100) + " (" + nccl->library +
                     ") over " + names;
}

/// A plan that sums over the ranks on a GPU (MODELC_PLAN_RANK_SUMS) in a
/// run of several ranks: NCCL's communicator across the ranks for that GPU
/// (rank 0's ncclGetUniqueId broadcast through the backend, then
/// ncclCommInitRank on every rank), where NCCL loads and makes it on every
/// rank; otherwise every rank sums through the host and the backend (the
/// same sums). The ranks agree before and after, so that all take the same
/// way. Model::rank_sums says which, and why.
void setUpRankSums(Model::Impl &impl, const std::string &where) {
  if (!(impl.plan->plan_flags & MODELC_PLAN_RANK_SUMS) || !impl.comm ||
      impl.comm->size() == 1)
    return;
  detail::Communicator &comm = *impl.comm;
  auto *gpu = dynamic_cast<detail::CudaDevice *>(
      impl.devices.at(impl.plan->rank_sums_device).get());
  if (!gpu)
    throw Error(where + ": plan '" + impl.planName +
                "' sums over the ranks on a device that is not a GPU");
  std::lock_guard<std::mutex> collectives(comm.runs());
  std::string error;
  // How many ranks answer `failed` (a sum of 0/1 flags).
  auto ranksWith = [&](bool failed) {
    float mine = failed ? 1.0f : 0.0f, ranks = 0;
    if (!comm.allReduce(&mine, &ranks, 1, impl.collectiveTimeout, error))
      throw Error(where + ": distributed run: " + error);
    return static_cast<int>(ranks);
  };
  std::string ranks = " of " + std::to_string(comm.size()) + " ranks";
  std::string host = "host memory and " + comm.backend();
  std::string why;
  const detail::NcclApi *nccl = detail::ncclApi(why);
  detail::NcclUniqueId id{};
  if (nccl && comm.rank() == 0)
    if (detail::ncclResult rc = nccl->getUniqueId(&id); rc != 0) {
      why = "ncclGetUniqueId failed: " + detail::ncclErrorText(*nccl, rc);
      nccl = nullptr;
    }
  if (int lacking = ranksWith(!nccl); lacking > 0) {
    impl.rankSums =
        host + " (" +
        (nccl ? std::to_string(lacking) + ranks + " cannot use NCCL" : why) +
        ")";
    return;
  }
  if (!comm.broadcast(&id, sizeof id, 0, impl.collectiveTimeout, error))
    throw Error(where + ": distributed run: " + error);
  std::string failure;
  try {
    gpu->makeCurrent("NCCL's communicator across the ranks");
    impl.rankNccl = std::make_unique<detail::NcclClique>(
        *nccl, impl.plan->rank_sums_device, id, comm.rank(), comm.size());
  } catch (const Error &e) {
    failure = e.what();
  }
  if (int failed = ranksWith(!failure.empty()); failed > 0) {
    if (impl.rankNccl)
      impl.rankNccl->abort("another rank could not make its communicator");
    impl.rankNccl.reset();
    impl.rankSums = host + " (" + nccl->library + ": " +
                    (failure.empty() ? std::to_string(failed) + ranks +
                                           " could not make NCCL's communicator"
                                     : failure) +
                    ")";
    return;
  }
  int v = nccl->version;
  impl.rankSums = "nccl " + std::to_string(v / 10000) + "." +
                  std::to_string(v / 100 % 100) + "." +
                  std::to_string(v % 100) + " (" + nccl->library + ") across " +
                  std::to_string(comm.size()) + " ranks on " + gpu->name();
}

/// Takes every device's resources and makes the weights resident where
/// the plan keeps them (copied once, here).
void setUpDevices(Model::Impl &impl) {
  uint32_t numWeights = impl.desc->num_weights;
  std::vector<Device *> all;
  for (uint32_t d = 0; d < impl.devices.size(); ++d) {
    Device &device = *impl.devices[d];
    device.setUp();
    for (uint32_t w = 0; w < numWeights; ++w) {
      // Where any size regime keeps it.
      bool resident = false;
      for (const modelc_plan_desc *p : impl.targetPlans())
        resident |= p->weight_devices
                        ? p->weight_devices[d * numWeights + w] != 0
                        : d == 0;
      // Another rank's shard of the optimizer state is nowhere here.
      if (resident && impl.weights.pointers[w])
        device.makeResident(w, impl.weights.pointers[w], impl.desc->weights[w]);
    }
    impl.deviceWeightTables.push_back(device.weights());
    all.push_back(&device);
  }
  for (Device *device : all) {
    device->connect(all);
    if (!impl.stagingDevice && device->providesHostMemory())
      impl.stagingDevice = device;
  }
  setUpReplicaSums(impl);
}

/// LoadOptions::distributed: joins the run, then checks with every rank
/// that all loaded the same model (its seal: the file's and the weights'
/// hashes) and chose the same plan; an Error on every rank otherwise.
void joinRun(Model::Impl &impl, const LoadOptions &options,
             const std::string &where) {
  if (!(options.collective_timeout_s > 0))
    throw Error(where + ": collective_timeout_s must be positive");
  if (!(impl.desc->model_flags & MODELC_MODEL_COLLECTIVES))
    throw Error(where +
                ": a distributed run needs a model whose steps sum over the "
                "ranks (modelc --train --distributed); this one's would "
                "train each rank on its own");
  impl.comm = detail::Communicator::join(options.distributed);
  impl.collectiveTimeout = options.collective_timeout_s;
}

/// After joinRun and the devices' set-up: checks with every rank that all
/// loaded the same model and plan.
void checkRanksAgree(Model::Impl &impl, const std::string &where) {
  if (impl.comm->size() == 1)
    return;
  // The check's collectives, like a run's, go between runs: every rank
  // meets them at the same point of its queue.
  std::lock_guard<std::mutex> collectives(impl.comm->runs());
  // What every rank must share, as rank 0 has it.
  uint64_t mine[4] = {impl.seal.model_hash, impl.seal.model_bytes,
                      impl.seal.weights_hash,
                      std::hash<std::string>()(impl.planName)};
  uint64_t first[4];
  std::memcpy(first, mine, sizeof mine);
  std::string error;
  if (!impl.comm->broadcast(first, sizeof first, 0, impl.collectiveTimeout,
                            error))
    throw Error(where + ": distributed run: " + error);
  // Every rank learns whether any differs (a sum of 0/1 flags).
  float differs = std::memcmp(first, mine, sizeof mine) != 0 ? 1.0f : 0.0f;
  float ranksDiffering = 0;
  if (!impl.comm->allReduce(&differs, &ranksDiffering, 1,
                            impl.collectiveTimeout, error))
    throw Error(where + ": distributed run: " + error);
  if (ranksDiffering > 0) {
    bool planDiffers = first[3] != mine[3];
    throw Error(where + ": distributed run: " +
                std::to_string(static_cast<int>(ranksDiffering)) + " of " +
                std::to_string(impl.comm->size()) +
                " ranks loaded another model or plan than rank 0" +
                (differs > 0 ? " (this rank, " +
                                   std::to_string(impl.comm->rank()) + ": " +
                                   (planDiffers ? "plan '" + impl.planName + "'"
                                                : "its file or weights") +
                                   " differ)"
                             : "") +
                "; every rank must run the same model.so and plan");
  }
}

/// The plan the runtime would choose without GPUs, for a GPU plan it chose
/// by itself that failed to set up with `failure`.
Model loadWithoutGpus(const std::string &path, const LoadOptions &options,
                      const std::vector<detail::PlanDevices> &plans,
                      const modelc_model_desc &desc, const Error &failure,
                      const std::string &where) {
  detail::MachineGpus none;
  none.status = "the GPU plan failed";
  LoadOptions fallback = options;
  try {
    detail::PlanChoice host = detail::choosePlan(plans, "", none, where);
    fallback.plan = desc.plans[host.plan].name;
  } catch (const Error &) {
    throw failure; // no plan without GPUs: the GPU plan's failure is the error
  }
  return Model::load(path, fallback);
}

} // namespace

Model Model::load(const std::string &path, const LoadOptions &options) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  std::string where = "model " + detail::modelName(path);
  detail::OpenedModel opened = detail::openModel(path);
  impl->library = opened.library;
  impl->desc = opened.desc;
  impl->seal = opened.seal;
  detail::DescriptorInfo info = detail::checkDescriptor(*impl->desc, path);
  impl->entries = std::move(info.entries);
  impl->dims = std::move(info.dims);
  impl->compilerVersion = std::move(info.compilerVersion);
  impl->compilerFlags = std::move(info.compilerFlags);

  // The plan: by name or by devices, else the best for this machine.
  std::vector<detail::PlanDevices> plans = detail::planDevicesOf(*impl->desc);
  detail::MachineGpus machine;
  const detail::CudaApi *cuda = nullptr;
  if (needsGpus(plans, options.plan))
    machine = detail::probeMachineGpus(*impl->desc, cuda);
  detail::PlanChoice choice =
      detail::choosePlan(plans, options.plan, machine, where);
  impl->plan = &impl->desc->plans[choice.plan];
  impl->planName = impl->plan->name;
  if (impl->plan->regime_max > 0) {
    // The target's size regimes: the consecutive plans of its name.
    uint32_t first = choice.plan;
    while (first > 0 && impl->planName == impl->desc->plans[first - 1].name)
      --first;
    for (uint32_t p = first; p < impl->desc->num_plans &&
                             impl->planName == impl->desc->plans[p].name;
         ++p)
      impl->regimes.push_back(&impl->desc->plans[p]);
    impl->plan = impl->regimes.front();
  }
  makeDevices(*impl, choice, cuda, where);
  if (options.cuda_graphs)
    enableGraphs(*impl, where);
  if (options.trace && options.cuda_graphs)
    throw Error(where + ": tracing runs that replay CUDA graphs is not "
                        "supported yet (drop cuda_graphs or the trace)");
  if (options.trace && cuda && hasGpu(*impl) && !cuda->cuLaunchHostFunc)
    throw Error(where +
                ": tracing a GPU plan needs cuLaunchHostFunc, which "
                "the CUDA driver " +
                visible_gpus().driver_library + " lacks");
  impl->trace = options.trace;

  detail::bindWeights(impl->weights, *impl->desc, impl->seal, path,
                      options.weights);
  // A distributed run joins before the weights are copied: a rank holds
  // only its own shards of sharded optimizer state.
  if (!options.distributed.empty())
    joinRun(*impl, options, where);
  detail::makeWritableCopies(impl->weights, *impl->desc,
                             impl->comm ? impl->comm->rank() : 0,
                             impl->comm ? impl->comm->size() : 1);
  impl->numThreads =
      options.num_threads > 0 ? options.num_threads : defaultThreads();
  impl->api = detail::runtimeApi();
  impl->freeResources.resize(impl->entries.size());
  try {
    setUpDevices(*impl);
  } catch (const Error &e) {
    // A GPU plan the runtime chose by itself that cannot be set up here
    // (its GPU code rejected, out of memory, ...): the model still runs,
    // on the plan it would pick without GPUs, and says why.
    if (!options.plan.empty() || !hasGpu(*impl))
      throw;
    std::string failedPlan = impl->planName;
    impl.reset(); // releases what the GPU plan took
    Model model = loadWithoutGpus(path, options, plans, *opened.desc, e, where);
    model.impl_->planNote = "GPU plan '" + failedPlan +
                            "' could not be set up (" + e.what() +
                            "); running plan '" + model.impl_->planName + "'";
    return model;
  }

  if (impl->comm) {
    checkRanksAgree(*impl, where);
    setUpRankSums(*impl, where);
  }
  Model model;
  model.impl_ = std::move(impl);
  return model;
}

std::string Model::replica_sums() const {
  if (impl_->nccl && !impl_->nccl->usable())
    return "host memory (NCCL aborted: " + impl_->nccl->aborted() + ")";
  return impl_->replicaSums;
}

std::string Model::rank_sums() const {
  if (impl_->rankNccl && !impl_->rankNccl->usable())
    return "stopped (NCCL failed: " + impl_->rankNccl->aborted() + ")";
  return impl_->rankSums;
}

std::string Model::state_shards() const {
  const modelc_model_desc &desc = *impl_->desc;
  uint32_t shards = 0, held = 0;
  uint64_t bytes = 0, heldBytes = 0;
  for (uint32_t w = 0; w < desc.num_weights; ++w) {
    if (detail::weightShard(desc, w) < 0)
      continue;
    ++shards;
    bytes += desc.weights[w].nbytes;
    if (impl_->weights.pointers[w]) {
      ++held;
      heldBytes += desc.weights[w].nbytes;
    }
  }
  if (!shards)
    return "";
  int size = world_size();
  return "sharded over " + std::to_string(size) + " rank" +
         (size == 1 ? "" : "s") + ": rank " + std::to_string(rank()) +
         " holds " + std::to_string(held) + " of " + std::to_string(shards) +
         " state weights, " + std::to_string(heldBytes) + " of " +
         std::to_string(bytes) + " bytes";
}

int Model::rank() const { return impl_->comm ? impl_->comm->rank() : 0; }
int Model::world_size() const { return impl_->comm ? impl_->comm->size() : 1; }

//===----------------------------------------------------------------------===//
// Run resources
//===----------------------------------------------------------------------===//

std::size_t Model::Impl::entryIndex(const std::string &name) const {
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == name)
      return i;
  std::string known;
  for (const EntryInfo &e : entries)
    known += (known.empty() ? "'" : ", '") + e.name + "'";
  throw Error("model " + detail::modelName(path) + " has no entry point '" +
              name + "'; it has " + known);
}

std::unique_ptr<RunResources> Model::Impl::acquireResources(std::size_t entry) {
  {
    std::lock_guard<std::mutex> lock(resourceMutex);
    auto &list = freeResources[entry];
    if (!list.empty()) {
      std::unique_ptr<RunResources> resources = std::move(list.back());
      list.pop_back();
      return resources;
    }
  }
  auto resources = std::make_unique<RunResources>();
  resources->events.setDeviceEvents(hasGpu(*this));
  for (uint32_t d = 0; d < plan->num_devices; ++d) {
    uint64_t bytes = arenaBytes(entry, d);
    std::unique_ptr<detail::DeviceRun> run =
        devices[d]->allocate(bytes, entries[entry].name);
    if (multiDevice) {
      run->compute = std::make_unique<Stream>();
      run->copy = std::make_unique<Stream>();
    }
    resources->arenaPointers.push_back(run->arena);
    resources->devices.push_back(std::move(run));
  }
  if (trace) {
    std::vector<std::string> names(plan->devices,
                                   plan->devices + plan->num_devices);
    resources->trace =
        std::make_unique<detail::RunTrace>(*trace, *plan, names, multiDevice);
  }
  if (stagingDevice)
    for (const TensorInfo &input : entries[entry].inputs) {
      uint64_t bytes = dtypeSize(input.dtype);
      for (int64_t dim : input.shape)
        bytes *= static_cast<uint64_t>(dim);
      resources->stagedInputs.push_back(stagingDevice->allocateHost(
          bytes, "the staging buffer of input '" + input.name + "'"));
      resources->stagedPointers.push_back(
          resources->stagedInputs.back()->memory);
    }
  return resources;
}

uint64_t Model::Impl::arenaBytes(std::size_t entry, uint32_t device) const {
  uint64_t bytes = 0;
  for (const modelc_plan_desc *p : targetPlans())
    bytes = std::max(bytes, p->arena_bytes[entry * p->num_devices + device]);
  return bytes;
}

void Model::Impl::releaseResources(std::size_t entry,
                                   std::unique_ptr<RunResources> resources) {
  std::lock_guard<std::mutex> lock(resourceMutex);
  freeResources[entry].push_back(std::move(resources));
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

const std::vector<EntryInfo> &Model::entries() const { return impl_->entries; }
const std::vector<DimInfo> &Model::dims() const { return impl_->dims; }

const EntryInfo &Model::entry(const std::string &name) const {
  return impl_->entries[impl_->entryIndex(name)];
}

const std::string &Model::plan() const { return impl_->planName; }
const std::string &Model::plan_note() const { return impl_->planNote; }
std::vector<std::string> Model::plans() const {
  std::vector<std::string> names;
  for (uint32_t p = 0; p < impl_->desc->num_plans; ++p)
    if (names.empty() || names.back() != impl_->desc->plans[p].name)
      names.push_back(impl_->desc->plans[p].name);
  return names;
}
std::vector<RegimeInfo> Model::regimes() const {
  std::vector<RegimeInfo> list;
  for (const modelc_plan_desc *p : impl_->regimes)
    list.push_back(
        {impl_->dims[p->regime_dim].name, p->regime_min, p->regime_max});
  return list;
}
std::size_t Model::gpu_kernels() const {
  return impl_->desc->gpu_image ? impl_->desc->num_kernels : 0;
}
const std::string &Model::compiler_version() const {
  return impl_->compilerVersion;
}
const std::string &Model::compiler_flags() const {
  return impl_->compilerFlags;
}
int Model::num_threads() const { return impl_->numThreads; }

std::vector<std::string> Model::weight_names() const {
  std::vector<std::string> names;
  for (uint32_t i = 0; i < impl_->desc->num_weights; ++i)
    names.push_back(impl_->desc->weights[i].name);
  return names;
}

uint64_t Model::arena_bytes(const std::string &entry) const {
  return impl_->arenaBytes(impl_->entryIndex(entry), 0);
}

std::string describe(const TensorInfo &t, const std::vector<DimInfo> &dims) {
  if (t.dims.empty())
    return describe(t.dtype, t.shape);
  std::string text = std::string(dtypeName(t.dtype)) + "[";
  for (std::size_t a = 0; a < t.shape.size(); ++a) {
    text += a ? "," : "";
    const DimInfo *dim = nullptr;
    for (const DimInfo &d : dims)
      if (d.name == t.dims[a])
        dim = &d;
    text += dim ? dim->name + " in " + std::to_string(dim->min) + ".." +
                      std::to_string(dim->max)
                : std::to_string(t.shape[a]);
  }
  return text + "]";
}

namespace {

/// The sizes of the model's dynamic dimensions in a run on `given` (-1
/// for one no input has): each taken from the first input that has it,
/// within its range, and the same in every input. Throws an Error naming
/// the dimension, its range and the input otherwise.
std::vector<int64_t> dimSizes(const std::vector<DimInfo> &dims,
                              const std::vector<TensorInfo> &expected,
                              const std::vector<Tensor> &given) {
  std::vector<int64_t> sizes(dims.size(), -1);
  std::vector<std::string> from(dims.size());
  for (std::size_t i = 0; i < given.size() && i < expected.size(); ++i) {
    const TensorInfo &want = expected[i];
    const std::vector<int64_t> &shape = given[i].shape();
    if (want.dims.empty() || shape.size() != want.shape.size())
      continue; // checkTensors says what is wrong
    for (std::size_t a = 0; a < want.dims.size(); ++a) {
      if (want.dims[a].empty())
        continue;
      std::size_t d = 0;
      while (dims[d].name != want.dims[a])
        ++d;
      const DimInfo &dim = dims[d];
      int64_t size = shape[a];
      if (size < dim.min || size > dim.max)
        throw Error("input '" + want.name + "': dimension '" + dim.name +
                    "' (axis " + std::to_string(a) + ") is " +
                    std::to_string(size) + ", outside its range " +
                    std::to_string(dim.min) + ".." + std::to_string(dim.max));
      if (sizes[d] >= 0 && sizes[d] != size)
        throw Error("inputs '" + from[d] + "' and '" + want.name +
                    "' disagree on dimension '" + dim.name + "': " +
                    std::to_string(sizes[d]) + " and " + std::to_string(size));
      sizes[d] = size;
      from[d] = want.name;
    }
  }
  return sizes;
}

/// `t`'s shape in a run whose dynamic dimensions have `sizes`.
std::vector<int64_t> shapeIn(const TensorInfo &t,
                             const std::vector<DimInfo> &dims,
                             const std::vector<int64_t> &sizes) {
  std::vector<int64_t> shape = t.shape;
  for (std::size_t a = 0; a < t.dims.size(); ++a)
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (!t.dims[a].empty() && dims[d].name == t.dims[a] && sizes[d] >= 0)
        shape[a] = sizes[d];
  return shape;
}

/// Checks `given` against `expected`; inputs with a default may be left
/// out at the end.
void checkTensors(const std::string &what,
                  const std::vector<TensorInfo> &expected,
                  const std::vector<Tensor> &given, const std::string &entry,
                  const std::vector<DimInfo> &dims = {},
                  const std::vector<int64_t> &sizes = {}) {
  std::size_t required = expected.size();
  while (required > 0 && expected[required - 1].has_default())
    --required;
  if (given.size() < required || given.size() > expected.size()) {
    std::string optional =
        required < expected.size()
            ? " (the last " + std::to_string(expected.size() - required) +
                  " optional)"
            : "";
    throw Error("entry point '" + entry + "' takes " +
                std::to_string(expected.size()) + " " + what + "s" + optional +
                ", got " + std::to_string(given.size()));
  }
  for (std::size_t i = 0; i < given.size(); ++i) {
    const TensorInfo &want = expected[i];
    const Tensor &got = given[i];
    std::optional<detail::DeviceName> device =
        detail::parseDeviceName(got.device());
    if (!device || device->kind != DeviceKind::Cpu)
      throw Error(what + " '" + want.name +
                  "': expected a tensor on cpu, "
                  "got one on " +
                  got.device());
    std::vector<int64_t> shape =
        want.dims.empty() ? want.shape : shapeIn(want, dims, sizes);
    if (got.dtype() != want.dtype || got.shape() != shape)
      throw Error(what + " '" + want.name + "': expected " +
                  (want.dims.empty() ? describe(want.dtype, shape)
                                     : describe(want, dims)) +
                  ", got " + got.describe());
    if (!got.data() && got.nbytes())
      throw Error(what + " '" + want.name + "' has no data");
  }
}

/// Returns when every host stream of the run has drained (then no event
/// of the run is left waiting for a copy).
void drainStreams(RunResources &resources) {
  for (const std::unique_ptr<detail::DeviceRun> &run : resources.devices) {
    run->compute->drain();
    run->copy->drain();
    for (std::vector<uint32_t> &waited : run->gpuWaits)
      waited.clear();
    run->gpuWaitIssued[0] = run->gpuWaitIssued[1] = false;
  }
}

/// Runs entry `index` of a multi-device plan: the entry function enqueues;
/// the run ends when the run's own streams have drained and every device
/// has finished. With graphs, the runs after the first replay a graph.
int runOnStreams(Model::Impl &impl, std::size_t index, RunState &state) {
  RunResources &resources = *state.resources;
  modelc_run_ctx *ctx = state.ctx;
  const modelc_plan_desc &plan = *state.plan;
  std::size_t numEvents = plan.num_events ? plan.num_events[index] : 0;
  if (impl.captureOrigin && resources.capture.warm) {
    impl.captureOrigin->runCaptured(state, [&] {
      resources.events.reset(numEvents);
      int status = state.error.empty() ? plan.run[index](ctx) : 1;
      drainStreams(resources);
      return status;
    });
    return 0;
  }
  // (Graph mode: the first run of these resources goes without a graph, so
  // that what is made on first use — cuBLASLt's handle, workspace and
  // plans, events — is made outside the capture.)
  resources.capture.warm = true;
  resources.events.reset(numEvents);
  resources.replicaSums.reset();
  int status = plan.run[index](ctx);
  drainStreams(resources);
  for (const std::unique_ptr<Device> &device : impl.devices)
    device->finish(state);
  return status;
}

} // namespace

void Model::run_into(const std::string &entry,
                     const std::vector<Tensor> &inputs,
                     std::vector<Tensor> &outputs) const {
  Impl &impl = *impl_;
  std::size_t index = impl.entryIndex(entry);
  const EntryInfo &info = impl.entries[index];
  std::vector<int64_t> sizes = dimSizes(impl.dims, info.inputs, inputs);
  checkTensors("input", info.inputs, inputs, entry, impl.dims, sizes);
  checkTensors("output", info.outputs, outputs, entry, impl.dims, sizes);

  // Pointer tables on the stack for small models, no allocation.
  constexpr std::size_t kInline = 16;
  const void *inlineIn[kInline];
  void *inlineOut[kInline];
  std::vector<const void *> heapIn;
  std::vector<void *> heapOut;
  const void **in = inlineIn;
  void **out = inlineOut;
  // Inputs left out read their defaults.
  std::size_t numInputs = info.inputs.size();
  if (numInputs > kInline) {
    heapIn.resize(numInputs);
    in = heapIn.data();
  }
  if (outputs.size() > kInline) {
    heapOut.resize(outputs.size());
    out = heapOut.data();
  }
  auto input = [&](std::size_t i) -> const Tensor & {
    return i < inputs.size() ? inputs[i] : info.inputs[i].default_value;
  };
  for (std::size_t i = 0; i < numInputs; ++i)
    in[i] = input(i).data();
  for (std::size_t i = 0; i < outputs.size(); ++i)
    out[i] = outputs[i].mutable_data();

  std::unique_ptr<RunResources> resources = impl.acquireResources(index);
  modelc_run_ctx ctx{};
  RunState state;
  state.impl = &impl;
  state.plan = impl.regimes.empty() ? impl.plan : impl.planFor(sizes);
  // Regimes number their events alike on different devices: a device
  // event made on one GPU cannot be recorded on another's stream. The last
  // run on these resources has drained.
  if (resources->lastPlan && resources->lastPlan != state.plan)
    resources->events.release();
  resources->lastPlan = state.plan;
  state.entry = index;
  state.entryInfo = &info;
  state.resources = resources.get();
  state.ctx = &ctx;
  ctx.api = &impl.api;
  ctx.runtime = &state;
  ctx.inputs = in;
  if (!resources->stagedPointers.empty()) {
    // GPUs copy the inputs from page-locked memory.
    for (std::size_t i = 0; i < numInputs; ++i)
      std::memcpy(resources->stagedInputs[i]->memory, input(i).data(),
                  input(i).nbytes());
    ctx.inputs = resources->stagedPointers.data();
  }
  ctx.outputs = out;
  ctx.weights = impl.weights.pointers.data();
  ctx.arena = resources->arenaPointers[0];
  ctx.arenas = resources->arenaPointers.data();
  ctx.device_weights = impl.deviceWeightTables.data();
  ctx.rank = impl.comm ? impl.comm->rank() : 0;
  ctx.world_size = impl.comm ? impl.comm->size() : 1;
  // Every member of a replica group sums the same way within a run: NCCL
  // unless an earlier run's NCCL call failed and aborted it.
  state.nccl = impl.nccl && impl.nccl->usable() ? impl.nccl.get() : nullptr;
  ctx.dims = sizes.empty() ? nullptr : sizes.data();
  if (resources->trace) {
    state.trace = resources->trace.get();
    std::string regime;
    if (!impl.regimes.empty())
      regime = "regime " + impl.dims[state.plan->regime_dim].name + " " +
               std::to_string(state.plan->regime_min) + ".." +
               std::to_string(state.plan->regime_max) + " of plan '" +
               impl.planName + "'";
    state.trace->begin(entry, state.plan, regime);
    ctx.trace = detail::traceCallback;
  }
  // A distributed run's collectives: one run at a time in the process.
  std::unique_lock<std::mutex> collectives;
  if (impl.comm && impl.comm->size() > 1)
    collectives = std::unique_lock<std::mutex>(impl.comm->runs());
  int status = impl.multiDevice ? runOnStreams(impl, index, state)
                                : state.plan->run[index](&ctx);
  // Sums started and not waited for (the entry failed between): the
  // communication thread still writes their memory.
  detail::waitForStartedSums(state);
  if (collectives)
    collectives.unlock();
  if (state.trace)
    state.trace->end();
  impl.releaseResources(index, std::move(resources));
  if (status != 0 || !state.error.empty())
    throw Error(
        "running '" + entry + "' of model " + detail::modelName(impl.path) +
        " failed: " + (state.error.empty() ? "unknown error" : state.error));
}

int Model::regime_of(const std::string &entry,
                     const std::vector<Tensor> &inputs) const {
  const EntryInfo &info = this->entry(entry);
  std::vector<int64_t> sizes = dimSizes(impl_->dims, info.inputs, inputs);
  if (impl_->regimes.empty())
    return -1;
  const modelc_plan_desc *plan = impl_->planFor(sizes);
  for (std::size_t r = 0; r < impl_->regimes.size(); ++r)
    if (impl_->regimes[r] == plan)
      return static_cast<int>(r);
  return -1;
}

std::vector<std::vector<int64_t>>
Model::output_shapes(const std::string &entry,
                     const std::vector<Tensor> &inputs) const {
  const EntryInfo &info = this->entry(entry);
  std::vector<int64_t> sizes = dimSizes(impl_->dims, info.inputs, inputs);
  checkTensors("input", info.inputs, inputs, entry, impl_->dims, sizes);
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorInfo &o : info.outputs)
    shapes.push_back(shapeIn(o, impl_->dims, sizes));
  return shapes;
}

std::vector<Tensor> Model::run(const std::string &entry,
                               const std::vector<Tensor> &inputs) const {
  const EntryInfo &info = this->entry(entry);
  std::vector<Tensor> outputs;
  outputs.reserve(info.outputs.size());
  if (impl_->dims.empty()) {
    for (const TensorInfo &o : info.outputs)
      outputs.push_back(Tensor::zeros(o.shape, o.dtype));
  } else {
    std::vector<std::vector<int64_t>> shapes = output_shapes(entry, inputs);
    for (std::size_t i = 0; i < shapes.size(); ++i)
      outputs.push_back(Tensor::zeros(shapes[i], info.outputs[i].dtype));
  }
  run_into(entry, inputs, outputs);
  return outputs;
}

PendingRun Model::run_async(const std::string &entry,
                            const std::vector<Tensor> &inputs) const {
  Impl &impl = *impl_;
  const EntryInfo &info = this->entry(entry);
  checkTensors("input", info.inputs, inputs, entry, impl.dims,
               dimSizes(impl.dims, info.inputs, inputs));
  std::vector<Tensor> owned;
  owned.reserve(inputs.size());
  for (const Tensor &input : inputs)
    owned.push_back(
        Tensor::copy_of(input.data(), input.shape(), input.dtype()));
  auto promise = std::make_shared<std::promise<std::vector<Tensor>>>();
  PendingRun pending(promise->get_future());
  {
    std::lock_guard<std::mutex> lock(impl.asyncMutex);
    if (!impl.asyncRuns)
      impl.asyncRuns = std::make_unique<detail::RunQueue>();
  }
  // The queue belongs to the Impl, which finishes it before it goes: the
  // run holds a view of the model that does not own it.
  Model view;
  view.impl_ = std::shared_ptr<Impl>(impl_.get(), [](Impl *) {});
  impl.asyncRuns->push([view, entry, owned = std::move(owned), promise] {
    try {
      promise->set_value(view.run(entry, owned));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  return pending;
}

bool PendingRun::ready() const {
  return future_.valid() &&
         future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::vector<Tensor> PendingRun::wait() {
  if (!future_.valid())
    throw Error("PendingRun::wait: no run to wait for (its outputs were "
                "taken already, or none was started)");
  return future_.get();
}

} // namespace modelc
