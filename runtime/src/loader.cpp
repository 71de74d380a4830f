// loader.cpp - opening a model.so: the file checks before dlopen, the
// descriptor it exports, and the checks of that descriptor.
#include "loader.hpp"

#include "integrity.hpp"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <optional>

namespace modelc::detail {

Library::~Library() {
  if (handle)
    ::dlclose(handle);
}

std::string modelName(const std::string &path) { return "'" + path + "'"; }

namespace {

/// Checks that `path` is a complete 64-bit ELF shared object before dlopen
/// maps it: a truncated file would otherwise fault (SIGBUS) when touched.
void checkElfFile(const std::string &path) {
  std::string where = "model " + modelName(path);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file)
    throw Error("cannot open " + where + ": " + std::strerror(errno));
  uint64_t size = static_cast<uint64_t>(file.tellg());
  file.seekg(0);
  Elf64_Ehdr header{};
  file.read(reinterpret_cast<char *>(&header), sizeof(header));
  if (static_cast<uint64_t>(file.gcount()) < 4 ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    throw Error(where + " is not a compiled model: not a shared library");
  if (static_cast<uint64_t>(file.gcount()) < sizeof(header) ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_type != ET_DYN)
    throw Error(where + " is not a compiled model: not a 64-bit shared "
                        "library");
  auto truncated = [&] {
    return Error(where +
                 " is truncated or corrupt: its ELF headers "
                 "describe more than its " +
                 std::to_string(size) + " bytes");
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phoff + uint64_t(header.e_phnum) * sizeof(Elf64_Phdr) > size ||
      header.e_shoff + uint64_t(header.e_shnum) * header.e_shentsize > size)
    throw truncated();
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    file.seekg(
        static_cast<std::streamoff>(header.e_phoff + i * sizeof(segment)));
    file.read(reinterpret_cast<char *>(&segment), sizeof(segment));
    if (segment.p_offset + segment.p_filesz > size)
      throw truncated();
  }
}

bool validDType(uint32_t code) { return dtypeFromCode(code).has_value(); }

/// The bytes a tensor of valid dtype `code` and shape [shape, shape + rank)
/// takes; nullopt when a dimension is negative or the size overflows.
std::optional<uint64_t> tensorBytes(uint32_t code, const int64_t *shape,
                                    uint32_t rank) {
  uint64_t bytes = dtypeSize(*dtypeFromCode(code));
  for (uint32_t d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      return std::nullopt;
    uint64_t dim = static_cast<uint64_t>(shape[d]);
    if (dim && bytes > UINT64_MAX / dim)
      return std::nullopt;
    bytes *= dim;
  }
  return bytes;
}

TensorInfo tensorInfo(const modelc_tensor_desc &d,
                      const std::vector<DimInfo> &dims,
                      const std::string &where) {
  if (!d.name || !validDType(d.dtype) || (d.rank && !d.shape))
    throw Error(where + ": malformed tensor description");
  TensorInfo info{d.name,
                  *dtypeFromCode(d.dtype),
                  std::vector<int64_t>(d.shape, d.shape + d.rank),
                  {}};
  for (int64_t dim : info.shape)
    if (dim < 0)
      throw Error(where + ": tensor '" + info.name +
                  "' has a negative "
                  "dimension");
  if (d.dims) {
    info.dims.assign(d.rank, "");
    for (uint32_t a = 0; a < d.rank; ++a) {
      int32_t index = d.dims[a];
      if (index < -1 || index >= static_cast<int32_t>(dims.size()) ||
          (index >= 0 && dims[index].max != info.shape[a]))
        throw Error(where + ": tensor '" + info.name + "' has axis " +
                    std::to_string(a) +
                    " of an unknown dynamic dimension, or not at its max");
      if (index >= 0)
        info.dims[a] = dims[index].name;
    }
  }
  return info;
}

/// The entry points of `desc`, checked.
std::vector<EntryInfo> checkEntries(const modelc_model_desc &desc,
                                    const std::vector<DimInfo> &dims,
                                    const std::string &where) {
  if (desc.num_entries == 0 || !desc.entries)
    throw Error(where + " has no entry points");
  std::vector<EntryInfo> entries;
  for (uint32_t i = 0; i < desc.num_entries; ++i) {
    const modelc_entry_desc &e = desc.entries[i];
    if (!e.name || (e.num_inputs && !e.inputs) || (e.num_outputs && !e.outputs))
      throw Error(where + ": malformed entry point #" + std::to_string(i));
    EntryInfo info{e.name, {}, {}};
    for (uint32_t j = 0; j < e.num_inputs; ++j) {
      info.inputs.push_back(tensorInfo(e.inputs[j], dims, where));
      const void *value = e.input_defaults ? e.input_defaults[j] : nullptr;
      if (value && !info.inputs.back().dims.empty())
        throw Error(where + ": entry point '" + info.name + "': input '" +
                    info.inputs[j].name +
                    "' has a default and a dynamic dimension");
      if (value) {
        TensorInfo &input = info.inputs.back();
        input.default_value =
            Tensor::from_host(value, input.shape, input.dtype);
      } else if (j > 0 && info.inputs[j - 1].has_default()) {
        throw Error(where + ": entry point '" + info.name + "': input '" +
                    info.inputs[j].name +
                    "' has no default but follows one that has");
      }
    }
    for (uint32_t j = 0; j < e.num_outputs; ++j)
      info.outputs.push_back(tensorInfo(e.outputs[j], dims, where));
    entries.push_back(std::move(info));
  }
  return entries;
}

} // namespace

