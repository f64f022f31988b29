// `bosch eval [MODEL] --suite niah[:families] ...`: NIAH scores of a model under a mask, as a
// table on stdout, JSON (--json) and a length x depth heatmap (--svg).
// `bosch eval [MODEL] --suite longbench --data DIR_OR_FILES`: LongBench (tasks/longbench.h).
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "formats/model_source.h"
#include "kernels/dispatch.h"
#include "masks/mask_file.h"
#include "model/forward_memory.h"
#include "model/model.h"
#include "tasks/longbench.h"
#include "tasks/niah.h"
#include "tasks/niah_report.h"
#include "tasks/scoring.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/svg.h"

namespace bosch::cli {
namespace {

struct EvalOptions {
  std::string model, mask = "full", suite = "niah", haystack = "markov", split = "test", mode = "tf";
  std::string json_out, svg_out, sweep;
  std::vector<int> lengths = {1024};
  std::vector<std::string> data, datasets;  // longbench
  int depths = 11, samples = 1, window = 0, sinks = 0, max_new_tokens = 0, max_prompt_tokens = 3500;
  bool samples_given = false;
  uint64_t seed = 0;
  bool no_chat = false, normalize = false;
};

// Window and sinks of the SWA heads of a plan (0, 0 when it has none).
std::pair<int, int> plan_window(const AttentionPlan& p) {
  for (int l = 0; l < p.n_layers(); ++l)
    for (int h = 0; h < p.n_kv_heads(); ++h)
      if (p.is_swa(l, h)) return {p.window(l, h), p.sinks(l, h)};
  return {0, 0};
}

nlohmann::ordered_json settings_json(const EvalOptions& o, const Model& m, const std::string& model_path,
                             const std::string& mask_desc, const AttentionPlan& plan) {
  auto [w, s] = plan_window(plan);
  return {{"model", model_path},
          {"model_identity", m.identity()},
          {"prefill_precision", kernels::bf16_prefill() ? "bf16" : "f32"},  // BOSCH_PRECISION
          {"mask", o.mask},
          {"mask_description", mask_desc},
          {"swa_ratio", plan.swa_ratio()},
          {"window", w ? w : o.window},
          {"sinks", w ? s : o.sinks},
          {"suite", o.suite},
          {"lengths", o.lengths},
          {"depths", o.depths},
          {"samples", o.samples},
          {"seed", o.seed},
          {"split", o.split},
          {"haystack", o.haystack},
          {"chat_template", !o.no_chat},
          {"mode", o.mode},
          {"max_new_tokens", o.max_new_tokens}};
}

// The NIAH samples of the options (made once) and their scoring under any plan: the one path
// of a plain eval and of --sweep.
class NiahScorer {
 public:
  NiahScorer(const EvalOptions& o, const Model& m, const Tokenizer& tok) : m_(m) {
    for (int len : o.lengths)
      if (m.config().max_context > 0 && len > m.config().max_context)
        std::fprintf(stderr, "bosch: warning: length %d exceeds the model's context of %d\n", len, m.config().max_context);
    check_forward_memory(m.config(), o.lengths, "--lengths");  // before minutes of sample making
    samples_ = generate_niah(tok, niah_options(o.suite, o.lengths, o.depths, o.samples, o.seed, parse_split(o.split),
                                               o.haystack, chat_wrap_for(tok, !o.no_chat)));
    so_.mode = parse_score_mode(o.mode);
    so_.tokenizer = &tok;
    so_.max_new_tokens = o.max_new_tokens;
  }
  const std::vector<TaskSample>& samples() const { return samples_; }
  TaskReport score(const AttentionPlan& p, const std::string& progress_label) {
    so_.progress_label = progress_label;
    const auto scores = score_samples(m_, p, samples_, so_);
    TaskReport r;
    for (size_t i = 0; i < samples_.size(); ++i) r.add(samples_[i], scores[i]);
    return r;
  }

