// Hostile tokenizer files (issue #24): every one is a bosch::Error naming the file and the
// field, before any table is sized by a value from the file. Files: tests/data/malformed.
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/gguf.h"
#include "formats/writers.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "../test_support.h"

using bosch::tests::error_of;

namespace bosch {
namespace {

const std::string kData = std::string(BOSCH_SOURCE_DIR) + "/tests/data/malformed/";

void expect_json_error(const std::string& file, const std::vector<std::string>& parts) {
  const std::string e = error_of([&] { load_tokenizer_json(kData + file); });
  EXPECT_NE(e.find(file), std::string::npos) << e;
  for (const auto& p : parts) EXPECT_NE(e.find(p), std::string::npos) << "'" << p << "' missing from: " << e;
  EXPECT_LT(e.size(), 400u) << e;
}

}  // namespace

TEST(TokenizerJsonMalformed, AddedTokenIdsAreBoundedByTheDeclaredTokens) {
  // Was: 8 GB resident for 258 million, bad_alloc for 2^31-1, vector::_M_default_append for -5.
  for (const char* f : {"tokenizer_huge_added_id.json", "tokenizer_max_added_id.json", "tokenizer_negative_added_id.json"})
    expect_json_error(f, {"field 'added_tokens[0].id' must be an integer in [0, 2]"});
}

TEST(TokenizerJsonMalformed, MissingKeysAndWrongTypesNameTheField) {
  expect_json_error("tokenizer_float_vocab_id.json", {"field 'model.vocab[\"b\"]' must be an integer in [0, 1], got 1.5"});
  expect_json_error("tokenizer_no_vocab.json", {"field model.vocab: missing or of the wrong type"});
  expect_json_error("tokenizer_split_pattern_number.json", {"field pre_tokenizer: missing or of the wrong type"});
}

TEST(TokenizerJsonMalformed, DeepNestingAndConfigErrors) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(BOSCH_BINARY_DIR) / "tok_malformed";
  fs::create_directories(dir);
  const std::string path = (dir / "tokenizer.json").string();
  const std::string good = R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"ByteLevel"}})";
  write_file_atomic(path, good.substr(0, good.size() - 1) + ",\"x\":" + std::string(50000, '[') + std::string(50000, ']') + "}");
  std::string e = error_of([&] { load_tokenizer_json(path); });
  EXPECT_NE(e.find("JSON nested deeper than 64 levels"), std::string::npos) << e;
  write_file_atomic(path, good);
  write_file_atomic((dir / "tokenizer_config.json").string(), "{\"bos_token\": [1, 2");
  e = error_of([&] { load_tokenizer_json(path); });
  EXPECT_NE(e.find("tokenizer_config.json: not valid JSON"), std::string::npos) << e;
  fs::remove_all(dir);
}

TEST(SpmMalformed, ByteTokenThatIsNotHexIsAClearError) {
  SpmSpec s;
  s.source = "spm.gguf";
  s.tokens = {"<unk>", "<s>", "</s>", "<0xZZ>"};
  s.types = {2, 3, 3, 6};
  const std::string e = error_of([&] { SpmTokenizer t(s); });  // was "internal error: stoul"
  EXPECT_NE(e.find("spm.gguf: byte token #3 \"<0xZZ>\" is not of the form <0xNN>"), std::string::npos) << e;
  s.tokens[3] = "<0x+1>";  // stoul accepted this one
  EXPECT_NE(error_of([&] { SpmTokenizer t(s); }).find("byte token #3"), std::string::npos);
}

TEST(SpmMalformed, GgufTokenTypesDoNotWrap) {
  const std::string path = std::string(BOSCH_BINARY_DIR) + "/tok_types.gguf";
  std::map<std::string, GGUFValue> meta;
  meta["tokenizer.ggml.model"] = gguf_string("llama");
  meta["tokenizer.ggml.tokens"] = gguf_string_array({"<unk>", "<s>", "</s>", "a"});
  meta["tokenizer.ggml.token_type"] = gguf_int_array({2, 3, 3, (int64_t(1) << 32) + 1}, gguf_type::INT64);
  write_gguf(path, meta, {});
  GGUFFile f(path);
  const std::string e = error_of([&] { load_tokenizer_from_gguf(f); });
  EXPECT_NE(e.find("tokenizer.ggml.token_type[3] is 4294967297, expected an integer in [0, 6]"), std::string::npos) << e;
  std::filesystem::remove(path);
}

}  // namespace bosch
