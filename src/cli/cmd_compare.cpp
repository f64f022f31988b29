// `bosch compare [MODEL] --ratios 0.25,0.5,0.75,0.875 --methods all`: the BOSCH search and
// every baseline at every ratio. Masks are built from the calibration split only; each is then
// scored on held-out NIAH TEST samples (search/experiments/compare.h), or on `--test-objective
// text:FILE|longbench:DIR` (held-out data the user names) for models that cannot do NIAH. Prints the ratio x method table;
// --json writes {"results": [{method, ratio, exact_match, normalized, evaluations, seconds,
// ...}], ...}; --report DIR writes report.md, mask pictures, mask files and the stage-1
// sensitivity picture.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "masks/mask_file.h"
#include "search/baselines/baseline.h"
#include "cli/experiment_options.h"
#include "search/experiments/experiment.h"
#include "search/experiments/compare.h"
#include "search/objectives/distributed_objective.h"
#include "search/core/memo_objective.h"
#include "search/experiments/report.h"
#include "search/experiments/simulated_compare.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch::cli {

namespace {

struct CompareCliOptions {
  search::ExperimentOptions exp;
  search::SearchOptions search;
  std::string ratios = "0.25,0.5,0.75,0.875", methods = "all", json_out, report_dir, journal_dir;
  double alpha = 1.0;
  std::vector<int> test_lengths;  // default: the calibration lengths
  int test_depths = 5, test_samples = 1;
  int64_t test_seed = -1;         // default: --seed (the split alone keeps the data disjoint)
  std::string test_objective;     // "": the NIAH test split of the calibration families
  bool no_chat = false, resume = false;
  int instances = 100;            // simulator objectives: seeded instances
  int sim_calib_samples = 0;      // ... calibration samples per instance (0: the simulator's 64)
};

// --objective synthetic:SHAPE[:SEED]: no model; every method that needs no weights on seeded
// simulator instances (search/experiments/simulated_compare.h).
void run_simulated_compare_cli(const CompareCliOptions& o) {
  search::SimulatedCompareOptions so;
  so.spec = search::parse_simulator_spec(o.exp.calib.objective);
  so.instances = o.instances;
  if (o.sim_calib_samples > 0) so.spec.params.calib_samples = o.sim_calib_samples;
  so.compare.ratios = search::parse_ratios(o.ratios);
  so.compare.methods = search::compare_methods(search::parse_objective_spec(o.exp.calib.objective), o.methods, false);
  so.compare.search = o.search;
  so.compare.alpha = o.alpha;
  so.compare.window = o.exp.window;
  so.compare.sinks = o.exp.sinks;
  check(o.journal_dir.empty() && !o.resume, "--journal-dir/--resume: a simulator compare takes seconds per "
        "instance and keeps no journal");
  if (!o.json_out.empty()) check_output_file(o.json_out, "--json");  // before the run, not after
  if (!o.report_dir.empty()) prepare_output_dir(o.report_dir, "--report");
  const search::SimulatedCompareResult r = search::run_simulated_compare(so);
  if (mpi::rank() != 0) return;  // no model to split: every rank ran the same; rank 0 alone writes
  const std::string md = search::simulated_markdown(r);
  fmt::print("{}", md);
  nlohmann::json j = r.to_json();
  j["settings"] = {{"objective", o.exp.calib.objective}, {"search", o.search.to_json()}, {"alpha", o.alpha},
                   {"window", o.exp.window}, {"sinks", o.exp.sinks}};
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
  if (!o.report_dir.empty()) {
    write_file_atomic(o.report_dir + "/report.md",
                      fmt::format("# bosch compare: {}\n\n{}", o.exp.calib.objective, md));
    write_file_atomic(o.report_dir + "/compare.json", j.dump(2) + "\n");
    std::fprintf(stderr, "compare: wrote %s/report.md and compare.json\n", o.report_dir.c_str());
  }
}

void run_compare_cli(CompareCliOptions o) {
  const search::ObjectiveSpec spec = search::parse_objective_spec(o.exp.calib.objective);
  if (spec.kind == search::ObjectiveKind::simulator) return run_simulated_compare_cli(o);
  const std::vector<double> ratios = search::parse_ratios(o.ratios);
  const std::vector<std::string> methods = search::compare_methods(spec, o.methods, !o.exp.duo_dir.empty());
  search::check_test_objective(spec, o.test_objective);
  o.exp.model = resolve_model(o.exp.model);
  o.exp.chat = !o.no_chat;
  o.search.seed = o.exp.seed;
  search::Experiment e = search::make_experiment(o.exp, true);

  // Held-out test objective: the calibration objective's scoring on test-split NIAH samples,
  // or the objective the user names (its own scoring: -NLL for text).
  search::TestSetOptions tso;
  tso.objective = o.test_objective;
  tso.lengths = o.test_lengths;
  tso.depths = o.test_depths;
  tso.samples = o.test_samples;
  tso.seed = o.test_seed >= 0 ? static_cast<uint64_t>(o.test_seed) : o.exp.seed;
  search::TestSet ts = search::make_test_set(e, o.exp, tso);
  const std::vector<int>& test_lengths = ts.lengths;
  const bool exact_metric = ts.exact_metric;
  search::ModelObjectiveOptions to = ts.options;
  to.progress_label = "compare: test score";
  const std::vector<TaskSample>& test_samples = ts.samples;
  const std::unique_ptr<search::Objective> test = search::make_model_objective(*e.model, test_samples, to);
  std::fprintf(stderr, "compare: %zu calibration samples, %zu test samples, %zu methods x %zu ratios\n",
               e.calibration.samples.size(), test_samples.size(), methods.size(), ratios.size());

  // One memo for every run of this compare (searches of every method, the baselines' sweep).
  search::MemoObjective calib(*e.objective);
  search::BaselineInputs in = e.baseline_inputs();
  in.objective = &calib;
  in.seed = o.exp.seed;
  in.duo_dir = o.exp.duo_dir;
  in.razor_period = o.exp.razor_period;
  search::BaselineRunner runner(in);
  search::CompareOptions co;
  co.ratios = ratios;
  co.methods = methods;
  co.search = o.search;
  co.alpha = o.alpha;
  co.window = o.exp.window;
  co.sinks = o.exp.sinks;
  co.journal_dir = o.journal_dir;
  co.resume = o.resume;
  if (mpi::rank() == 0) {  // every output checked before the run, not after it
    if (!o.json_out.empty()) check_output_file(o.json_out, "--json");
    if (!o.report_dir.empty()) prepare_output_dir(o.report_dir, "--report");
    if (!co.journal_dir.empty()) prepare_output_dir(co.journal_dir, "--journal-dir");
  }
  search::CompareResult r = search::run_compare(calib, *test, runner, co);
  r.exact_metric = exact_metric;

  nlohmann::json j = r.to_json();
  j["settings"] = {{"model", o.exp.model},
                   {"model_identity", e.model->identity()},
                   {"window", o.exp.window},
                   {"sinks", o.exp.sinks},
                   {"calibration", e.calibration.description},
                   {"calibration_samples", e.calibration.samples.size()},
                   {"test", to.description},
                   {"test_metric", exact_metric ? "exact_match" : "mean_logprob"},
                   {"test_lengths", test_lengths},
                   {"test_depths", o.test_depths},
                   {"test_samples_per_cell", o.test_samples},
                   {"seed", o.exp.seed},
                   {"search", o.search.to_json()},
                   {"alpha", o.alpha}};
  if (mpi::rank() != 0) return;  // the other ranks hold the same results; rank 0 alone writes
  fmt::print("{}\n{}\n{}\n", search::markdown_table(r), search::versus_markdown(r),
             search::turnover_markdown(search::head_turnover(r)));
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
  if (!o.report_dir.empty()) {
    auto files = search::write_compare_report(r, o.report_dir, fmt::format("bosch compare: {}", o.exp.model));
    for (const auto& row : r.rows) {  // the masks themselves, loadable by eval/export
      const std::string p = fmt::format("{}/masks/{}-r{}.json", o.report_dir, row.method, search::ratio_tag(row.ratio));
      const AttentionPlan plan = AttentionPlan::from_bits(r.n_layers, r.n_heads, row.bits, o.exp.window, o.exp.sinks);
      MaskFile::from_plan(plan, e.info, row.ratio, row.provenance, o.exp.window, o.exp.sinks).save(p);
      files.push_back(p);
    }
    write_file_atomic(o.report_dir + "/compare.json", j.dump(2) + "\n");
    std::fprintf(stderr, "compare: wrote %zu files under %s (report.md, masks/, compare.json)\n", files.size() + 1,
                 o.report_dir.c_str());
  }
}

CommandRegistrar reg("compare", "the search and every baseline at several ratios, scored on the held-out test split", [](CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  add_opt(app, "model", o->exp.model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--ratios", o->ratios, "SWA ratios, comma-separated")->capture_default_str();
  add_opt(app, "--methods", o->methods, "all, or a comma-separated list of bosch and baseline names (see bosch baseline --help)")
      ->capture_default_str();
  add_experiment_options(app, o->exp, o->no_chat);
  add_opt(app, "--test-lengths", o->test_lengths, "test sample lengths (default: --lengths)")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--test-depths", o->test_depths, "test needle depths per length")->capture_default_str()->check(CLI::Range(1, 1001));
  add_opt(app, "--test-samples", o->test_samples, "test samples per (family, length, depth); text: chunks per length; longbench: per file")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--test-objective", o->test_objective,
                 "held-out data the masks are scored on: text:FILE (-NLL) or longbench:DIR (default: the "
                 "NIAH test split of the --objective families; needed when --objective is not niah)");
  add_opt(app, "--test-seed", o->test_seed, "seed of the test samples (default: --seed; the split keeps them disjoint)");
  add_opt(app, "--budget-probe", o->search.budget_probe, "search stage 1: evaluations per layer")->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--budget-group", o->search.budget_group, "search stage 3: evaluations per ratio bucket (-1: auto)")->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--buckets", o->search.buckets, "search stage 2: coarse ratio buckets")->capture_default_str()->check(CLI::Range(1, 64));
  add_opt(app, "--bucket-share", o->search.bucket_share, "stage 3: share of its budget spent inside the ratio buckets "
                 "(the rest: one joint bucket of every layer)")->capture_default_str()->check(CLI::Range(0.01, 1.0));
  add_opt(app, "--budget-polish", o->search.budget_polish, "search polish: evaluations of cross-layer swaps (-1: auto, 2 x the number of KV heads; 0: the paper's three stages only)")->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--budget-multi", o->search.budget_multi, "bosch-multi: evaluations (-1: auto, 4 x the number of KV heads)")->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--budget-layer", o->search.budget_layer, "bosch-layer: evaluations (-1: auto, layers^2)")->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_removed_destroy_flag(app);
  add_opt(app, "--alpha", o->alpha, "weight of the search's ratio penalty")->capture_default_str()->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--journal-dir", o->journal_dir, "journal each search run in DIR/search-r<ratio>.jsonl");
  app.add_flag("--resume", o->resume,
               "continue a killed compare: replay the searches journaled in --journal-dir (same masks)")
      ->needs("--journal-dir");
  add_opt(app, "--instances", o->instances, "--objective synthetic:SHAPE[:SEED]: simulator instances (seeds SEED, SEED+1, ...)")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  add_opt(app, "--sim-calib-samples", o->sim_calib_samples, "--objective synthetic:SHAPE: calibration samples per "
                 "instance (default 64, the paper's)")->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--json", o->json_out, "write the results as JSON ({\"results\": [...]})");
  add_opt(app, "--report", o->report_dir, "write report.md, masks/*.svg, masks/*.json, sensitivity.svg, compare.json into DIR");
  app.callback([o] { run_compare_cli(*o); });
});

}  // namespace
}  // namespace bosch::cli
