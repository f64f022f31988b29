#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
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
  const int saved = bosch::num_threads();
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
  bosch::set_num_threads(saved);
}

// A chunk that throws, on a worker or on the caller: the caller gets the exception after every
// chunk has returned (workers call through the caller's stack), and the pool keeps working,
// in parallel (the caller is not left marked as inside a task).
TEST(Parallel, AnExceptionInAChunkReachesTheCallerAndThePoolGoesOn) {
  const int saved = bosch::num_threads();
  bosch::set_num_threads(2);
  for (size_t throwing_chunk : {0, 1}) {
    std::atomic<int> finished{0};
    EXPECT_THROW(bosch::parallel_for(2, [&](size_t b, size_t) {
      if (b == throwing_chunk) throw std::runtime_error("chunk failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++finished;
    }), std::runtime_error);
    EXPECT_EQ(finished.load(), 1);  // the other chunk ran to its end before the rethrow
    std::vector<std::thread::id> ids(2);
    bosch::parallel_for(2, [&](size_t b, size_t) { ids[b] = std::this_thread::get_id(); });
    EXPECT_NE(ids[0], ids[1]);
  }
  bosch::set_num_threads(saved);
}

// Every thread that computes flushes subnormals to zero (util/parallel.h): the main thread from
// before main, and on the caller and every worker of parallel_for a subnormal times 1 and a
// product below FLT_MIN are +0 (bit patterns: under DAZ a subnormal compares equal to 0), and
// each thread reports the MXCSR bits. Workers inherit the mode from the thread that starts the
// pool, so this cannot tell a worker's own call from inheritance. The mode stays set (by design).
#if defined(__x86_64__)
#include <xmmintrin.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string>
TEST(Parallel, EveryComputingThreadFlushesSubnormalsToZero) {
  if (const char* e = std::getenv("BOSCH_KEEP_DENORMALS"); e != nullptr && std::string(e) == "1")
    GTEST_SKIP() << "BOSCH_KEEP_DENORMALS=1 keeps subnormals";
  EXPECT_EQ(_mm_getcsr() & 0x8040u, 0x8040u) << "the main thread before any parallel_for";
  const int saved = bosch::num_threads();
  bosch::set_num_threads(3);
  std::vector<uint32_t> times_one(3, 1), product(3, 1), csr(3, 0);
  volatile float tiny = 1e-40f, small = 1e-20f, one = 1.0f;  // volatile: computed at run time, per thread
  bosch::parallel_for(3, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      times_one[i] = std::bit_cast<uint32_t>(tiny * one);
      product[i] = std::bit_cast<uint32_t>(small * small);
      csr[i] = _mm_getcsr() & 0x8040u;
    }
  });
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(times_one[i], 0u) << "chunk " << i;
    EXPECT_EQ(product[i], 0u) << "chunk " << i;
    EXPECT_EQ(csr[i], 0x8040u) << "chunk " << i;
  }
  bosch::set_num_threads(saved);
}
#endif
