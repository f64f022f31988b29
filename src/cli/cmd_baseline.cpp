// `bosch baseline [MODEL] --method NAME --ratio R --out MASK.json`: one baseline mask
// (search/baseline.h), exactly K = round(R * layers * KV heads) SWA heads, in the mask format
// of `bosch search`. Methods that need calibration data use the same calibration samples and
// objective as the search (--objective, --lengths, --depths, --samples, --seed).
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "masks/mask_file.h"
#include "search/baseline.h"
#include "search/baseline_setup.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct BaselineCliOptions {
  search::ExperimentOptions exp;
  std::string method, out;
  double ratio = 0.5;
  bool no_chat = false;
};

void add_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat) {
  app.add_option("--window", e.window, "SWA window W (recent tokens, the current one included)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  app.add_option("--sinks", e.sinks, "SWA sink tokens S")->capture_default_str()->check(CLI::Range(0, 1 << 20));
  app.add_option("--objective", e.calib.objective, "calibration: niah[:families], text:FILE or longbench:DIR; compare also synthetic:SHAPE[:SEED] (the search simulator, no model: docs/simulator.md)")
      ->capture_default_str();
  app.add_option("--lengths", e.calib.lengths, "calibration sample lengths in tokens (default: auto, the shortest power of two that fits every NIAH family with room for haystack)")->delimiter(',');
  app.add_option("--depths", e.calib.depths, "niah: needle depths per length")->capture_default_str();
  app.add_option("--samples", e.calib.samples, "niah: calibration samples per (family, length, depth)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--haystack", e.calib.haystack, "niah text haystack: markov, noise or a text file")->capture_default_str();
  app.add_flag("--calib-solved-only", e.calib.solved_only,
               "calibrate only on the samples the full model answers exactly (niah, longbench)");
  app.add_flag("--no-chat", no_chat, "do not wrap prompts in the model's chat template");
  app.add_option("--logprob-weight", e.logprob_weight, "weight of the mean answer log-probability in S (default as bosch search)");
  app.add_option("--cache-gb", e.cache_gb, "memory for cached hidden states (GiB)")->capture_default_str();
  app.add_option("--seed", e.seed, "seed of the random baselines, the razor tokens and the calibration samples")
      ->capture_default_str();
  app.add_option("--duo", e.duo_dir, "DuoAttention pattern directory (full_attention_heads.tsv + config.json) for --method duo");
  app.add_option("--razor-period", e.razor_period, "razor: length of the repeated random block (default max(64, 2*(W+S)))");
}

void run_baseline(BaselineCliOptions o) {
  const std::string method = search::canonical_baseline(o.method);  // fails before loading
  o.exp.model = resolve_model(o.exp.model);
  o.exp.chat = !o.no_chat;
  search::Experiment e = search::make_experiment(o.exp, search::needs_calibration(method));
  search::BaselineInputs in = e.baseline_inputs();
  in.seed = o.exp.seed;
  in.duo_dir = o.exp.duo_dir;
  in.razor_period = o.exp.razor_period;
  search::BaselineRunner runner(in);
  search::BaselineMask b = runner.run(method, o.ratio);

  nlohmann::json prov = b.provenance;
  prov["model_path"] = o.exp.model;
  prov["evaluations"] = b.evaluations;
  prov["seconds"] = b.seconds;
  if (e.objective) prov["objective"] = e.objective->describe();
  const AttentionPlan plan = AttentionPlan::from_bits(e.info.n_layers, e.info.n_kv_heads, b.bits, o.exp.window, o.exp.sinks);
  MaskFile::from_plan(plan, e.info, o.ratio, prov, o.exp.window, o.exp.sinks).save(o.out);
  std::fprintf(stderr, "baseline %s: %d/%zu heads SWA (W=%d, S=%d), %lld evaluations, %.2f s\n", method.c_str(),
               b.k, b.bits.size(), o.exp.window, o.exp.sinks, static_cast<long long>(b.evaluations), b.seconds);
  for (int l = 0; l < e.info.n_layers; ++l) {
    std::string row;
    for (int h = 0; h < e.info.n_kv_heads; ++h) row += b.bits[static_cast<size_t>(l) * e.info.n_kv_heads + h] ? 'S' : '.';
    std::fprintf(stderr, "  layer %2d  %s\n", l, row.c_str());
  }
  fmt::print("{}\n", o.out);
}

CommandRegistrar reg("baseline", "a baseline mask (layer-level RAND/INTR/BME or a static head ranking) at a ratio", [](CLI::App& app) {
  auto o = std::make_shared<BaselineCliOptions>();
  std::string methods;
  for (const auto& m : search::baseline_methods()) methods += fmt::format("\n  {:<11} {}", m, search::baseline_description(m));
  app.add_option("model", o->exp.model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  app.add_option("--method", o->method, "baseline:" + methods)->required();
  app.add_option("--ratio", o->ratio, "target fraction of SWA heads (K = round(ratio * layers * KV heads))")
      ->required()->check(CLI::Range(0.0, 1.0));
  app.add_option("--out", o->out, "mask file to write (JSON)")->required();
  add_experiment_options(app, o->exp, o->no_chat);
  app.callback([o] { run_baseline(*o); });
});

}  // namespace

// Shared with cmd_compare.cpp (same options as `bosch baseline`).
void add_baseline_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat) {
  add_experiment_options(app, e, no_chat);
}

}  // namespace bosch::cli