 private:
  const Model& m_;
  std::vector<TaskSample> samples_;
  ScoreOptions so_;
};

void run_niah(const EvalOptions& o, const Model& m, const Tokenizer& tok, const std::string& path,
              const AttentionPlan& plan, const std::string& mask_desc) {
  NiahScorer scorer(o, m, tok);
  const auto& samples = scorer.samples();
  auto run = [&](const AttentionPlan& p, const std::string& label) { return scorer.score(p, "scoring " + label); };
  TaskReport report = run(plan, mask_desc);
  nlohmann::ordered_json j = report.to_json();

  if (o.normalize) {
    auto [w, s] = plan_window(plan);
    if (!w) w = o.window, s = o.sinks;
    check(w >= 1, "--normalize needs the window of the all-SWA reference: give --window W (and --sinks S)");
    const auto& c = m.config();
    TaskReport full = run(AttentionPlan::full(c.n_layers, c.n_kv_heads), "full");
    TaskReport swa = run(AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, w, s), fmt::format("all-swa W={} S={}", w, s));
    auto norm = [](double x, double f, double a) -> nlohmann::ordered_json {
      auto v = normalized_score(x, f, a);
      return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    nlohmann::ordered_json n;
    n["exact_match"] = norm(report.overall().exact_match(), full.overall().exact_match(), swa.overall().exact_match());
    n["mean_answer_logprob"] = norm(report.overall().mean_logprob(), full.overall().mean_logprob(), swa.overall().mean_logprob());
    n["reference_full"] = full.overall().to_json();
    n["reference_all_swa"] = swa.overall().to_json();
    for (const auto& [f, st] : report.per_family())
      n["per_family"][f] = norm(st.exact_match(), full.per_family().at(f).exact_match(), swa.per_family().at(f).exact_match());
    j["normalized"] = n;
  }
  j["settings"] = settings_json(o, m, path, mask_desc, plan);

  fmt::print("NIAH {} on {} | mask {} | split {} | {} samples | mode {}\n", o.suite, path, mask_desc,
             o.split, samples.size(), o.mode);
  fmt::print("{}", report.table());
  if (j.contains("normalized")) fmt::print("normalized exact match: {}\n", j["normalized"]["exact_match"].dump());
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
  if (!o.svg_out.empty())
    write_heatmap_svg(o.svg_out, report.heatmap(fmt::format("NIAH {} — mask {}", o.suite, mask_desc)));
}

// --sweep heads|layers: one model load and one sample set for the whole table: full, every KV
// head SWA, then each KV head (or each layer's heads) alone SWA(W, S), everything else full. The
// cost is full minus that exact match: what single-head (or single-layer) ablation sees, before
// any entanglement (scripts/head_table.sh and layer_table.sh once ran eval N + 1 times for it).
void run_sweep(const EvalOptions& o, const Model& m, const Tokenizer& tok, const std::string& path) {
  check(o.sweep == "heads" || o.sweep == "layers", "--sweep: expected heads or layers, got '{}'", o.sweep);
  check(o.window >= 1, "--sweep needs --window W (>= 1): the SWA each swept head gets");
  check(o.mask == "full", "--sweep converts one head or layer at a time from the full model; leave out --mask");
  NiahScorer scorer(o, m, tok);
  const auto& samples = scorer.samples();
  const auto& c = m.config();
  const bool heads = o.sweep == "heads";
  const int n = heads ? c.n_layers * c.n_kv_heads : c.n_layers;
  int step = 0;
  auto em = [&](const AttentionPlan& p, const std::string& label) {
    return scorer.score(p, fmt::format("sweep {}/{}: {}", ++step, n + 2, label)).overall().exact_match();
  };
  const double full = em(AttentionPlan::full(c.n_layers, c.n_kv_heads), "full");
  const double swa = em(AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, o.window, o.sinks), "all SWA");
  std::vector<double> cost(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    AttentionPlan p = AttentionPlan::full(c.n_layers, c.n_kv_heads);
    if (heads) p.set_swa(i / c.n_kv_heads, i % c.n_kv_heads, o.window, o.sinks);
    else for (int h = 0; h < c.n_kv_heads; ++h) p.set_swa(i, h, o.window, o.sinks);
    cost[static_cast<size_t>(i)] =
        full - em(p, heads ? fmt::format("head {}.{}", i / c.n_kv_heads, i % c.n_kv_heads) : fmt::format("layer {}", i));
  }

