// Tokenizer from GGUF metadata: tokenizer.ggml.model = "llama" (SentencePiece-style) or "gpt2"
// (byte-level BPE with tokenizer.ggml.merges and tokenizer.ggml.pre).
#include <cmath>

#include "formats/gguf.h"
#include "tokenizer/byte_level_bpe.h"
#include "tokenizer/spm_tokenizer.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {
namespace {

bool get_bool_or(const GGUFFile& g, const std::string& key, bool fallback) {
  const GGUFValue* v = g.find(key);
  if (!v) return fallback;
  if (v->kind == GGUFValue::Kind::Bool) return v->b;
  if (v->kind == GGUFValue::Kind::Int) return v->i != 0;
  fail("{}: {} must be a bool", g.path(), key);
}

int32_t get_id_or(const GGUFFile& g, const std::string& key, int32_t fallback, size_t n_vocab) {
  int64_t v = g.get_int_or(key, fallback);
  if (v < 0) return -1;
  check(static_cast<size_t>(v) < n_vocab, "{}: {} = {} is outside the vocabulary [0, {})", g.path(), key, v, n_vocab);
  return static_cast<int32_t>(v);
}

std::vector<int32_t> token_types(const GGUFFile& g, size_t n) {
  if (!g.has("tokenizer.ggml.token_type")) return std::vector<int32_t>(n, 1);
  std::vector<int64_t> t = g.get_int_array("tokenizer.ggml.token_type");
  check(t.size() == n, "{}: tokenizer.ggml.token_type has {} entries, expected {} (one per token)", g.path(), t.size(), n);
  std::vector<int32_t> out(n);
  for (size_t i = 0; i < n; ++i)  // llama.cpp token types 0..6; no wrap-around to int32
    out[i] = static_cast<int32_t>(int_in_range(t[i], 0, 6, g.path(), fmt::format("tokenizer.ggml.token_type[{}]", i)));
  return out;
}

// End-of-generation ids: EOS plus EOT/EOM and the usual end markers that the vocab has.
std::vector<int32_t> eog_ids(const GGUFFile& g, const std::vector<std::string>& tokens, int32_t eos) {
  std::vector<int32_t> out;
  if (eos >= 0) out.push_back(eos);
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (int32_t id = get_id_or(g, key, -1, tokens.size()); id >= 0) out.push_back(id);
  for (size_t i = 0; i < tokens.size(); ++i)
    for (const char* name : {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"})
      if (tokens[i] == name) out.push_back(static_cast<int32_t>(i));
  return out;
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_from_gguf(const GGUFFile& g) {
  const std::string model = g.get_string("tokenizer.ggml.model");
  std::vector<std::string> tokens = g.get_string_array("tokenizer.ggml.tokens");
  check(!tokens.empty(), "{}: tokenizer.ggml.tokens is empty", g.path());
  const size_t n = tokens.size();
  std::vector<int32_t> types = token_types(g, n);
  const std::string chat = g.get_string_or("tokenizer.chat_template", "");

  if (model == "llama") {
    SpmSpec s;
    s.source = g.path();
    std::vector<double> scores = g.has("tokenizer.ggml.scores") ? g.get_float_array("tokenizer.ggml.scores")
                                                                 : std::vector<double>(n, 0.0);
    check(scores.size() == n, "{}: tokenizer.ggml.scores has {} entries, expected {}", g.path(), scores.size(), n);
    for (size_t i = 0; i < n; ++i)  // stored as float: a double beyond its range would be UB
      check(std::isfinite(scores[i]) && std::fabs(scores[i]) <= 1e30,
            "{}: tokenizer.ggml.scores[{}] is {}, expected a finite number of magnitude <= 1e30", g.path(), i, scores[i]);
    s.scores.assign(scores.begin(), scores.end());
    s.tokens = std::move(tokens);
    s.types = std::move(types);
    s.bos = get_id_or(g, "tokenizer.ggml.bos_token_id", 1, n);
    s.eos = get_id_or(g, "tokenizer.ggml.eos_token_id", 2, n);
    s.unk = std::max(0, get_id_or(g, "tokenizer.ggml.unknown_token_id", 0, n));
    s.add_bos = get_bool_or(g, "tokenizer.ggml.add_bos_token", true);
    s.add_space_prefix = get_bool_or(g, "tokenizer.ggml.add_space_prefix", true);
    s.eog = eog_ids(g, s.tokens, s.eos);
    s.chat_template = chat;
    return std::make_unique<SpmTokenizer>(std::move(s));
  }
  if (model == "gpt2") {
    ByteLevelBpeSpec s;
    s.source = g.path();
    for (const std::string& m : g.get_string_array("tokenizer.ggml.merges")) {
      size_t sp = m.find(' ', 1);
      check(sp != std::string::npos, "{}: tokenizer.ggml.merges entry \"{}\" is not \"left right\"", g.path(), excerpt(m));
      s.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
    }
    for (size_t i = 0; i < n; ++i)
      if (types[i] == 3 || types[i] == 4)  // control / user-defined: matched before splitting
        s.added.push_back({tokens[i], static_cast<int32_t>(i), false, false, types[i] == 3});
    s.splits.push_back({split_pattern_for_gguf_pre(g.get_string_or("tokenizer.ggml.pre", "default"), g.path()),
                        RegexSplitter::Behavior::Isolated});
    s.bos = get_id_or(g, "tokenizer.ggml.bos_token_id", -1, n);
    s.eos = get_id_or(g, "tokenizer.ggml.eos_token_id", -1, n);
    s.add_bos = get_bool_or(g, "tokenizer.ggml.add_bos_token", false) && s.bos >= 0;
    s.eog = eog_ids(g, tokens, s.eos);
    s.chat_template = chat;
    s.vocab = std::move(tokens);
    return std::make_unique<ByteLevelBpeTokenizer>(std::move(s));
  }
  fail("{}: tokenizer.ggml.model = \"{}\" is not supported (expected \"llama\" or \"gpt2\")", g.path(), excerpt(model));
}

}  // namespace bosch