OpenedModel openModel(const std::string &path) {
  std::string where = "model " + modelName(path);
  checkElfFile(path);
  OpenedModel opened;
  std::string error;
  if (!integrity::checkModel(path, opened.seal, error))
    throw Error(error);

  // dlopen of a file path needs a slash, or it searches the library path.
  std::string dlPath = path.find('/') == std::string::npos ? "./" + path : path;
  opened.library = std::make_shared<Library>();
  opened.library->handle = ::dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!opened.library->handle)
    throw Error("cannot load " + where + ": " + ::dlerror());
  auto fn = reinterpret_cast<modelc_model_fn>(
      ::dlsym(opened.library->handle, MODELC_MODEL_SYMBOL));
  if (!fn)
    throw Error(where + " is not a modelc model: it does not export " +
                MODELC_MODEL_SYMBOL);
  opened.desc = fn();
  if (!opened.desc)
    throw Error(where + " returned no descriptor");
  if (opened.desc->abi_version != MODELC_ABI_VERSION)
    throw Error(where + " was built for modelc ABI version " +
                std::to_string(opened.desc->abi_version) +
                "; this runtime supports version " +
                std::to_string(MODELC_ABI_VERSION) +
                " (rebuild the model with a matching modelc)");
  return opened;
}

/// Size regimes (ABI 12): the consecutive plans of one name, each for a
/// range of one dynamic dimension, together covering its range in order,
/// with one device list.
static void checkRegimes(const modelc_model_desc &desc,
                         const std::string &where) {
  for (uint32_t i = 0; i < desc.num_plans;) {
    const modelc_plan_desc &first = desc.plans[i];
    uint32_t end = i + 1;
    while (end < desc.num_plans &&
           std::string(desc.plans[end].name) == first.name)
      ++end;
    bool regimes = first.regime_max > 0;
    std::string plan = where + ": plan '" + first.name + "'";
    if (!regimes && end - i > 1)
      throw Error(plan + " appears " + std::to_string(end - i) +
                  " times without size regimes");
    if (regimes) {
      if (first.regime_dim < 0 ||
          static_cast<uint32_t>(first.regime_dim) >= desc.num_dims)
        throw Error(plan + ": size regimes of an unknown dimension #" +
                    std::to_string(first.regime_dim));
      const modelc_dim_desc &dim = desc.dims[first.regime_dim];
      // `next` is the first size the following regime must start at; `done`
      // once a regime reached the dimension's maximum (no `max + 1`, which
      // overflows for a maximum of INT64_MAX).
      int64_t next = dim.min;
      bool done = false;
      for (uint32_t k = i; k < end; ++k) {
        const modelc_plan_desc &r = desc.plans[k];
        bool sameDevices = r.num_devices == first.num_devices;
        for (uint32_t d = 0; sameDevices && d < r.num_devices; ++d)
          sameDevices = r.devices[d] && first.devices[d] &&
                        std::string(r.devices[d]) == first.devices[d];
        if (done || r.regime_dim != first.regime_dim || r.regime_min != next ||
            r.regime_max < r.regime_min || r.regime_max > dim.max ||
            !sameDevices)
          throw Error(plan + ": malformed size regime #" +
                      std::to_string(k - i) + " (" +
                      std::to_string(r.regime_min) + ".." +
                      std::to_string(r.regime_max) + " of dimension '" +
                      dim.name + "', " + std::to_string(dim.min) + ".." +
                      std::to_string(dim.max) + ")");
        done = r.regime_max == dim.max;
        if (!done)
          next = r.regime_max + 1;
      }
      if (!done)
        throw Error(plan + ": its size regimes end at " +
                    std::to_string(next - 1) +
                    ", before the end of "
                    "dimension '" +
                    dim.name + "' (" + std::to_string(dim.max) + ")");
    }
    i = end;
  }
}

