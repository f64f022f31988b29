// `bosch generate [MODEL]`: text generation (greedy or sampled) printed on stdout as it is made.
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "cli/command.h"
#include "formats/model_source.h"
#include "masks/model_plan.h"
#include "model/generate.h"
#include "model/hybrid_kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct GenerateOptions {
  std::string model, prompt, ids, mask, kv_type = "f32";
  int window = 0, sinks = 0;
  int max_tokens = 256;
  double temperature = 0.8, top_p = 0.95;
  uint64_t seed = 0;
  bool print_ids = false, chat = false;
};

std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> out;
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) {
    long long v = -1;
    size_t used = 0;
    try {
      v = std::stoll(tok, &used);
    } catch (...) {
      used = 0;
    }
    // Whole word, in int32 range: "4294967298" must not wrap to token 2.
    check(used == tok.size() && v >= 0 && v <= kMaxInt32, "--ids: '{}' is not a token id (an integer in [0, {}])",
          excerpt(tok), kMaxInt32);
    out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

void run_generate(const GenerateOptions& o) {
  const std::string path = resolve_model(o.model);
  std::unique_ptr<Model> m;
  std::unique_ptr<Tokenizer> tok;
  std::string desc;
  AttentionPlan plan;
  {  // opened once for model, tokenizer and the mask in its metadata; dropped after
    const ModelFile file = ModelFile::open(path, weights_file_hold());
    m = Model::load(file);
    if (o.ids.empty() || !o.print_ids) tok = load_tokenizer(file);
    plan = plan_for_model(*m, o.mask, o.window, o.sinks, &desc, &file);
  }
  std::vector<int32_t> prompt;
  if (!o.ids.empty()) {
    prompt = parse_ids(o.ids);
  } else {
    std::string text = o.chat ? tok->apply_chat_template(o.prompt) : o.prompt;
    prompt = tok->encode(text, /*add_bos=*/true);
    if (prompt.empty() && tok->bos_id() >= 0) prompt.push_back(tok->bos_id());
    check(!prompt.empty(), "the prompt is empty and the model has no BOS token: give --prompt");
  }
  SamplingParams p;
  p.temperature = o.temperature;
  p.top_p = o.top_p;
  p.seed = o.seed;
  p.max_tokens = o.max_tokens;
  if (tok)
    for (int32_t id = 0; id < tok->vocab_size(); ++id)
      if (tok->is_eog(id)) p.stop_ids.push_back(id);
  std::unique_ptr<StreamDecoder> dec;
  if (tok && !o.print_ids) dec = std::make_unique<StreamDecoder>(*tok);
  // With SWA heads, the hybrid cache keeps only W + S positions for them (real memory saving).
  const int64_t tokens = static_cast<int64_t>(prompt.size()) + p.max_tokens + 1;
  const KvType kv_type = parse_kv_type(o.kv_type);
  std::unique_ptr<KVStore> cache;
  if (plan.count_swa() > 0) {
    std::fprintf(stderr, "generate: %s\n", desc.c_str());
    cache = std::make_unique<HybridKVCache>(m->config(), plan, tokens, kv_type);
  } else {
    cache = std::make_unique<KVCache>(m->config(), plan, tokens, kv_type);
  }
  generate(*m, *cache, prompt, p, [&](int32_t t) {
    if (dec) fmt::print("{}", dec->push(t));
    else fmt::print("{} ", t);
    std::fflush(stdout);
    return true;
  });
  if (dec) fmt::print("{}", dec->flush());
  fmt::print("\n");
}

CommandRegistrar reg("generate", "generate text with a KV cache (greedy with --temperature 0)", [](CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  add_opt(app, "model", o->model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--prompt", o->prompt, "prompt text (default: empty, i.e. BOS only)");
  add_opt(app, "--ids", o->ids, "prompt as token ids separated by spaces (instead of --prompt)");
  add_opt(app, "--max-tokens", o->max_tokens, "tokens to generate")->check(CLI::Range(1, 1 << 20));
  add_opt(app, "--temperature", o->temperature, "0 = greedy")->check(CLI::Range(0.0, 100.0));
  add_opt(app, "--top-p", o->top_p, "nucleus sampling mass")->check(CLI::Range(0.0, 1.0));
  add_opt(app, "--seed", o->seed, "sampling seed");
  app.add_flag("--print-ids", o->print_ids, "print token ids instead of text");
  app.add_flag("--chat", o->chat, "wrap the prompt in the model's chat template");
  add_opt(app, "--mask", o->mask, "MASK.json, full, or all-swa (with --window/--sinks); uses the hybrid KV cache");
  add_opt(app, "--window", o->window, "SWA window W for --mask all-swa");
  add_opt(app, "--sinks", o->sinks, "SWA sink tokens S for --mask all-swa");
  add_opt(app, "--kv-type", o->kv_type, "KV cache values: f32 (exact) or f16 (half the memory)")
      ->check(CLI::IsMember({"f32", "f16"}));
  app.callback([o] { run_generate(*o); });
});

}  // namespace
}  // namespace bosch::cli
