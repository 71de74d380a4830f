// pick_implementation.cpp - which of oneDNN's implementations computes a
// packed convolution (pick_implementation.hpp).
#include "pick_implementation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace modelc {

namespace {

/// At most this many implementations are measured per site (oneDNN 2.6
/// lists up to 8 for one convolution, the reference one last).
constexpr size_t kMaxCandidates = 8;
/// Rounds of one run each, after one warm-up run.
constexpr int kRounds = 3;
/// Another implementation is taken only when it is this much faster than
/// the first: closer is within the noise of a few runs.
constexpr double kBetter = 0.9;
/// An implementation whose warm-up run takes this many times the first's
/// is not run again.
constexpr double kHopeless = 3.0;
/// A site whose first warm-up run takes longer than this (seconds) is not
/// measured: the measurement would cost more than it can save in a while.
constexpr double kTooLong = 0.05;

/// Owns a oneDNN handle.
template <typename T, dnnl_status_t (*Destroy)(T)> struct Owned {
  T handle = nullptr;
  Owned() = default;
  explicit Owned(T t) : handle(t) {}
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  Owned(Owned &&other) noexcept : handle(other.release()) {}
  Owned &operator=(Owned &&other) = delete;
  ~Owned() {
    if (handle)
      Destroy(handle);
  }
  T release() {
    T t = handle;
    handle = nullptr;
    return t;
  }
};
using Pd = Owned<dnnl_primitive_desc_t, dnnl_primitive_desc_destroy>;
using Primitive = Owned<dnnl_primitive_t, dnnl_primitive_destroy>;
using Memory = Owned<dnnl_memory_t, dnnl_memory_destroy>;
using Stream = Owned<dnnl_stream_t, dnnl_stream_destroy>;

/// New memory of `desc`, zeroed (no denormals or NaNs to slow a run).
bool zeros(Memory &m, const dnnl_memory_desc_t *desc, dnnl_engine_t engine) {
  if (dnnl_memory_create(&m.handle, desc, engine, DNNL_MEMORY_ALLOCATE) !=
      dnnl_success)
    return false;
  void *data = nullptr;
  if (dnnl_memory_get_data_handle(m.handle, &data) != dnnl_success)
    return false;
  if (size_t bytes = dnnl_memory_desc_get_size(desc))
    std::memset(data, 0, bytes);
  return true;
}

/// One implementation being measured: its primitive, weight and
/// scratchpad, and its times.
struct Candidate {
  Pd pd;
  Primitive primitive;
  Memory weight, scratch;
  double warmUp = 0, best = std::numeric_limits<double>::infinity();
  bool hopeless = false;
};

} // namespace

ImplementationChoice implementationChoice(std::string &error) {
  const char *value = std::getenv("MODELC_CONV_IMPLEMENTATION");
  if (!value || !*value || std::strcmp(value, "tuned") == 0)
    return ImplementationChoice::Tuned;
  if (std::strcmp(value, "first") == 0)
    return ImplementationChoice::First;
  if (std::strcmp(value, "fastest") == 0)
    return ImplementationChoice::Fastest;
  if (std::strcmp(value, "last") == 0)
    return ImplementationChoice::Last;
  error = std::string("MODELC_CONV_IMPLEMENTATION=") + value +
          " is not tuned, first, fastest or last";
  return ImplementationChoice::Tuned;
}

CpuIdentity hostCpu() {
  // cpuid once: in a virtual machine each one exits to the hypervisor.
  static const CpuIdentity host = [] {
    CpuIdentity cpu;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d))
      return cpu;
    char vendor[13] = {};
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    cpu.amd = std::strcmp(vendor, "AuthenticAMD") == 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
      return cpu;
    int base = (a >> 8) & 0xf, extended = (a >> 20) & 0xff;
    cpu.family = base == 0xf ? base + extended : base;
#endif
    return cpu;
  }();
  return host;
}

bool isDepthwise(const dnnl_convolution_desc_t &op) {
  // goihw's weight dimensions: one input and one output channel per group,
  // as many groups as input channels.
  const dnnl_memory_desc_t &w = op.weights_desc;
  return w.ndims == 5 && w.dims[1] == 1 && w.dims[2] == 1 &&
         w.dims[0] == op.src_desc.dims[1];
}

std::string preferredImplementation(const std::string &firstName,
                                    dnnl_data_type_t type, bool depthwise,
                                    const CpuIdentity &cpu) {
  // The table: one measured exception (pick_implementation.hpp).
  if (cpu.amd && cpu.family == 25 && type == dnnl_f32 && depthwise &&
      firstName == "brdgmm_dw:avx512_core")
    return "jit_dw:avx512_core";
  return std::string();
}

std::string implementationName(const_dnnl_primitive_desc_t pd) {
  const char *name = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) !=
          dnnl_success ||
      !name)
    return std::string();
  return name;
}

