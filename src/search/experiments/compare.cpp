#include "search/experiments/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "search/core/evaluator.h"
#include "search/core/journal.h"
#include "search/core/rng.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::search {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(trim(item));
  return out;
}

std::optional<double> normalise(double s, double full, double allswa) {
  if (full == allswa) return std::nullopt;
  return (s - allswa) / (full - allswa);
}

}  // namespace

std::vector<std::string> parse_compare_methods(const std::string& spec, bool have_duo) {
  std::vector<std::string> out;
  auto add = [&](const std::string& m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  for (const auto& item : split_commas(spec)) {
    check(!item.empty(), "--methods: empty name in '{}'", spec);
    std::string low = item;
    for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (low == "all") {
      for (const char* m : {"bosch", "bosch-plus", "bosch-single", "bosch-layer", "ls"}) add(m);
      for (const auto& b : baseline_methods())
        if (b != "duo" || have_duo) add(b);
    } else if (low == "search") {
      add("bosch");
    } else if (is_search_method(low)) {
      add(low);
    } else {
      add(canonical_baseline(item));  // Error lists the known names
    }
  }
  check(!out.empty(), "--methods: no method given");
  return out;
}

std::vector<double> parse_ratios(const std::string& spec) {
  std::vector<double> r;
  for (const auto& item : split_commas(spec)) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    check(!item.empty() && end && *end == '\0' && v >= 0 && v <= 1,
          "--ratios: '{}' is not a number in [0, 1] (in '{}')", item, spec);
    r.push_back(v);
  }
  check(!r.empty(), "--ratios: no ratio given");
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

const CompareRow* CompareResult::find(const std::string& method, double ratio) const {
  for (const auto& r : rows)
    if (r.method == method && r.ratio == ratio) return &r;
  return nullptr;
}

nlohmann::json CompareResult::to_json() const {
  nlohmann::json j;
  j["n_layers"] = n_layers;
  j["n_heads"] = n_heads;
  j["ratios"] = ratios;
  j["methods"] = methods;
  auto ref = [](const MaskScore& s) {
    return nlohmann::json{{"raw_score", s.value}, {"exact_match", s.exact_rate}, {"mean_logprob", s.mean_logprob}};
  };
  j["references"] = {{"full", ref(test_full)}, {"all_swa", ref(test_allswa)}};
  j["calibration_references"] = {{"full", ref(calib_full)}, {"all_swa", ref(calib_allswa)}};
  j["results"] = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json x = {{"method", r.method},
                        {"ratio", r.ratio},
                        {"k", r.k},
                        {"exact_match", r.exact_match},
                        {"normalized", r.normalized ? nlohmann::json(*r.normalized) : nlohmann::json(nullptr)},
                        {"evaluations", r.evaluations},
                        {"seconds", r.seconds},
                        {"raw_score", r.test.value},
                        {"mean_logprob", r.test.mean_logprob},
                        {"calibration_normalized", r.calib_normalized ? nlohmann::json(*r.calib_normalized) : nlohmann::json(nullptr)},
                        {"mask", bits_to_string(r.bits)},
                        {"test_per_sample", r.test.per_sample}};  // for paired comparisons across runs
    if (r.vs_baseline)
      x["vs_best_baseline"] = {{"baseline", r.vs_baseline->baseline}, {"diff", r.vs_baseline->diff},
                               {"ci95", {r.vs_baseline->lo, r.vs_baseline->hi}},
                               {"samples", r.vs_baseline->samples}, {"resamples", r.vs_baseline->resamples}};
    j["results"].push_back(std::move(x));
  }
  j["sensitivity"] = nlohmann::json::array();
  for (const auto& s : sensitivity)
    j["sensitivity"].push_back({{"ratio", s.ratio}, {"drops", s.drops}, {"weights", s.weights},
                                {"best_scores", s.best_scores}, {"counts", s.counts}});
  j["searches"] = searches;
  j["test_evaluations"] = test_evaluations;
  j["test_seconds"] = test_seconds;
  return j;
}

PairedInterval paired_bootstrap(const std::vector<double>& a, const std::vector<double>& b, double scale,
                                int resamples, uint64_t seed) {
  check(a.size() == b.size() && !a.empty(), "compare: paired samples differ in number ({} vs {})", a.size(),
        b.size());
  const size_t n = a.size();
  std::vector<double> d(n);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) mean += (d[i] = (a[i] - b[i]) / scale);
  mean /= static_cast<double>(n);
  Rng rng(seed);
  std::vector<double> means(resamples);
  for (int r = 0; r < resamples; ++r) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += d[rng.below(n)];
    means[r] = s / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  auto at = [&](double q) { return means[std::min<size_t>(resamples - 1, static_cast<size_t>(q * resamples))]; };
  return {"", mean, at(0.025), at(0.975), static_cast<int>(n), resamples};
}

