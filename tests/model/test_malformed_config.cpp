// Hostile model metadata (issue #24): config.json and GGUF integers are exact and in range, or a
// bosch::Error naming the file, the field and the range; never a wrapped or truncated value.
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/gguf.h"
#include "formats/writers.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "../test_support.h"

using bosch::tests::error_of;

namespace fs = std::filesystem;
using namespace bosch;

namespace {

const fs::path kTiny = fs::path(BOSCH_SOURCE_DIR) / "tests/data/qwen3_tiny";
const fs::path kData = fs::path(BOSCH_SOURCE_DIR) / "tests/data/malformed";

// qwen3_tiny's weights with another config.json; returns the Model::load error.
std::string load_with_config(const std::string& config_text) {
  const fs::path dir = fs::path(BOSCH_BINARY_DIR) / "malformed_config_model";
  fs::create_directories(dir);
  fs::copy_file(kTiny / "model.safetensors", dir / "model.safetensors", fs::copy_options::overwrite_existing);
  write_file_atomic((dir / "config.json").string(), config_text);
  std::string e = error_of([&] { Model::load(dir.string()); });
  fs::remove_all(dir);
  return e;
}

}  // namespace

TEST(MalformedConfig, IntegersAreExactAndInRange) {
  struct Case { const char* file; const char* expect; };
  for (const Case& c : {
           // was: 2 layers (4294967298 wrapped), hidden size 32 (32.9 truncated), context -2147483648
           Case{"config_layers_wrap.json", "field 'num_hidden_layers' must be an integer in [1, 16777215], got 4294967298"},
           Case{"config_hidden_fraction.json", "field 'hidden_size' must be an integer in [1, 16777215], got 32.9"},
           Case{"config_context_huge.json", "field 'max_position_embeddings' must be an integer in [0, 2147483647], got 4e+97"},
       }) {
    const std::string e = load_with_config(read_file((kData / c.file).string()));
    EXPECT_NE(e.find("config.json: field"), std::string::npos) << e;
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.file << ": " << e;
  }
  std::string e = load_with_config(R"({"model_type": "qwen3", "num_hidden_layers": "2"})");
  EXPECT_NE(e.find("field 'num_hidden_layers' must be an integer in [1, 16777215], got \"2\""), std::string::npos) << e;
  e = load_with_config(R"({"model_type": )" + std::string(60000, '[') + std::string(60000, ']') + "}");
  EXPECT_NE(e.find("config.json': config: JSON nested deeper than 64 levels"), std::string::npos) << e;
  e = load_with_config(R"({"model_type": ")" + std::string(100000, 'q') + "\"}");
  EXPECT_NE(e.find("model_type 'qqq"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u) << "the value is excerpted";
}

TEST(MalformedConfig, GgufDimensionsDoNotWrap) {
  const std::string path = std::string(BOSCH_BINARY_DIR) + "/malformed_dims.gguf";
  std::map<std::string, GGUFValue> meta;
  meta["general.architecture"] = gguf_string("llama");
  meta["llama.block_count"] = gguf_int((int64_t(1) << 32) + 2, gguf_type::UINT64);
  meta["llama.embedding_length"] = gguf_int(8);
  meta["llama.attention.head_count"] = gguf_int(2);
  meta["llama.feed_forward_length"] = gguf_int(16);
  write_gguf(path, meta, {});
  std::string e = error_of([&] { Model::load(path); });
  EXPECT_NE(e.find("metadata 'llama.block_count' is 4294967298, expected an integer in [1, 16777215]"), std::string::npos) << e;
  meta["llama.block_count"] = gguf_int(2);
  meta["llama.context_length"] = gguf_int(int64_t(1) << 40, gguf_type::UINT64);
  write_gguf(path, meta, {});
  e = error_of([&] { Model::load(path); });
  EXPECT_NE(e.find("metadata 'llama.context_length' is 1099511627776, expected an integer in [0, 2147483647]"), std::string::npos) << e;
  fs::remove(path);
}

// A layer count the weights do not hold (fuzz_config found 4294967 layers: 1.9 GB of empty
// per-layer tables before the first missing tensor) is an error naming the field and the tensor.
TEST(MalformedConfig, LayerCountBeyondTheWeightsIsAnError) {
  std::string e = load_with_config(read_file((kData / "config_layers_beyond_weights.json").string()));
  EXPECT_NE(e.find("config.json: num_hidden_layers is 4294967, but the weights have no tensor "
                   "model.layers.4294966.input_layernorm.weight"), std::string::npos) << e;

  const std::string path = std::string(BOSCH_BINARY_DIR) + "/malformed_layers.gguf";
  std::map<std::string, GGUFValue> meta;
  meta["general.architecture"] = gguf_string("llama");
  meta["llama.block_count"] = gguf_int(4294967);
  meta["llama.embedding_length"] = gguf_int(8);
  meta["llama.attention.head_count"] = gguf_int(2);
  meta["llama.feed_forward_length"] = gguf_int(16);
  const std::vector<float> emb(8 * 16, 0.5f), norm(8, 1.0f);
  auto bytes = [](const std::vector<float>& v) { return encode_f32(DType::F32, v.data(), v.size()); };
  write_gguf(path, meta, {{"token_embd.weight", {16, 8}, DType::F32, bytes(emb)},
                          {"output_norm.weight", {8}, DType::F32, bytes(norm)}});
  e = error_of([&] { Model::load(path); });
  EXPECT_NE(e.find("malformed_layers.gguf: llama.block_count is 4294967, but the file has no tensor "
                   "blk.4294966.attn_norm.weight"), std::string::npos) << e;
  fs::remove(path);
}

// Each dimension is below 2^24, and so is the query projection's width (an int in the forward
// pass: 65536 heads x 65536 would wrap). KV heads divide the heads, so their width is smaller.
TEST(MalformedConfig, ProjectionWidthIsBounded) {
  ModelConfig c = config_like("qwen3", "tiny");
  c.n_heads = 65536, c.n_kv_heads = 1, c.head_dim = 65536;
  const std::string e = error_of([&] { c.validate("cfg"); });
  EXPECT_NE(e.find("cfg: attention heads x head dimension (65536 x 65536) must be below 2^24"), std::string::npos) << e;
  c.head_dim = 128;
  EXPECT_NO_THROW(c.validate("cfg"));
}
