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
  search::ExperimentOptions exp;  // model, calibration, window/sinks, cache (shared with compare)
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
  o.exp.seed = o.search.seed;

  const bool needs_model = search::parse_objective_spec(o.exp.calib.objective).needs_model();
  const std::string model_path = needs_model ? resolve_model(o.exp.model) : "";
  o.exp.model = model_path;
  search::Experiment e = search::make_experiment(o.exp, true);
  check_output_file(o.out, "--out");  // the inputs are open now: the mask must not replace one
  search::Objective* objective = &e.search_objective();
  const MaskModelInfo& info = e.info;
  if (o.search.method == "bosch-plus") o.search.starts = search::start_rankings(e, o.starts, o.search.seed);
  const int window = o.exp.window, sinks = o.exp.sinks;

  search::EvaluatorOptions eo;
  eo.target_ratio = o.search.ratio;
  eo.alpha = o.alpha;
  eo.window = window, eo.sinks = sinks;
  eo.resume = !o.resume.empty();
  eo.journal_path = eo.resume ? o.resume : (o.journal.empty() ? o.out + ".journal.jsonl" : o.journal);
  eo.config = o.search.to_json();
  eo.config["alpha"] = o.alpha;
  eo.config["window"] = window;
  eo.config["sinks"] = sinks;
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
  const AttentionPlan plan = AttentionPlan::from_bits(info.n_layers, info.n_kv_heads, r.bits,
                                                      window, sinks);
  if (mpi::rank() != 0) return;  // the other ranks hold the same result; rank 0 alone writes
  if (const auto* d = dynamic_cast<const search::DistributedObjective*>(objective))
    std::fprintf(stderr, "search: %s\n", d->summary().c_str());
  MaskFile::from_plan(plan, info, o.search.ratio, prov, window, sinks).save(o.out);

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
  add_opt(app, "--window", o->exp.window, "SWA window W (recent tokens, the current one included)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--sinks", o->exp.sinks, "SWA sink tokens S")->capture_default_str()->check(CLI::Range(0, 1 << 20));
  add_opt(app, "--objective", o->exp.calib.objective,
                 "niah[:families] (calibration split), text:FILE (-NLL), longbench:DIR, or "
                 "synthetic:LxH[:SEED] (a small planted objective, for testing) or synthetic:SHAPE[:SEED] (the search "
                 "simulator at Qwen3 scale: qwen3-1.7b, qwen3-8b, qwen3-14b, qwen3-30b-a3b; docs/simulator.md)")->capture_default_str();
  add_opt(app, "--lengths", o->exp.calib.lengths, "calibration sample lengths in tokens (default: auto, "
                 "the shortest power of two that fits every NIAH family with room for haystack)")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--depths", o->exp.calib.depths, "niah: needle depths per length")->capture_default_str();
  add_opt(app, "--samples", o->exp.calib.samples, "niah: samples per (family, length, depth); text: chunks per length; longbench: samples per file")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--haystack", o->exp.calib.haystack, "niah text haystack: markov, noise or a text file")->capture_default_str();
  app.add_flag("--calib-solved-only", o->exp.calib.solved_only,
               "calibrate only on the samples the full model answers exactly (niah, longbench)");
  app.add_flag("--no-chat", o->no_chat, "do not wrap prompts in the model's chat template");
  add_opt(app, "--method", o->search.method, "bosch-plus (ours: the paper's stages + starts from static rankings + "
                 "polish), bosch (the paper's three stages), the paper's ablations bosch-single, bosch-multi, bosch-layer, or "
                 "ls (the control: swap local search from the best static ranking)")
      ->capture_default_str();
  add_opt(app, "--starts", o->starts, "bosch-plus: static rankings to start from besides its own single-head "
                 "sweep (ablation, gate): none or a list of locality, razor, retrieval, apl, qada, proxy")->capture_default_str();
  add_opt(app, "--budget-multi", o->search.budget_multi, "bosch-multi: evaluations (-1: auto, 4 x the number of KV heads)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--budget-layer", o->search.budget_layer, "bosch-layer: evaluations (-1: auto, layers^2)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--budget-probe", o->search.budget_probe, "stage 1: evaluations per layer (exhaustive when C(H, ceil(ratio*H)) fits)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--budget-group", o->search.budget_group, "stage 3: evaluations per ratio bucket (-1: auto, "
                 "max(64, 4 x the bucket's KV heads))")->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--buckets", o->search.buckets, "stage 2: coarse ratio buckets (tiers of layers by sensitivity)")
      ->capture_default_str()->check(CLI::Range(1, 64));
  add_opt(app, "--bucket-share", o->search.bucket_share, "stage 3: share of its budget spent inside the ratio buckets "
                 "(the rest: one joint bucket of every layer)")->capture_default_str()->check(CLI::Range(0.01, 1.0));
  add_opt(app, "--budget-ls", o->search.budget_ls, "ls: evaluations in all (-1: auto, what bosch's stages are charged at most)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 30));
  add_opt(app, "--budget-polish", o->search.budget_polish, "after stage 3: evaluations of cross-layer swaps (-1: auto, 2 x the number of KV heads; 0: the paper's three stages only)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_removed_destroy_flag(app);
  add_opt(app, "--alpha", o->alpha, "weight of the ratio penalty alpha * (ratio(z) - ratio)^2")->capture_default_str()->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--logprob-weight", o->exp.logprob_weight, "weight of the mean answer log-probability in S (default: 0.01 niah/longbench, 1 text)")->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--kl-weight", o->exp.kl_weight, "weight of the answer tokens' KL divergence from the full model in S (0: off)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--cache-gb", o->exp.cache_gb, "memory for cached hidden states (GiB)")->capture_default_str()->check(CLI::Range(0.0, 1048576.0));
  add_opt(app, "--seed", o->search.seed, "seed of the search and of the calibration samples")->capture_default_str();
  add_opt(app, "--journal", o->journal, "evaluation journal (JSONL; default OUT.journal.jsonl)");
  add_opt(app, "--resume", o->resume, "continue the search journaled in this file (same options)");
  app.callback([o] { run_search(*o); });
});

}  // namespace
}  // namespace bosch::cli
