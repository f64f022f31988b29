#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "util/parallel.h"

TEST(Parallel, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3}) {
    bosch::set_num_threads(threads);
    std::vector<std::atomic<int>> hits(1001);
    bosch::parallel_for(hits.size(), [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) hits[i]++;
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

// Inside a SpinningPool the pool's threads spin between tasks, elsewhere they sleep
// (util/parallel.h): back to back calls hit the spinning path, pauses and slow chunks the
// sleeping one on both sides. A lost wake-up would hang here; a torn hand-over would miscount.
TEST(Parallel, BackToBackCallsPausesAndSlowChunksLoseNoWork) {
  for (int threads : {2, 3})
  for (bool spinning : {false, true}) {
    bosch::set_num_threads(threads);
    std::optional<bosch::SpinningPool> spin;
    if (spinning) spin.emplace();
    std::atomic<long> sum{0};
    for (int call = 0; call < 20000; ++call)
      bosch::parallel_for(64, [&](size_t b, size_t e) { sum += static_cast<long>(e - b); });
    EXPECT_EQ(sum.load(), 20000L * 64);
    for (int call = 0; call < 8; ++call) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // workers fall asleep
      std::atomic<int> hits{0};
      bosch::parallel_for(100, [&](size_t b, size_t e) {
        if (b > 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // caller sleeps too
        hits += static_cast<int>(e - b);
      });
      EXPECT_EQ(hits.load(), 100);
    }
  }
  bosch::set_num_threads(2);
}
