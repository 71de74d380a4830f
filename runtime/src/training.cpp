// training.cpp - what a training model needs of the runtime: writable
// copies of the weights generated code writes (parameters and optimizer
// state, MODELC_WEIGHT_WRITABLE), and checkpoints: save_weights and
// load_weights in safetensors under the weights' own (PyTorch) names.
#include "training.hpp"
#include "comm.hpp"
#include "model_impl.hpp"
#include "safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace modelc {
namespace {

bool writable(const modelc_model_desc &desc, uint32_t w) {
  return desc.weight_flags && (desc.weight_flags[w] & MODELC_WEIGHT_WRITABLE);
}

/// The device holding the copy of weight `w` a run reads (the first that
/// holds one) and that copy; null when only the host holds it.
std::pair<const detail::Device *, const void *>
residentCopy(const Model::Impl &impl, uint32_t w) {
  for (std::size_t d = 0; d < impl.devices.size(); ++d)
    if (const void *p = impl.deviceWeightTables[d][w])
      return {impl.devices[d].get(), p};
  return {nullptr, nullptr};
}

/// The pages of model.so's embedded data that hold only weights the model
/// writes (copied by makeWritableCopies, never read there again) leave the
/// process's resident set: a training model would otherwise hold its
/// parameters twice, the mapped originals and the copies. The mapping is
/// private and the pages unmodified: anything that reads them again reads
/// them from model.so.
void releaseCopiedPages(const modelc_model_desc &desc) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (uint32_t w = 0; w < desc.num_weights; ++w)
    if (writable(desc, w) && !detail::startsAsZeros(desc, w))
      ranges.push_back({desc.weights[w].offset,
                        desc.weights[w].offset + desc.weights[w].nbytes});
  std::sort(ranges.begin(), ranges.end());
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t base = reinterpret_cast<uintptr_t>(desc.weight_data);
  auto release = [&](uint64_t begin, uint64_t end) {
    uintptr_t first = (base + begin + page - 1) / page * page;
    uintptr_t last = (base + end) / page * page;
    if (last > first)
      madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
  };
  // Neighbours 64 bytes apart or less merge (the blob's alignment
  // padding; a small weight read in place between them may lose its page
  // too, and is read again from model.so when used).
  for (std::size_t i = 0; i < ranges.size();) {
    uint64_t begin = ranges[i].first, end = ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first <= end + 64; ++i)
      end = std::max(end, ranges[i].second);
    release(begin, end);
  }
}

} // namespace

namespace detail {

void makeWritableCopies(HostWeights &weights, const modelc_model_desc &desc,
                        int rank, int size) {
  for (uint32_t w = 0; w < desc.num_weights; ++w) {
    if (!writable(desc, w))
      continue;
    if (!holdsWeight(desc, w, rank, size)) {
      // Another rank's shard of the optimizer state: this rank never
      // touches it (generated code guards every op that does).
      weights.pointers[w] = nullptr;
      continue;
    }
    const modelc_weight_desc &d = desc.weights[w];
    std::vector<int64_t> shape(d.shape, d.shape + d.rank);
    if (!weights.pointers[w] && startsAsZeros(desc, w)) {
      weights.owned.push_back(Tensor::zeros(shape, *dtypeFromCode(d.dtype)));
    } else {
      weights.owned.push_back(
          Tensor::copy_of(weights.pointers[w], shape, *dtypeFromCode(d.dtype)));
    }
    weights.pointers[w] = weights.owned.back().data();
  }
  if (!weights.file && desc.weight_data)
    releaseCopiedPages(desc);
}

} // namespace detail

Tensor Model::weight(const std::string &name) const {
  for (uint32_t i = 0; i < impl_->desc->num_weights; ++i) {
    const modelc_weight_desc &w = impl_->desc->weights[i];
    if (name != w.name)
      continue;
    if (!impl_->weights.pointers[i])
      throw Error("model '" + impl_->path + "': weight '" + name +
                  "' is optimizer state that rank " +
                  std::to_string(modelc_shard_owner(
                      detail::weightShard(*impl_->desc, i), world_size())) +
                  " holds (sharded over the ranks), not this one; "
                  "save_weights gathers it");
    // A weight the runs write on a GPU: the host's copy (the model's own,
    // makeWritableCopies) takes the GPU's values first, as they are now.
    auto [device, data] = residentCopy(*impl_, i);
    if (writable(*impl_->desc, i) && device && !device->hostAddressable())
      device->readResident(const_cast<void *>(impl_->weights.pointers[i]), data,
                           w.nbytes);
    return detail::weightTensor(w, impl_->weights.pointers[i]);
  }
  throw Error("model '" + impl_->path + "' has no weight '" + name + "'");
}