std::vector<NamedRanking> static_start_rankings(BaselineRunner& baselines, const std::vector<std::string>& names) {
  std::vector<NamedRanking> out;
  Progress progress("start rankings", names.size());  // attention statistics: a pass over the calibration
  for (const auto& n : names) {
    out.push_back({n, baselines.importance(n)});
    progress.add(1, n);
  }
  return out;
}

namespace {

bool is_bosch_run_method(const std::string& m) { return m == "bosch" || m == "bosch-plus" || m == "bosch-single"; }

// One search run at `ratio` (`method`: the run's own method; journal per method and ratio).
SearchResult run_search_at(Objective& calib, const CompareOptions& opt, const std::string& method, double ratio,
                           const std::vector<NamedRanking>& starts, int64_t budget_ls = -1) {
  EvaluatorOptions eo;
  eo.target_ratio = ratio;
  eo.alpha = opt.alpha;
  SearchOptions so = opt.search;
  so.ratio = ratio;
  so.method = method;
  so.starts = method == "bosch-plus" || method == "ls" ? starts : std::vector<NamedRanking>{};
  if (method == "ls" && budget_ls > 0) so.budget_ls = static_cast<int>(std::min<int64_t>(budget_ls, 1 << 30));
  eo.config = so.to_json();
  eo.config["alpha"] = opt.alpha;
  eo.config["window"] = opt.swa.window;
  eo.config["sinks"] = opt.swa.sinks;
  eo.config["objective"] = calib.describe();
  if (!opt.journal_dir.empty()) {
    // The run holding bosch / bosch-plus / bosch-single keeps the name it always had.
    eo.journal_path = fmt::format("{}/{}-r{}.jsonl", opt.journal_dir, is_bosch_run_method(method) ? "search" : method, ratio);
    // Ratios the killed run had not reached yet have no journal: they start afresh.
    eo.resume = opt.resume && std::filesystem::exists(eo.journal_path);
  }
  Evaluator ev(calib, eo);
  return run_bosch_search(ev, so);
}

}  // namespace

