// The three BOSCH stages put together, plus the result's JSON form.
#include "search/stages/stage_steps.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "search/core/head_bits.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::search {

int probe_count(double ratio, int n_heads) {
  // ceil, tolerant to rho*H landing a hair above an integer (0.3 * 10 = 3.0000000000000004).
  const int c = std::clamp(static_cast<int>(std::ceil(ratio * n_heads - 1e-9)), 0, n_heads);
  // c = H with rho < 1 (0.875 at H = 4): every probe would convert the whole layer, the cascade
  // would fall to S^ 0 and its head scores would carry no signal; probe H - 1 heads instead.
  return c == n_heads && ratio < 1 && n_heads > 1 ? n_heads - 1 : c;
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
  std::vector<std::string> start_names;
  for (const auto& st : starts) start_names.push_back(st.name);
  return {{"method", method},
          {"ratio", ratio},
          {"budget_multi", budget_multi},
          {"budget_layer", budget_layer},
          {"sweep_starts", sweep_starts},
          {"starts", start_names},
          {"budget_probe", budget_probe},
          {"budget_group", budget_group},
          {"buckets", buckets},
          {"bucket_share", bucket_share},
          {"budget_ls", budget_ls},
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
  if (progress_quiet()) return;
  std::fprintf(stderr, "search: %-10s %6lld evaluations %8.1f s  S^=%.4f  %s\n", s.name.c_str(),
               static_cast<long long>(s.evaluations), s.seconds, s.best_score, s.detail.c_str());
}


// Stage 2: the bucket counts, guarded against the near-uniform ones; sets r.ratios and the
// starting assignment r.bits of stage 3. Returns the stage line.
std::string ratio_stage(Evaluator& ev, const SearchOptions& opt, SearchResult& r) {
  const int H = ev.n_heads();
  r.ratios = assign_ratios(probe_drops(r.probe), H, r.k_total, opt.buckets);
  std::string counts = fmt::format("{}", fmt::join(r.ratios.counts, ","));
  r.bits = initial_assignment(r.probe, r.ratios.counts, H);
  ev.set_stage("ratio");
  double start_score = ev.evaluate(r.bits).score;  // the starting point of stage 3
  // Guard: the drops are measured at c heads per layer, and a layer that loses nothing at c
  // may lose everything at c + 1 (its c most local heads can go, the next one is a retrieval
  // head). So the bucket start must beat the near-uniform one (the stage-1 cascade itself
  // when c * L = K), else stage 3 starts from the uniform counts, in the same buckets. One more
  // evaluation at most.
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
      counts = fmt::format("{} (buckets' {} scored S^={:.6f} < uniform {:.6f}: uniform kept)",
                           fmt::join(uniform, ","), counts, start_score, uscore);
    }
  }
  std::string sizes;
  for (const auto& b : r.ratios.buckets) {
    int swa = 0;
    for (int l : b) swa += r.ratios.counts[l];
    sizes += fmt::format("{}{}/{}", sizes.empty() ? "" : " ", swa, b.size() * H);
  }
  return fmt::format("{} buckets (SWA/heads: {}), heads per layer {}", r.ratios.buckets.size(), sizes, counts);
}

}  // namespace

