#include "kernels/sgemm_peak.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/blas_threads.h"
#include "util/error.h"

namespace bosch {

double measure_sgemm_gflops(int max_size, int repeats) {
  check(max_size >= 1 && repeats >= 1, "measure_sgemm_gflops: max_size ({}) and repeats ({}) must be >= 1",
        max_size, repeats);
  // The ceiling is OpenBLAS with all its own threads, the best this library does on the machine;
  // bosch's products then run it single-threaded inside its pool (kernels/blas_threads.h).
  openblas_set_num_threads(num_threads());
  double best = 0;
  for (int n = std::min(1024, max_size); n <= max_size; n += 512) {
    const size_t sz = static_cast<size_t>(n) * n;
    std::vector<float> a(sz), b(sz), c(sz);
    for (size_t i = 0; i < sz; ++i) {  // cheap deterministic non-trivial data
      a[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
      b[i] = static_cast<float>((i * 104729) % 1000) * 1e-3f - 0.5f;
    }
    // One untimed run warms the BLAS thread pool and the caches.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                c.data(), n);
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                  c.data(), n);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, 2.0 * n * n * static_cast<double>(n) / s * 1e-9);
    }
  }
  kernels::blas_single_thread();
  return best;
}

}  // namespace bosch
