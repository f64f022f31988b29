#include "search/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "search/evaluator.h"
#include "search/journal.h"
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
      add("bosch");
      for (const auto& b : baseline_methods())
        if (b != "duo" || have_duo) add(b);
    } else if (low == "bosch" || low == "search") {
      add("bosch");
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
  auto ref = [](const RawScore& s) {
    return nlohmann::json{{"raw_score", s.value}, {"exact_match", s.exact_rate}, {"mean_logprob", s.mean_logprob}};
  };
  j["references"] = {{"full", ref(test_full)}, {"all_swa", ref(test_allswa)}};
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
                        {"mask", bits_to_string(r.bits)}};
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
    check(m == "bosch" || is_baseline_method(m), "compare: unknown method '{}'", m);

  CompareResult res;
  res.n_layers = L;
  res.n_heads = H;
  res.ratios = opt.ratios;
  res.methods = opt.methods;

  // Test scores, memoised on the mask: methods often agree at the extreme ratios.
  std::map<std::string, RawScore> test_memo;
  auto score_test = [&](const HeadBits& bits) {
    const std::string key = bits_to_string(bits);
    if (auto it = test_memo.find(key); it != test_memo.end()) return it->second;
    const auto t0 = Clock::now();
    RawScore s = test.evaluate(bits);
    res.test_seconds += since(t0);
    ++res.test_evaluations;
    return test_memo.emplace(key, s).first->second;
  };
  res.test_full = score_test(HeadBits(static_cast<size_t>(L) * H, 0));
  res.test_allswa = score_test(HeadBits(static_cast<size_t>(L) * H, 1));

  Progress progress("compare", opt.ratios.size() * opt.methods.size());
  for (double ratio : opt.ratios) {
    for (const auto& method : opt.methods) {
      CompareRow row;
      row.method = method;
      row.ratio = ratio;
      if (method == "bosch") {
        EvaluatorOptions eo;
        eo.target_ratio = ratio;
        eo.alpha = opt.alpha;
        eo.window = opt.window;
        eo.sinks = opt.sinks;
        SearchOptions so = opt.search;
        so.ratio = ratio;
        eo.config = so.to_json();
        eo.config["alpha"] = opt.alpha;
        eo.config["window"] = opt.window;
        eo.config["sinks"] = opt.sinks;
        eo.config["objective"] = calib.describe();
        if (!opt.journal_dir.empty()) {
          eo.journal_path = fmt::format("{}/search-r{}.jsonl", opt.journal_dir, ratio);
          // Ratios the killed run had not reached yet have no journal: they start afresh.
          eo.resume = opt.resume && std::filesystem::exists(eo.journal_path);
        }
        Evaluator ev(calib, eo);
        SearchResult sr = run_bosch_search(ev, so);
        row.k = sr.k_total;
        row.bits = sr.bits;
        row.evaluations = sr.evaluations;
        row.seconds = sr.seconds;
        row.provenance = {{"method", "bosch"}, {"search", so.to_json()}, {"calibration_score", sr.score}};
        LayerSensitivity s;
        s.ratio = ratio;
        s.drops = sr.ratios.drops;
        s.weights = sr.ratios.weights;
        s.counts = sr.ratios.counts;
        s.final_counts = layer_counts(sr.bits, H);
        for (const auto& lp : sr.probe.layers) s.best_scores.push_back(lp.best_score);
        res.sensitivity.push_back(std::move(s));
        res.searches.push_back(sr.to_json());
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
      progress.add(1, fmt::format("{} at {}", method, ratio));
      res.rows.push_back(std::move(row));
    }
  }
  progress.finish();
  return res;
}

}  // namespace bosch::search
