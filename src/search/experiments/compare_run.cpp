#include "search/experiments/compare_run.h"

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "kernels/dispatch.h"
#include "masks/mask_file.h"
#include "search/baselines/baseline.h"
#include "search/core/memo_objective.h"
#include "search/experiments/compare.h"
#include "search/experiments/report.h"
#include "search/experiments/simulated_compare.h"
#include "search/objectives/distributed_objective.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/mpi_comm.h"
#include "util/staged_dir.h"

namespace bosch::search {

namespace {

// --report: written into a fresh sibling and swapped in whole at the end (util/staged_dir.h);
// made before the run, so a bad path, a file there or a folder holding other files fails first.
std::unique_ptr<StagedDir> report_folder(const std::string& dir) {
  if (dir.empty()) return nullptr;
  return std::make_unique<StagedDir>(dir, "--report",
                                     std::vector<std::string>{"report.md", "compare.json", "masks", "sensitivity.svg"});
}

// --objective synthetic:SHAPE[:SEED]: no model; every method that needs no weights on seeded
// simulator instances (simulated_compare.h).
void run_simulated(const CompareRunOptions& o, const ObjectiveSpec& spec) {
  SimulatedCompareOptions so;
  so.spec = parse_simulator_spec(spec.spec);
  so.instances = o.instances;
  if (o.sim_calib_samples > 0) so.spec.params.calib_samples = o.sim_calib_samples;
  so.compare.ratios = parse_ratios(o.ratios);
  so.compare.methods = compare_methods(spec, o.methods, false);
  so.compare.search = o.search;  // no seeded_search: instance i's searches are seeded SEED + i
  so.compare.alpha = o.alpha;
  so.compare.swa = o.exp.swa;
  check(o.journal_dir.empty() && !o.resume, "--journal-dir/--resume: a simulator compare takes seconds per "
        "instance and keeps no journal");
  if (!o.json_out.empty()) check_output_file(o.json_out, "--json");  // before the run, not after
  std::unique_ptr<StagedDir> report = mpi::rank() == 0 ? report_folder(o.report_dir) : nullptr;
  const SimulatedCompareResult r = run_simulated_compare(so);
  if (mpi::rank() != 0) return;  // no model to split: every rank ran the same; rank 0 alone writes
  const std::string md = simulated_markdown(r);
  fmt::print("{}", md);
  nlohmann::json j = r.to_json();
  j["settings"] = {{"objective", spec.spec}, {"search", o.search.to_json()}, {"alpha", o.alpha},
                   {"window", o.exp.swa.window}, {"sinks", o.exp.swa.sinks}};
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
  if (report) {
    write_file_atomic(report->path() + "/report.md", fmt::format("# bosch compare: {}\n\n{}", spec.spec, md));
    write_file_atomic(report->path() + "/compare.json", j.dump(2) + "\n");
    report->commit();
    std::fprintf(stderr, "compare: wrote %s/report.md and compare.json\n", o.report_dir.c_str());
  }
}

}  // namespace

void run_compare(const CompareRunOptions& o) {
  const ObjectiveSpec spec = parse_objective_spec(o.exp.calib.objective);
  if (spec.kind == ObjectiveKind::simulator) return run_simulated(o, spec);
  const std::vector<double> ratios = parse_ratios(o.ratios);
  const std::vector<std::string> methods = compare_methods(spec, o.methods, !o.exp.duo_dir.empty());
  check_test_objective(spec, o.test_objective);  // both fail before the model is loaded
  const SearchOptions search = seeded_search(o.exp, o.search);
  Experiment e = make_experiment(o.exp, spec, true);

  // Held-out test objective: the calibration objective's scoring on test-split NIAH samples,
  // or the objective the user names (its own scoring: -NLL for text).
  TestSetOptions tso;
  tso.objective = o.test_objective;
  tso.lengths = o.test_lengths;
  tso.depths = o.test_depths;
  tso.samples = o.test_samples;
  tso.seed = o.test_seed >= 0 ? static_cast<uint64_t>(o.test_seed) : o.exp.seed;
  TestSet ts = make_test_set(e, o.exp, tso);
  ModelObjectiveOptions to = ts.options;
  to.progress_label = "compare: test score";
  const std::unique_ptr<Objective> test = make_model_objective(*e.model, ts.samples, to);
  std::fprintf(stderr, "compare: %zu calibration samples, %zu test samples, %zu methods x %zu ratios\n",
               e.calibration.samples.size(), ts.samples.size(), methods.size(), ratios.size());

  // One memo for every run of this compare (searches of every method, the baselines' sweep).
  MemoObjective calib(*e.objective);
  BaselineInputs in = e.baseline_inputs();
  in.objective = &calib;
  in.seed = o.exp.seed;
  in.duo_dir = o.exp.duo_dir;
  in.razor_period = o.exp.razor_period;
  BaselineRunner runner(in);
  CompareOptions co;
  co.ratios = ratios;
  co.methods = methods;
  co.search = search;
  co.alpha = o.alpha;
  co.swa = o.exp.swa;
  co.journal_dir = o.journal_dir;
  co.resume = o.resume;
  std::unique_ptr<StagedDir> report;
  if (mpi::rank() == 0) {  // every output checked before the run, not after it
    if (!o.json_out.empty()) check_output_file(o.json_out, "--json");
    report = report_folder(o.report_dir);
    if (!co.journal_dir.empty()) prepare_output_dir(co.journal_dir, "--journal-dir");
  }
  CompareResult r = run_compare(calib, *test, runner, co);
  r.exact_metric = ts.exact_metric;

  nlohmann::json j = r.to_json();
  j["settings"] = {{"model", o.exp.model},
                   {"model_identity", e.model->identity()},
                   {"window", o.exp.swa.window},
                   {"sinks", o.exp.swa.sinks},
                   {"calibration", e.calibration.description},
                   {"calibration_samples", e.calibration.samples.size()},
                   {"test", to.description},
                   {"test_metric", ts.exact_metric ? "exact_match" : "mean_logprob"},
                   {"test_lengths", ts.lengths},
                   {"test_depths", o.test_depths},
                   {"test_samples_per_cell", o.test_samples},
                   {"seed", o.exp.seed},
                   {"prefill_precision", kernels::bf16_prefill() ? "bf16" : "f32"},  // BOSCH_PRECISION
                   {"search", search.to_json()},
                   {"alpha", o.alpha}};
  if (mpi::rank() != 0) return;  // the other ranks hold the same results; rank 0 alone writes
  fmt::print("{}\n{}\n{}\n", markdown_table(r), versus_markdown(r), turnover_markdown(head_turnover(r)));
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
  if (report) {
    const std::string& dir = report->path();
    auto files = write_compare_report(r, dir, fmt::format("bosch compare: {}", o.exp.model));
    for (const auto& row : r.rows) {  // the masks themselves, loadable by eval/export
      const std::string p = fmt::format("{}/masks/{}-r{}.json", dir, row.method, ratio_tag(row.ratio));
      MaskFile::from_bits(row.bits, e.info, o.exp.swa, row.ratio, row.provenance).save(p);
      files.push_back(p);
    }
    write_file_atomic(dir + "/compare.json", j.dump(2) + "\n");
    report->commit();
    std::fprintf(stderr, "compare: wrote %zu files under %s (report.md, masks/, compare.json)\n", files.size() + 1,
                 o.report_dir.c_str());
  }
}

}  // namespace bosch::search
