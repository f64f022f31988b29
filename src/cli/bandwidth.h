// Memory read bandwidth measured now (the benches' denominator for weight reads).
#pragma once

namespace bosch::cli {

// Every thread sums its share of a `mib` MiB buffer (larger than the caches); best of 3 passes, GB/s.
double read_bandwidth_gbs(int mib);

}  // namespace bosch::cli
