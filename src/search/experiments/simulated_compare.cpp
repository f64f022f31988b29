#include "search/experiments/simulated_compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "search/baselines/baseline.h"
#include "search/core/memo_objective.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/progress.h"

namespace bosch::search {
namespace {

using Clock = std::chrono::steady_clock;

std::string num(double v) { return fmt::format("{:.3f}", v); }

}  // namespace

bool needs_model_weights(const std::string& method) {
  if (is_search_method(method)) return false;
  const std::string m = canonical_baseline(method);
  return !(m == "rand" || m == "intr" || m == "bme" || m == "rand-heads" || m == "gate" || m == "ablation");
}

const SimulatedCell* SimulatedCompareResult::find(const std::string& method, double ratio) const {
  for (const auto& c : cells)
    if (c.method == method && c.ratio == ratio) return &c;
  return nullptr;
}

SimulatedCompareResult run_simulated_compare(const SimulatedCompareOptions& opt) {
  check(opt.instances >= 1, "--instances {}: need at least one instance", opt.instances);
  for (const auto& m : opt.compare.methods)
    check(!needs_model_weights(m), "--methods {}: this baseline reads the model's weights or attention, which a "
          "simulator has not; use search methods, rand, intr, bme, rand-heads, gate or ablation", m);
  const auto t0 = Clock::now();
  const SimulatorParams& p = opt.spec.params;
  SimulatedCompareResult res;
  res.params = p;
  res.first_seed = opt.spec.seed;
  res.instances = opt.instances;
  res.ratios = opt.compare.ratios;
  res.methods = opt.compare.methods;

  // One compare per instance (quiet: this loop reports progress), in parallel over instances;
  // each instance's result depends only on its seed.
  std::vector<CompareResult> runs(opt.instances);
  std::mutex mu;
  Progress progress(fmt::format("simulator compare ({} instances of {})", opt.instances, p.shape), opt.instances);
  {
    QuietScope quiet;
    parallel_for(
        opt.instances,
        [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            auto model = std::make_shared<const SimulatedModel>(SimulatedModel::draw(p, opt.spec.seed + i));
            SimulatedObjective calib_obj(model, SimulatedSplit::calibration), test(model, SimulatedSplit::test);
            MemoObjective calib(calib_obj);
            BaselineInputs in;
            in.n_layers = p.n_layers, in.n_heads = p.n_heads;
            in.swa = opt.compare.swa;
            in.seed = opt.spec.seed + i;
            in.objective = &calib;
            BaselineRunner runner(in);
            CompareOptions co = opt.compare;
            co.search.seed = opt.spec.seed + i;
            co.journal_dir.clear();
            runs[i] = run_compare(calib, test, runner, co);
            std::lock_guard<std::mutex> lock(mu);
            progress.add(1);
          }
        },
        1);
  }
  progress.finish();

