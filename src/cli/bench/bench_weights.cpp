// `bosch bench weights [MODEL]`: the cost of weights kept in their file's type. Prints, from
// one run: the dtype mix; decode tokens/s and the bytes it reads per second (weights and the K/V
// of the context) beside the memory bandwidth measured now (a parallel read of a buffer larger
// than the caches, after the model ran), for the mean and for the fastest step; prefill
// tokens/s; peak resident set while loading, prefilling and decoding beside the file size plus
// the KV cache. Not a timed test.
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "cli/bench/bandwidth.h"
#include "cli/command.h"
#include "kernels/dispatch.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch::cli {
namespace {

struct WeightsOptions {
  std::string model;
  int tokens = 256, decode = 16, bandwidth_mib = 1024, paired_mib = 256;
  std::string kv_type = "f32";
};

// Bytes on disk: the .gguf file, or every file of a Hugging Face directory.
uint64_t file_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return fs::file_size(path);
  uint64_t b = 0;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") b += e.file_size();
  return b;
}

std::string gib(double b) { return fmt::format("{:.3f} GiB", b / (1024.0 * 1024 * 1024)); }

double peak_rss_bytes() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) * 1024;
}

void run(const WeightsOptions& o) {
  const std::string path = resolve_model(o.model);
  const double t_load = now_s();
  auto m = Model::load(path);
  const double load_s = now_s() - t_load;
  const double peak_load = peak_rss_bytes();
  const auto& c = m->config();
  const Model::WeightSummary ws = m->weight_summary();
  std::string mix;
  for (const auto& [type, cb] : ws.types) mix += fmt::format(" {} x{} ({})", type, cb.first, gib(cb.second));
  fmt::print("model {} ({} layers, d={}, vocab {}), loaded in {:.2f} s\n", path, c.n_layers, c.d_model, c.vocab_size, load_s);
  fmt::print("weights:{}; kernels: {}, {} threads; decode on quantised weights: x in 8 bits, integer dots "
             "(qdot_int8.h)\n\n", mix, kernels::kernels_description(), num_threads());

  std::mt19937 rng(1);
  std::vector<int32_t> prompt(static_cast<size_t>(o.tokens));
  for (auto& t : prompt) t = static_cast<int32_t>(rng() % c.vocab_size);
  const auto plan = m->full_plan();
  KVCache cache(c, plan, o.tokens + 2 * o.decode + 2, parse_kv_type(o.kv_type));  // the paired steps below continue it
  double t0 = now_s();
  std::vector<float> logits = m->forward_next(prompt, cache);
  const double prefill_tps = o.tokens / (now_s() - t0);
  const double peak_prefill = peak_rss_bytes();
  auto decode_step = [&] {  // one greedy token; its seconds
    const double t_step = now_s();
    const int32_t next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    logits = m->forward_next({next}, cache);
    return now_s() - t_step;
  };
  double fastest = 1e30;  // the quickest step: the bandwidth below is also a best of passes
  for (int s = 0; s < o.decode + 2; ++s) {  // two untimed steps first (page faults, thread pool)
    if (s == 2) t0 = now_s();
    const double dt = decode_step();
    if (s >= 2) fastest = std::min(fastest, dt);
  }
  const double decode_tps = o.decode / (now_s() - t0);
  // A step also reads the K and V of every cached position (full attention): at a long prompt
  // that is a large part of the bytes (float32 or fp16 values, --kv-type).
  const double kv_per_pos = static_cast<double>(cache.bytes()) / static_cast<double>(cache.capacity());
  const double kv_read = kv_per_pos * (o.tokens + 2 + o.decode / 2.0);  // mean context of the timed steps
  const double step_bytes = static_cast<double>(ws.decode_bytes) + kv_read;
  const double read_gbs = decode_tps * step_bytes / 1e9;
  const double fastest_gbs = step_bytes / fastest / 1e9;

  const double peak = peak_rss_bytes();
  const double file = static_cast<double>(file_bytes(path));
  const double kv = kv_per_pos * static_cast<double>(cache.length());  // the positions in use at the peak
  const double bw = read_bandwidth_gbs(o.bandwidth_mib);  // after the peak RSS was read

  // Paired: as many steps again, each followed by one bandwidth pass; the median of the per-step
  // ratios follows the machine's drift (a shared machine's bandwidth moves 2x within a minute).
  BandwidthProbe probe(o.paired_mib);
  std::vector<double> paired;
  for (int s = 0; s < o.decode; ++s) {
    const double step_read = static_cast<double>(ws.decode_bytes) + kv_per_pos * static_cast<double>(cache.length() + 1);
    const double gbs = step_read / decode_step() / 1e9;
    paired.push_back(gbs / probe.pass_gbs());
  }
  std::sort(paired.begin(), paired.end());
  const double paired_median = paired[paired.size() / 2];

  fmt::print("| measure | value |\n|---|---:|\n");
  fmt::print("| prefill ({} tokens) | {:.1f} tok/s |\n", o.tokens, prefill_tps);
  fmt::print("| decode | {:.2f} tok/s |\n", decode_tps);
  fmt::print("| bytes read per decode token: weights + K/V of the context ({}) | {} + {} |\n", o.kv_type, gib(ws.decode_bytes), gib(kv_read));
  fmt::print("| decode reads | {:.2f} GB/s |\n", read_gbs);
  fmt::print("| fastest decode step | {:.2f} tok/s, {:.2f} GB/s |\n", 1 / fastest, fastest_gbs);
  fmt::print("| memory read bandwidth (measured now, {} MiB) | {:.2f} GB/s |\n", o.bandwidth_mib, bw);
  fmt::print("| peak resident set | {} |\n", gib(peak));
  fmt::print("| peak RSS by phase: load / KV cache + prefill / decode | {} / {} / {} |\n", gib(peak_load),
             gib(peak_prefill), gib(peak));
  fmt::print("| file size + KV cache | {} + {} |\n", gib(file), gib(kv));
  fmt::print("| weights in memory: from the file / owned copies / float32 norms | {} / {} / {} |\n", gib(ws.from_file),
             gib(ws.owned), gib(ws.small_f32));
  fmt::print("| the file's bytes in memory (BOSCH_MMAP: 1 maps the file, 0 copies it) | {} |\n\n",
             page_report_text(m->weight_summary().pages));
  fmt::print("decode reads / memory bandwidth           {:.2f}{}\n", read_gbs / bw,
             ws.decode_bytes < 64.0 * 1048576 ? "  (weights fit in the caches: not a DRAM figure)" : "");
  fmt::print("fastest step's reads / memory bandwidth   {:.2f}  (both a best: what a quiet machine gives)\n",
             fastest_gbs / bw);
  fmt::print("paired: median of step reads / bandwidth  {:.2f}  ({} steps, each beside a {} MiB read right after it; "
             "range {:.2f}-{:.2f})\n", paired_median, paired.size(), o.paired_mib, paired.front(), paired.back());
  fmt::print("peak RSS / (file + KV cache)              {:.2f}  (load, prefill and decode)\n", peak / (file + kv));
}

BenchRegistrar reg("weights", "weights in their stored type: decode GB/s vs memory bandwidth, peak RSS vs file size",
                   [](CLI::App& app) {
  auto o = std::make_shared<WeightsOptions>();
  add_opt(app, "model", o->model, "model (default: the embedded model)");
  add_opt(app, "--tokens", o->tokens, "prompt length of the prefill")->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--decode", o->decode, "timed decode steps")->check(CLI::Range(1, 100000));
  add_opt(app, "--bandwidth-mib", o->bandwidth_mib, "size of the bandwidth buffer")->check(CLI::Range(64, 1 << 16));
  add_opt(app, "--paired-mib", o->paired_mib, "size of the bandwidth read after each paired decode step")
      ->check(CLI::Range(64, 1 << 16));
  add_opt(app, "--kv-type", o->kv_type, "KV cache values: f32 or f16")->check(CLI::IsMember({"f32", "f16"}));
  app.callback([o] { run(*o); });
});

}  // namespace
}  // namespace bosch::cli
