// `bosch bench decode MODEL [--mask MASK.json | --rho R --window W --sinks S] --context 4096,...`:
// full attention and the hybrid KV cache side by side, per context length: resident KV bytes
// counted by the cache's allocator against the exact formula, prefill tokens/s of a chunk
// appended at that depth, and decode tokens/s. Both columns run the same engine
// (model/HybridKVCache; with the all-full plan it is the plain layout), so the ratio
// measures the mask. The context before the measured prefill is filled with synthetic K/V
// unless --real-fill (speed does not depend on the values; a real 32K prefill takes hours on
// a small machine).
#include <charconv>
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "cli/command.h"
#include "masks/mask_file.h"
#include "model/hybrid_kv_cache.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::cli {
namespace {

struct DecodeOptions {
  std::string model, random, mask, contexts = "4096,16384,32768", kv_type = "f32";
  double rho = 0.75;
  int window = 1024, sinks = 4, prefill = 128, chunk = 128, decode = 16;
  uint64_t seed = 1;
  bool real_fill = false;
};

struct Row {
  int64_t measured = 0, formula = 0;
  double prefill_tps = 0, decode_tps = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// rho of the KV heads of every layer become SWA (same count per layer, heads chosen by seed).
AttentionPlan random_plan(const ModelConfig& c, double rho, int W, int S, uint64_t seed) {
  check(rho >= 0 && rho <= 1, "--rho must be in [0, 1], got {}", rho);
  std::mt19937_64 rng(seed);
  AttentionPlan p(c.n_layers, c.n_kv_heads);
  const int per_layer = static_cast<int>(std::lround(rho * c.n_kv_heads));
  for (int l = 0; l < c.n_layers; ++l) {
    std::vector<int> h(c.n_kv_heads);
    std::iota(h.begin(), h.end(), 0);
    std::shuffle(h.begin(), h.end(), rng);
    for (int i = 0; i < per_layer; ++i) p.set_swa(l, h[i], W, S);
  }
  return p;
}

Row measure(const Model& m, const AttentionPlan& plan, int64_t context, const DecodeOptions& o, Progress& prog) {
  const auto& c = m.config();
  constexpr int kWarmup = 2;  // untimed decode steps first (thread pool, caches, page faults)
  const int64_t total = context + kWarmup + o.decode;
  const KvType kv_type = parse_kv_type(o.kv_type);
  HybridKVCache cache(c, plan, total, kv_type);
  std::mt19937 rng(static_cast<uint32_t>(o.seed));
  auto random_tokens = [&](int64_t n) {
    std::vector<int32_t> t(n);
    for (auto& x : t) x = static_cast<int32_t>(rng() % c.vocab_size);
    return t;
  };
  const int64_t before = context - o.prefill;
  if (o.real_fill) {
    for (int64_t pos = 0; pos < before; pos += o.chunk) m.forward_next(random_tokens(std::min<int64_t>(o.chunk, before - pos)), cache);
  } else {
    cache.fill_synthetic(before, o.seed);
  }
  Row r;
  std::vector<float> logits;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t pos = before; pos < context; pos += o.chunk)
    logits = m.forward_next(random_tokens(std::min<int64_t>(o.chunk, context - pos)), cache);
  r.prefill_tps = o.prefill / seconds_since(t0);
  prog.add(1);
  for (int s = 0; s < kWarmup + o.decode; ++s) {
    if (s == kWarmup) t0 = std::chrono::steady_clock::now();
    int32_t next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    logits = m.forward_next({next}, cache);
  }
  r.decode_tps = o.decode / seconds_since(t0);
  prog.add(1);
  r.measured = cache.bytes();
  r.formula = hybrid_kv_bytes(c, plan, total, kv_type);
  return r;
}

std::string mib(int64_t b) { return fmt::format("{:.1f} MiB", b / 1048576.0); }

void run(const DecodeOptions& o) {
  std::unique_ptr<Model> m;
  if (!o.random.empty()) {
    auto colon = o.random.find(':');
    check(colon != std::string::npos, "--random expects ARCH:LIKE (e.g. qwen3:0.6b), got '{}'", o.random);
    ModelConfig c = config_like(o.random.substr(0, colon), o.random.substr(colon + 1));
    m = std::make_unique<Model>(c, random_weights(c, o.seed), "random " + o.random);
  } else {
    m = Model::load(resolve_model(o.model));
  }
  const auto& c = m->config();
  std::vector<int64_t> contexts;
  std::stringstream ss(o.contexts);
  for (std::string item; std::getline(ss, item, ',');) {
    int64_t v = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), v);
    if (r.ec != std::errc() || r.ptr != item.data() + item.size()) v = 0;
    // 2^22 tokens: the synthetic KV of a small model at that context is already gigabytes.
    check(v > o.prefill && v <= (int64_t{1} << 22), "--context: '{}' must be an integer in ({}, {}] (above --prefill)",
          excerpt(item, 40), o.prefill, int64_t{1} << 22);
    contexts.push_back(v);
  }
  check(!contexts.empty() && o.prefill >= 1 && o.chunk >= 1 && o.decode >= 1,
        "--context, --prefill, --chunk and --decode must be positive");
  AttentionPlan full = m->full_plan();
  std::string desc;
  AttentionPlan hybrid = o.mask.empty() ? random_plan(c, o.rho, o.window, o.sinks, o.seed)
                                        : plan_from_mask_arg(o.mask, *m, o.window, o.sinks, &desc);
  if (o.mask.empty()) desc = fmt::format("random per-layer mask, rho {}", o.rho);

  fmt::print("model {}: {} layers, {} KV heads x hd {}; hybrid: {} — {}\n", m->source(), c.n_layers, c.n_kv_heads,
             c.head_dim, desc, hybrid.summary());
  fmt::print("per context: {} fill, then a {}-token prefill (chunks of {}) and {} greedy decode steps, "
             " {} KV (2 untimed decode steps first)\n\n", o.real_fill ? "real prefill" : "synthetic K/V", o.prefill, o.chunk, o.decode,
             o.kv_type);
  Progress prog("bench decode", contexts.size() * 4);
  std::vector<std::pair<Row, Row>> rows;
  for (int64_t ctx : contexts) rows.push_back({measure(*m, full, ctx, o, prog), measure(*m, hybrid, ctx, o, prog)});
  prog.finish();

  fmt::print("| context | cache | KV bytes (allocator) | KV bytes (formula) | match | prefill tok/s | decode tok/s |\n");
  fmt::print("|---:|---|---:|---:|:-:|---:|---:|\n");
  bool all_match = true;
  for (size_t i = 0; i < contexts.size(); ++i)
    for (int k = 0; k < 2; ++k) {
      const Row& r = k ? rows[i].second : rows[i].first;
      all_match &= r.measured == r.formula;
      fmt::print("| {} | {} | {} ({}) | {} | {} | {:.1f} | {:.2f} |\n", contexts[i], k ? "hybrid" : "full", r.measured,
                 mib(r.measured), r.formula, r.measured == r.formula ? "yes" : "NO", r.prefill_tps, r.decode_tps);
    }
  fmt::print("\n");
  for (size_t i = 0; i < contexts.size(); ++i) {
    const auto& [f, h] = rows[i];
    fmt::print("context {:6}: KV {:.2f}x smaller, prefill {:.2f}x, decode {:.2f}x faster with the hybrid cache\n",
               contexts[i], double(f.measured) / h.measured, h.prefill_tps / f.prefill_tps,
               h.decode_tps / f.decode_tps);
  }
  fmt::print("KV bytes equal the formula in every row: {}\n", all_match ? "yes" : "NO");
}

