/* modelc/abi.h - the C ABI between a compiled model.so and the runtime.
 *
 * A model.so exports one function, modelc_model_v1(), returning a descriptor
 * (modelc_model_desc). The runtime calls a plan's entry functions with a
 * modelc_run_ctx whose function table (modelc_runtime_api) is the only way
 * generated code reaches the runtime, so model.so has no link-time
 * dependency. The compiler's emitter (compiler/Codegen/HostPrinter.cpp) is
 * the one place that writes these names; keep the two in sync and bump
 * MODELC_ABI_VERSION on any incompatible change.
 */
#ifndef MODELC_ABI_H
#define MODELC_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MODELC_ABI_VERSION 18u
#define MODELC_MODEL_SYMBOL "modelc_model_v1"

/* Element type codes; equal to modelc::DType (modelc/dtype.hpp). */
enum {
  MODELC_DTYPE_F32 = 0,
  MODELC_DTYPE_F16 = 1,
  MODELC_DTYPE_BF16 = 2,
  MODELC_DTYPE_I32 = 3,
  MODELC_DTYPE_I64 = 4,
  MODELC_DTYPE_BOOL = 5,
  /* Added within ABI 9: a runtime that predates them refuses a model
   * using them as having an unknown element type. */
  MODELC_DTYPE_I8 = 6,
  MODELC_DTYPE_I16 = 7,
  MODELC_DTYPE_U8 = 8,
  MODELC_DTYPE_U16 = 9,
  MODELC_DTYPE_U32 = 10,
  MODELC_DTYPE_U64 = 11,
  MODELC_DTYPE_F64 = 12
};

/* An input or output of an entry point. */
typedef struct modelc_tensor_desc {
  const char *name;
  uint32_t dtype;
  uint32_t rank;
  const int64_t *shape;
  /* ABI 11: NULL, or per axis -1 (static) or the index in
   * modelc_model_desc::dims of the dynamic dimension the axis has; `shape`
   * holds such an axis at the dimension's max. */
  const int32_t *dims;
} modelc_tensor_desc;

/* ABI 11: a dynamic dimension (graph.dim, modelc --dim): a run gives its
 * size, in [min, max], through the inputs that have it. */
typedef struct modelc_dim_desc {
  const char *name;
  int64_t min, max, opt;
} modelc_dim_desc;

/* A weight. Embedded weights live at weight_data + offset. */
typedef struct modelc_weight_desc {
  const char *name;
  uint32_t dtype;
  uint32_t rank;
  const int64_t *shape;
  uint64_t offset;
  uint64_t nbytes;
} modelc_weight_desc;

struct modelc_run_ctx;

/* A task of a multi-device plan: one op's work on one device. Returns 0, or
 * nonzero after report_error. */
typedef int (*modelc_task_fn)(struct modelc_run_ctx *ctx);

/* Stream selectors of the scheduling callbacks. */
enum { MODELC_STREAM_COMPUTE = 0, MODELC_STREAM_COPY = 1 };

/* A matrix product on a GPU (ABI 3), row-major, for b in [0, batch):
 *   C_b = alpha * op(A_b) * op(B_b) + beta * C_b (+ bias, then relu)
 * with A_b = a + b * stride_a (elements; 0: the same matrix every time),
 * op(X) = X^T when trans_X, C_b [m, n], and bias NULL or [n] added to every
 * row. a, b, c and bias are device memory of dtype `dtype` (F32, F16 or
 * BF16); the product accumulates in f32. `site` numbers the call site,
 * unique in the model (the runtime keeps its cuBLASLt plan per site);
 * `what` names the op for error messages ("graph.linear (line 12)"); c_in,
 * when not NULL, is the C the product adds (same layout as c), and c only
 * receives the result. */
enum { MODELC_GEMM_RELU = 1u, MODELC_GEMM_ALLOW_TF32 = 2u };
typedef struct modelc_gemm {
  uint32_t site;
  uint32_t dtype;
  uint32_t flags; /* MODELC_GEMM_* */
  int32_t trans_a, trans_b;
  int64_t m, n, k, batch;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *c;
  int64_t ldc, stride_c;
  const void *bias;
  float alpha, beta;
  const char *what;
  const void *c_in;
} modelc_gemm;

