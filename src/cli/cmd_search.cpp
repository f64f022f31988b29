// `bosch search [MODEL] --ratio R --out MASK.json`: the BOSCH search (search/stages/bosch_search.h).
// Progress with ETA per stage on stderr, per-stage summaries, a journal of every evaluation
// (--journal, default OUT.journal.jsonl) and --resume JOURNAL to continue after a kill.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/experiment_options.h"
#include "masks/mask_file.h"
#include "search/experiments/experiment.h"
#include "search/stages/bosch_search.h"
#include "search/objectives/distributed_objective.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch::cli {
namespace {

struct SearchCliOptions {
  std::string out, journal, resume;
  search::SearchOptions search;
  search::ExperimentOptions exp;  // model, calibration, SWA shape, seed, cache (shared with compare)
  double alpha = 1.0;
  bool no_chat = false;
  std::string starts = search::kDefaultStarts;
};

void run_search(SearchCliOptions o) {
  check(!o.out.empty(), "--out: give the mask file to write");
  check(o.journal.empty() || o.resume.empty() || o.journal == o.resume,
        "--journal {} and --resume {}: a resumed search appends to the journal it resumes; give "
        "one of them", o.journal, o.resume);
  o.exp.chat = !o.no_chat;
  o.search = search::seeded_search(o.exp, o.search);

  o.exp.model = resolve_model(o.exp.model);
  search::Experiment e = search::make_experiment(o.exp, true);
  const std::string model_path = e.spec.needs_model() ? o.exp.model : "";  // synthetic: no model read
  check_output_file(o.out, "--out");  // the inputs are open now: the mask must not replace one
  search::Objective* objective = &e.search_objective();
  if (o.search.method == "bosch-plus") o.search.starts = search::start_rankings(e, o.starts, o.search.seed);

  search::EvaluatorOptions eo;
  eo.target_ratio = o.search.ratio;
  eo.alpha = o.alpha;
  eo.resume = !o.resume.empty();
  eo.journal_path = eo.resume ? o.resume : (o.journal.empty() ? o.out + ".journal.jsonl" : o.journal);
  eo.config = o.search.to_json();
  eo.config["alpha"] = o.alpha;
  eo.config["window"] = o.exp.swa.window;
  eo.config["sinks"] = o.exp.swa.sinks;
  search::Evaluator ev(*objective, eo);
  if (eo.resume)
    std::fprintf(stderr, "search: resuming from %s (%zu journaled evaluations)\n",
                 eo.journal_path.c_str(), ev.journal_entries_pending());

  search::SearchResult r = search::run_bosch_search(ev, o.search);

  nlohmann::json prov = r.to_json();
  prov["method"] = o.search.method;
  prov["options"] = eo.config;
  prov["objective"] = objective->describe();
  prov["model_path"] = model_path;
  prov["journal"] = eo.journal_path;
  if (mpi::rank() != 0) return;  // the other ranks hold the same result; rank 0 alone writes
  if (const auto* d = dynamic_cast<const search::DistributedObjective*>(objective))
    std::fprintf(stderr, "search: %s\n", d->summary().c_str());
  MaskFile::from_bits(r.bits, e.info, o.exp.swa, o.search.ratio, prov).save(o.out);

  const auto j = r.to_json();
  std::string cost;  // the hidden-state cache's saving; objectives without a model have none
  if (j["layer_forwards_naive"].get<double>() > 0)
    cost = fmt::format(", layer forwards {} vs naive {:.0f} ({:.2f}x fewer; {:.2f}x less work counting the last "
                       "layer's skipped rows)", r.objective_stats.layer_forwards, j["layer_forwards_naive"].get<double>(),
                       j["layer_forward_saving"].get<double>(), j["work_saving"].get<double>());
  fmt::print(stderr,
             "search: done: {}/{} heads SWA, S^={:.4f} (exact {:.3f}, logprob {:.4f}), {} evaluations ({} computed, "
             "{} replayed, {} memo hits) in {:.1f} s ({:.2f} evaluations/s inside the objective){}\n",
             r.k_total, r.bits.size(), r.score, r.raw.exact_rate, r.raw.mean_logprob, r.evaluations, r.computed,
             r.replayed, r.memo_hits, r.seconds, j["evaluations_per_second"].get<double>(), cost);
  fmt::print("{}\n", o.out);
}

CommandRegistrar reg("search", "BOSCH search: choose which KV heads become sliding-window attention", [](CLI::App& app) {
  auto o = std::make_shared<SearchCliOptions>();
  add_opt(app, "model", o->exp.model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--ratio", o->search.ratio, "target fraction of SWA heads (K = round(ratio * layers * KV heads))")
      ->required()->check(CLI::Range(0.0, 1.0));
  add_opt(app, "--out", o->out, "mask file to write (JSON)")->required();
  add_experiment_options(app, o->exp, o->no_chat, false);
  add_opt(app, "--method", o->search.method, "bosch-plus (ours: the paper's stages + starts from static rankings + "
                 "polish), bosch (the paper's three stages), the paper's ablations bosch-single, bosch-multi, bosch-layer, or "
                 "ls (the control: swap local search from the best static ranking)")
      ->capture_default_str();
  add_opt(app, "--starts", o->starts, "bosch-plus: static rankings to start from besides its own single-head "
                 "sweep (ablation, gate): none or a list of locality, razor, retrieval, apl, qada, proxy")->capture_default_str();
  add_search_options(app, o->search, o->alpha, true);
  add_opt(app, "--journal", o->journal, "evaluation journal (JSONL; default OUT.journal.jsonl)");
  add_opt(app, "--resume", o->resume, "continue the search journaled in this file (same options)");
  app.callback([o] { run_search(*o); });
});

}  // namespace
}  // namespace bosch::cli
