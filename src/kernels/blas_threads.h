// Keeps OpenBLAS's own thread pool at bosch's thread count (BOSCH_THREADS / set_num_threads),
// so that one setting governs every kernel.
#pragma once
#include <cblas.h>

#include "util/parallel.h"

namespace bosch::kernels {

inline void sync_blas_threads() {
  const int want = num_threads();
  if (openblas_get_num_threads() != want) openblas_set_num_threads(want);
}

}  // namespace bosch::kernels