CompareResult run_compare(Objective& calib, Objective& test, BaselineRunner& baselines,
                          const CompareOptions& opt) {
  const int L = calib.n_layers(), H = calib.n_heads();
  check(test.n_layers() == L && test.n_heads() == H,
        "compare: the test objective has {} x {} heads, the calibration one {} x {}", test.n_layers(),
        test.n_heads(), L, H);
  check(baselines.inputs().n_layers == L && baselines.inputs().n_heads == H,
        "compare: the baselines are set up for {} x {} heads, the objective has {} x {}",
        baselines.inputs().n_layers, baselines.inputs().n_heads, L, H);
  check(!opt.ratios.empty() && !opt.methods.empty(), "compare: need at least one ratio and one method");
  for (const auto& m : opt.methods)
    check(is_search_method(m) || is_baseline_method(m), "compare: unknown method '{}'", m);

  CompareResult res;
  res.n_layers = L;
  res.n_heads = H;
  res.ratios = opt.ratios;
  res.methods = opt.methods;

  // Test scores, memoised on the mask: methods often agree at the extreme ratios.
  std::map<std::string, MaskScore> test_memo;
  auto score_test = [&](const HeadBits& bits) {
    const std::string key = bits_to_string(bits);
    if (auto it = test_memo.find(key); it != test_memo.end()) return it->second;
    const auto t0 = Clock::now();
    MaskScore s = test.evaluate(bits);
    res.test_seconds += since(t0);
    ++res.test_evaluations;
    return test_memo.emplace(key, s).first->second;
  };
  const HeadBits full(static_cast<size_t>(L) * H, 0), allswa(static_cast<size_t>(L) * H, 1);
  res.test_full = score_test(full);
  res.test_allswa = score_test(allswa);
  res.calib_full = calib.evaluate(full);
  res.calib_allswa = calib.evaluate(allswa);

  // The rankings bosch-plus starts from: the attention statistics among the listed baselines
  // (its own sweep gives ablation and gate).
  std::vector<std::string> start_names;
  if (std::find(opt.methods.begin(), opt.methods.end(), "bosch-plus") != opt.methods.end())
    for (const auto& m : opt.methods)
      if (is_static_start_ranking(m)) start_names.push_back(m);
  const std::vector<NamedRanking> starts = static_start_rankings(baselines, start_names);

  Progress progress("compare", opt.ratios.size() * opt.methods.size());
  for (double ratio : opt.ratios) {
    const size_t first_row = res.rows.size();
    std::optional<SearchResult> main_run;  // bosch / bosch-plus / bosch-single share one run
    const bool plus = std::find(opt.methods.begin(), opt.methods.end(), "bosch-plus") != opt.methods.end();
    const bool paper = std::find(opt.methods.begin(), opt.methods.end(), "bosch") != opt.methods.end();
    for (const auto& method : opt.methods) {
      CompareRow row;
      row.method = method;
      row.ratio = ratio;
      if (is_search_method(method)) {
        std::optional<SearchResult> own;
        const SearchResult* sr = nullptr;
        // ls, the control of equal budget, needs the paper's run first: it gets the distinct
        // masks bosch scored (stage 1 included) as its budget.
        if (is_bosch_run_method(method) || (method == "ls" && (plus || paper))) {
          if (!main_run) {
            main_run = run_search_at(calib, opt, plus ? "bosch-plus" : paper ? "bosch" : "bosch-single", ratio, starts);
            LayerSensitivity s;
            s.ratio = ratio;
            s.drops = main_run->ratios.drops;
            s.weights = main_run->ratios.weights;
            s.counts = main_run->ratios.counts;
            s.final_counts = layer_counts(main_run->bits, H);
            for (const auto& lp : main_run->probe.layers) s.best_scores.push_back(lp.best_score);
            res.sensitivity.push_back(std::move(s));
            res.searches.push_back(main_run->to_json());
          }
          sr = &*main_run;
        }
        if (method == "ls") {
          const SearchResult::Milestone* paper_ms = main_run ? main_run->milestone("bosch") : nullptr;
          own = run_search_at(calib, opt, method, ratio, starts, paper_ms ? paper_ms->evaluations : -1);
          res.searches.push_back(own->to_json());
          sr = &*own;
        } else if (!sr) {
          own = run_search_at(calib, opt, method, ratio, starts);
          res.searches.push_back(own->to_json());
          sr = &*own;
        }
        const SearchResult::Milestone* ms = sr->milestone(method);
        if (ms) {
          row.bits = ms->bits;
          row.evaluations = ms->evaluations;
          row.seconds = ms->seconds;
        } else {  // k = 0 or N: nothing to choose
          row.bits = sr->bits;
          row.evaluations = sr->evaluations;
          row.seconds = sr->seconds;
        }
        row.k = sr->k_total;
        row.provenance = {{"method", method}, {"search", opt.search.to_json()}};
      } else {
        BaselineMask bm = baselines.run(method, ratio);
        row.k = bm.k;
        row.bits = std::move(bm.bits);
        row.evaluations = bm.evaluations;
        row.seconds = bm.seconds;
        row.provenance = std::move(bm.provenance);
      }
      check(count_ones(row.bits) == target_count(ratio, L, H),
            "compare: method {} produced {} SWA heads at ratio {}, expected {}", method,
            count_ones(row.bits), ratio, target_count(ratio, L, H));
      row.test = score_test(row.bits);
      row.exact_match = row.test.exact_rate;
      row.normalized = normalise(row.test.value, res.test_full.value, res.test_allswa.value);
      row.calib_normalized = normalise(calib.evaluate(row.bits).value, res.calib_full.value, res.calib_allswa.value);
      row.provenance["calibration_score"] = row.calib_normalized ? nlohmann::json(*row.calib_normalized) : nullptr;
      progress.add(1, fmt::format("{} at {}", method, ratio));
      res.rows.push_back(std::move(row));
    }
    // Each search method against the best baseline on test at this ratio: paired bootstrap.
    const CompareRow* best = nullptr;
    for (size_t i = first_row; i < res.rows.size(); ++i)
      if (!is_search_method(res.rows[i].method) &&
          (!best || res.rows[i].test.value > best->test.value))
        best = &res.rows[i];
    const double scale = res.test_full.value != res.test_allswa.value ? res.test_full.value - res.test_allswa.value : 1.0;
    for (size_t i = first_row; best && i < res.rows.size(); ++i) {
      CompareRow& row = res.rows[i];
      if (!is_search_method(row.method) || row.test.per_sample.empty()) continue;
      PairedInterval pi = paired_bootstrap(row.test.per_sample, best->test.per_sample, scale, 10000,
                                           0x5eed + static_cast<uint64_t>(i));
      pi.baseline = best->method;
      row.vs_baseline = pi;
    }
  }
  progress.finish();
  return res;
}

}  // namespace bosch::search
