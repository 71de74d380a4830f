// descriptor_fuzzer.cpp - libFuzzer target: the runtime's checks of a
// model.so's descriptor (detail::checkDescriptor), plan choice and the
// binding of embedded weights, on descriptors built from arbitrary bytes.
//
// A descriptor is C structs with pointers, so the bytes describe one rather
// than being one: counts, dtype codes, ranks, dimensions, offsets and sizes
// take any value (negative dimensions, unknown dtypes, offsets beyond the
// data, sizes that overflow), names and tables may be null, device names
// are arbitrary strings, but every array is as long as its count says (a
// count that lies about its array cannot be checked by anyone; the seal
// catches a descriptor corrupted after modelc wrote it, though not one
// forged on purpose). A modelc::Error is the
// expected answer; anything else, a crash or a sanitizer report is a bug.
// Every bound weight is read whole, as kernels read it.
#include "loader.hpp"
#include "plan_choice.hpp"
#include "weights.hpp"

#include "modelc/runtime.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace {

int dummyEntry(modelc_run_ctx *) { return 0; }

/// Storage that outlives the descriptor built from it.
struct Arena {
  std::deque<std::string> strings;
  std::deque<std::vector<int64_t>> shapes;
  std::deque<std::vector<int32_t>> axisDims;
  std::vector<modelc_dim_desc> dims;
  std::deque<std::vector<const char *>> names;
  std::deque<std::vector<modelc_tensor_desc>> tensorLists;
  std::vector<modelc_entry_desc> entries;
  std::vector<modelc_weight_desc> weights;
  std::vector<uint8_t> weightFlags;
  std::vector<int32_t> weightShards;
  std::vector<unsigned char> weightData;
  std::vector<modelc_plan_desc> plans;
  std::deque<std::vector<uint64_t>> arenas;
  std::deque<std::vector<modelc_entry_fn>> runs;
};

const char *maybeString(FuzzedDataProvider &in, Arena &a) {
  if (in.ConsumeIntegralInRange(0, 15) == 0)
    return nullptr;
  a.strings.push_back(in.ConsumeRandomLengthString(24));
  return a.strings.back().c_str();
}

const int64_t *shape(FuzzedDataProvider &in, Arena &a, uint32_t &rank) {
  rank = in.ConsumeIntegralInRange<uint32_t>(0, 5);
  if (rank && in.ConsumeIntegralInRange(0, 15) == 0)
    return nullptr;
  a.shapes.emplace_back();
  for (uint32_t d = 0; d < rank; ++d)
    a.shapes.back().push_back(in.ConsumeBool()
                                  ? in.ConsumeIntegralInRange<int64_t>(0, 8)
                                  : in.ConsumeIntegral<int64_t>());
  return a.shapes.back().data();
}

const modelc_tensor_desc *tensorList(FuzzedDataProvider &in, Arena &a,
                                     uint32_t &count) {
  count = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  if (count && in.ConsumeIntegralInRange(0, 15) == 0)
    return nullptr;
  a.tensorLists.emplace_back();
  for (uint32_t i = 0; i < count; ++i) {
    modelc_tensor_desc t{};
    t.name = maybeString(in, a);
    t.dtype = in.ConsumeIntegralInRange<uint32_t>(0, 7);
    t.shape = shape(in, a, t.rank);
    // ABI 11: per axis -1 or an index into the dimension table (any
    // value, in range or not).
    if (in.ConsumeIntegralInRange(0, 3) == 0) {
      a.axisDims.emplace_back();
      for (uint32_t d = 0; d < t.rank; ++d)
        a.axisDims.back().push_back(in.ConsumeIntegralInRange<int32_t>(-2, 3));
      t.dims = a.axisDims.back().data();
    }
    a.tensorLists.back().push_back(t);
  }
  return a.tensorLists.back().data();
}

