#include "cli/experiment_options.h"

namespace bosch::cli {

void add_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat) {
  add_opt(app, "--window", e.window, "SWA window W (recent tokens, the current one included)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  add_opt(app, "--sinks", e.sinks, "SWA sink tokens S")->capture_default_str()->check(CLI::Range(0, 1 << 20));
  add_opt(app, "--objective", e.calib.objective, "calibration: niah[:families], text:FILE or longbench:DIR; compare also synthetic:SHAPE[:SEED] (the search simulator, no model: docs/simulator.md)")
      ->capture_default_str();
  add_opt(app, "--lengths", e.calib.lengths, "calibration sample lengths in tokens (default: auto, the shortest power of two that fits every NIAH family with room for haystack)")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--depths", e.calib.depths, "niah: needle depths per length")->capture_default_str();
  add_opt(app, "--samples", e.calib.samples, "niah: calibration samples per (family, length, depth)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--haystack", e.calib.haystack, "niah text haystack: markov, noise or a text file")->capture_default_str();
  app.add_flag("--calib-solved-only", e.calib.solved_only,
               "calibrate only on the samples the full model answers exactly (niah, longbench)");
  app.add_flag("--no-chat", no_chat, "do not wrap prompts in the model's chat template");
  add_opt(app, "--logprob-weight", e.logprob_weight, "weight of the mean answer log-probability in S (default as bosch search)")->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--kl-weight", e.kl_weight, "weight of the answer tokens' KL divergence from the full model in S (0: off)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
  add_opt(app, "--cache-gb", e.cache_gb, "memory for cached hidden states (GiB)")->capture_default_str()->check(CLI::Range(0.0, 1048576.0));
  add_opt(app, "--seed", e.seed, "seed of the random baselines, the razor tokens and the calibration samples")
      ->capture_default_str();
  add_opt(app, "--duo", e.duo_dir, "DuoAttention pattern directory (full_attention_heads.tsv + config.json) for --method duo");
  add_opt(app, "--razor-period", e.razor_period, "razor: length of the repeated random block (default max(64, 2*(W+S)))");
}

void add_removed_destroy_flag(CLI::App& app) {
  static std::string removed;
  add_opt(app, "--destroy", removed, "removed: stage 3 destroys 2-8 heads per LNS step (docs/search.md)")
      ->check([](const std::string&) {
        return std::string("was removed: stage 3 now destroys 2-8 heads per LNS step inside a ratio bucket "
                           "(docs/search.md); use --budget-group and --buckets");
      });
}

}  // namespace bosch::cli