SearchResult run_bosch_search(Evaluator& ev, const SearchOptions& opt) {
  const int L = ev.n_layers(), H = ev.n_heads();
  check(is_search_method(opt.method), "--method {}: expected bosch, bosch-plus, bosch-single, bosch-multi, bosch-layer or ls",
        opt.method);
  check(opt.ratio >= 0 && opt.ratio <= 1, "--ratio {}: expected a value in [0, 1]", opt.ratio);
  check(opt.budget_probe >= 1, "--budget-probe {}: expected >= 1", opt.budget_probe);
  check(opt.budget_group >= 1 || opt.budget_group == -1, "--budget-group {}: expected >= 1 (or -1: auto)",
        opt.budget_group);
  check(opt.buckets >= 1 && opt.buckets <= 64, "--buckets {}: expected 1..64", opt.buckets);
  check(opt.bucket_share > 0 && opt.bucket_share <= 1, "--bucket-share {}: expected a fraction in (0, 1]",
        opt.bucket_share);
  check(opt.budget_polish >= -1, "--budget-polish {}: expected >= 0 (or -1: auto)", opt.budget_polish);
  for (const auto& st : opt.starts)
    check(st.importance.size() == ev.n_bits(), "search: start ranking {} has {} scores, expected {}", st.name,
          st.importance.size(), ev.n_bits());
  const auto t_start = Clock::now();
  const ObjectiveStats stats_start = ev.objective().stats();
  SearchResult r;
  r.method = opt.method;
  r.k_total = target_count(opt.ratio, L, H);
  auto milestone = [&](const std::string& method, const HeadBits& bits) {
    r.milestones.push_back({method, bits, ev.evaluate(bits).score, ev.fresh(), since(t_start)});
  };

  auto t0 = Clock::now();
  int64_t before = ev.fresh();
  ev.init_references();
  r.s_full = ev.s_full();
  r.s_allswa = ev.s_allswa();
  r.stages.push_back({"reference", ev.fresh() - before, since(t0), 1.0,
                      fmt::format("S_full={:.6g} S_allswa={:.6g}", r.s_full, r.s_allswa)});
  report(r.stages.back());
  // Each stage: timed, its fresh evaluations counted, summarised on stderr.
  auto stage = [&](const std::string& name, auto&& body) {
    t0 = Clock::now();
    before = ev.fresh();
    std::string detail = body();
    const double score = ev.evaluate(r.bits).score;  // the stage's answer, charged to the stage
    r.stages.push_back({name, ev.fresh() - before, since(t0), score, detail});
    report(r.stages.back());
  };

  if (r.k_total == 0 || r.k_total == L * H) {  // nothing to choose
    r.bits.assign(ev.n_bits(), r.k_total ? 1 : 0);
    r.ratios.counts.assign(L, r.k_total ? H : 0);
  } else if (opt.method == "bosch-multi") {
    stage("multi", [&] {
      r.bits = run_multi_search(ev, opt, r.k_total, r);
      return fmt::format("one group of {} layers, {} LNS iterations", L, r.groups.back().lns_iterations);
    });
  } else if (opt.method == "ls") {
    stage("ls", [&] {
      r.bits = run_ls_search(ev, opt, r.k_total, r);
      return fmt::format("from {}, heads per layer {}", r.start_chosen, fmt::join(layer_counts(r.bits, H), ","));
    });
  } else if (opt.method == "bosch-layer") {
    stage("layers", [&] {
      r.bits = run_layer_search(ev, opt, r.k_total, r);
      return fmt::format("heads per layer {}", fmt::join(layer_counts(r.bits, H), ","));
    });
  } else {
    // Stage 1.
    stage("probes", [&] {
      r.probe = run_probe_stage(ev, opt);
      // bosch-single: stage 1's heads, cut or padded to K by the probe head scores.
      const std::vector<int> uniform = uniform_counts(std::vector<double>(L, 1.0), H, r.k_total);
      r.bits = initial_assignment(r.probe, uniform, H);
      return fmt::format("{} heads/layer, {}", r.probe.count,
                         r.probe.layers[0].exhaustive ? "exhaustive" : "local search");
    });
    milestone("bosch-single", r.bits);
    if (opt.method != "bosch-single") {
      // Stage 2 (one or two evaluations: the start and the guard).
      stage("ratios", [&] { return ratio_stage(ev, opt, r); });
      // Stage 3.
      stage("groups", [&] {
        r.groups = run_group_stage(ev, opt, r.ratios, r.bits, &r.probe);
        int budget = 0, iterations = 0, accepted = 0, moved = 0, joint = 0;
        for (const auto& g : r.groups)
          budget += g.budget, iterations += g.lns_iterations, accepted += g.accepted, moved += g.moved, joint += g.joint;
        return fmt::format("{} buckets{}, budget {} evaluations, {} LNS iterations, {} accepted ({} heads moved), "
                           "heads per layer {}", r.groups.size() - joint, joint ? " + joint phase" : "", budget,
                           iterations, accepted, moved, fmt::join(layer_counts(r.bits, H), ","));
      });
      milestone("bosch", r.bits);
    }
    if (opt.method == "bosch-plus") {
      std::vector<double> prior;
      // Starts: the three stages' answer and every static ranking's top K; the best goes on.
      stage("starts", [&] {
        r.starts.push_back({"bosch", r.bits, 0, 0});
        std::vector<NamedRanking> rankings = opt.sweep_starts ? sweep_rankings(ev) : std::vector<NamedRanking>{};
        if (!rankings.empty()) prior = rankings[0].importance;  // ablation
        rankings.insert(rankings.end(), opt.starts.begin(), opt.starts.end());
        for (const auto& rk : rankings) r.starts.push_back({rk.name, lowest_k(rk.importance, r.k_total), 0, 0});
        ev.set_stage("starts");
        size_t best = 0;
        for (size_t i = 0; i < r.starts.size(); ++i) {
          const Evaluation e = ev.evaluate(r.starts[i].bits);
          r.starts[i].score = e.score, r.starts[i].loss = e.loss;
          if (e.loss < r.starts[best].loss) best = i;  // ties: the earlier (the three stages first)
        }
        r.bits = r.starts[best].bits;
        r.start_chosen = r.starts[best].name;
        std::string scores;
        for (const auto& c : r.starts) scores += fmt::format(" {}={:.4f}", c.name, c.score);
        return fmt::format("from {} (S^:{})", r.start_chosen, scores);
      });
      // Polish: cross-layer swaps and restorations.
      if (polish_budget(opt, ev.n_bits()) > 0)
        stage("polish", [&] {
          r.polish = run_polish_stage(ev, opt, r.bits, prior.empty() ? nullptr : &prior);
          return fmt::format("{} moves in {} rounds, heads per layer {}", r.polish.moves.size(), r.polish.rounds,
                             fmt::join(layer_counts(r.bits, H), ","));
        });
    }
  }
  check(count_ones(r.bits) == r.k_total, "search: internal error: {} SWA heads, expected {}",
        count_ones(r.bits), r.k_total);
  milestone(opt.method, r.bits);
  if (opt.method == "bosch-single" || opt.method == "bosch") r.milestones.pop_back();  // already there
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
                      {"bucket", l < ratios.tier.size() ? ratios.tier[l] : 0},
                      {"swa_heads", l < ratios.counts.size() ? ratios.counts[l] : 0},  // stage 2
                      {"final_swa_heads", final_counts[l]}});  // the answer (after the polish)
  }
  json groups_j = json::array();
  for (const auto& g : groups)
    groups_j.push_back({{"swa_heads", g.count},
                        {"layers", g.layers},
                        {"start_loss", g.start_loss},
                        {"end_loss", g.end_loss},
                        {"budget", g.budget},
                        {"evaluations", g.evaluations},
                        {"lns_iterations", g.lns_iterations},
                        {"accepted", g.accepted},
                        {"heads_moved", g.moved},
                        {"coverage_tries", g.coverage_tries},
                        {"coverage_accepted", g.coverage_accepted},
                        {"marginal_rounds", g.marginal_rounds},
                        {"exhaustive", g.exhaustive},
                        {"joint", g.joint}});
  json moves = json::array();
  for (auto [t, f] : polish.moves) moves.push_back({{"to_full", t}, {"to_swa", f}});
  const json polish_j = {{"start_loss", polish.start_loss}, {"end_loss", polish.end_loss},
                         {"evaluations", polish.evaluations}, {"rounds", polish.rounds},
                         {"moves", moves}, {"restorations", polish.restorations},
                         {"restored", polish.restored}};
  json starts_j = json::array();
  for (const auto& c : starts) starts_j.push_back({{"name", c.name}, {"score", c.score}, {"loss", c.loss}});
  json milestones_j = json::array();
  for (const auto& m : milestones)
    milestones_j.push_back({{"method", m.method}, {"score", m.score}, {"evaluations", m.evaluations},
                            {"seconds", m.seconds}, {"mask", bits_to_string(m.bits)}});
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
  return {{"method", method},
          {"swa_heads", k_total},
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
          {"polish", polish_j},
          {"starts", starts_j},
          {"start_chosen", start_chosen},
          {"milestones", milestones_j}};
}

}  // namespace bosch::search
