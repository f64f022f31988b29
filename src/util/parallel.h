// A small persistent thread pool. parallel_for splits [0, n) into contiguous chunks, one per
// thread, so results never depend on scheduling (each index is computed by exactly one thread
// with the same arithmetic whatever the thread count).
#pragma once
#include <cstddef>
#include <functional>

namespace bosch {

// Number of worker threads (default: hardware concurrency; env BOSCH_THREADS overrides).
int num_threads();
void set_num_threads(int n);

// Calls fn(begin, end) on disjoint chunks covering [0, n). Blocks until all are done.
// Chunks are at least `grain` long. Nested calls run serially in the calling thread.
void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t grain = 1);

}  // namespace bosch
