#include "cli/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "util/parallel.h"

namespace bosch::cli {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double read_bandwidth_gbs(int mib) {
  const size_t n = static_cast<size_t>(mib) << 18;  // floats
  std::vector<float> buf(n);
  parallel_for(n, [&](size_t b, size_t e) { std::fill(buf.begin() + b, buf.begin() + e, 1.0f); }, 1 << 20);
  double best = 0;
  volatile float sink = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double t0 = now_s();
    std::vector<float> part(static_cast<size_t>(num_threads()) * 16, 0.0f);
    parallel_for(static_cast<size_t>(num_threads()), [&](size_t b, size_t e) {
      for (size_t t = b; t < e; ++t) {
        const size_t lo = n / num_threads() * t, hi = t + 1 == static_cast<size_t>(num_threads()) ? n : lo + n / num_threads();
        float acc[16] = {};
        for (size_t i = lo; i + 16 <= hi; i += 16)
          for (int l = 0; l < 16; ++l) acc[l] += buf[i + l];
        for (int l = 0; l < 16; ++l) part[t * 16 + l] = acc[l];
      }
    });
    const double dt = now_s() - t0;
    for (float p : part) sink = sink + p;
    best = std::max(best, n * 4.0 / dt / 1e9);
  }
  return best;
}

}  // namespace bosch::cli
