#include "cli/bench/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/dispatch.h"
#include "util/parallel.h"

namespace bosch::cli {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

BandwidthProbe::BandwidthProbe(int mib) : buf_(static_cast<size_t>(mib) << 18) {
  parallel_for(buf_.size(), [&](size_t b, size_t e) { std::fill(buf_.begin() + b, buf_.begin() + e, 1.0f); }, 1 << 20);
}

double BandwidthProbe::pass_gbs(bool prefetch) {
  static volatile float sink = 0;
  const size_t n = buf_.size(), nt = static_cast<size_t>(num_threads());
  const double t0 = now_s();
  std::vector<float> part(nt * 16, 0.0f);
  parallel_for(nt, [&](size_t b, size_t e) {
    for (size_t t = b; t < e; ++t) {
      const size_t lo = n / nt * t, hi = t + 1 == nt ? n : lo + n / nt;
      float acc[16] = {};
      for (size_t i = lo; i + 16 <= hi; i += 16) {
        // The decode kernels' software prefetch (kernels/dispatch.h), so the denominator is what
        // a read loop gets with the same help: on one host here it read 8-20% faster with it.
        if (prefetch) __builtin_prefetch(buf_.data() + i + kernels::kDecodePrefetchBytes / sizeof(float));
        for (int l = 0; l < 16; ++l) acc[l] += buf_[i + l];
      }
      for (int l = 0; l < 16; ++l) part[t * 16 + l] = acc[l];
    }
  });
  const double dt = now_s() - t0;
  for (float p : part) sink = sink + p;
  return static_cast<double>(n) * 4.0 / dt / 1e9;
}

double read_bandwidth_gbs(int mib) {
  BandwidthProbe probe(mib);
  double best = 0;
  for (int pass = 0; pass < 6; ++pass) best = std::max(best, probe.pass_gbs(pass % 2 == 0));
  return best;
}

}  // namespace bosch::cli