/* A product of a weight that does not change between runs, on the CPU
 * (ABI 4; ABI 5 adds f16 and bf16 data and Winograd), of f32 data, or of
 * f16 (MODELC_PRODUCT_F16) or bf16 (MODELC_PRODUCT_BF16) data: x, w, bias,
 * y and the post-ops' operands all of that type, accumulated in f32:
 *   MODELC_PRODUCT_MATMUL: y[m, n] = x[m, k] * W (+ bias[n]), W = w^T for
 *     w [n, k] (trans_w = 1) or W = w [k, n] (trans_w = 0);
 *   MODELC_PRODUCT_CONV2D: y = conv2d(x, w) (+ bias[o]), NCHW, w
 *     [o, c/groups, kh, kw]; `conv` holds n, c, h, w, o, kh, kw, oh, ow,
 *     stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right,
 *     dilation_h, dilation_w, groups;
 * then each of `post_ops` in order, on every element of y:
 *   MODELC_POST_ELTWISE: y = f(y), f = `alg` (a MODELC_ELTWISE_*) with
 *     parameter alpha (leaky relu's slope, swish's beta);
 *   MODELC_POST_BINARY: y = y `alg` v (a MODELC_BINARY_*), v =
 *     operands[i] for post-op i, of y's shape (MODELC_BROADCAST_FULL), one
 *     value per column of a matmul or per channel of a convolution
 *     (_CHANNEL), or one value (_SCALAR); (ABI 18) _CONSTANT: one value the
 *     same in every run, which is also the post-op's alpha (operands[i]
 *     still points at it);
 *   MODELC_POST_SUM (convolutions, at most one): y = y + alpha * v, v =
 *     operands[i] of y's shape, NCHW.
 * bias may be NULL. `site` numbers the call site, unique in the model: the
 * runtime keeps w packed per site, made on the first run. `what` names the
 * op for error messages. A convolution with MODELC_PRODUCT_KEEP_LAYOUT
 * leaves y in the layout oneDNN computed it in (at most `y_bytes`); one
 * with MODELC_PRODUCT_SRC_OF_SITE reads x in the layout site `src_site`
 * keeps, one with MODELC_PRODUCT_SUM_OF_SITE its sum's operand in the
 * layout site `sum_site` keeps (convolutions run earlier in the same
 * run). A convolution with MODELC_PRODUCT_WINOGRAD (3x3, stride 1) is
 * computed with Winograd's algorithm where oneDNN has it for this CPU,
 * directly elsewhere. f16 and bf16 products run in that type where oneDNN
 * has it for this CPU (bf16 on AVX-512), else in f32 with the data
 * converted on the way in and out and the weight converted once. With
 * MODELC_PRODUCT_Y_F32 an f16 or bf16 product writes y in f32. */
