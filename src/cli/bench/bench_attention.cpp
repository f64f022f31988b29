// `bosch bench attention`: one attention layer over n tokens, full attention on every head vs
// SWA (W recent + S sink tokens) on every head; prints times, the SWA/full ratio (goal <= 1/5
// at the defaults) and the full layer's achieved GFLOP/s.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli/command.h"
#include "kernels/attention.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/parallel.h"
#include "util/progress.h"

namespace bosch::cli {
namespace {

struct AttentionBenchOptions {
  int n = 8192, head_dim = 64, heads = 8, kv_heads = 4, window = 512, sinks = 4, repeats = 3;
};

struct Timing {
  double wall, cpu;  // cpu: all threads of the process; robust when the machine is shared
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

void run_attention_bench(const AttentionBenchOptions& o) {
  check(o.heads % o.kv_heads == 0, "bench attention: --heads ({}) must be a multiple of --kv-heads ({})",
        o.heads, o.kv_heads);
  const int64_t n = o.n, hd = o.head_dim;
  check_memory_for(uint64_t(4) * (2 * n * o.heads * hd + 2 * n * o.kv_heads * hd), "bench attention's q, k, v and output");
  std::vector<float> q(n * o.heads * hd), k(n * o.kv_heads * hd), v(k.size()), out(q.size());
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto* t : {&q, &k, &v})
    for (auto& x : *t) x = dist(rng);

  std::vector<int32_t> full_w(o.kv_heads, 0), full_s(o.kv_heads, 0);
  std::vector<int32_t> swa_w(o.kv_heads, o.window), swa_s(o.kv_heads, o.sinks);
  AttentionArgs a = dense_attention_args(q.data(), k.data(), v.data(), out.data(), o.n, 0, o.heads, o.kv_heads,
                                         o.head_dim, nullptr, nullptr);

  AttentionArgs full = a, swa = a;
  full.window = full_w.data();
  full.sinks = full_s.data();
  swa.window = swa_w.data();
  swa.sinks = swa_s.data();

  Progress progress("bench attention", 2 * (o.repeats + 1));
  auto best_time = [&](const AttentionArgs& args) {
    attention(args);  // warm-up: page faults, thread pool start
    progress.add();
    Timing best{1e30, 1e30};
    for (int r = 0; r < o.repeats; ++r) {
      const double c0 = process_cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      attention(args);
      best.wall = std::min(best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      best.cpu = std::min(best.cpu, process_cpu_seconds() - c0);
      progress.add();
    }
    return best;
  };
  const Timing t_full = best_time(full);
  const Timing t_swa = best_time(swa);
  progress.finish();

  const double ratio = t_swa.wall / t_full.wall;
  fmt::print("attention layer: n={} head_dim={} heads={} kv_heads={} threads={} (best of {})\n", o.n,
             o.head_dim, o.heads, o.kv_heads, num_threads(), o.repeats);
  auto line = [](const std::string& label, const Timing& t, const AttentionArgs& args) {
    fmt::print("  {:<22}: {:8.4f} s  {:6.1f} GFLOP/s  (cpu {:.4f} s; {} key blocks)\n", label, t.wall,
               attention_flops(args) / t.wall * 1e-9, t.cpu, attention_visited_blocks(args));
  };
  line("full attention", t_full, full);
  line(fmt::format("SWA W={} S={}", o.window, o.sinks), t_swa, swa);
  fmt::print("  {:<22}: {:.3f}  (goal <= 0.200: {}; by cpu time {:.3f})\n", "ratio SWA/full", ratio,
             ratio <= 0.2 ? "met" : "NOT met", t_swa.cpu / t_full.cpu);
}

BenchRegistrar reg("attention", "time of a full vs an all-SWA attention layer (ratio, GFLOP/s)",
                   [](CLI::App& app) {
  auto o = std::make_shared<AttentionBenchOptions>();
  add_opt(app, "--n", o->n, "tokens (queries = keys)")->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--head-dim", o->head_dim, "head dimension")->check(CLI::Range(1, 1024));
  add_opt(app, "--heads", o->heads, "query heads")->check(CLI::Range(1, 1024));
  add_opt(app, "--kv-heads", o->kv_heads, "KV heads")->check(CLI::Range(1, 1024));
  add_opt(app, "--window", o->window, "SWA window W")->check(CLI::Range(1, 1 << 30));
  add_opt(app, "--sinks", o->sinks, "SWA sink tokens S")->check(CLI::Range(0, 1 << 30));
  add_opt(app, "--repeats", o->repeats, "timed runs; the best counts")->check(CLI::Range(1, 100));
  app.callback([o] { run_attention_bench(*o); });
});

}  // namespace
}  // namespace bosch::cli
