// cuda/emulation.h - runs modelc's generated CUDA kernels on the host, for
// tests on machines without a GPU.
//
// `modelc --cuda-emulation` compiles the kernel source (the same text nvcc
// gets) as C++ with MODELC_GPU_EMULATION defined and links it into model.so;
// the test suite's stand-in CUDA driver (tests/runtime/fixtures/
// fake_libcuda.c) then "launches" a kernel by calling the host function of
// its name. A block's threads run one after another; a kernel that
// synchronizes its threads (__syncthreads) runs each thread as a fiber
// (its own stack; see switch_stack) that yields at every barrier, so all
// threads of the block reach a barrier before any passes it, as on a GPU.
// `__shared__` memory is function-static per host thread, which is per block
// since blocks run in turn. __shfl_xor_sync is emulated with two barriers
// (every thread of the block must call it, as block_reduce in kernels.cuh
// does); other warp-level primitives are not.
#ifndef MODELC_KERNELS_CUDA_EMULATION_H
#define MODELC_KERNELS_CUDA_EMULATION_H

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <ucontext.h>
#include <vector>

namespace modelc_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

inline thread_local Dim3 thread_index, block_index, block_dim, grid_dim;

// A fiber switch. glibc's swapcontext saves and restores the signal mask
// with a system call at every switch, and an emulated block reduction
// switches at each of its barriers for each of its threads: most of an
// emulated kernel's time went there. On x86-64 a fiber switch here saves
// the six callee-saved registers on the fiber's own stack and moves the
// stack pointer, nothing else (no kernel changes the floating-point
// control words it would otherwise have to carry). Code built with
// AddressSanitizer or ThreadSanitizer keeps ucontext, whose switches those
// runtimes intercept to follow the stacks.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MODELC_EMU_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MODELC_EMU_SANITIZED 1
#endif
#if defined(__x86_64__) && !defined(MODELC_EMU_SANITIZED)
#define MODELC_EMU_STACK_SWITCH 1
/// Pushes the callee-saved registers, stores the stack pointer in *from,
/// continues on the stack `to`: one saved by an earlier switch, or a new
/// fiber's (start_fiber), and pops that stack's registers.
__attribute__((naked, noinline)) static void switch_stack(void ** /*from*/,
                                                          void * /*to*/) {
  asm volatile("pushq %rbp\n\t"
               "pushq %rbx\n\t"
               "pushq %r12\n\t"
               "pushq %r13\n\t"
               "pushq %r14\n\t"
               "pushq %r15\n\t"
               "movq %rsp, (%rdi)\n\t"
               "movq %rsi, %rsp\n\t"
               "popq %r15\n\t"
               "popq %r14\n\t"
               "popq %r13\n\t"
               "popq %r12\n\t"
               "popq %rbx\n\t"
               "popq %rbp\n\t"
               "ret\n\t");
}
#endif

/// The fibers of the block being run (empty when the kernel has no
/// barrier).
struct Fibers {
#ifdef MODELC_EMU_STACK_SWITCH
  void *scheduler = nullptr;
  std::vector<void *> contexts; // each fiber's saved stack pointer
#else
  ucontext_t scheduler;
  std::vector<ucontext_t> contexts;
#endif
  std::vector<unsigned char> stacks;
  std::vector<bool> done;
  unsigned current = 0;
  const std::function<void()> *body = nullptr;
  bool active = false;
};
inline thread_local Fibers fibers;

inline void set_thread(unsigned t) {
  thread_index.x = t % block_dim.x;
  thread_index.y = (t / block_dim.x) % block_dim.y;
  thread_index.z = t / (block_dim.x * block_dim.y);
}

#ifdef MODELC_EMU_STACK_SWITCH
/// A fiber's first function, entered by switch_stack's `ret`; never
/// returns: its last switch goes back to the scheduler, which does not
/// resume a finished fiber.
[[noreturn]] inline void fiber_main() {
  (*fibers.body)();
  fibers.done[fibers.current] = true;
  switch_stack(&fibers.contexts[fibers.current], fibers.scheduler);
  __builtin_unreachable();
}

