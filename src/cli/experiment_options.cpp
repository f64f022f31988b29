#include "cli/experiment_options.h"

namespace bosch::cli {

void add_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat, bool baseline_flags) {
  add_opt(app, "--window", e.swa.window, "SWA window W (recent tokens, the current one included)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--sinks", e.swa.sinks, "SWA sink tokens S")->capture_default_str()->check(CLI::Range(0, 1 << 20));
  add_opt(app, "--objective", e.calib.objective,
          "calibration: niah[:families] (calibration split), text:FILE (-NLL), longbench:DIR, "
          "synthetic:LxH[:SEED] (a small planted objective, for testing; not compare) or synthetic:SHAPE[:SEED] "
          "(the search simulator at Qwen3 scale, no model: qwen3-1.7b, qwen3-8b, qwen3-14b, qwen3-30b-a3b; "
          "docs/simulator.md)")
      ->capture_default_str();
  add_opt(app, "--lengths", e.calib.lengths, "calibration sample lengths in tokens (default: auto, the shortest power of two that fits every NIAH family with room for haystack)")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--depths", e.calib.depths, "niah: needle depths per length")->capture_default_str();
  add_opt(app, "--samples", e.calib.samples, "calibration samples: niah, per (family, length, depth); text, chunks "
          "per length; longbench, samples per file")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--haystack", e.calib.haystack, "niah text haystack: markov, noise or a text file")->capture_default_str();
  app.add_flag("--calib-solved-only", e.calib.solved_only,
               "calibrate only on the samples the full model answers exactly (niah, longbench)");
  app.add_flag("--no-chat", no_chat, "do not wrap prompts in the model's chat template");
  add_opt(app, "--logprob-weight", e.logprob_weight, "weight of the mean answer log-probability in S (default: 0.01 "
          "niah/longbench, 1 text)")->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--kl-weight", e.kl_weight, "weight of the answer tokens' KL divergence from the full model in S (0: off)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--cache-gb", e.cache_gb, "memory for cached hidden states (GiB)")->capture_default_str()->check(CLI::Range(0.0, 1048576.0));
  add_opt(app, "--seed", e.seed, "seed of the calibration samples, the search, the random baselines and the razor tokens")
      ->capture_default_str();
  if (!baseline_flags) return;
  add_opt(app, "--duo", e.duo_dir, "DuoAttention pattern directory (full_attention_heads.tsv + config.json) for --method duo");
  add_opt(app, "--razor-period", e.razor_period, "razor: length of the repeated random block (default max(64, 2*(W+S)))");
}

namespace {

void add_removed_destroy_flag(CLI::App& app) {
  static std::string removed;
  add_opt(app, "--destroy", removed, "removed: stage 3 destroys 2-8 heads per LNS step (docs/search.md)")
      ->check([](const std::string&) {
        return std::string("was removed: stage 3 now destroys 2-8 heads per LNS step inside a ratio bucket "
                           "(docs/search.md); use --budget-group and --buckets");
      });
}

}  // namespace

void add_search_options(CLI::App& app, search::SearchOptions& s, double& alpha, bool ls_budget) {
  add_opt(app, "--budget-probe", s.budget_probe, "search stage 1: evaluations per layer (exhaustive when "
          "C(H, ceil(ratio*H)) fits)")->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--budget-group", s.budget_group, "search stage 3: evaluations per ratio bucket (-1: auto, "
          "max(64, 4 x the bucket's KV heads))")->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--buckets", s.buckets, "search stage 2: coarse ratio buckets (tiers of layers by sensitivity)")
      ->capture_default_str()->check(CLI::Range(1, 64));
  add_opt(app, "--bucket-share", s.bucket_share, "search stage 3: share of its budget spent inside the ratio "
          "buckets (the rest: one joint bucket of every layer)")->capture_default_str()->check(CLI::Range(0.01, 1.0));
  add_opt(app, "--budget-polish", s.budget_polish, "search polish after stage 3: evaluations of cross-layer swaps "
          "(-1: auto, 2 x the number of KV heads; 0: the paper's three stages only)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--budget-multi", s.budget_multi, "bosch-multi: evaluations (-1: auto, 4 x the number of KV heads)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  add_opt(app, "--budget-layer", s.budget_layer, "bosch-layer: evaluations (-1: auto, layers^2)")
      ->capture_default_str()->check(CLI::Range(-1, 1 << 24));
  if (ls_budget)
    add_opt(app, "--budget-ls", s.budget_ls, "ls: evaluations in all (-1: auto, what bosch's stages are charged at most)")
        ->capture_default_str()->check(CLI::Range(-1, 1 << 30));
  add_removed_destroy_flag(app);
  add_opt(app, "--alpha", alpha, "weight of the search's ratio penalty alpha * (ratio(z) - ratio)^2")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
}

}  // namespace bosch::cli
