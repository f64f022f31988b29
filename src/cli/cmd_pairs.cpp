// `bosch pairs [MODEL] --out PAIRS.json [--svg PAIRS.svg] [--top K | --heads L.H,...]`: the
// entanglement table (search/experiments/pair_table.h) on the same calibration objective as the search.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/experiment_options.h"
#include "search/experiments/experiment.h"
#include "search/experiments/pair_table.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch::cli {
namespace {

struct PairsCliOptions {
  search::ExperimentOptions exp;
  search::PairTableOptions table;
  std::string heads, rank_by = "single", out, svg, report;
  int rows = 20;
  bool no_chat = false;
};

void run_pairs(PairsCliOptions o) {
  o.exp.model = resolve_model(o.exp.model);
  o.exp.chat = !o.no_chat;
  search::Experiment e = search::make_experiment(o.exp, true);
  search::Objective& obj = e.search_objective();
  if (!o.heads.empty()) {
    o.table.heads = parse_head_list(o.heads, obj.n_layers(), obj.n_heads(), "--heads");
  } else if (o.rank_by != "single") {
    // Backups cost little alone, so the single-drop top K misses them; a static ranking (the
    // retrieval heads, say) names candidates by what they attend to instead.
    check(e.model != nullptr, "--rank-by {}: the {} objective has no model to rank heads on", o.rank_by, e.spec.spec);
    search::BaselineInputs in = e.baseline_inputs();
    in.seed = o.exp.seed;
    search::BaselineRunner runner(in);
    const std::vector<double>& imp = runner.importance(o.rank_by);
    std::vector<int> order(imp.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return imp[a] > imp[b]; });
    order.resize(std::min(order.size(), static_cast<size_t>(o.table.top)));
    o.table.heads = order;
  }
  const search::PairTable t = search::pair_table(obj, o.table);
  if (mpi::rank() != 0) return;  // every rank computed the same table; rank 0 writes
  nlohmann::json j = t.to_json();
  j["settings"] = {{"model", o.exp.model}, {"window", o.exp.swa.window}, {"sinks", o.exp.swa.sinks}};
  write_file_atomic(o.out, j.dump(1) + "\n");
  if (!o.svg.empty()) write_heatmap_svg(o.svg, t.heatmap());
  const std::string md = t.markdown(o.rows);
  if (!o.report.empty()) write_file_atomic(o.report, "# bosch pairs: " + t.objective + "\n\n" + md);
  fmt::print("{}", md);
}

CommandRegistrar reg("pairs", "the entanglement table: what converting two heads together costs vs apart", [](CLI::App& app) {
  auto o = std::make_shared<PairsCliOptions>();
  add_opt(app, "model", o->exp.model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--top", o->table.top, "pair the K heads with the largest single-head drop")
      ->capture_default_str()->check(CLI::Range(2, 64));
  add_opt(app, "--heads", o->heads, "pair these heads instead: LAYER.HEAD,... (0-based)");
  add_opt(app, "--rank-by", o->rank_by,
                 "which K heads: single (largest single-head drop; backups cost little alone and are missed) "
                 "or a static ranking's top K (retrieval, locality, razor, apl, qada, proxy, gate)")
      ->capture_default_str();
  add_opt(app, "--tolerance", o->table.tolerance, "|interaction| up to this is 'additive' (normalised drop)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  add_opt(app, "--out", o->out, "table to write (JSON)")->required();
  add_opt(app, "--svg", o->svg, "heatmap of the interactions (SVG)");
  add_opt(app, "--report", o->report, "markdown table of the strongest interactions");
  add_opt(app, "--rows", o->rows, "rows of the printed table")->capture_default_str();
  add_experiment_options(app, o->exp, o->no_chat);
  app.callback([o] { run_pairs(*o); });
});

}  // namespace
}  // namespace bosch::cli
