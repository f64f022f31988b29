// The whole path on a real pretrained model: GGUF loading, RoPE layout, GQA, the KV cache and
// SentencePiece decoding must together reproduce llama2.c's published greedy story.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/model_source.h"
#include "../kernels/use_kernel_set.h"
#include "masks/model_plan.h"
#include "model/generate.h"
#include "model/hybrid_kv_cache.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "../test_support.h"

using namespace bosch;

namespace {

const std::string kModel = bosch::tests::stories_model();
const std::string kGolden = bosch::tests::stories_greedy();

std::string read_all(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Stories260K, GreedyFromBosReproducesThePublishedStory) {
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 200;
  auto ids = generate(*m, m->full_plan(), {tok->bos_id()}, p);
  std::string text = tok->decode(ids);
  EXPECT_EQ(text.rfind("Once upon a time, there was a little girl named Lily.", 0), 0u) << text;
  if (std::filesystem::exists(kGolden)) {
    std::string golden = read_all(kGolden);
    while (!golden.empty() && (golden.back() == '\n' || golden.back() == ' ')) golden.pop_back();
    // Compare the common prefix: our 200 tokens may stop before or after the published text.
    size_t n = std::min(golden.size(), text.size());
    ASSERT_GT(n, 100u);
    EXPECT_EQ(text.substr(0, n), golden.substr(0, n));
  }
  // Round trip of the generated text through the tokenizer.
  EXPECT_EQ(tok->decode(tok->encode(text, false)), text);
}

TEST(Stories260K, OneOpenedFileServesModelTokenizerAndPlan) {
  const ModelFile file = ModelFile::open(kModel, FileHold::Map);
  ASSERT_EQ(file.kind, SourceKind::gguf);
  auto m = Model::load(file);
  auto tok = load_tokenizer(file);
  auto m2 = Model::load(kModel, FileHold::Map);
  auto tok2 = load_tokenizer(kModel);
  EXPECT_EQ(m->identity(), m2->identity());
  EXPECT_EQ(m->source(), kModel);
  EXPECT_EQ(tok->encode("Once upon a time, Lily", true), tok2->encode("Once upon a time, Lily", true));
  std::string desc;
  EXPECT_EQ(plan_for_model(*m, "", 64, 4, &desc, &file), m->full_plan());
  EXPECT_EQ(desc, "full attention");
  try {
    ModelFile::open(kModel + ".missing", FileHold::Map);
    ADD_FAILURE() << "a missing path opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such file or directory"), std::string::npos) << e.what();
  }
}

// BOSCH_PRECISION=bf16 on a real pretrained model: the published story's logits (one prefill of
// its ~200 tokens) against float32; the argmax agrees at >= 99% of the positions.
TEST(Stories260K, Bf16PrefillKeepsTheStorysArgmax) {
  if (const std::string why = tests::bf16_prefill_missing(); !why.empty()) GTEST_SKIP() << why;
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  const std::vector<int32_t> ids = tok->encode(read_all(kGolden), true);
  ASSERT_GT(ids.size(), 100u);
  const auto [f32, bf16] = tests::f32_and_bf16_logits(*m, ids);
  const size_t V = static_cast<size_t>(m->config().vocab_size);
  size_t agree = 0;
  double d = 0;
  for (size_t t = 0; t < ids.size(); ++t) {
    const auto a = f32.begin() + static_cast<std::ptrdiff_t>(t * V), b = bf16.begin() + static_cast<std::ptrdiff_t>(t * V);
    agree += std::max_element(a, a + V) - a == std::max_element(b, b + V) - b;
    for (size_t v = 0; v < V; ++v) d = std::max(d, static_cast<double>(std::fabs(a[v] - b[v])));
  }
  std::printf("stories260K bf16 prefill: argmax agrees at %zu of %zu positions, max |logit diff| %.3f\n", agree,
              ids.size(), d);
  EXPECT_GE(agree * 100, ids.size() * 99);
  EXPECT_LE(d, 0.3);  // measured: 257 of 258 positions, 0.149 (AMD EPYC Zen 4)
}

TEST(Stories260K, AllSwaWithWindowCoveringTheStoryIsIdentical) {
  auto m = Model::load(kModel);
  const auto& c = m->config();
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 60;
  auto full = generate(*m, m->full_plan(), {1}, p);
  auto swa = generate(*m, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 61, 0), {1}, p);
  EXPECT_EQ(full, swa);
}

TEST(Stories260K, Fp16KvCachesKeepTheGreedyStory) {
  // llama.cpp keeps K/V in fp16 by default: on this model the 200 greedy tokens do not move,
  // through the plain cache and through the hybrid one (all heads SWA(61, 0) for the first 60).
  auto m = Model::load(kModel);
  const auto& c = m->config();
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 200;
  KVCache f32(c, m->full_plan(), 202), f16(c, m->full_plan(), 202, KvType::F16);
  const auto want = generate(*m, f32, {1}, p);
  EXPECT_EQ(generate(*m, f16, {1}, p), want);
  EXPECT_EQ(f16.bytes() * 2, f32.bytes());
  p.max_tokens = 60;
  HybridKVCache swa16(c, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 61, 0), 62, KvType::F16);
  EXPECT_EQ(generate(*m, swa16, {1}, p), std::vector<int32_t>(want.begin(), want.begin() + 60));
}

}  // namespace
