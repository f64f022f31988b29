// A small persistent thread pool. parallel_for splits [0, n) into contiguous chunks, one per
// thread, so results never depend on scheduling (each index is computed by exactly one thread
// with the same arithmetic whatever the thread count).
//
// It is the only pool: BLAS runs single-threaded inside its chunks (kernels/blas_threads.h), so
// no second pool competes for the same cores.
#pragma once
#include <cstddef>
#include <functional>

namespace bosch {

// Number of worker threads (default: hardware concurrency; env BOSCH_THREADS overrides).
int num_threads();
void set_num_threads(int n);

// Flushes subnormal floats to zero in the calling thread (x86 MXCSR FTZ and DAZ; once per
// thread), as TensorFlow does and PyTorch's set_flush_denormal offers: a subnormal operand or
// result costs a microcode assist of ~100 cycles, and activations can hold many (SwiGLU of a
// very negative gate: silu(-100) ~ -4e-42; the embedded models' prefill products ran 2x slower
// on them, their whole prefill 1.4x). Values below
// 1.2e-38 become 0. The main thread of every program that links the pool (the CLI, the tests)
// calls it before main, parallel_for on its calling thread and every worker, so every thread
// that computes agrees. (OpenBLAS's own threads, started before main, only run its threaded
// sgemm in `bosch bench`'s peak measurement: products run it single-threaded in our chunks.)
// x86 only (elsewhere a no-op). BOSCH_KEEP_DENORMALS=1 keeps IEEE subnormals (to compare).
void flush_denormals();

// Calls fn(begin, end) on disjoint chunks covering [0, n). Blocks until all are done; the first
// exception fn throws on any thread is rethrown here, after every chunk has returned.
// Chunks are at least `grain` long. Nested calls run serially in the calling thread.
void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t grain = 1);

// While one lives, the pool's threads spin between tasks (up to BOSCH_SPIN_US, default 1000 us,
// then they sleep) instead of sleeping at once, as llama.cpp's do: one decode step issues ~200
// products of a few microseconds each, and waking sleeping workers for each cost more than the
// products. Only decode takes one; elsewhere a product runs for milliseconds, and spinning would
// steal cores from other jobs on a loaded machine (with more threads than free cores, a spinner
// waits out the time slice of the thread it waits for). BOSCH_SPIN_US=0 turns it off. Nests.
class SpinningPool {
 public:
  SpinningPool();
  ~SpinningPool();
  SpinningPool(const SpinningPool&) = delete;
  SpinningPool& operator=(const SpinningPool&) = delete;
};

}  // namespace bosch