  fmt::print("NIAH {} on {}, {} samples ({} split), exact match: full {:.3f}, every KV head SWA({}, {}) {:.3f}\n\n",
             o.suite, path, samples.size(), o.split, full, o.window, o.sinks, swa);
  if (heads) {
    fmt::print("Cost of one KV head SWA({}, {}) alone (full minus its exact match):\n\n| layer |", o.window, o.sinks);
    for (int h = 0; h < c.n_kv_heads; ++h) fmt::print(" H{} |", h);
    fmt::print("\n| --- |");
    for (int h = 0; h < c.n_kv_heads; ++h) fmt::print(" ---: |");
    fmt::print("\n");
    for (int l = 0; l < c.n_layers; ++l) {
      fmt::print("| {} |", l);
      for (int h = 0; h < c.n_kv_heads; ++h) fmt::print(" {:.3f} |", cost[static_cast<size_t>(l * c.n_kv_heads + h)]);
      fmt::print("\n");
    }
  } else {
    fmt::print("| layer SWA({}, {}) | exact match | cost vs full |\n| --- | ---: | ---: |\n", o.window, o.sinks);
    for (int l = 0; l < n; ++l) fmt::print("| {} | {:.3f} | {:.3f} |\n", l, full - cost[static_cast<size_t>(l)], cost[static_cast<size_t>(l)]);
  }
  nlohmann::ordered_json j;
  j["sweep"] = o.sweep;
  j["exact_match_full"] = full;
  j["exact_match_all_swa"] = swa;
  j["cost"] = cost;  // flat: layer * KV heads + head (heads), or per layer
  j["settings"] = settings_json(o, m, path, fmt::format("sweep {} SWA({}, {})", o.sweep, o.window, o.sinks),
                                AttentionPlan::full(c.n_layers, c.n_kv_heads));
  j["settings"]["samples_total"] = samples.size();
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
}

void run_longbench_suite(const EvalOptions& o, const Model& m, const Tokenizer& tok,
                         const std::string& path, const AttentionPlan& plan, const std::string& mask_desc) {
  check(!o.data.empty(), "--suite longbench needs --data DIR_OR_FILES (the LongBench JSONL files)");
  LongBenchOptions lo;
  lo.data = o.data;
  lo.datasets = o.datasets;
  lo.max_prompt_tokens = o.max_prompt_tokens;
  lo.max_samples = o.samples_given ? o.samples : 0;
  lo.chat_template = !o.no_chat;
  LongBenchResult r = run_longbench(m, tok, plan, lo);
  nlohmann::ordered_json j = nlohmann::ordered_json(r.to_json());
  j["settings"] = settings_json(o, m, path, mask_desc, plan);
  fmt::print("LongBench on {} | mask {}\n{}", path, mask_desc, r.table());
  if (!o.json_out.empty()) write_file_atomic(o.json_out, j.dump(2) + "\n");
}

void run_eval(const EvalOptions& o) {
  const std::string path = resolve_model(o.model);
  const bool longbench = o.suite == "longbench";
  if (!longbench) parse_niah_suite(o.suite);  // bad suite names fail before loading the model
  if (!longbench) parse_split(o.split), parse_score_mode(o.mode);
  if (!o.sweep.empty()) check(!longbench, "--sweep runs on NIAH (--suite niah[:FAMILIES])");
  std::unique_ptr<Model> m;
  std::unique_ptr<Tokenizer> tok;
  {  // opened once for both; dropped after (the model keeps only the mapped bytes)
    const ModelFile file = ModelFile::open(path, weights_file_hold());
    m = Model::load(file);
    tok = load_tokenizer(file);
  }
  if (!o.sweep.empty()) return run_sweep(o, *m, *tok, path);
  std::string mask_desc;
  AttentionPlan plan = plan_from_mask_arg(o.mask, *m, o.window, o.sinks, &mask_desc);
  if (longbench) run_longbench_suite(o, *m, *tok, path, plan, mask_desc);
  else run_niah(o, *m, *tok, path, plan, mask_desc);
}

CommandRegistrar reg("eval", "score a model (optionally under a mask) on NIAH or LongBench", [](CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  add_opt(app, "model", o->model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--mask", o->mask, "a mask file, 'full' (default) or 'all-swa' (with --window, --sinks)");
  add_opt(app, "--window", o->window, "window W for --mask all-swa (and the --normalize reference)")->check(CLI::Range(0, 1 << 30));
  add_opt(app, "--sinks", o->sinks, "sink tokens S for --mask all-swa")->check(CLI::Range(0, 1 << 30));
  add_opt(app, "--suite", o->suite, "niah, niah:FAMILY,... (single_noise, single_text, single_uuid, multikey, "
                                      "multikey_uuid, multivalue, multiquery, passkey) or longbench");
  add_opt(app, "--lengths", o->lengths, "NIAH lengths in tokens, e.g. 1024,2048")->delimiter(',')->check(CLI::Range(16, 1 << 24));
  add_opt(app, "--depths", o->depths, "number of needle depths, evenly from 0% to 100%")->check(CLI::Range(1, 1001));
  auto* samples = add_opt(app, "--samples", o->samples, "samples per (family, length, depth); LongBench: per dataset")->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--seed", o->seed, "generator seed");
  add_opt(app, "--split", o->split, "calib or test (default test); calib and test never share a needle");
  add_opt(app, "--haystack", o->haystack, "text haystack: markov (default), noise, or a UTF-8 text file");
  add_opt(app, "--mode", o->mode, "tf (teacher-forced, default) or generate (greedy + RULER string_match_all)");
  add_opt(app, "--max-new-tokens", o->max_new_tokens, "generate mode: tokens per answer (default: max(64, 2x answer))");
  app.add_flag("--no-chat-template", o->no_chat, "do not wrap prompts in the model's chat template");
  app.add_flag("--normalize", o->normalize, "also score full and all-SWA, report (S - S_allswa) / (S_full - S_allswa)");
  add_opt(app, "--sweep", o->sweep, "heads or layers: the cost of each KV head (or layer) alone SWA(--window, --sinks), "
                                     "one model load; a Markdown table (and --json)");
  add_opt(app, "--json", o->json_out, "write scores and the exact settings as JSON");
  add_opt(app, "--svg", o->svg_out, "write the NIAH length x depth heatmap");
  add_opt(app, "--data", o->data, "LongBench: JSONL files or directories")->delimiter(',');
  add_opt(app, "--datasets", o->datasets, "LongBench: only these datasets (e.g. hotpotqa,trec)")->delimiter(',');
  add_opt(app, "--max-prompt-tokens", o->max_prompt_tokens, "LongBench: prompt budget (pred.py max_length)")->check(CLI::Range(16, 1 << 24));
  app.callback([o, samples] {
    o->samples_given = samples->count() > 0;
    run_eval(*o);
  });
});

}  // namespace
}  // namespace bosch::cli