enum {
  MODELC_PRODUCT_KEEP_LAYOUT = 1u,
  MODELC_PRODUCT_SRC_OF_SITE = 2u,
  MODELC_PRODUCT_SUM_OF_SITE = 4u,
  MODELC_PRODUCT_WINOGRAD = 8u,
  MODELC_PRODUCT_F16 = 16u,
  MODELC_PRODUCT_BF16 = 32u,
  MODELC_PRODUCT_Y_F32 = 64u
};
enum { MODELC_PRODUCT_MATMUL = 0, MODELC_PRODUCT_CONV2D = 1 };
enum { MODELC_POST_ELTWISE = 0, MODELC_POST_BINARY = 1, MODELC_POST_SUM = 2 };
enum {
  MODELC_ELTWISE_RELU = 0,
  MODELC_ELTWISE_GELU_ERF = 1,
  MODELC_ELTWISE_GELU_TANH = 2,
  MODELC_ELTWISE_LOGISTIC = 3,
  MODELC_ELTWISE_TANH = 4,
  MODELC_ELTWISE_SWISH = 5
};
enum {
  MODELC_BINARY_ADD = 0,
  MODELC_BINARY_SUB = 1,
  MODELC_BINARY_MUL = 2,
  MODELC_BINARY_DIV = 3,
  MODELC_BINARY_MAX = 4,
  MODELC_BINARY_MIN = 5
};
enum {
  MODELC_BROADCAST_FULL = 0,
  MODELC_BROADCAST_CHANNEL = 1,
  MODELC_BROADCAST_SCALAR = 2,
  MODELC_BROADCAST_CONSTANT = 3 /* ABI 18 */
};
typedef struct modelc_post_op {
  uint32_t kind; /* MODELC_POST_* */
  uint32_t alg;  /* MODELC_ELTWISE_* or MODELC_BINARY_* */
  float alpha;
  uint32_t broadcast; /* MODELC_BROADCAST_* (binary) */
} modelc_post_op;
typedef struct modelc_product {
  uint32_t site;
  uint32_t kind;     /* MODELC_PRODUCT_* */
  int32_t trans_w;   /* matmul */
  int64_t m, n, k;   /* matmul */
  int64_t conv[18];  /* conv2d */
  uint32_t flags;    /* MODELC_PRODUCT_KEEP_LAYOUT, _SRC_OF_SITE, ... */
  uint32_t src_site; /* with MODELC_PRODUCT_SRC_OF_SITE */
  uint32_t sum_site; /* with MODELC_PRODUCT_SUM_OF_SITE */
  uint64_t y_bytes;  /* with MODELC_PRODUCT_KEEP_LAYOUT */
  uint32_t num_post_ops;
  const modelc_post_op *post_ops;
  const char *what;
} modelc_product;

/* (ABI 14) A CPU convolution whose weight changes between runs (a
 * training step's), through oneDNN; `kind`: */
enum {
  MODELC_CONV_FORWARD = 0,         /* out = conv(x = a, w = b) + bias */
  MODELC_CONV_BACKWARD_DATA = 1,   /* out = the input's gradient (a
                                      transposed convolution): dy = a, w = b */
  MODELC_CONV_BACKWARD_WEIGHTS = 2 /* out = the weight's gradient: x = a,
                                      dy = b */
};
/* flags: Winograd's algorithm where oneDNN has it for the CPU at hand. */
#define MODELC_CONV_WINOGRAD 1u
typedef struct modelc_conv {
  uint32_t kind;  /* MODELC_CONV_* */
  uint32_t flags; /* MODELC_CONV_WINOGRAD */
  /* Of the forward convolution, f32, NCHW and [O, C/groups, KH, KW]: n, c,
   * h, w (its input), o, kh, kw, oh, ow (its output), stride h, w, padding
   * top, left, bottom, right, dilation h, w (1: none), groups. */
  int64_t shape[18];
  const char *what;
} modelc_conv;

/* (ABI 18) y = the mean of each channel of x over its h x w positions
 * (f32; y NCHW [n, c, 1, 1]), where x is the output of the packed
 * convolution of call site `src_site`, in the layout it kept, from the
 * same run. `site` numbers this call site; `what` names the op. */
typedef struct modelc_kept_pool {
  uint32_t site;
  uint32_t src_site;
  int64_t n, c, h, w;
  const char *what;
} modelc_kept_pool;

