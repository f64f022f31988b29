// `bosch compare [MODEL] --ratios 0.25,0.5,0.75,0.875 --methods all`: the BOSCH search and
// every baseline at every ratio. Masks are built from the calibration split only; each is then
// scored on held-out NIAH TEST samples (search/experiments/compare.h), or on `--test-objective
// text:FILE|longbench:DIR` (held-out data the user names) for models that cannot do NIAH. Prints the ratio x method table;
// --json writes {"results": [{method, ratio, exact_match, normalized, evaluations, seconds,
// ...}], ...}; --report DIR writes report.md, mask pictures, mask files and the stage-1
// sensitivity picture. The flags only: the run is search/experiments/compare_run.h.
#include <memory>

#include "cli/command.h"
#include "cli/experiment_options.h"
#include "search/experiments/compare_run.h"

namespace bosch::cli {

namespace {

struct CompareCliOptions {
  search::CompareRunOptions run;
  bool no_chat = false;
};

void run_compare_cli(CompareCliOptions o) {
  o.run.exp.model = resolve_model(o.run.exp.model);  // unread by a simulator compare
  o.run.exp.chat = !o.no_chat;
  search::run_compare(o.run);
}

CommandRegistrar reg("compare", "the search and every baseline at several ratios, scored on the held-out test split", [](CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  add_opt(app, "model", o->run.exp.model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--ratios", o->run.ratios, "SWA ratios, comma-separated")->capture_default_str();
  add_opt(app, "--methods", o->run.methods, "all, or a comma-separated list of bosch and baseline names (see bosch baseline --help)")
      ->capture_default_str();
  add_experiment_options(app, o->run.exp, o->no_chat);
  add_opt(app, "--test-lengths", o->run.test_lengths, "test sample lengths (default: --lengths)")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--test-depths", o->run.test_depths, "test needle depths per length")->capture_default_str()->check(CLI::Range(1, 1001));
  add_opt(app, "--test-samples", o->run.test_samples, "test samples per (family, length, depth); text: chunks per length; longbench: per file")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--test-objective", o->run.test_objective,
                 "held-out data the masks are scored on: text:FILE (-NLL) or longbench:DIR (default: the "
                 "NIAH test split of the --objective families; needed when --objective is not niah)");
  add_opt(app, "--test-seed", o->run.test_seed, "seed of the test samples (default: --seed; the split keeps them disjoint)");
  add_search_options(app, o->run.search, o->run.alpha, false);
  add_opt(app, "--journal-dir", o->run.journal_dir, "journal each search run in DIR/search-r<ratio>.jsonl");
  app.add_flag("--resume", o->run.resume,
               "continue a killed compare: replay the searches journaled in --journal-dir (same masks)")
      ->needs("--journal-dir");
  add_opt(app, "--instances", o->run.instances, "--objective synthetic:SHAPE[:SEED]: simulator instances (seeds SEED, SEED+1, ...)")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  add_opt(app, "--sim-calib-samples", o->run.sim_calib_samples, "--objective synthetic:SHAPE: calibration samples per "
                 "instance (default 64, the paper's)")->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--json", o->run.json_out, "write the results as JSON ({\"results\": [...]})");
  add_opt(app, "--report", o->run.report_dir, "write report.md, masks/*.svg, masks/*.json, sensitivity.svg, compare.json into DIR");
  app.callback([o] { run_compare_cli(*o); });
});

}  // namespace
}  // namespace bosch::cli