dnnl_primitive_desc_t
pickConvolution(dnnl_primitive_desc_t first, const dnnl_convolution_desc_t &op,
                const_dnnl_primitive_attr_t attr, bool bias,
                const std::vector<dnnl_memory_desc_t> &operands,
                dnnl_engine_t engine, ImplementationChoice choice,
                const CpuIdentity &cpu) {
  if (choice == ImplementationChoice::First)
    return first;
  std::string firstName = implementationName(first);
  std::string preferred;
  if (choice == ImplementationChoice::Tuned) {
    preferred = preferredImplementation(firstName, op.src_desc.data_type,
                                        isDepthwise(op), cpu);
    if (preferred.empty())
      return first;
  }
  // The same convolution with the layouts the first choice decided: the
  // implementations that read and write them, in oneDNN's order.
  dnnl_convolution_desc_t fixed = op;
  fixed.src_desc = *dnnl_primitive_desc_query_md(first, dnnl_query_src_md, 0);
  fixed.dst_desc = *dnnl_primitive_desc_query_md(first, dnnl_query_dst_md, 0);
  std::vector<Candidate> others;
  dnnl_primitive_desc_iterator_t iterator = nullptr;
  if (dnnl_primitive_desc_iterator_create(&iterator, &fixed, attr, engine,
                                          nullptr) != dnnl_success)
    return first;
  // The iterator starts at oneDNN's first choice for these layouts.
  bool more = true;
  while (more && others.size() < kMaxCandidates) {
    Pd pd(dnnl_primitive_desc_iterator_fetch(iterator));
    more = dnnl_primitive_desc_iterator_next(iterator) == dnnl_success;
    if (!pd.handle)
      continue;
    std::string name = implementationName(pd.handle);
    if (!preferred.empty()) {
      // Tuned: the table's implementation where oneDNN has it for these
      // layouts, else the first.
      if (name != preferred)
        continue;
      dnnl_primitive_desc_iterator_destroy(iterator);
      dnnl_primitive_desc_destroy(first);
      return pd.release();
    }
    // Not measured: the reference implementations, the GEMM-based ones
    // (im2col and a matrix product: one run of MobileNetV2's first blocks
    // takes 15-55 ms, against 0.1-0.3 ms), the SSE4.1 ones (a quarter of
    // AVX-512's width, never the fastest where oneDNN offers wider), and
    // the first choice itself (measured as `first`).
    auto has = [&](const char *part) {
      return name.find(part) != std::string::npos;
    };
    bool wider =
        !has(":sse41") || firstName.find(":sse41") != std::string::npos;
    if (name.empty() || name.rfind("ref", 0) == 0 || has("gemm") || !wider ||
        name == firstName)
      continue;
    others.emplace_back();
    others.back().pd.handle = pd.release();
  }
  dnnl_primitive_desc_iterator_destroy(iterator);
  if (others.empty())
    return first;
  if (choice == ImplementationChoice::Last) {
    dnnl_primitive_desc_destroy(first);
    return others.back().pd.release();
  }

  // Zeros in, the first's layouts; each candidate's own weight layout and
  // scratchpad.
  Memory src, dst, biasMemory;
  std::vector<Memory> operandMemory(operands.size());
  bool good = zeros(src, &fixed.src_desc, engine) &&
              zeros(dst, &fixed.dst_desc, engine) &&
              (!bias || zeros(biasMemory, &op.bias_desc, engine));
  for (size_t i = 0; good && i < operands.size(); ++i)
    if (operands[i].ndims > 0)
      good = zeros(operandMemory[i], &operands[i], engine);
  Stream stream;
  good = good && dnnl_stream_create(&stream.handle, engine,
                                    dnnl_stream_default_flags) == dnnl_success;
  Candidate own;
  own.pd.handle = first;
  std::vector<Candidate *> all = {&own};
  for (Candidate &c : others)
    all.push_back(&c);
  for (Candidate *c : all) {
    if (!good)
      break;
    good = dnnl_primitive_create(&c->primitive.handle, c->pd.handle) ==
               dnnl_success &&
           zeros(c->weight,
                 dnnl_primitive_desc_query_md(c->pd.handle,
                                              dnnl_query_weights_md, 0),
                 engine) &&
           zeros(c->scratch,
                 dnnl_primitive_desc_query_md(c->pd.handle,
                                              dnnl_query_scratchpad_md, 0),
                 engine);
  }
  auto run = [&](Candidate &c) {
    std::vector<dnnl_exec_arg_t> args = {
        {DNNL_ARG_SRC, src.handle},
        {DNNL_ARG_WEIGHTS, c.weight.handle},
        {DNNL_ARG_DST, dst.handle},
        {DNNL_ARG_SCRATCHPAD, c.scratch.handle}};
    if (bias)
      args.push_back({DNNL_ARG_BIAS, biasMemory.handle});
    for (size_t i = 0; i < operandMemory.size(); ++i)
      if (operandMemory[i].handle)
        args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) |
                            DNNL_ARG_SRC_1,
                        operandMemory[i].handle});
    auto start = std::chrono::steady_clock::now();
    if (dnnl_primitive_execute(c.primitive.handle, stream.handle,
                               static_cast<int>(args.size()),
                               args.data()) != dnnl_success ||
        dnnl_stream_wait(stream.handle) != dnnl_success)
      return -1.0;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  // A warm-up run each (the hopeless ones end there), then rounds of one
  // run each, interleaved so that a slow moment of the machine falls on
  // all of them.
  for (Candidate *c : all) {
    if (!good)
      break;
    c->warmUp = run(*c);
    good = c->warmUp >= 0 && own.warmUp <= kTooLong;
    c->hopeless = c->warmUp > kHopeless * own.warmUp;
  }
  for (int round = 0; good && round < kRounds; ++round)
    for (Candidate *c : all) {
      if (c->hopeless)
        continue;
      double t = run(*c);
      if (t < 0) {
        good = false;
        break;
      }
      c->best = std::min(c->best, t);
    }
  Candidate *fastest = &own;
  for (Candidate &c : others)
    if (good && !c.hopeless && c.best < kBetter * own.best &&
        c.best < fastest->best)
      fastest = &c;
  // `first` itself, or another (then `own` destroys `first`).
  return fastest->pd.release();
}

} // namespace modelc