/// Lays out a new fiber's stack as switch_stack leaves one: six registers
/// (zeros) above the stack pointer, then fiber_main as the return
/// address, then a null return address for fiber_main itself (16-byte
/// aligned as after a call).
inline void start_fiber(unsigned t, unsigned char *stack, std::size_t size) {
  auto top = reinterpret_cast<std::uintptr_t>(stack + size) &
             ~static_cast<std::uintptr_t>(15);
  auto *slots = reinterpret_cast<void **>(top);
  slots[-1] = nullptr;
  slots[-2] = reinterpret_cast<void *>(&fiber_main);
  for (int r = 3; r <= 8; ++r)
    slots[-r] = nullptr;
  fibers.contexts[t] = &slots[-8];
}

inline void to_scheduler() {
  switch_stack(&fibers.contexts[fibers.current], fibers.scheduler);
}
inline void to_fiber(unsigned t) {
  switch_stack(&fibers.scheduler, fibers.contexts[t]);
}
#else
inline void fiber_main() {
  (*fibers.body)();
  fibers.done[fibers.current] = true;
  // Returning resumes uc_link: the scheduler.
}

inline void start_fiber(unsigned t, unsigned char *stack, std::size_t size) {
  ucontext_t &c = fibers.contexts[t];
  getcontext(&c);
  c.uc_stack.ss_sp = stack;
  c.uc_stack.ss_size = size;
  c.uc_link = &fibers.scheduler;
  makecontext(&c, fiber_main, 0);
}

inline void to_scheduler() {
  swapcontext(&fibers.contexts[fibers.current], &fibers.scheduler);
}
inline void to_fiber(unsigned t) {
  swapcontext(&fibers.scheduler, &fibers.contexts[t]);
}
#endif

/// __syncthreads(): back to the scheduler, which runs every other thread of
/// the block up to this barrier before resuming this one.
inline void barrier() {
  if (!fibers.active)
    std::abort(); // a kernel with barriers launched as barrier-free
  to_scheduler();
}

/// Runs `body` once per thread of the grid. `barriers`: the kernel calls
/// __syncthreads.
inline void run(const unsigned grid[3], const unsigned block[3], bool barriers,
                const std::function<void()> &body) {
  grid_dim = {grid[0], grid[1], grid[2]};
  block_dim = {block[0], block[1], block[2]};
  unsigned threads = block[0] * block[1] * block[2];
  constexpr std::size_t kStack = 64 * 1024;
  if (barriers) {
    fibers.contexts.resize(threads);
    fibers.stacks.resize(threads * kStack);
    fibers.body = &body;
  }
  for (unsigned bz = 0; bz < grid[2]; ++bz)
    for (unsigned by = 0; by < grid[1]; ++by)
      for (unsigned bx = 0; bx < grid[0]; ++bx) {
        block_index = {bx, by, bz};
        if (!barriers) {
          for (unsigned t = 0; t < threads; ++t) {
            set_thread(t);
            body();
          }
          continue;
        }
        fibers.done.assign(threads, false);
        for (unsigned t = 0; t < threads; ++t)
          start_fiber(t, fibers.stacks.data() + t * kStack, kStack);
        fibers.active = true;
        for (unsigned remaining = threads; remaining;) {
          remaining = 0;
          for (unsigned t = 0; t < threads; ++t) {
            if (fibers.done[t])
              continue;
            fibers.current = t;
            set_thread(t);
            to_fiber(t);
            remaining += fibers.done[t] ? 0 : 1;
          }
        }
        fibers.active = false;
      }
}

/// __shfl_xor_sync for a block whose threads all call it: each thread puts
/// its value down, and after a barrier takes its partner's.
template <typename T> inline T shfl_xor(T value, int lane_mask) {
  static thread_local T slots[1024];
  unsigned t = thread_index.x;
  slots[t] = value;
  barrier();
  T other = slots[t ^ static_cast<unsigned>(lane_mask)];
  barrier();
  return other;
}

inline int atomic_max_int(int *address, int value) {
  int old = *address;
  if (value > old)
    *address = value;
  return old;
}

} // namespace modelc_emu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static thread_local
#define __restrict__
#define threadIdx modelc_emu::thread_index
#define blockIdx modelc_emu::block_index
#define blockDim modelc_emu::block_dim
#define gridDim modelc_emu::grid_dim
#define __syncthreads() modelc_emu::barrier()
#define atomicMax(address, value) modelc_emu::atomic_max_int(address, value)
#define __shfl_xor_sync(mask, value, lane) modelc_emu::shfl_xor(value, lane)

#endif // MODELC_KERNELS_CUDA_EMULATION_H
