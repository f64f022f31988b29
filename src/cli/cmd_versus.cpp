// `bosch versus A.json:METHOD B.json:METHOD [--ratios R,...] [--json]`: one method's test
// scores against another's, from two `bosch compare` runs (or one) that scored the same test
// samples: per ratio, the normalised difference A - B with compare's own paired bootstrap (95%
// percentile interval, 10,000 resamples). The one bootstrap of the project: the study scripts
// and compare_methods.py call this instead of re-implementing it.
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "search/experiments/compare.h"
#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct VersusOptions {
  std::string a, b;
  std::vector<double> ratios;  // default: A's
  bool json = false;
};

double num(const nlohmann::json& v, const std::string& file, const std::string& field) {
  return json_number(v, file, field, -1e300, 1e300);
}

struct Side {
  std::string file, method;
  nlohmann::json run;
};

Side load_side(const std::string& arg, const char* which) {
  const size_t colon = arg.rfind(':');
  check(colon != std::string::npos && colon > 0 && colon + 1 < arg.size(),
        "{}: expected COMPARE.json:METHOD, got '{}'", which, excerpt(arg));
  Side s{arg.substr(0, colon), arg.substr(colon + 1), {}};
  s.run = parse_json_checked(read_file(s.file, kMaxTextBytes, "compare JSON"), s.file);
  check(s.run.is_object() && s.run.contains("results") && s.run["results"].is_array() && s.run.contains("references"),
        "{}: not the --json of `bosch compare` (no results/references)", s.file);
  return s;
}

const nlohmann::json& row_of(const Side& s, double ratio) {
  for (const auto& r : s.run["results"])
    if (r.value("method", "") == s.method && std::fabs(num(r.at("ratio"), s.file, "ratio") - ratio) < 1e-9) {
      check(r.contains("test_per_sample") && r["test_per_sample"].is_array(),
            "{}: {} at ratio {} has no test_per_sample", s.file, s.method, ratio);
      return r;
    }
  fail("{}: no result for method '{}' at ratio {}", s.file, s.method, ratio);
}

std::vector<double> per_sample(const nlohmann::json& row, const Side& s) {
  std::vector<double> v;
  for (const auto& x : row["test_per_sample"]) v.push_back(num(x, s.file, "test_per_sample"));
  return v;
}

void run_versus(const VersusOptions& o) {
  const Side a = load_side(o.a, "A"), b = load_side(o.b, "B");
  // The same test samples on both sides, or the pairing means nothing.
  const auto test_of = [](const Side& s) -> std::string {
    const auto& st = s.run.contains("settings") ? s.run["settings"] : nlohmann::json();
    return st.is_object() && st.contains("test") && st["test"].is_string() ? st["test"].get<std::string>() : "";
  };
  check(test_of(a) == test_of(b), "{} and {} scored different test sets ('{}' vs '{}')", a.file, b.file,
        excerpt(test_of(a)), excerpt(test_of(b)));
  const auto& ref = a.run["references"];
  const double full = num(ref.at("full").at("raw_score"), a.file, "references.full.raw_score");
  const double swa = num(ref.at("all_swa").at("raw_score"), a.file, "references.all_swa.raw_score");
  const double scale = full != swa ? full - swa : 1.0;  // normalised = (S - S_allswa) / scale, as compare
  std::vector<double> ratios = o.ratios;
  if (ratios.empty())
    for (const auto& r : a.run.at("ratios")) ratios.push_back(num(r, a.file, "ratios"));
  nlohmann::json out = nlohmann::json::array();
  if (!o.json)
    fmt::print("| ratio | A | B | A test S^ | B test S^ | A - B [95% CI] |\n|---|---|---|---|---|---|\n");
  for (double r : ratios) {
    const auto &ra = row_of(a, r), &rb = row_of(b, r);
    const auto pa = per_sample(ra, a), pb = per_sample(rb, b);
    check(pa.size() == pb.size(), "{} and {}: {} and {} test samples at ratio {}", a.file, b.file, pa.size(),
          pb.size(), r);
    const search::PairedInterval ci = search::paired_bootstrap(pa, pb, scale, 10000, 0x5eed);
    const double na = num(ra.at("normalized"), a.file, "normalized");
    const double nb = num(rb.at("normalized"), b.file, "normalized");
    const char* tag = ci.lo > 0 ? " (better)" : ci.hi < 0 ? " (worse)" : "";
    if (o.json) {
      out.push_back({{"ratio", r}, {"a", a.method}, {"b", b.method}, {"a_normalized", na}, {"b_normalized", nb},
                     {"diff", ci.diff}, {"ci95", {ci.lo, ci.hi}}, {"samples", ci.samples}, {"resamples", ci.resamples},
                     {"text", fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]{}", ci.diff, ci.lo, ci.hi, tag)}});
    } else {
      fmt::print("| {} | {} | {} | {:.3f} | {:.3f} | {:+.3f} [{:+.3f}, {:+.3f}]{} |\n", r, a.method, b.method, na, nb,
                 ci.diff, ci.lo, ci.hi, tag);
    }
  }
  if (o.json) fmt::print("{}\n", out.dump(1));
}

CommandRegistrar reg("versus", "one method against another on the same test samples (paired bootstrap)",
                     [](CLI::App& app) {
  auto o = std::make_shared<VersusOptions>();
  add_opt(app, "a", o->a, "COMPARE.json:METHOD (the --json of bosch compare)")->required();
  add_opt(app, "b", o->b, "COMPARE.json:METHOD, scored on the same test samples")->required();
  add_opt(app, "--ratios", o->ratios, "only these ratios (default: A's)")->delimiter(',')->check(CLI::Range(0.0, 1.0));
  app.add_flag("--json", o->json, "print JSON (one object per ratio) instead of a Markdown table");
  app.callback([o] { run_versus(*o); });
});

}  // namespace
}  // namespace bosch::cli
