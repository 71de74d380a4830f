// dnnl_conv.cpp - CPU convolutions of changing weights through oneDNN
// (dnnl_conv.hpp).
#include "dnnl_conv.hpp"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <new>
#include <optional>
#include <vector>

namespace modelc::detail {

using namespace ::dnnl;
using tag = memory::format_tag;

struct DnnlConvs::Engine {
  engine cpu{engine::kind::cpu, 0};
};

/// Buffers for the blocked layouts of one call's operands, per thread and
/// reused by every site: they live only during a call (reorder in, run,
/// reorder out), so a thread needs those of its largest call, not one set
/// per site (ResNet-18's step: 60 sites, 500 MB of them).
struct CallBuffers {
  struct Buffer {
    void *data = nullptr;
    std::size_t bytes = 0;
    ~Buffer() { std::free(data); }
    void *get(std::size_t need) {
      if (need > bytes) {
        std::free(data);
        data = std::aligned_alloc(64, (need + 63) / 64 * 64);
        bytes = data ? need : 0;
        if (!data)
          throw std::bad_alloc();
      }
      return data;
    }
  };
  Buffer slot[4]; // a, b, out, and the primitive's scratchpad
};

CallBuffers &callBuffers() {
  thread_local CallBuffers buffers;
  return buffers;
}

/// One operand of a site: the model's plain buffer, and where the
/// primitive wants another layout, the reorder between them (through the
/// calling thread's buffer `slot`).
struct Operand {
  memory::desc plain, wanted;
  reorder move; // plain -> wanted (an input) or wanted -> plain (the output)
  bool reordered = false;
  int slot = 0;

  void make(const engine &cpu, const memory::desc &plainDesc,
            const memory::desc &wantedDesc, bool input, int which) {
    plain = plainDesc;
    wanted = wantedDesc;
    slot = which;
    reordered = plain != wanted;
    if (!reordered)
      return;
    memory plainMemory(plain, cpu, DNNL_MEMORY_NONE),
        wantedMemory(wanted, cpu, DNNL_MEMORY_NONE);
    move = input ? reorder(plainMemory, wantedMemory)
                 : reorder(wantedMemory, plainMemory);
  }

  /// The memory the primitive reads or writes for the model's buffer
  /// `data`; an input is reordered into the thread's buffer first.
  memory bind(const engine &cpu, stream &queue, const void *data, bool input) {
    memory user(plain, cpu, const_cast<void *>(data));
    if (!reordered)
      return user;
    memory own(wanted, cpu, callBuffers().slot[slot].get(wanted.get_size()));
    if (input)
      move.execute(queue, user, own);
    return own;
  }

  void finish(const engine &cpu, stream &queue, const memory &own, void *data) {
    if (reordered) {
      memory user(plain, cpu, data);
      move.execute(queue, const_cast<memory &>(own), user);
    }
  }
};

struct DnnlConvs::Site {
  std::mutex mutex;
  primitive op;
  Operand a, b, out;
  memory::desc bias;
  bool hasBias = false;
  memory::desc scratchpad;
  std::string implementation;
  /// What the primitive was made for: a site's struct is static in
  /// generated code, but a caller that reuses an address for another
  /// convolution gets a new primitive rather than a wrong one.
  uint32_t kind = 0, flags = 0;
  int64_t shape[18] = {};

