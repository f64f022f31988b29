// `bosch info [MODEL]`: architecture, dimensions, heads, KV bytes per token.
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "model/model.h"

namespace bosch::cli {
namespace {

struct InfoOptions {
  std::string model;
};

void run_info(const InfoOptions& o) {
  auto m = Model::load(resolve_model(o.model));
  const auto& c = m->config();
  fmt::print("model        {}\n", m->source());
  fmt::print("architecture {}\n", c.arch);
  fmt::print("layers       {}\n", c.n_layers);
  fmt::print("hidden       {}\n", c.d_model);
  fmt::print("heads        {} query, {} KV (group size {}), head dim {}\n", c.n_heads, c.n_kv_heads, c.group_size(),
             c.head_dim);
  fmt::print("mask bits    {} (layers x KV heads)\n", c.n_kv_total());
  fmt::print("ffn          {}\n", c.d_ff);
  fmt::print("vocab        {}\n", c.vocab_size);
  fmt::print("context      {} (from the file)\n", c.max_context);
  fmt::print("rope theta   {}{}\n", c.rope_theta, c.rope_scaling.enabled ? " (llama3 scaling)" : "");
  fmt::print("qk norm      {}\n", c.qk_norm ? "yes" : "no");
  fmt::print("embeddings   {}\n", c.tied_embeddings ? "tied" : "untied");
  fmt::print("compute      float32\n");
  fmt::print("KV bytes/tok {} (float32 cache, full attention)\n", c.kv_bytes_per_token());
  fmt::print("identity     {}\n", m->identity());
}

CommandRegistrar reg("info", "print a model's architecture, dimensions and KV-cache cost", [](CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  app.add_option("model", o->model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  app.callback([o] { run_info(*o); });
});

}  // namespace
}  // namespace bosch::cli