BenchRegistrar reg("decode", "KV bytes, prefill and decode tokens/s: full attention vs the hybrid KV cache",
                   [](CLI::App& app) {
                     auto o = std::make_shared<DecodeOptions>();
                     add_opt(app, "model", o->model, "model (default: the embedded model)");
                     add_opt(app, "--random", o->random, "use an in-memory random model ARCH:LIKE, e.g. qwen3:0.6b");
                     add_opt(app, "--mask", o->mask, "mask file for the hybrid column (default: random, --rho)");
                     add_opt(app, "--rho", o->rho, "SWA fraction of KV heads per layer when no --mask")->check(CLI::Range(0.0, 1.0));
                     add_opt(app, "--window", o->window, "W of the random mask")->check(CLI::Range(1, 1 << 24));
                     add_opt(app, "--sinks", o->sinks, "S of the random mask")->check(CLI::Range(0, 1 << 24));
                     add_opt(app, "--context", o->contexts, "comma-separated context lengths");
                     add_opt(app, "--prefill", o->prefill, "tokens of the measured prefill at each context")->check(CLI::Range(1, 1 << 20));
                     add_opt(app, "--chunk", o->chunk, "prefill chunk size")->check(CLI::Range(1, 1 << 20));
                     add_opt(app, "--decode", o->decode, "measured decode steps")->check(CLI::Range(1, 1 << 20));
                     add_opt(app, "--seed", o->seed, "seed of the random mask, tokens and synthetic K/V");
                     app.add_flag("--real-fill", o->real_fill, "prefill the whole context for real (slow)");
                     add_opt(app, "--kv-type", o->kv_type, "KV cache values: f32 or f16")
                         ->check(CLI::IsMember({"f32", "f16"}));
                     app.callback([o] { run(*o); });
                   });

}  // namespace
}  // namespace bosch::cli