  bool madeFor(const modelc_conv &c, bool withBias) const {
    return op && kind == c.kind && flags == c.flags && hasBias == withBias &&
           std::equal(shape, shape + 18, c.shape);
  }
};

namespace {

struct Geometry {
  memory::dims src, weights, dst, bias, strides, dilation, padL, padR;
  bool grouped = false;
};

Geometry geometryOf(const modelc_conv &c) {
  const int64_t *s = c.shape;
  int64_t n = s[0], ch = s[1], h = s[2], w = s[3], o = s[4], kh = s[5],
          kw = s[6], oh = s[7], ow = s[8], groups = s[17] > 0 ? s[17] : 1;
  Geometry g;
  g.src = {n, ch, h, w};
  g.dst = {n, o, oh, ow};
  g.grouped = groups > 1;
  g.weights = g.grouped ? memory::dims{groups, o / groups, ch / groups, kh, kw}
                        : memory::dims{o, ch, kh, kw};
  g.bias = {o};
  g.strides = {s[9], s[10]};
  g.padL = {s[11], s[12]};
  g.padR = {s[13], s[14]};
  g.dilation = {s[15] - 1, s[16] - 1};
  return g;
}

} // namespace

DnnlConvs::DnnlConvs() : engine_(std::make_unique<Engine>()) {}
DnnlConvs::~DnnlConvs() = default;

bool DnnlConvs::run(const modelc_conv &c, const float *a, const float *b,
                    const float *bias, float *out, int threads,
                    std::string &error) {
  const char *what = c.what ? c.what : "convolution";
  if (c.kind > MODELC_CONV_BACKWARD_WEIGHTS ||
      (c.flags & ~MODELC_CONV_WINOGRAD) ||
      (bias && c.kind != MODELC_CONV_FORWARD)) {
    error = std::string(what) + ": unknown convolution kind " +
            std::to_string(c.kind) + " or flags " + std::to_string(c.flags) +
            " (a model.so from a newer modelc?)";
    return false;
  }
  Site *site;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Site> &slot = sites_[&c];
    if (!slot)
      slot = std::make_unique<Site>();
    site = slot.get();
  } catch (const std::bad_alloc &) {
    error = std::string(what) + ": out of memory";
    return false;
  }
  std::lock_guard<std::mutex> lock(site->mutex);
  omp_set_num_threads(threads);
  const engine &cpu = engine_->cpu;
  // A stream of the calling thread's (oneDNN's streams are not for
  // several threads at once: sim devices run sites from their workers).
  std::optional<stream> own;
  try {
    if (!site->madeFor(c, bias != nullptr)) {
      site->op = primitive();
      site->kind = c.kind;
      site->flags = c.flags;
      std::copy(c.shape, c.shape + 18, site->shape);
      Geometry g = geometryOf(c);
      auto f32 = memory::data_type::f32;
      memory::desc src(g.src, f32, tag::nchw), dst(g.dst, f32, tag::nchw),
          weights(g.weights, f32, g.grouped ? tag::goihw : tag::oihw),
          anySrc(g.src, f32, tag::any), anyDst(g.dst, f32, tag::any),
          anyWeights(g.weights, f32, tag::any), biasDesc(g.bias, f32, tag::x);
      site->hasBias = bias != nullptr;
      // The scratchpad is the calling thread's buffer: oneDNN's own would
      // be a cache of its own kept to the end of the process.
      primitive_attr attr;
      attr.set_scratchpad_mode(scratchpad_mode::user);
      // Winograd where asked and oneDNN has it here, else direct.
      auto forwardPd = [&](algorithm alg) {
        auto d = site->hasBias
                     ? convolution_forward::desc(prop_kind::forward_training,
                                                 alg, anySrc, anyWeights,
                                                 biasDesc, anyDst, g.strides,
                                                 g.dilation, g.padL, g.padR)
                     : convolution_forward::desc(
                           prop_kind::forward_training, alg, anySrc, anyWeights,
                           anyDst, g.strides, g.dilation, g.padL, g.padR);
        return convolution_forward::primitive_desc(d, attr, cpu);
      };
      algorithm alg = algorithm::convolution_direct;
      convolution_forward::primitive_desc hint;
      if (c.flags & MODELC_CONV_WINOGRAD) {
        try {
          hint = forwardPd(algorithm::convolution_winograd);
          alg = algorithm::convolution_winograd;
        } catch (const ::dnnl::error &) {
        }
      }
      if (alg == algorithm::convolution_direct)
        hint = forwardPd(alg);
      auto tryBackward = [&](auto make) {
        // A backward primitive may lack Winograd where the forward has it.
        try {
          return make(alg);
        } catch (const ::dnnl::error &) {
          if (alg == algorithm::convolution_direct)
            throw;
          alg = algorithm::convolution_direct;
          hint = forwardPd(alg);
          return make(alg);
        }
      };
      if (c.kind == MODELC_CONV_FORWARD) {
        site->a.make(cpu, src, hint.src_desc(), true, 0);
        site->b.make(cpu, weights, hint.weights_desc(), true, 1);
        site->out.make(cpu, dst, hint.dst_desc(), false, 2);
        site->bias = biasDesc;
        site->implementation = hint.impl_info_str();
        site->scratchpad = hint.scratchpad_desc();
        site->op = convolution_forward(hint);
      } else if (c.kind == MODELC_CONV_BACKWARD_DATA) {
        auto pd = tryBackward([&](algorithm al) {
          return convolution_backward_data::primitive_desc(
              convolution_backward_data::desc(al, anySrc, anyWeights, anyDst,
                                              g.strides, g.dilation, g.padL,
                                              g.padR),
              attr, cpu, hint);
        });
        site->a.make(cpu, dst, pd.diff_dst_desc(), true, 0);
        site->b.make(cpu, weights, pd.weights_desc(), true, 1);
        site->out.make(cpu, src, pd.diff_src_desc(), false, 2);
        site->implementation = pd.impl_info_str();
        site->scratchpad = pd.scratchpad_desc();
        site->op = convolution_backward_data(pd);
      } else {
        auto pd = tryBackward([&](algorithm al) {
          return convolution_backward_weights::primitive_desc(
              convolution_backward_weights::desc(al, anySrc, anyWeights, anyDst,
                                                 g.strides, g.dilation, g.padL,
                                                 g.padR),
              attr, cpu, hint);
        });
        site->a.make(cpu, src, pd.src_desc(), true, 0);
        site->b.make(cpu, dst, pd.diff_dst_desc(), true, 1);
        site->out.make(cpu, weights, pd.diff_weights_desc(), false, 2);
        site->implementation = pd.impl_info_str();
        site->scratchpad = pd.scratchpad_desc();
        site->op = convolution_backward_weights(pd);
      }
    }
    own.emplace(cpu);
    stream &queue = *own;
    memory ma = site->a.bind(cpu, queue, a, true);
    memory mb = site->b.bind(cpu, queue, b, true);
    memory mo = site->out.bind(cpu, queue, out, false);
    std::unordered_map<int, memory> args;
    if (c.kind == MODELC_CONV_FORWARD) {
      args = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mo}};
      if (site->hasBias)
        args[DNNL_ARG_BIAS] =
            memory(site->bias, cpu, const_cast<float *>(bias));
    } else if (c.kind == MODELC_CONV_BACKWARD_DATA) {
      args = {{DNNL_ARG_DIFF_DST, ma},
              {DNNL_ARG_WEIGHTS, mb},
              {DNNL_ARG_DIFF_SRC, mo}};
    } else {
      args = {{DNNL_ARG_SRC, ma},
              {DNNL_ARG_DIFF_DST, mb},
              {DNNL_ARG_DIFF_WEIGHTS, mo}};
    }
    if (std::size_t bytes = site->scratchpad.get_size())
      args[DNNL_ARG_SCRATCHPAD] =
          memory(site->scratchpad, cpu, callBuffers().slot[3].get(bytes));
    site->op.execute(queue, args);
    site->out.finish(cpu, queue, mo, out);
    queue.wait();
    return true;
  } catch (const std::bad_alloc &) {
    error = std::string(what) + ": out of memory for oneDNN's layouts";
  } catch (const ::dnnl::error &e) {
    error = std::string(what) + ": oneDNN: " + e.what() + " (status " +
            std::to_string(static_cast<int>(e.status)) + ")";
  } catch (const std::exception &e) {
    error = std::string(what) + ": " + e.what();
  }
  // Made again on the next call: a primitive made but not run may lack
  // what its run needs.
  site->op = primitive();
  return false;
}

std::string DnnlConvs::implementation(const modelc_conv &c) {
  Site *site;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sites_.find(&c);
    if (it == sites_.end())
      return std::string();
    site = it->second.get();
  }
  std::lock_guard<std::mutex> lock(site->mutex);
  return site->implementation;
}

} // namespace modelc::detail