modelc_model_desc build(FuzzedDataProvider &in, Arena &a) {
  modelc_model_desc desc{};
  desc.abi_version = MODELC_ABI_VERSION;
  desc.struct_size = in.ConsumeIntegralInRange(0, 31) == 0
                         ? in.ConsumeIntegral<uint32_t>()
                         : sizeof(modelc_model_desc);
  desc.compiler_version = maybeString(in, a);
  desc.compiler_flags = maybeString(in, a);

  // ABI 11: the dynamic dimensions, with any range.
  desc.num_dims = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  for (uint32_t i = 0; i < desc.num_dims; ++i) {
    modelc_dim_desc d{};
    d.name = maybeString(in, a);
    for (int64_t *bound : {&d.min, &d.max, &d.opt})
      *bound = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 8)
                                : in.ConsumeIntegral<int64_t>();
    a.dims.push_back(d);
  }
  desc.dims = desc.num_dims && in.ConsumeIntegralInRange(0, 15) ? a.dims.data()
                                                                : nullptr;

  desc.num_entries = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  for (uint32_t e = 0; e < desc.num_entries; ++e) {
    modelc_entry_desc entry{};
    entry.name = maybeString(in, a);
    entry.inputs = tensorList(in, a, entry.num_inputs);
    entry.outputs = tensorList(in, a, entry.num_outputs);
    a.entries.push_back(entry);
  }
  desc.entries = desc.num_entries && in.ConsumeIntegralInRange(0, 15)
                     ? a.entries.data()
                     : nullptr;

  a.weightData.resize(in.ConsumeIntegralInRange<size_t>(0, 256));
  desc.num_weights = in.ConsumeIntegralInRange<uint32_t>(0, 4);
  for (uint32_t i = 0; i < desc.num_weights; ++i) {
    modelc_weight_desc w{};
    w.name = maybeString(in, a);
    w.dtype = in.ConsumeIntegralInRange<uint32_t>(0, 7);
    w.shape = shape(in, a, w.rank);
    w.offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 256)
                                : in.ConsumeIntegral<uint64_t>();
    w.nbytes = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 256)
                                : in.ConsumeIntegral<uint64_t>();
    a.weights.push_back(w);
  }
  desc.weights = desc.num_weights && in.ConsumeIntegralInRange(0, 15)
                     ? a.weights.data()
                     : nullptr;
  // ABI 7 and 13: writable weights, zeros; ABI 16: shards of optimizer
  // state (one array entry per weight, as generated code writes them).
  for (uint32_t i = 0; i < desc.num_weights; ++i) {
    a.weightFlags.push_back(in.ConsumeIntegralInRange<uint8_t>(0, 3));
    a.weightShards.push_back(in.ConsumeBool()
                                 ? in.ConsumeIntegralInRange<int32_t>(-2, 5)
                                 : in.ConsumeIntegral<int32_t>());
  }
  if (desc.num_weights && in.ConsumeBool())
    desc.weight_flags = a.weightFlags.data();
  if (desc.num_weights && in.ConsumeBool())
    desc.weight_shards = a.weightShards.data();
  if (in.ConsumeIntegralInRange(0, 7)) {
    desc.weight_data = a.weightData.data();
    desc.weight_data_size = a.weightData.size();
  }
  // Never a file: the fuzzer must not open what its bytes name.
  desc.external_weights = nullptr;

  if (in.ConsumeIntegralInRange(0, 7) == 0) {
    desc.gpu_image = a.weightData.data();
    desc.gpu_image_size = in.ConsumeIntegralInRange<uint64_t>(0, 1);
    desc.num_kernels = in.ConsumeIntegralInRange<uint32_t>(0, 2);
    a.names.emplace_back();
    for (uint32_t k = 0; k < desc.num_kernels; ++k)
      a.names.back().push_back(maybeString(in, a));
    desc.kernel_names = desc.num_kernels ? a.names.back().data() : nullptr;
  }

  desc.num_plans = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  for (uint32_t i = 0; i < desc.num_plans; ++i) {
    modelc_plan_desc p{};
    p.name = maybeString(in, a);
    p.num_devices = in.ConsumeIntegralInRange<uint32_t>(0, 4);
    a.names.emplace_back();
    for (uint32_t d = 0; d < p.num_devices; ++d) {
      static const char *known[] = {"cpu", "sim:0", "sim:1", "cuda:0"};
      a.names.back().push_back(in.ConsumeBool()
                                   ? known[in.ConsumeIntegralInRange(0, 3)]
                                   : maybeString(in, a));
    }
    p.devices = p.num_devices ? a.names.back().data() : nullptr;
    a.arenas.emplace_back();
    for (uint32_t k = 0; k < desc.num_entries * p.num_devices; ++k)
      a.arenas.back().push_back(in.ConsumeIntegral<uint64_t>());
    p.arena_bytes = in.ConsumeIntegralInRange(0, 15) || a.arenas.back().empty()
                        ? a.arenas.back().data()
                        : nullptr;
    a.runs.emplace_back();
    for (uint32_t e = 0; e < desc.num_entries; ++e)
      a.runs.back().push_back(in.ConsumeIntegralInRange(0, 15) ? dummyEntry
                                                               : nullptr);
    p.run = a.runs.back().data();
    // ABI 12: size regimes, of any dimension and range.
    if (in.ConsumeBool()) {
      p.regime_dim = in.ConsumeIntegralInRange<int32_t>(-1, 2);
      p.regime_min = in.ConsumeIntegralInRange<int64_t>(-1, 9);
      p.regime_max = in.ConsumeIntegralInRange<int64_t>(-1, 9);
    }
    // ABI 10 and 17: the plan's flags; the GPU that sums over the ranks.
    p.plan_flags = in.ConsumeIntegralInRange<uint32_t>(0, 3);
    p.rank_sums_device = in.ConsumeBool()
                             ? in.ConsumeIntegralInRange<uint32_t>(0, 4)
                             : in.ConsumeIntegral<uint32_t>();
    a.plans.push_back(p);
  }
  desc.plans = desc.num_plans ? a.plans.data() : nullptr;
  return desc;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Arena arena;
  modelc_model_desc desc = build(in, arena);
  std::string request = in.ConsumeRandomLengthString(16);
  try {
    modelc::detail::checkDescriptor(desc, "fuzz.so");
    std::vector<modelc::detail::PlanDevices> plans =
        modelc::detail::planDevicesOf(desc);
    modelc::detail::MachineGpus noGpus;
    noGpus.status = "no GPU (fuzzing)";
    modelc::detail::choosePlan(plans, request, noGpus, "model 'fuzz.so'");
    modelc::detail::HostWeights weights;
    modelc_file_seal seal{};
    modelc::detail::bindWeights(weights, desc, seal, "fuzz.so", "");
    // Read every weight whole, as a kernel does; who holds it for a few
    // run sizes (a sharded one: its owner alone).
    unsigned sum = 0;
    for (uint32_t i = 0; i < desc.num_weights; ++i) {
      for (int size : {1, 2, 3, 8})
        for (int rank = 0; rank < size; ++rank)
          sum += modelc::detail::holdsWeight(desc, i, rank, size) ? 1u : 0u;
      modelc::Tensor t =
          modelc::detail::weightTensor(desc.weights[i], weights.pointers[i]);
      const unsigned char *bytes = static_cast<const unsigned char *>(t.data());
      for (size_t b = 0; b < t.nbytes(); ++b)
        sum += bytes[b];
    }
    (void)sum;
  } catch (const modelc::Error &) {
  }
  return 0;
}
