// OpenBLAS runs single-threaded, inside the chunks of bosch's own pool (util/parallel.h): two
// pools on the same cores made OpenBLAS's idle workers spin in sched_yield while bosch's ran
// the attention (about a fifth of an eval's time). Every product goes through split_rows
// (sgemm_peak alone runs OpenBLAS with its own threads, to measure the ceiling).
#pragma once
#include <cblas.h>

#include <algorithm>
#include <cstdint>

#include "util/parallel.h"

namespace bosch::kernels {

inline void blas_single_thread() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

// Calls fn(r0, r1) on row ranges covering [0, n), one per thread, cut at multiples of 16 (the
// sgemm micro-tile), so no thread's edge splits a micro-tile. (OpenBLAS may still pick another
// kernel for small products, so the low bits of a result can move with the thread count.)
template <class Fn>
void split_rows(int64_t n, Fn fn) {
  blas_single_thread();
  constexpr int64_t kAlign = 16;
  const size_t blocks = static_cast<size_t>((n + kAlign - 1) / kAlign);
  parallel_for(blocks, [&](size_t b, size_t e) {
    fn(static_cast<int64_t>(b) * kAlign, std::min<int64_t>(n, static_cast<int64_t>(e) * kAlign));
  });
}

}  // namespace bosch::kernels
