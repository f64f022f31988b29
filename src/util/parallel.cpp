#include "util/parallel.h"

#include "util/error.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace bosch {
namespace {

thread_local bool in_worker = false;
thread_local bool denormals_set = false;  // flush_denormals ran on this thread
std::atomic<int> spinning_scopes{0};  // SpinningPool instances alive

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

int spin_micros() {
  static const int us = [] {
    const char* e = std::getenv("BOSCH_SPIN_US");
    return e ? std::clamp(std::atoi(e), 0, 100000) : 1000;
  }();
  return us;
}

// Inside a SpinningPool, polls ready() for up to spin_micros(); false when the caller should
// sleep instead. No sched_yield: it would hand the core to any other job for a whole time slice.
// When the caller's wait for the workers runs out, a worker is not running (more threads than
// free cores: a loaded machine, parallel tests): then every thread sleeps at once for the next
// kBackoff waits (shared), so that a spinner does not keep the core a worker is waiting for.
std::atomic<int> backoff{0};
constexpr int kBackoff = 512;

template <class Ready>
bool spin_until(Ready ready, bool waits_for_workers) {
  if (ready()) return true;
  const int us = spin_micros();
  if (us == 0 || spinning_scopes.load(std::memory_order_relaxed) == 0) return false;
  if (backoff.load(std::memory_order_relaxed) > 0) {
    backoff.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (spinning_scopes.load(std::memory_order_relaxed) == 0) return ready();  // decode is over
    if (std::chrono::steady_clock::now() >= until) {
      if (ready()) return true;
      if (waits_for_workers) backoff.store(kBackoff, std::memory_order_relaxed);
      return false;
    }
  }
}

// Marks the calling thread as inside a task (nested parallel_for runs serially), also when the
// task throws.
struct InTask {
  bool prev = in_worker;
  InTask() { in_worker = true; }
  ~InTask() { in_worker = prev; }
};

// Sleeping follows one protocol on both sides (the workers waiting for a task, the caller
// waiting for the workers): the sleeper announces itself (sleepers_ / caller_sleeps_) and then
// re-checks the condition under the mutex; the waker changes the condition and then reads the
// announcement. All four are sequentially consistent, so one of the two always sees the other:
// no wake-up is lost, and no mutex is taken while everyone spins.
class Pool {
 public:
  // A thread that cannot start (address-space or process limits) leaves the pool smaller, with
  // a warning: unwinding here would destroy joinable threads, which aborts.
  explicit Pool(int n) : size_(n) {
    for (int i = 1; i < n; ++i) {
      try {
        workers_.emplace_back([this, i] { loop(i); });
      } catch (const std::system_error& e) {
        std::fprintf(stderr, "bosch: warning: started %d of %d threads (%s); going on with %d\n", i, n, e.what(),
                     i);
        size_ = i;
        break;
      }
    }
  }
  ~Pool() {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lk(mu_);
      cv_.notify_all();
    }
    for (auto& t : workers_) t.join();
  }
  int size() const { return size_; }

  // Runs task(i) for i in [0, size()) — index 0 on the caller. Always waits for every worker
  // (they call through `task`, which lives on the caller's stack), then rethrows the first
  // exception a task threw.
  void run(const std::function<void(int)>& task) {
    task_.store(&task, std::memory_order_relaxed);
    pending_.store(size_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1);  // publishes task_ and pending_
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lk(mu_);
      cv_.notify_all();
    }
    call(task, 0);
    auto done = [this] { return pending_.load() == 0; };
    if (!spin_until(done, /*waits_for_workers=*/true)) {
      std::unique_lock<std::mutex> lk(mu_);
      caller_sleeps_.store(true);
      done_cv_.wait(lk, done);
      caller_sleeps_.store(false);
    }
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void call(const std::function<void(int)>& task, int idx) {
    InTask in_task;
    try {
      task(idx);
    } catch (...) {
      std::lock_guard<std::mutex> lk(error_mu_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void loop(int idx) {
    in_worker = true;
    flush_denormals();
    uint64_t seen = 0;
    auto ready = [&] { return stop_.load() || generation_.load() != seen; };
    for (;;) {
      if (!spin_until(ready, /*waits_for_workers=*/false)) {
        std::unique_lock<std::mutex> lk(mu_);
        sleepers_.fetch_add(1);
        cv_.wait(lk, ready);
        sleepers_.fetch_sub(1);
      }
      if (stop_.load()) return;
      seen = generation_.load();
      call(*task_.load(std::memory_order_relaxed), idx);
      if (pending_.fetch_sub(1) == 1 && caller_sleeps_.load()) {
        std::lock_guard<std::mutex> lk(mu_);
        done_cv_.notify_one();
      }
    }
  }

  int size_;  // read by the caller only (workers never read it)
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::atomic<const std::function<void(int)>*> task_{nullptr};
  std::atomic<int> pending_{0}, sleepers_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false}, caller_sleeps_{false};
  std::mutex error_mu_;
  std::exception_ptr error_;  // the first exception of this run; read after every worker is done
};

constexpr int kMaxThreads = 1024;

int default_threads() {
  if (const char* e = std::getenv("BOSCH_THREADS")) {
    const std::string v = e;
    int n = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    check(!v.empty() && r.ec == std::errc() && r.ptr == v.data() + v.size() && n >= 1 && n <= kMaxThreads,
          "BOSCH_THREADS={}: expected an integer in [1, {}]", v.substr(0, 40), kMaxThreads);
    return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

int g_threads = 0;
std::unique_ptr<Pool> g_pool;
std::mutex g_pool_mu;

Pool& pool() {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (g_threads == 0) g_threads = default_threads();
  if (!g_pool || g_pool->size() != g_threads) {
    g_pool = std::make_unique<Pool>(g_threads);
    g_threads = g_pool->size();  // fewer when threads could not start
  }
  return *g_pool;
}

}  // namespace

int num_threads() {
  if (g_threads == 0) g_threads = default_threads();
  return g_threads;
}

void set_num_threads(int n) { g_threads = std::max(1, n); }

SpinningPool::SpinningPool() { spinning_scopes.fetch_add(1, std::memory_order_relaxed); }
SpinningPool::~SpinningPool() { spinning_scopes.fetch_sub(1, std::memory_order_relaxed); }

void flush_denormals() {
  if (denormals_set) return;
  denormals_set = true;
  static const bool keep = [] {
    const char* e = std::getenv("BOSCH_KEEP_DENORMALS");
    return e != nullptr && std::string(e) == "1";
  }();
  if (keep) return;
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) | DAZ (bit 6)
#endif
}

namespace {
// The main thread starts flushed, before main: a test's reference computed before its first
// parallel_for runs in the same mode as the kernels, as in the CLI.
[[maybe_unused]] const bool g_main_thread_flushed = (flush_denormals(), true);
}  // namespace

void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t grain) {
  flush_denormals();
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
