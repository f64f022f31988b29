// Memory read bandwidth measured now (the benches' denominator for weight reads), and the
// benches' clock.
#pragma once
#include <cstddef>
#include <vector>

namespace bosch::cli {

// Seconds on the steady clock: differences time a bench's phases.
double now_s();

// Every thread sums its share of a `mib` MiB buffer (larger than the caches); the best of 3
// passes prefetching 4 KiB ahead (as the decode kernels do by default) and 3 without, GB/s:
// whichever reads faster on this machine is the denominator.
double read_bandwidth_gbs(int mib);

// The same probe kept ready for repeated single passes: a decode bench takes one beside every
// step, so each step's reads are compared with the bandwidth of the same moment (on a shared
// machine the bandwidth drifts by 2x within a minute).
class BandwidthProbe {
 public:
  explicit BandwidthProbe(int mib);
  double pass_gbs(bool prefetch = true);  // one parallel read of the whole buffer, GB/s

 private:
  std::vector<float> buf_;
};

}  // namespace bosch::cli
