#include <gtest/gtest.h>

#include <atomic>
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