  for (const auto& r : runs) {
    res.full_exact += r.test_full.exact_rate / opt.instances;
    res.allswa_exact += r.test_allswa.exact_rate / opt.instances;
    for (const auto& row : r.rows) res.evaluations += row.evaluations;
  }
  const std::vector<double> zeros(opt.instances, 0.0);
  for (double ratio : res.ratios) {
    const size_t first = res.cells.size();
    for (const auto& m : res.methods) {
      SimulatedCell c;
      c.method = m;
      c.ratio = ratio;
      for (const auto& r : runs) {
        const CompareRow* row = r.find(m, ratio);
        check(row != nullptr, "simulator compare: no row for {} at {}", m, ratio);
        const double v = row->normalized.value_or(0.0);
        c.per_instance.push_back(v);
        c.test += v / opt.instances;
        c.calib += row->calib_normalized.value_or(0.0) / opt.instances;
        c.exact += row->exact_match / opt.instances;
        c.evaluations += static_cast<double>(row->evaluations) / opt.instances;
        c.seconds += row->seconds / opt.instances;
      }
      const PairedInterval ci = paired_bootstrap(c.per_instance, zeros, 1.0, 10000, 0xC1 + res.cells.size());
      c.lo = ci.lo, c.hi = ci.hi;
      res.cells.push_back(std::move(c));
    }
    const SimulatedCell* best = nullptr;
    for (size_t i = first; i < res.cells.size(); ++i)
      if (!is_search_method(res.cells[i].method) && (!best || res.cells[i].test > best->test)) best = &res.cells[i];
    for (size_t i = first; best && i < res.cells.size(); ++i) {
      SimulatedCell& c = res.cells[i];
      if (!is_search_method(c.method)) continue;
      PairedInterval pi = paired_bootstrap(c.per_instance, best->per_instance, 1.0, 10000, 0x5eed + i);
      pi.baseline = best->method;
      c.vs_baseline = pi;
      for (int k = 0; k < opt.instances; ++k) {
        const double d = c.per_instance[k] - best->per_instance[k];
        (d > 1e-9 ? c.wins : d < -1e-9 ? c.losses : c.ties) += 1;
      }
    }
    // The paper's stages against the swap local search given the same evaluations.
    const SimulatedCell* ls = nullptr;
    for (size_t i = first; i < res.cells.size(); ++i)
      if (res.cells[i].method == "ls") ls = &res.cells[i];
    for (size_t i = first; ls && i < res.cells.size(); ++i)
      if (res.cells[i].method == "bosch") {
        PairedInterval pi = paired_bootstrap(res.cells[i].per_instance, ls->per_instance, 1.0, 10000, 0x15 + i);
        pi.baseline = "ls";
        res.cells[i].vs_ls = pi;
      }
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

nlohmann::json SimulatedCompareResult::to_json() const {
  nlohmann::json j = {{"simulator", params.to_json()}, {"first_seed", first_seed}, {"instances", instances},
                      {"ratios", ratios},          {"methods", methods},          {"seconds", seconds},
                      {"evaluations", evaluations}, {"references", {{"full_exact", full_exact}, {"allswa_exact", allswa_exact}}}};
  j["results"] = nlohmann::json::array();
  for (const auto& c : cells) {
    nlohmann::json x = {{"method", c.method}, {"ratio", c.ratio},
                        {"test_normalized", c.test}, {"ci95", {c.lo, c.hi}},
                        {"calibration_normalized", c.calib}, {"exact_match", c.exact},
                        {"evaluations", c.evaluations}, {"seconds", c.seconds},
                        {"per_instance", c.per_instance}};
    if (c.vs_baseline)
      x["vs_best_baseline"] = {{"baseline", c.vs_baseline->baseline}, {"diff", c.vs_baseline->diff},
                               {"ci95", {c.vs_baseline->lo, c.vs_baseline->hi}},
                               {"wins", c.wins}, {"ties", c.ties}, {"losses", c.losses}};
    if (c.vs_ls) x["vs_ls"] = {{"diff", c.vs_ls->diff}, {"ci95", {c.vs_ls->lo, c.vs_ls->hi}}};
    j["results"].push_back(std::move(x));
  }
  return j;
}

std::string simulated_markdown(const SimulatedCompareResult& r) {
  std::string out = fmt::format(
      "Simulator {} ({} x {} KV heads), {} instances (seeds {}..{}), {} calibration / {} test samples each. "
      "Each cell: mean test S^ over instances [95% bootstrap interval]. References: full model exact match "
      "{:.3f}, all-SWA {:.3f}.\n\n| ratio |",
      r.params.shape, r.params.n_layers, r.params.n_heads, r.instances, r.first_seed, r.first_seed + r.instances - 1,
      r.params.calib_samples, r.params.test_samples, r.full_exact, r.allswa_exact);
  for (const auto& m : r.methods) out += " " + m + " |";
  out += "\n|---|";
  for (size_t i = 0; i < r.methods.size(); ++i) out += "---|";
  out += "\n";
  for (double ratio : r.ratios) {
    out += fmt::format("| {} |", ratio);
    for (const auto& m : r.methods) {
      const SimulatedCell* c = r.find(m, ratio);
      out += c ? fmt::format(" {} [{}, {}] |", num(c->test), num(c->lo), num(c->hi)) : std::string(" - |");
    }
    out += "\n";
  }
  out += "\nSearch methods against the baseline with the best mean at each ratio: paired difference over instances "
         "(mean [95% bootstrap interval]), instances won / tied / lost, calibration S^ beside test S^, mean "
         "evaluations per instance.\n\n| ratio | method | calib S^ | test S^ | best baseline (test S^) | difference "
         "[95% CI] | won / tied / lost | evaluations |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : r.cells) {
    if (!c.vs_baseline) continue;
    const auto& v = *c.vs_baseline;
    const SimulatedCell* b = r.find(v.baseline, c.ratio);
    const char* verdict = v.lo > 0 ? " (better)" : v.hi < 0 ? " (worse)" : "";
    out += fmt::format("| {} | {} | {} | {} | {} ({}) | {:+.3f} [{:+.3f}, {:+.3f}]{} | {} / {} / {} | {:.0f} |\n", c.ratio,
                       c.method, num(c.calib), num(c.test), v.baseline, b ? num(b->test) : "n/a", v.diff, v.lo, v.hi,
                       verdict, c.wins, c.ties, c.losses, c.evaluations);
  }
  std::string vs_ls;
  for (const auto& c : r.cells)
    if (c.vs_ls)
      vs_ls += fmt::format("| {} | {:+.3f} [{:+.3f}, {:+.3f}] |\n", c.ratio, c.vs_ls->diff, c.vs_ls->lo, c.vs_ls->hi);
  if (!vs_ls.empty())
    out += "\nbosch against ls, the swap local search from the best static ranking with bosch's evaluations "
           "(paired over instances):\n\n| ratio | bosch - ls [95% CI] |\n|---|---|\n" + vs_ls;
  out += fmt::format("\n{} calibration evaluations in {:.1f} s.\n", r.evaluations, r.seconds);
  return out;
}

}  // namespace bosch::search