/* Callbacks from generated code into the runtime. */
typedef struct modelc_runtime_api {
  uint32_t struct_size;
  /* Row-major C = alpha * op(A) * op(B) + beta * C (f32). */
  void (*sgemm)(struct modelc_run_ctx *ctx, int trans_a, int trans_b, int64_t m,
                int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
  /* Calls fn(arg, begin, end) on disjoint chunks covering [0, n), at least
   * `grain` iterations each, on the CPU thread pool; returns when all are
   * done. */
  void (*parallel_for)(struct modelc_run_ctx *ctx, int64_t n, int64_t grain,
                       void (*fn)(void *arg, int64_t begin, int64_t end),
                       void *arg);
  /* Records an error (e.g. an index out of range); the entry function
   * returns nonzero afterwards and the runtime raises it. */
  void (*report_error)(struct modelc_run_ctx *ctx, const char *message);

  /* Multi-device plans: the entry function only enqueues work; each device
   * of the plan has a compute stream and a copy stream that run in order,
   * and events order work across streams. The run ends when every stream
   * has drained. Devices are indices into the plan's device list. */
  /* Runs `task` on `device`'s compute stream. */
  void (*launch)(struct modelc_run_ctx *ctx, uint32_t device,
                 modelc_task_fn task);
  /* Copies `bytes` from `src` (memory of `src_device`) to `dst` (memory of
   * `dst_device`) on the destination's copy stream. `what` names the
   * transfer for error messages (e.g. "device.transfer (line 12)"), or is
   * NULL. */
  void (*copy)(struct modelc_run_ctx *ctx, uint32_t dst_device, void *dst,
               uint32_t src_device, const void *src, uint64_t bytes,
               const char *what);
  /* Marks `event` done when the stream reaches this point. */
  void (*record)(struct modelc_run_ctx *ctx, uint32_t device, int stream,
                 uint32_t event);
  /* Holds the stream here until `event` is done. */
  void (*wait)(struct modelc_run_ctx *ctx, uint32_t device, int stream,
               uint32_t event);
  /* A matrix product or 2-D convolution of a constant weight, with the
   * ops oneDNN applies after it (ABI 4; ABI 5: f16, bf16): see
   * modelc_product. */
  void (*product)(struct modelc_run_ctx *ctx, const modelc_product *p,
                  const void *x, const void *w, const void *bias, void *y,
                  const void *const *operands);
  /* Checked builds: the task `what` on `device` touches [ptr, ptr + bytes);
   * the runtime reports an error unless that memory belongs to `device`. */
  void (*check)(struct modelc_run_ctx *ctx, uint32_t device, const void *ptr,
                uint64_t bytes, const char *what);

  /* GPU devices (ABI 2). A task launched on a GPU device runs on the host
   * and issues kernels; it must not touch the device's memory itself.
   * Issues kernel `kernel` (an index into the descriptor's kernel_names) on
   * `device`'s compute stream, now, from within such a task: args points to
   * the kernel's arguments as for cuLaunchKernel (read during the call). */
  void (*launch_kernel)(struct modelc_run_ctx *ctx, uint32_t device,
                        uint32_t kernel, const uint32_t grid[3],
                        const uint32_t block[3], uint32_t shared_bytes,
                        void **args);
  /* GPU devices (ABI 3): issues the matrix product `g` (cuBLASLt) on
   * `device`'s compute stream, from within a task launched on that GPU. */
  void (*gemm)(struct modelc_run_ctx *ctx, uint32_t device,
               const modelc_gemm *g);
  /* (ABI 9) graph.all_reduce, on the host: dst[i] = the sum of src[i] over
   * the ranks of a distributed run (src itself with one rank). `what`
   * names the op for errors. Returns nonzero after report_error when the
   * backend reported a failure; a collective that waits past the run's
   * timeout ends the process instead (the MPI plugin's watchdog). */
  int (*all_reduce)(struct modelc_run_ctx *ctx, const float *src, float *dst,
                    int64_t count, const char *what);
  /* (ABI 10) graph.replica_all_reduce: member `member` of group `group`, a
   * sum over the `members` replicas of one process (data-parallel training
   * on accelerators), enqueued on the copy stream of its device,
   * member_devices[member]. Once every member of the group has been
   * enqueued and reached on its stream, dst of each member holds the sum
   * of the members' src (`count` floats each, on their devices): NCCL's
   * when every member is a CUDA device and libnccl.so.2 loads, else the
   * host's in member order. Generated code enqueues the members of a group
   * one after the other, and the groups in the same order on every device.
   * `what` names the op for errors. */
  void (*replica_all_reduce)(struct modelc_run_ctx *ctx, uint32_t group,
                             uint32_t member, uint32_t members,
                             const uint32_t *member_devices, const float *src,
                             float *dst, int64_t count, const char *what);
  /* (ABI 14) The convolution `conv` (a static struct of the call site: the
   * runtime keeps oneDNN's primitive for it) of a and b into out; bias may
   * be NULL (MODELC_CONV_FORWARD only). Errors are reported (report_error)
   * and end the run. */
  void (*conv)(struct modelc_run_ctx *ctx, const modelc_conv *conv,
               const float *a, const float *b, const float *bias, float *out);
  /* (ABI 15) sched.all_reduce_start, on the CPU plan: starts
   * dst[i] = the sum of src[i] over the ranks (as all_reduce) on the
   * runtime's communication thread and returns at once; `slot` numbers it
   * within the run for all_reduce_wait. The process's all-reduces run in
   * the order they are started or called (all_reduce waits for those
   * started before it). The entry writes neither src nor dst until the
   * wait; a run that ends with sums in flight (an error) waits for them
   * before its memory is reused. `point` is a trace point that times the
   * sum itself in a traced run. Returns nonzero after report_error. */
  int (*all_reduce_start)(struct modelc_run_ctx *ctx, const float *src,
                          float *dst, int64_t count, uint32_t slot,
                          uint32_t point, const char *what);
  /* (ABI 15) sched.all_reduce_wait: returns once the sum started in
   * `slot` is done; nonzero after report_error when it failed. */
  int (*all_reduce_wait)(struct modelc_run_ctx *ctx, uint32_t slot);
  /* (ABI 16) graph.owner_broadcast (modelc --shard-optimizer-state across
   * ranks): dst[0..bytes) on every rank = src[0..bytes) of the rank that
   * owns shard `shard` (modelc_shard_owner); src is read on that rank only
   * (a copy with one rank). In the process's order of collectives, as
   * all_reduce. Returns nonzero after report_error. */
  int (*owner_broadcast)(struct modelc_run_ctx *ctx, const void *src, void *dst,
                         uint64_t bytes, uint32_t shard, const char *what);
  /* (ABI 17) graph.all_reduce on a GPU, the plan's rank_sums_device:
   * enqueued on that device's copy stream, dst[i] = the sum of src[i]
   * (`count` floats on the device) over the ranks of a distributed run (a
   * copy with one rank). NCCL's all-reduce when every rank made its
   * communicator at load, else through host memory and the communication
   * backend. Generated code enqueues a plan's sums in program order on that
   * one stream, so every rank meets them in the same order. `what` names
   * the op for errors, which are reported (report_error) and end the run. */
  void (*rank_all_reduce)(struct modelc_run_ctx *ctx, uint32_t device,
                          const float *src, float *dst, int64_t count,
                          const char *what);
  /* (ABI 18) graph.global_avg_pool of a convolution's output in the layout
   * that convolution kept (MODELC_PRODUCT_KEEP_LAYOUT): see
   * modelc_kept_pool. Errors are reported (report_error). */
  void (*kept_pool)(struct modelc_run_ctx *ctx, const modelc_kept_pool *p,
                    const void *x, void *y);
} modelc_runtime_api;

/* Tracing (ABI 6). Generated code calls ctx->trace, when it is not NULL,
 * with MODELC_TRACE_BEGIN before each op's code and MODELC_TRACE_END after
 * it (in a multi-device plan: first and last in each task), `point` an
 * index into its plan's trace_points. The runtime sets ctx->trace only for
 * traced runs: off, the cost is one load and branch per op. */
enum { MODELC_TRACE_BEGIN = 0, MODELC_TRACE_END = 1 };
typedef void (*modelc_trace_fn)(struct modelc_run_ctx *ctx, uint32_t point,
                                uint32_t phase);
/* What a trace point times: the op (e.g. "graph.linear (line 12)"), the
 * index of the plan's device it runs on, and the cost model's estimate of
 * its time there in microseconds (negative: none). */
typedef struct modelc_trace_point {
  const char *what;
  uint32_t device;
  double estimate_us;
} modelc_trace_point;

/* What one run of an entry point sees. */
typedef struct modelc_run_ctx {
  const modelc_runtime_api *api;
  void *runtime;              /* opaque to generated code */
  const void *const *inputs;  /* one pointer per input, host memory */
  void *const *outputs;       /* one pointer per output, host memory */
  const void *const *weights; /* one pointer per weight of the table */
  unsigned char *arena;       /* scratch of the plan's first device */
  /* Multi-device plans: per device its scratch arena, and per device the
   * weights resident there (device_weights[d][w], NULL where not). */
  unsigned char *const *arenas;
  const void *const *const *device_weights;
  /* ABI 6: NULL, or the runtime's trace callback for this run. */
  modelc_trace_fn trace;
  /* ABI 10: this process's rank in a distributed run (0 otherwise):
   * graph.dropout's rank_stride. */
  int64_t rank;
  /* ABI 11: per dynamic dimension (modelc_model_desc::dims), its size in
   * this run; NULL when the model has none. */
  const int64_t *dims;
  /* ABI 16: the number of ranks of a distributed run (1 otherwise): an op
   * guarded by graph.shard = k runs where
   * rank == modelc_shard_owner(k, world_size). */
  int64_t world_size;
} modelc_run_ctx;

/* Returns 0 on success, nonzero after report_error. */
typedef int (*modelc_entry_fn)(modelc_run_ctx *ctx);

typedef struct modelc_entry_desc {
  const char *name;
  uint32_t num_inputs;
  const modelc_tensor_desc *inputs;
  uint32_t num_outputs;
  const modelc_tensor_desc *outputs;
  /* ABI 8: NULL, or per input NULL or its default value (host bytes of the
   * input's dtype and shape): a run that leaves the input out reads it
   * (train_step's `lr`). Inputs with a default come last. */
  const void *const *input_defaults;
} modelc_entry_desc;

/* One way to run the model on one kind of machine. */
typedef struct modelc_plan_desc {
  const char *name; /* e.g. "cpu" */
  uint32_t num_devices;
  const char *const *devices;  /* e.g. {"cpu"} */
  const uint64_t *arena_bytes; /* [entry * num_devices + device] */
  const modelc_entry_fn *run;  /* one per entry point */
  /* [device * num_weights + weight]: 1 where the weight is resident (copied
   * there once at load); NULL for a single-device plan (all on device 0). */
  const uint8_t *weight_devices;
  const uint32_t *num_events; /* events per entry point; NULL: none */
  /* Per entry point: 1 when every op runs on a GPU and the host only copies
   * inputs in and outputs out, so a run can be captured as a CUDA graph and
   * replayed (LoadOptions::cuda_graphs); NULL: no entry can. */
  const uint8_t *graph_capturable;
  /* ABI 6: the ops generated code traces, for every entry point of the
   * plan (NULL/0: none). */
  uint32_t num_trace_points;
  const modelc_trace_point *trace_points;
  /* ABI 10: MODELC_PLAN_* flags. */
  uint32_t plan_flags;
  /* ABI 12: a size regime (docs/dynamic.md): the plan runs the sizes
   * regime_min..regime_max of dynamic dimension regime_dim (an index into
   * modelc_model_desc::dims); regime_max 0: every size (regime_dim is then
   * ignored). The regimes of one target are consecutive plans of one name,
   * one device list, whose ranges cover the dimension's in order; a run
   * takes the one its size falls in. */
  int32_t regime_dim;
  int64_t regime_min, regime_max;
  /* ABI 17, with MODELC_PLAN_RANK_SUMS: the device (an index into
   * devices, a GPU) whose copy stream runs the plan's sums over the ranks
   * (rank_all_reduce); ignored without the flag. */
  uint32_t rank_sums_device;
} modelc_plan_desc;

/* plan_flags: the plan sums over replicas on their devices
 * (graph.replica_all_reduce): the runtime makes NCCL's communicators over
 * its GPUs at load, where NCCL loads. */
#define MODELC_PLAN_REPLICA_SUMS 1u
/* plan_flags (ABI 17): the plan sums over the ranks on its GPU
 * rank_sums_device (graph.all_reduce placed there): the runtime makes
 * NCCL's communicator across the ranks for that GPU at load, where NCCL
 * loads on every rank. Without it the host sums over the ranks. */
#define MODELC_PLAN_RANK_SUMS 2u

typedef struct modelc_model_desc {
  uint32_t abi_version; /* first, so any runtime can read it */
  uint32_t struct_size;
  const char *compiler_version;
  const char *compiler_flags; /* the modelc command line */
  uint32_t num_entries;
  const modelc_entry_desc *entries;
  uint32_t num_weights;
  const modelc_weight_desc *weights;
  const unsigned char *weight_data; /* embedded weights, or NULL */
  uint64_t weight_data_size;
  const char *external_weights; /* safetensors path when not embedded */
  uint32_t num_plans;
  const modelc_plan_desc *plans;
  /* GPU code (ABI 2): a CUDA module image (a fatbin) loaded on every GPU of
   * the chosen plan, and the names of its kernels; NULL/0 when none. */
  const unsigned char *gpu_image;
  uint64_t gpu_image_size;
  uint32_t num_kernels;
  const char *const *kernel_names;
  /* What the GPU plans need besides the driver: MODELC_GPU_NEEDS_*. */
  uint32_t gpu_libraries;
  /* ABI 7: per weight, MODELC_WEIGHT_* flags (NULL: none). A writable
   * weight (a parameter or optimizer state of a training step) is written
   * by generated code: the runtime gives each device that holds it its own
   * writable copy, and Model::save_weights reads it back. */
  const uint8_t *weight_flags;
  /* ABI 9: MODELC_MODEL_* flags. */
  uint32_t model_flags;
  /* ABI 11: the dynamic dimensions (NULL/0: every shape is static). */
  uint32_t num_dims;
  const modelc_dim_desc *dims;
  /* ABI 16: per weight, -1, or the shard of optimizer state it is
   * (modelc --distributed --shard-optimizer-state): only rank
   * modelc_shard_owner(shard, world_size) holds it (a writable weight that
   * starts as zeros);
   * NULL: none. */
  const int32_t *weight_shards;
} modelc_model_desc;

/* ABI 16: the rank of a run of `world_size` ranks that owns shard `shard`
 * of optimizer state (graph.shard, weight_shards). The shards are numbered
 * largest first; they go to the ranks back and forth (0, 1, ..., n-1,
 * n-1, ..., 0, 0, 1, ...), so that each rank's share of the bytes evens
 * out whatever the number of ranks. Generated code and the runtime both
 * call this. */
static inline int64_t modelc_shard_owner(int64_t shard, int64_t world_size) {
  int64_t round = shard / world_size, place = shard % world_size;
  return round % 2 == 0 ? place : world_size - 1 - place;
}

/* model_flags: entry points run graph.all_reduce (a model built with
 * modelc --distributed): a distributed run sums over its ranks there. */
#define MODELC_MODEL_COLLECTIVES 1u
/* model_flags: some op computes in float16 / bfloat16 (modelc --precision,
 * or a model's own half-precision values): what tolerances a comparison
 * of its outputs needs (Model::compute_precision). */
#define MODELC_MODEL_COMPUTES_F16 2u
#define MODELC_MODEL_COMPUTES_BF16 4u

/* weight_flags: generated code writes the weight (graph.assign). */
#define MODELC_WEIGHT_WRITABLE 1u
/* weight_flags (ABI 13): a writable weight that starts as zeros (optimizer
 * state); the embedded data does not hold it (its offset means nothing),
 * the runtime's writable copy starts as zeros. */
#define MODELC_WEIGHT_ZEROS 2u

/* gpu_libraries: the GPU plans call `gemm` (cuBLASLt). */
#define MODELC_GPU_NEEDS_CUBLASLT 1u

typedef const modelc_model_desc *(*modelc_model_fn)(void);

/* The seal: the last 40 bytes of every model.so modelc builds, appended
 * after the link (ELF loaders ignore bytes past the sections). The runtime
 * checks it before dlopen: a model.so changed after the build (a flipped
 * byte, a truncation, appended data, a tool that rewrote it) is an error,
 * and so is an external weights file changed since the build unless it is
 * passed on purpose (LoadOptions::weights). Hashes are XXH3-64 (xxhash).
 * runtime/src/integrity.cpp writes and checks it. */
#define MODELC_SEAL_MAGIC "MODELCS1" /* 8 bytes, no terminator stored */
typedef struct modelc_file_seal {
  char magic[8];
  uint64_t model_hash;    /* of the file's bytes before the seal, then of
                             weights_hash and weights_bytes */
  uint64_t model_bytes;   /* their count */
  uint64_t weights_hash;  /* of the external weights file, or 0 */
  uint64_t weights_bytes; /* its size; 0: no external weights file */
} modelc_file_seal;

#ifdef __cplusplus
}
#endif

#endif /* MODELC_ABI_H */
