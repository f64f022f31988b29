// Hugging Face tokenizer.json (byte-level BPE models) + optional tokenizer_config.json.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tokenizer/byte_level_bpe.h"
#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {
namespace {
using nlohmann::json;

json parse_file(const std::string& path) { return parse_json_checked(read_file(path, kMaxTokenizerBytes, "tokenizer"), path); }

// Token text from a config field that is either "text" or {"content": "text", ...}.
std::string token_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

void add_pre_tokenizer(const json& p, const std::string& file, ByteLevelBpeSpec& spec, bool& byte_level) {
  if (p.is_null()) return;
  std::string type = p.value("type", "");
  if (type == "Sequence") {
    for (const auto& sub : p.at("pretokenizers")) add_pre_tokenizer(sub, file, spec, byte_level);
  } else if (type == "ByteLevel") {
    byte_level = true;
    if (p.value("add_prefix_space", false)) spec.add_prefix_space = true;
    if (p.value("use_regex", true)) spec.splits.push_back({kGpt2SplitPattern, RegexSplitter::Behavior::Isolated});
  } else if (type == "Split") {
    check(!p.value("invert", false), "{}: pre_tokenizer Split with invert=true is not supported", file);
    std::string behavior = p.value("behavior", "Isolated");
    RegexSplitter::Behavior b;
    if (behavior == "Isolated") b = RegexSplitter::Behavior::Isolated;
    else if (behavior == "Removed") b = RegexSplitter::Behavior::Removed;
    else fail("{}: pre_tokenizer Split behavior \"{}\" is not supported (expected Isolated or Removed)", file, excerpt(behavior));
    const json& pat = p.at("pattern");
    std::string regex;
    if (pat.contains("Regex")) regex = pat["Regex"].get<std::string>();
    else if (pat.contains("String")) regex = "\\Q" + pat["String"].get<std::string>() + "\\E";
    else fail("{}: pre_tokenizer Split pattern has neither Regex nor String", file);
    spec.splits.push_back({regex, b});
  } else {
    fail("{}: pre_tokenizer type \"{}\" is not supported (expected ByteLevel, Split or Sequence)", file, excerpt(type));
  }
}

// `field` names the part being read, for the message when the JSON library throws (a missing
// key, a wrong type deep in a pre-tokenizer): every such error names the file and the field.
std::unique_ptr<Tokenizer> load_impl(const std::string& path, std::string& field) {
  field = "(top level)";
  json j = parse_file(path);
  check(j.is_object() && j.contains("model"), "{}: no \"model\" object (expected a Hugging Face tokenizer.json)", path);
  const json& model = j["model"];
  std::string mtype = model.value("type", "BPE");
  check(mtype == "BPE", "{}: model.type is \"{}\", expected \"BPE\"", path, excerpt(mtype));
  check(!model.value("byte_fallback", false),
        "{}: model.byte_fallback=true (SentencePiece-style BPE) is supported from GGUF only", path);

  ByteLevelBpeSpec spec;
  spec.source = path;
  field = "model.vocab";
  const json& vocab = model.at("vocab");
  check(vocab.is_object(), "{}: model.vocab must be an object token -> id", path);
  // Ids index tables, so they are bounded by the tokens the file declares (vocab entries plus
  // added tokens), checked before anything is sized by them.
  const json* added_json = j.contains("added_tokens") ? &j["added_tokens"] : nullptr;
  check(!added_json || added_json->is_array(), "{}: added_tokens must be an array", path);
  const int64_t max_id = std::min<int64_t>(
      static_cast<int64_t>(vocab.size() + (added_json ? added_json->size() : 0)), kMaxInt32) - 1;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const int64_t id = json_int(it.value(), path, "model.vocab[\"" + excerpt(it.key()) + "\"]", 0, max_id);
    if (static_cast<size_t>(id) >= spec.vocab.size()) spec.vocab.resize(id + 1);
    spec.vocab[id] = it.key();
  }
  field = "model.merges";
  const json& merges = model.at("merges");
  spec.merges.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const json& m = merges[r];
    if (m.is_array() && m.size() == 2) {
      spec.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else if (m.is_string()) {
      std::string s = m.get<std::string>();
      size_t sp = s.find(' ', 1);
      check(sp != std::string::npos, "{}: model.merges[{}] = \"{}\" is not \"left right\"", path, r, excerpt(s));
      spec.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else {
      fail("{}: model.merges[{}] must be \"left right\" or [left, right]", path, r);
    }
  }
  spec.ignore_merges = model.value("ignore_merges", false);

  if (added_json)
    for (size_t k = 0; k < added_json->size(); ++k) {
      const json& a = (*added_json)[k];
      field = fmt::format("added_tokens[{}]", k);
      const int64_t id = json_int(a.at("id"), path, field + ".id", 0, max_id);
      spec.added.push_back({a.at("content").get<std::string>(), static_cast<int32_t>(id),
                            a.value("lstrip", false), a.value("rstrip", false), a.value("special", true)});
    }

  field = "normalizer";
  spec.normalizer = Normalizer::from_json(j.value("normalizer", json()), path);
  bool byte_level = false;
  field = "pre_tokenizer";
  add_pre_tokenizer(j.value("pre_tokenizer", json()), path, spec, byte_level);
  check(byte_level, "{}: pre_tokenizer has no ByteLevel step; only byte-level BPE tokenizer.json "
                    "files are supported (SentencePiece models: use the GGUF file)", path);

  auto id_of = [&](const std::string& text) -> int32_t {
    if (text.empty()) return -1;
    for (const auto& a : spec.added)
      if (a.content == text) return a.id;
    for (size_t i = 0; i < spec.vocab.size(); ++i)
      if (spec.vocab[i] == text) return static_cast<int32_t>(i);
    return -1;
  };

  // BOS from the post-processor template (Llama-3: "<|begin_of_text|>" $A).
  field = "post_processor";
  const json& post = j.value("post_processor", json());
  auto template_bos = [&](const json& p) {
    if (p.is_object() && p.value("type", "") == "TemplateProcessing" && p.contains("single") &&
        !p["single"].empty() && p["single"][0].contains("SpecialToken")) {
      spec.bos = id_of(p["single"][0]["SpecialToken"].value("id", ""));
      spec.add_bos = spec.bos >= 0;
    }
  };
  template_bos(post);
  if (post.is_object() && post.value("type", "") == "Sequence")
    for (const auto& p : post.value("processors", json::array())) template_bos(p);

  // tokenizer_config.json next to it: bos/eos, add_bos_token, chat_template.
  namespace fs = std::filesystem;
  std::string cfg_path = (fs::path(path).parent_path() / "tokenizer_config.json").string();
  if (fs::exists(cfg_path)) {
    field = "tokenizer_config.json";
    json cfg = parse_file(cfg_path);
    if (cfg.contains("bos_token") && !cfg["bos_token"].is_null()) spec.bos = id_of(token_text(cfg["bos_token"]));
    if (cfg.contains("eos_token") && !cfg["eos_token"].is_null()) spec.eos = id_of(token_text(cfg["eos_token"]));
    if (cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean()) spec.add_bos = cfg["add_bos_token"].get<bool>();
    if (cfg.contains("chat_template")) {
      const json& ct = cfg["chat_template"];
      if (ct.is_string()) spec.chat_template = ct.get<std::string>();
      else if (ct.is_array())
        for (const auto& e : ct)
          if (e.value("name", "") == "default") spec.chat_template = e.value("template", "");
    }
  }
  if (spec.eos < 0)
    for (const char* name : {"<|endoftext|>", "<|end_of_text|>", "</s>"})
      if ((spec.eos = id_of(name)) >= 0) break;
  if (spec.eos >= 0) spec.eog.push_back(spec.eos);
  for (const char* name : {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|end|>"})
    if (int32_t id = id_of(name); id >= 0) spec.eog.push_back(id);
  spec.add_bos = spec.add_bos && spec.bos >= 0;
  field = "(tokens)";
  return std::make_unique<ByteLevelBpeTokenizer>(std::move(spec));
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& path) {
  std::string field;
  try {
    return load_impl(path, field);
  } catch (const json::exception& e) {  // a missing key or a wrong type: name file and field
    fail("{}: field {}: missing or of the wrong type ({})", path, field, json_error_text(e));
  }
}

}  // namespace bosch