DescriptorInfo checkDescriptor(const modelc_model_desc &desc,
                               const std::string &path) {
  std::string where = "model " + modelName(path);
  if (desc.struct_size < sizeof(modelc_model_desc))
    throw Error(where + " has a truncated descriptor (" +
                std::to_string(desc.struct_size) + " bytes, expected " +
                std::to_string(sizeof(modelc_model_desc)) + ")");
  DescriptorInfo info;
  info.compilerVersion = desc.compiler_version ? desc.compiler_version : "";
  info.compilerFlags = desc.compiler_flags ? desc.compiler_flags : "";
  if (desc.num_dims && !desc.dims)
    throw Error(where + ": malformed table of dynamic dimensions");
  for (uint32_t i = 0; i < desc.num_dims; ++i) {
    const modelc_dim_desc &d = desc.dims[i];
    if (!d.name || d.min < 1 || d.min > d.opt || d.opt > d.max)
      throw Error(where + ": malformed dynamic dimension #" +
                  std::to_string(i));
    info.dims.push_back({d.name, d.min, d.max, d.opt});
  }
  info.entries = checkEntries(desc, info.dims, where);
  if (desc.num_weights && !desc.weights)
    throw Error(where + ": malformed weight table");
  for (uint32_t i = 0; i < desc.num_weights; ++i) {
    const modelc_weight_desc &w = desc.weights[i];
    if (!w.name || !validDType(w.dtype) || (w.rank && !w.shape))
      throw Error(where + ": malformed weight #" + std::to_string(i));
    // Kernels read a weight whole, by its shape: its bytes must be those.
    std::optional<uint64_t> bytes = tensorBytes(w.dtype, w.shape, w.rank);
    if (!bytes || *bytes != w.nbytes)
      throw Error(where + ": weight '" + w.name + "' has " +
                  std::to_string(w.nbytes) + " bytes, " +
                  (bytes ? "its shape takes " + std::to_string(*bytes)
                         : std::string("its shape has a negative or "
                                       "overflowing size")));
  }
  // Sharded optimizer state: writable weights that start as zeros (the
  // ranks that do not own them never hold them), on a plan of one device.
  bool sharded = false;
  for (uint32_t i = 0; desc.weight_shards && i < desc.num_weights; ++i) {
    if (desc.weight_shards[i] < -1)
      throw Error(where + ": weight '" + desc.weights[i].name +
                  "' has a malformed shard (" +
                  std::to_string(desc.weight_shards[i]) + ")");
    if (desc.weight_shards[i] >= 0) {
      sharded = true;
      if (!desc.weight_flags ||
          (desc.weight_flags[i] &
           (MODELC_WEIGHT_WRITABLE | MODELC_WEIGHT_ZEROS)) !=
              (MODELC_WEIGHT_WRITABLE | MODELC_WEIGHT_ZEROS))
        throw Error(where + ": weight '" + desc.weights[i].name +
                    "' is sharded over the ranks but is not optimizer state "
                    "(writable, starting as zeros)");
    }
  }
  if ((desc.gpu_image && !desc.gpu_image_size) ||
      (desc.num_kernels && (!desc.kernel_names || !desc.gpu_image)))
    throw Error(where + ": malformed GPU code table");
  for (uint32_t k = 0; k < desc.num_kernels; ++k)
    if (!desc.kernel_names[k])
      throw Error(where + ": malformed GPU kernel #" + std::to_string(k));
  if (desc.num_plans == 0 || !desc.plans)
    throw Error(where + " has no plans");
  for (uint32_t i = 0; i < desc.num_plans; ++i) {
    const modelc_plan_desc &p = desc.plans[i];
    if (!p.name || !p.num_devices || !p.devices || !p.arena_bytes || !p.run)
      throw Error(where + ": malformed plan #" + std::to_string(i));
    for (uint32_t e = 0; e < desc.num_entries; ++e)
      if (!p.run[e])
        throw Error(where + ": plan '" + p.name + "' lacks entry point '" +
                    info.entries[e].name + "'");
    if (sharded && (p.num_devices != 1 || !p.devices[0] ||
                    std::string(p.devices[0]) != "cpu"))
      throw Error(where + ": plan '" + std::string(p.name) +
                  "' is not the CPU alone and the model shards optimizer "
                  "state over the ranks (the CPU plan only)");
    if ((p.plan_flags & MODELC_PLAN_RANK_SUMS) &&
        (p.rank_sums_device >= p.num_devices ||
         !p.devices[p.rank_sums_device] ||
         std::string(p.devices[p.rank_sums_device]).rfind("cuda:", 0) != 0))
      throw Error(where + ": plan '" + std::string(p.name) +
                  "' sums over the ranks on device #" +
                  std::to_string(p.rank_sums_device) +
                  ", which is not one of its GPUs");
    if (p.num_trace_points && !p.trace_points)
      throw Error(where + ": plan '" + std::string(p.name) +
                  "' has trace points but no table of them");
    for (uint32_t t = 0; t < p.num_trace_points; ++t)
      if (!p.trace_points[t].what || p.trace_points[t].device >= p.num_devices)
        throw Error(where + ": plan '" + std::string(p.name) +
                    "' has a malformed trace point #" + std::to_string(t));
  }
  checkRegimes(desc, where);
  return info;
}

} // namespace modelc::detail