void Model::save_weights(const std::string &path) const {
  const Impl &impl = *impl_;
  std::string what = "save_weights('" + path + "')";
  // A distributed run: rank 0 writes the file. Optimizer state sharded
  // over the ranks comes to it from each shard's owner first, so every
  // rank takes part (in the same order, between runs).
  detail::Communicator *comm =
      impl.comm && impl.comm->size() > 1 ? impl.comm.get() : nullptr;
  bool sharded = false;
  for (uint32_t w = 0; w < impl.desc->num_weights; ++w)
    sharded |= detail::weightShard(*impl.desc, w) >= 0;
  std::unique_lock<std::mutex> collectives;
  if (comm && sharded)
    collectives = std::unique_lock<std::mutex>(comm->runs());
  std::lock_guard<std::mutex> lock(impl.weightMutex);
  std::vector<std::vector<unsigned char>> gathered;
  std::map<uint32_t, const void *> fromOwners;
  if (comm && sharded)
    for (uint32_t w = 0; w < impl.desc->num_weights; ++w) {
      int32_t shard = detail::weightShard(*impl.desc, w);
      if (shard < 0)
        continue;
      const modelc_weight_desc &d = impl.desc->weights[w];
      void *data = const_cast<void *>(impl.weights.pointers[w]);
      if (!data) {
        gathered.emplace_back(d.nbytes);
        data = gathered.back().data();
      }
      std::string error;
      if (!comm->broadcast(
              data, static_cast<int64_t>(d.nbytes),
              static_cast<int>(modelc_shard_owner(shard, comm->size())),
              impl.collectiveTimeout, error))
        throw Error(what + ": gathering '" + d.name + "' from rank " +
                    std::to_string(modelc_shard_owner(shard, comm->size())) +
                    ": " + error);
      fromOwners[w] = data;
    }
  if (comm && comm->rank() != 0)
    return;
  struct Item {
    const modelc_weight_desc *desc;
    const void *data;
  };
  std::map<std::string, Item> items; // safetensors lists names in order
  // Weights resident on GPUs are read back into host buffers first.
  std::vector<std::vector<unsigned char>> readBack;
  for (uint32_t w = 0; w < impl.desc->num_weights; ++w) {
    const modelc_weight_desc &d = impl.desc->weights[w];
    auto [device, data] = residentCopy(impl, w);
    if (auto owner = fromOwners.find(w); owner != fromOwners.end()) {
      items[d.name] = {&d, owner->second};
      continue;
    }
    if (device && !device->hostAddressable()) {
      readBack.emplace_back(d.nbytes);
      device->readResident(readBack.back().data(), data, d.nbytes);
      data = readBack.back().data();
    }
    items[d.name] = {&d, data ? data : impl.weights.pointers[w]};
  }
  std::string header = "{";
  uint64_t offset = 0;
  for (const auto &[name, item] : items) {
    header += (header.size() > 1 ? "," : "") + Trace::json_string(name) +
              ":{\"dtype\":\"" +
              safetensorsDTypeName(*dtypeFromCode(item.desc->dtype)) +
              "\",\"shape\":[";
    for (uint32_t i = 0; i < item.desc->rank; ++i)
      header += (i ? "," : "") + std::to_string(item.desc->shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + item.desc->nbytes) + "]}";
    offset += item.desc->nbytes;
  }
  header += "}";
  while (header.size() % 8)
    header += ' ';
  // Written next to the target, then renamed: a crash never leaves a
  // half-written checkpoint under the name.
  std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw Error(what + ": cannot create '" + temp +
                  "': " + std::strerror(errno));
    uint64_t size = header.size();
    unsigned char length[8];
    for (int i = 0; i < 8; ++i)
      length[i] = static_cast<unsigned char>(size >> (8 * i));
    out.write(reinterpret_cast<const char *>(length), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const auto &[name, item] : items)
      out.write(static_cast<const char *>(item.data),
                static_cast<std::streamsize>(item.desc->nbytes));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw Error(what + ": cannot write '" + temp + "'");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    throw Error(what + ": cannot rename '" + temp + "' to '" + path +
                "': " + why);
  }
}

void Model::load_weights(const std::string &path) {
  Impl &impl = *impl_;
  std::string what = "load_weights('" + path + "')";
  SafetensorsFile file(path);
  std::lock_guard<std::mutex> lock(impl.weightMutex);
  // Checked whole before anything is written: a bad file changes nothing.
  std::vector<std::pair<uint32_t, const SafetensorsEntry *>> writes;
  for (const auto &[name, entry] : file.tensors()) {
    uint32_t w = 0;
    while (w < impl.desc->num_weights && name != impl.desc->weights[w].name)
      ++w;
    if (w == impl.desc->num_weights)
      throw Error(what + ": the model has no weight '" + name + "'");
    const modelc_weight_desc &d = impl.desc->weights[w];
    std::vector<int64_t> shape(d.shape, d.shape + d.rank);
    if (entry.dtype != *dtypeFromCode(d.dtype) || entry.shape != shape)
      throw Error(what + ": weight '" + name +
                  "' has another dtype or "
                  "shape in the file than in the model");
    if (!writable(*impl.desc, w)) {
      // A constant of the model (a frozen weight, a buffer): it must be
      // the model's own value.
      if (std::memcmp(entry.data, impl.weights.pointers[w], d.nbytes) != 0)
        throw Error(what + ": weight '" + name +
                    "' is a constant of this model (not trained) and "
                    "differs from the file; build the model with these "
                    "weights (modelc --weights) instead");
      continue;
    }
    writes.push_back({w, &entry});
  }
  // Every copy of a written weight (one per device that holds it).
  for (auto [w, entry] : writes)
    for (std::size_t d = 0; d < impl.devices.size(); ++d)
      if (const void *p = impl.deviceWeightTables[d][w])
        impl.devices[d]->writeResident(const_cast<void *>(p), entry->data,
                                       entry->nbytes);
}

std::string Model::compute_precision() const {
  uint32_t flags = impl_->desc->model_flags;
  if (flags & MODELC_MODEL_COMPUTES_BF16)
    return "bf16";
  if (flags & MODELC_MODEL_COMPUTES_F16)
    return "f16";
  return "f32";
}

bool Model::trains() const {
  for (uint32_t w = 0; w < impl_->desc->num_weights; ++w)
    if (writable(*impl_->desc, w))
      return true;
  return false;
}

} // namespace modelc
