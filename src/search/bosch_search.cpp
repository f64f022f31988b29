// The three BOSCH stages put together, plus the result's JSON form.
#include "search/bosch_search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/error.h"

namespace bosch::search {

int target_count(double ratio, int n_layers, int n_heads) {
  return static_cast<int>(std::llround(ratio * n_layers * n_heads));
}

int probe_count(double ratio, int n_heads) {
  // ceil, tolerant to rho*H landing a hair above an integer (0.3 * 10 = 3.0000000000000004).
  return std::clamp(static_cast<int>(std::ceil(ratio * n_heads - 1e-9)), 0, n_heads);
}

Rng stream_rng(uint64_t seed, uint64_t stage, uint64_t index) {
  uint64_t s = seed;
  uint64_t a = splitmix64(s) ^ (stage * 0xD1B54A32D192ED03ull);
  uint64_t b = splitmix64(a) ^ (index * 0x9E3779B97F4A7C15ull);
  return Rng(splitmix64(b));
}

int stall_limit(const SearchOptions& opt, int budget) {
  return opt.stall_limit > 0 ? opt.stall_limit : std::max(200, 4 * budget);
}

nlohmann::json SearchOptions::to_json() const {
  return {{"ratio", ratio},
          {"budget_probe", budget_probe},
          {"budget_group", budget_group},
          {"destroy_fraction", destroy_fraction},
          {"budget_polish", budget_polish},
          {"exact_repair", exact_repair},
          {"seed", seed},
          {"stall_limit", stall_limit}};
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void report(const StageSummary& s) {
  if (std::getenv("BOSCH_QUIET")) return;
  std::fprintf(stderr, "search: %-10s %6lld evaluations %8.1f s  S^=%.4f  %s\n", s.name.c_str(),
               static_cast<long long>(s.evaluations), s.seconds, s.best_score, s.detail.c_str());
}

}  // namespace

SearchResult run_bosch_search(Evaluator& ev, const SearchOptions& opt) {
  const int L = ev.n_layers(), H = ev.n_heads();
  check(opt.ratio >= 0 && opt.ratio <= 1, "--ratio {}: expected a value in [0, 1]", opt.ratio);
  check(opt.budget_probe >= 1, "--budget-probe {}: expected >= 1", opt.budget_probe);
  check(opt.budget_group >= 1, "--budget-group {}: expected >= 1", opt.budget_group);
  check(opt.budget_polish >= -1, "--budget-polish {}: expected >= 0 (or -1: auto)", opt.budget_polish);
  check(opt.destroy_fraction > 0 && opt.destroy_fraction <= 1,
        "--destroy {}: expected a fraction in (0, 1]", opt.destroy_fraction);
  const auto t_start = Clock::now();
  const ObjectiveStats stats_start = ev.objective().stats();
  SearchResult r;
  r.k_total = target_count(opt.ratio, L, H);

  auto t0 = Clock::now();
  int64_t before = ev.fresh();
  ev.init_references();
  r.s_full = ev.s_full();
  r.s_allswa = ev.s_allswa();
  r.stages.push_back({"reference", ev.fresh() - before, since(t0), 1.0,
                      fmt::format("S_full={:.6g} S_allswa={:.6g}", r.s_full, r.s_allswa)});
  report(r.stages.back());

  if (r.k_total == 0 || r.k_total == L * H) {  // nothing to choose
    r.bits.assign(ev.n_bits(), r.k_total ? 1 : 0);
    r.ratios.counts.assign(L, r.k_total ? H : 0);
  } else {
    // Stage 1.
    t0 = Clock::now();
    before = ev.fresh();
    r.probe = run_probe_stage(ev, opt);
    r.stages.push_back({"probes", ev.fresh() - before, since(t0), r.probe.layers[0].best_score,
                        fmt::format("{} heads/layer, {}", r.probe.count,
                                    r.probe.layers[0].exhaustive ? "exhaustive" : "local search")});
    report(r.stages.back());

    // Stage 2 (no evaluations).
    t0 = Clock::now();
    r.ratios = assign_ratios(probe_drops(r.probe), H, r.k_total);
    std::string counts;
    for (int c : r.ratios.counts) counts += fmt::format("{}{}", counts.empty() ? "" : ",", c);
    r.bits = initial_assignment(r.probe, r.ratios.counts, H);
    ev.set_stage("ratio");
    before = ev.fresh();
    double start_score = ev.evaluate(r.bits).score;  // the starting point of stage 3
    // Guard: the drops are measured at c heads per layer, and a layer that loses nothing at c
    // may lose everything at c + 1 (its c most local heads can go, the next one is a retrieval
    // head). So the adaptive start must beat the near-uniform one (the stage-1 cascade itself
    // when c * L = K), else stage 3 starts from the uniform counts. One more evaluation at most.
    const std::vector<int> uniform = uniform_counts(r.ratios.weights, H, r.k_total);
    if (uniform != r.ratios.counts) {
      const HeadBits ubits = initial_assignment(r.probe, uniform, H);
      const double uscore = ev.evaluate(ubits).score;
      r.ratios.adaptive_score = start_score;
      r.ratios.uniform_score = uscore;
      if (uscore > start_score) {
        r.ratios.uniform_fallback = true;
        r.ratios.adaptive_counts = r.ratios.counts;
        r.ratios.counts = uniform;
        r.bits = ubits;
        counts = fmt::format("{} (adaptive {} scored S^={:.6f} < uniform {:.6f}: uniform kept)",
                             fmt::join(uniform, ","), counts, start_score, uscore);
        start_score = uscore;
      }
    }
    r.stages.push_back(
        {"ratios", ev.fresh() - before, since(t0), start_score, "heads per layer " + counts});
    report(r.stages.back());

    // Stage 3.
    t0 = Clock::now();
    before = ev.fresh();
    r.groups = run_group_stage(ev, opt, r.ratios.counts, r.bits);
    r.stages.push_back({"groups", ev.fresh() - before, since(t0), ev.evaluate(r.bits).score,
                        fmt::format("{} groups", r.groups.size())});
    report(r.stages.back());

    // Polish: cross-layer swaps.
    if (polish_budget(opt, ev.n_bits()) > 0) {
      t0 = Clock::now();
      before = ev.fresh();
      r.polish = run_polish_stage(ev, opt, r.bits);
      r.stages.push_back({"polish", ev.fresh() - before, since(t0), ev.evaluate(r.bits).score,
                          fmt::format("{} swaps in {} rounds, heads per layer {}", r.polish.moves.size(),
                                      r.polish.rounds, fmt::join(layer_counts(r.bits, H), ","))});
      report(r.stages.back());
    }
  }
  check(count_ones(r.bits) == r.k_total, "search: internal error: {} SWA heads, expected {}",
        count_ones(r.bits), r.k_total);
  Evaluation fin = ev.evaluate(r.bits);
  r.raw = fin.raw;
  r.score = fin.score;
  r.loss = fin.loss;
  r.evaluations = ev.fresh();
  r.computed = ev.computed();
  r.replayed = ev.replayed();
  r.memo_hits = ev.memo_hits();
  r.objective_seconds = ev.objective_seconds();
  r.objective_stats = ev.objective().stats().since(stats_start);
  r.seconds = since(t_start);
  return r;
}

nlohmann::json SearchResult::to_json() const {
  using nlohmann::json;
  const std::vector<int> final_counts =
      probe.layers.empty() ? std::vector<int>{} : layer_counts(bits, static_cast<int>(bits.size() / probe.layers.size()));
  json layers = json::array();
  for (size_t l = 0; l < probe.layers.size(); ++l) {
    const auto& p = probe.layers[l];
    json hs = json::array();
    for (double v : p.head_scores) hs.push_back(std::isfinite(v) ? json(v) : json(nullptr));
    layers.push_back({{"layer", p.layer},
                      {"probe_best_heads", p.best_heads},
                      {"probe_score", p.best_score},
                      {"probe_head_scores", hs},
                      {"probe_evaluations", p.evaluations},
                      {"probe_exhaustive", p.exhaustive},
                      {"drop", l < ratios.drops.size() ? ratios.drops[l] : 0.0},
                      {"weight", l < ratios.weights.size() ? ratios.weights[l] : 0.0},
                      {"swa_heads", l < ratios.counts.size() ? ratios.counts[l] : 0},  // stage 2
                      {"final_swa_heads", final_counts[l]}});  // the answer (after the polish)
  }
  json groups_j = json::array();
  for (const auto& g : groups)
    groups_j.push_back({{"swa_heads_per_layer", g.count},
                        {"layers", g.layers},
                        {"start_loss", g.start_loss},
                        {"end_loss", g.end_loss},
                        {"evaluations", g.evaluations},
                        {"lns_iterations", g.lns_iterations},
                        {"exhaustive", g.exhaustive}});
  json moves = json::array();
  for (auto [t, f] : polish.moves) moves.push_back({{"to_full", t}, {"to_swa", f}});
  const json polish_j = {{"start_loss", polish.start_loss}, {"end_loss", polish.end_loss},
                         {"evaluations", polish.evaluations}, {"rounds", polish.rounds},
                         {"moves", moves}};
  json stages_j = json::array();
  for (const auto& s : stages)
    stages_j.push_back({{"name", s.name},
                        {"evaluations", s.evaluations},
                        {"seconds", s.seconds},
                        {"score", s.best_score},
                        {"detail", s.detail}});
  const auto& os = objective_stats;
  // Naive = every requested candidate (memo repeats included; journal replays excluded)
  // recomputed through all layers.
  const double per_eval =
      os.evaluations > 0 ? double(os.layer_forwards_naive) / double(os.evaluations) : 0.0;
  const double naive_all = per_eval * double(computed + memo_hits);
  return {{"swa_heads", k_total},
          {"score", score},
          {"loss", loss},
          {"raw_score", raw.value},
          {"exact_rate", raw.exact_rate},
          {"mean_logprob", raw.mean_logprob},
          {"s_full", s_full},
          {"s_allswa", s_allswa},
          {"evaluations", evaluations},
          {"evaluations_computed", computed},
          {"evaluations_replayed", replayed},
          {"memo_hits", memo_hits},
          {"seconds", seconds},
          {"evaluations_per_second", objective_seconds > 0 ? computed / objective_seconds : 0.0},
          {"layer_forwards", os.layer_forwards},
          {"layer_forwards_naive", naive_all},
          {"layer_forward_saving", os.layer_forwards > 0 ? naive_all / os.layer_forwards : 0.0},
          {"layer_work", os.layer_work},
          {"work_saving", os.layer_work > 0 ? naive_all / os.layer_work : 0.0},
          {"layer_forward_saving_cache_only",
           os.layer_forwards > 0 ? double(os.layer_forwards_naive) / os.layer_forwards : 0.0},
          {"stages", stages_j},
          {"ratio_guard",
           {{"uniform_fallback", ratios.uniform_fallback},
            {"adaptive_counts", ratios.uniform_fallback ? ratios.adaptive_counts : ratios.counts},
            {"adaptive_score", ratios.adaptive_score},
            {"uniform_score", ratios.uniform_score}}},
          {"layers", layers},
          {"groups", groups_j},
          {"polish", polish_j}};
}

}  // namespace bosch::search
