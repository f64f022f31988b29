#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace bosch {
namespace {

thread_local bool in_worker = false;

class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { loop(i); });
    size_ = n;
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return size_; }

  // Runs task(i) for i in [0, size()) — index 0 on the caller.
  void run(const std::function<void(int)>& task) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      task_ = &task;
      pending_ = size_ - 1;
      ++generation_;
    }
    cv_.notify_all();
    in_worker = true;
    task(0);
    in_worker = false;
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [this] { return pending_ == 0; });
    task_ = nullptr;
  }

 private:
  void loop(int idx) {
    in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* task;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        task = task_;
      }
      (*task)(idx);
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (--pending_ == 0) done_cv_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  int size_ = 1;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* task_ = nullptr;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

int default_threads() {
  if (const char* e = std::getenv("BOSCH_THREADS")) {
    int n = std::atoi(e);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

int g_threads = 0;
std::unique_ptr<Pool> g_pool;
std::mutex g_pool_mu;

Pool& pool() {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (g_threads == 0) g_threads = default_threads();
  if (!g_pool || g_pool->size() != g_threads) g_pool = std::make_unique<Pool>(g_threads);
  return *g_pool;
}

}  // namespace

int num_threads() {
  if (g_threads == 0) g_threads = default_threads();
  return g_threads;
}

void set_num_threads(int n) { g_threads = std::max(1, n); }

void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t grain) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t max_chunks = (n + grain - 1) / grain;
  int nt = num_threads();
  if (in_worker || nt <= 1 || max_chunks <= 1) {
    fn(0, n);
    return;
  }
  Pool& p = pool();
  size_t chunks = std::min<size_t>(p.size(), max_chunks);
  size_t per = (n + chunks - 1) / chunks;
  p.run([&](int i) {
    size_t b = static_cast<size_t>(i) * per;
    size_t e = std::min(n, b + per);
    if (b < e) fn(b, e);
  });
}

}  // namespace bosch
