// What one allocation may take on this machine (issue #40: resource options were bounded by
// fixed ranges only): /proc/meminfo's MemAvailable and, when set, the address-space limit
// (RLIMIT_AS) less what the process already maps. Checked before a large buffer is made, so a
// size the machine cannot hold is a clear error, not std::bad_alloc or the OOM killer.
#pragma once
#include <cstdint>
#include <string_view>

namespace bosch {

// Bytes a new allocation may take now (UINT64_MAX when neither bound is known).
uint64_t memory_budget_bytes();

// Error "<what> needs N GiB, more than the M GiB this machine has available (...)" when
// `bytes` is over memory_budget_bytes().
void check_memory_for(uint64_t bytes, std::string_view what);

}  // namespace bosch
