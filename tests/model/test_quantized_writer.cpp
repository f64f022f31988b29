// GGUF files written by save_gguf_random (`bosch make-random --format gguf`) in every writable
// type and in the Q4_K_M / Q5_K_M mixes: the file holds the types llama.cpp's mix would give,
// loads, and its logits stay close to the float32 file of the same seed (quantisation noise
// only). Also the shapes of --like 8b / 14b.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "formats/gguf.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "util/error.h"

using namespace bosch;

namespace {

// Rows of 256: every matrix takes K-quant blocks.
ModelConfig small_config() {
  ModelConfig c = config_like("qwen3", "tiny");
  c.n_layers = 8;
  c.d_model = 256;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 64;
  c.d_ff = 512;
  c.tied_embeddings = false;
  c.validate("test");
  return c;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("bosch_qw_" + name + std::to_string(::getpid()) + ".gguf")).string();
}

std::vector<float> logits_of(const std::string& path, const std::vector<int32_t>& tokens) {
  auto m = Model::load(path);
  return m->forward_all(tokens, m->full_plan());
}

DType type_in_file(const std::string& path, const std::string& tensor) {
  const GGUFFile f(path);
  return f.tensor(tensor).type;
}

}  // namespace

TEST(QuantizedWriter, EveryTypeLoadsAndStaysCloseToFloat32) {
  const ModelConfig c = small_config();
  const std::string f32 = temp_path("f32");
  save_gguf_random(c, 3, f32, parse_gguf_dtype("f32"), 0.05f);
  std::mt19937 g(1);
  std::vector<int32_t> tokens(20);
  for (auto& t : tokens) t = static_cast<int32_t>(g() % c.vocab_size);
  const auto want = logits_of(f32, tokens);
  double rms = 0;
  for (float x : want) rms += static_cast<double>(x) * x;
  rms = std::sqrt(rms / want.size());
  // RMS logit difference / RMS logit. This random 8-layer model multiplies the weights' RMS
  // quantisation error (test_quantize: Q8_0 0.5%, Q6_K 2%, Q5_K 4%, Q4_K 8%, Q4_0 10%) by about
  // 5 in the logits; the bounds allow 7x. A wrong block layout would give ~100% (unrelated).
  struct Case { const char* dtype; double tol; };
  for (Case k : {Case{"q8_0", 0.04}, Case{"q6_k", 0.14}, Case{"q5_k", 0.28}, Case{"q4_k", 0.56}, Case{"q4_0", 0.7},
                 Case{"q4_k_m", 0.56}, Case{"q5_k_m", 0.28}, Case{"bf16", 0.02}, Case{"f16", 0.005}}) {
    SCOPED_TRACE(k.dtype);
    const std::string p = temp_path(k.dtype);
    save_gguf_random(c, 3, p, parse_gguf_dtype(k.dtype), 0.05f);
    const auto got = logits_of(p, tokens);
    ASSERT_EQ(got.size(), want.size());
    double d2 = 0;
    for (size_t i = 0; i < got.size(); ++i) d2 += (static_cast<double>(got[i]) - want[i]) * (got[i] - want[i]);
    const double rel = std::sqrt(d2 / got.size()) / rms;
    std::printf("%s: RMS logit difference / RMS logit %.4f\n", k.dtype, rel);
    EXPECT_LT(rel, k.tol);
    EXPECT_GT(rel, 0.0);
    std::filesystem::remove(p);
  }
  std::filesystem::remove(f32);
}

TEST(QuantizedWriter, Q4KMMixFollowsLlamaCpp) {
  const ModelConfig c = small_config();  // 8 layers: more bits in 0, 7 and 3 (every third from 1)
  const std::string p = temp_path("mix");
  save_gguf_random(c, 4, p, parse_gguf_dtype("q4_k_m"), 0.05f);
  EXPECT_EQ(type_in_file(p, "output.weight"), DType::Q6_K);
  EXPECT_EQ(type_in_file(p, "token_embd.weight"), DType::Q4_K);
  EXPECT_EQ(type_in_file(p, "output_norm.weight"), DType::F32);
  for (int l = 0; l < c.n_layers; ++l) {
    const bool more = l == 0 || l == 7 || l == 3 || l == 6;
    const std::string b = "blk." + std::to_string(l) + ".";
    EXPECT_EQ(type_in_file(p, b + "attn_v.weight"), more ? DType::Q6_K : DType::Q4_K) << l;
    EXPECT_EQ(type_in_file(p, b + "ffn_down.weight"), more ? DType::Q6_K : DType::Q4_K) << l;
    EXPECT_EQ(type_in_file(p, b + "attn_q.weight"), DType::Q4_K) << l;
    EXPECT_EQ(type_in_file(p, b + "ffn_up.weight"), DType::Q4_K) << l;
  }
  std::filesystem::remove(p);
  ModelConfig tied = c;
  tied.tied_embeddings = true;  // llama.cpp then treats token_embd as the LM head
  save_gguf_random(tied, 4, p, parse_gguf_dtype("q4_k_m"), 0.05f);
  EXPECT_EQ(type_in_file(p, "token_embd.weight"), DType::Q6_K);
  std::filesystem::remove(p);
}

TEST(QuantizedWriter, UnknownDtypeNamesTheKnownOnes) {
  try {
    parse_gguf_dtype("q3_k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--dtype 'q3_k' is not known (expected one of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("q4_k_m"), std::string::npos);
  }
}

TEST(QuantizedWriter, Qwen3EightAndFourteenBShapes) {
  const ModelConfig a = config_like("qwen3", "8b");
  EXPECT_EQ(a.n_layers, 36);
  EXPECT_EQ(a.d_model, 4096);
  EXPECT_EQ(a.n_heads, 32);
  EXPECT_EQ(a.n_kv_heads, 8);
  EXPECT_EQ(a.head_dim, 128);
  EXPECT_EQ(a.d_ff, 12288);
  EXPECT_EQ(a.vocab_size, 151936);
  EXPECT_EQ(a.rope_theta, 1e6);
  EXPECT_FALSE(a.tied_embeddings);
  const ModelConfig b = config_like("qwen3", "14b");
  EXPECT_EQ(b.n_layers, 40);
  EXPECT_EQ(b.d_model, 5120);
  EXPECT_EQ(b.n_heads, 40);
  EXPECT_EQ(b.n_kv_heads, 8);
  EXPECT_EQ(b.head_dim, 128);
  EXPECT_EQ(b.d_ff, 17408);
  EXPECT_EQ(b.vocab_size, 151936);
  EXPECT_FALSE(b.tied_embeddings);
}
