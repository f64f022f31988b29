// `bosch info [MODEL]`: architecture, dimensions, heads, KV bytes per token.
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "formats/model_source.h"
#include "kernels/dispatch.h"
#include "masks/model_plan.h"
#include "model/hybrid_kv_cache.h"
#include "model/model.h"

namespace bosch::cli {
namespace {

struct InfoOptions {
  std::string model, mask;
  int window = 0, sinks = 0;
  std::vector<int64_t> contexts = {4096, 32768, 131072};
};

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return fmt::format("{:.1f} {}", b, units[u]);
}

void run_info(const InfoOptions& o) {
  const FileHold run_hold = weights_file_hold();  // a bad BOSCH_MMAP fails before anything prints
  const ModelFile file = ModelFile::open(resolve_model(o.model), FileHold::Map);  // reads only what it prints
  auto m = Model::load(file);
  const auto& c = m->config();
  fmt::print("model        {}\n", m->source());
  fmt::print("architecture {}\n", c.arch);
  fmt::print("layers       {}\n", c.n_layers);
  fmt::print("hidden       {}\n", c.d_model);
  fmt::print("heads        {} query, {} KV (group size {}), head dim {}\n", c.n_heads, c.n_kv_heads, c.group_size(),
             c.head_dim);
  fmt::print("mask bits    {} (layers x KV heads)\n", c.n_kv_total());
  if (c.is_moe()) {
    fmt::print("experts      {} experts, {} used per token, feed-forward {} each; top-k weights {}\n", c.n_expert,
               c.n_expert_used, c.d_ff_expert, c.norm_topk_prob ? "renormalised to sum 1" : "as routed");
  } else {
    fmt::print("ffn          {}\n", c.d_ff);
  }
  fmt::print("vocab        {}\n", c.vocab_size);
  fmt::print("context      {} (from the file)\n", c.max_context);
  fmt::print("rope theta   {}{}\n", c.rope_theta, c.rope_scaling.enabled ? " (llama3 scaling)" : "");
  fmt::print("qk norm      {}\n", c.qk_norm ? "yes" : "no");
  fmt::print("embeddings   {}\n", c.tied_embeddings ? "tied" : "untied");
  fmt::print("compute      float32 activations; one-token decode on quantised weights: x in 8 bits, integer dots\n"
             "kernels      {}\n"
             "sgemm        OpenBLAS, {} kernels{}\n", kernels::kernels_description(), kernels::blas_core_name(),
             std::getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)" : "");
  const Model::WeightSummary ws = m->weight_summary();
  std::string mix;
  for (const auto& [type, cb] : ws.types)
    mix += fmt::format("{}{} x{} ({})", mix.empty() ? "" : ", ", type, cb.first, human_bytes(static_cast<double>(cb.second)));
  fmt::print("weights      {}\n", mix);
  fmt::print("resident     {} from the file, {} owned copies, {} float32 norms/biases\n",
             human_bytes(static_cast<double>(ws.from_file)), human_bytes(static_cast<double>(ws.owned)),
             human_bytes(static_cast<double>(ws.small_f32)));
  fmt::print("file bytes   {}\n", run_hold == FileHold::Copy
                                       ? "copied into memory in 2 MiB pages when a command runs the model "
                                         "(BOSCH_MMAP=1 maps the file instead)"
                                       : "mapped when a command runs the model (BOSCH_MMAP=1, several MPI ranks, or "
                                         "no transparent huge pages; BOSCH_MMAP=0 copies it)");
  fmt::print("KV bytes/tok {} (float32 cache, full attention; {} with --kv-type f16)\n", c.kv_bytes_per_token(),
             c.kv_bytes_per_token() / 2);
  fmt::print("identity     {}\n", m->identity());
  std::string desc;
  AttentionPlan plan = plan_for_model(*m, o.mask, o.window, o.sinks, &desc, &file);
  if (plan.count_swa() > 0 || !o.mask.empty()) {
    // Exact formula (model/hybrid_kv_cache.h): SWA heads hold at most W + S positions.
    fmt::print("mask         {}\n", desc);
    fmt::print("KV bytes/tok {} (hybrid, while the context is longer than every window + sinks)\n",
               hybrid_kv_bytes_per_token(c, plan));
    fmt::print("{:>12} {:>14} {:>14} {:>8}\n", "context", "full KV", "hybrid KV", "ratio");
    for (int64_t t : o.contexts) {
      double full = static_cast<double>(c.kv_bytes_per_token()) * t;
      double hyb = static_cast<double>(hybrid_kv_bytes(c, plan, t));
      fmt::print("{:>12} {:>14} {:>14} {:>8.3f}\n", t, human_bytes(full), human_bytes(hyb), hyb / full);
    }
  }
}

CommandRegistrar reg("info", "print a model's architecture, dimensions and KV-cache cost", [](CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  add_opt(app, "model", o->model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--mask", o->mask, "MASK.json, full, or all-swa (with --window/--sinks): KV bytes of the hybrid cache");
  add_opt(app, "--window", o->window, "SWA window W for --mask all-swa")->check(CLI::Range(0, 1 << 24));
  add_opt(app, "--sinks", o->sinks, "SWA sink tokens S for --mask all-swa")->check(CLI::Range(0, 1 << 24));
  add_opt(app, "--context", o->contexts, "context lengths for the KV table")->delimiter(',')->check(CLI::Range(1, 1 << 30));
  app.callback([o] { run_info(*o); });
});

}  // namespace
}  // namespace bosch::cli
