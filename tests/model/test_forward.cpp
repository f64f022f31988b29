// The engine's forward pass against an independent naive reference, across architectures,
// attention plans, KV-cached decoding and both file formats.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "model/answer_logprobs.h"
#include "model/generate.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "util/error.h"
#include "reference_model.h"

using namespace bosch;

namespace {

ModelConfig tiny(const std::string& arch) {
  ModelConfig c = config_like(arch, "tiny");
  return c;
}

std::unique_ptr<Model> random_model(const std::string& arch, uint64_t seed = 7) {
  ModelConfig c = tiny(arch);
  return std::make_unique<Model>(c, random_weights(c, seed, 0.15f), "random-" + arch);
}

using reference::mixed_plan;
using reference::random_tokens;

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, static_cast<double>(std::abs(a[i] - b[i])));
  return m;
}

class ForwardArch : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwardArch, MatchesNaiveReferenceFullAndMixedPlans) {
  auto m = random_model(GetParam());
  const auto& c = m->config();
  auto tokens = random_tokens(45, c.vocab_size, 3);
  for (const auto& plan : {m->full_plan(), mixed_plan(c, 5, 2), mixed_plan(c, 1, 0),
                           AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 9, 3)}) {
    auto got = m->forward_all(tokens, plan);
    auto want = reference::reference_forward(c, m->weights(), tokens, plan);
    EXPECT_LT(max_abs_diff(got, want), 2e-4) << GetParam() << " " << plan.summary();
  }
}

// The last layer run only for its last rows gives those rows' values of the whole layer (and
// leaves the rows below untouched), against the naive double-precision reference.
TEST_P(ForwardArch, LastLayerOnLastRowsMatchesTheReference) {
  auto m = random_model(GetParam());
  const auto& c = m->config();
  const int n = 41, d = c.d_model;
  auto tokens = random_tokens(n, c.vocab_size, 11);
  for (const auto& plan : {m->full_plan(), mixed_plan(c, 5, 2)}) {
    const auto want = reference::reference_forward(c, m->weights(), tokens, plan);  // [n, vocab]
    for (int row0 : {0, 1, 17, n - 1}) {
      std::vector<float> h(static_cast<size_t>(n) * d);
      m->embed(tokens.data(), n, h.data());
      m->forward_layers(0, c.n_layers - 1, h.data(), n, 0, plan);
      const std::vector<float> below(h.begin(), h.begin() + static_cast<size_t>(row0) * d);
      m->forward_last_rows(c.n_layers - 1, h.data(), n, row0, plan);
      EXPECT_TRUE(std::equal(below.begin(), below.end(), h.begin())) << "rows below row0 changed";
      std::vector<int> rows;
      for (int r = row0; r < n; ++r) rows.push_back(r);
      std::vector<float> got(rows.size() * c.vocab_size);
      m->logits(h.data(), rows.data(), static_cast<int>(rows.size()), got.data());
      const std::vector<double> ref(want.begin() + static_cast<size_t>(row0) * c.vocab_size, want.end());
      EXPECT_LT(max_abs_diff(got, ref), 2e-4) << GetParam() << " row0 " << row0 << " " << plan.summary();
    }
    const double share = m->layer_share_of_rows(n, n - 1);
    EXPECT_GT(share, 0.0);
    EXPECT_LT(share, 0.5);
    EXPECT_DOUBLE_EQ(m->layer_share_of_rows(n, 0), 1.0);
  }
  std::vector<float> h(static_cast<size_t>(n) * d);
  EXPECT_THROW(m->forward_last_rows(c.n_layers - 1, h.data(), n, n, m->full_plan()), bosch::Error);
}

TEST_P(ForwardArch, WindowCoveringTheSequenceEqualsFullAttention) {
  auto m = random_model(GetParam());
  const auto& c = m->config();
  auto tokens = random_tokens(37, c.vocab_size, 5);
  auto full = m->forward_all(tokens, m->full_plan());
  auto swa = m->forward_all(tokens, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 37, 0));
  EXPECT_EQ(max_abs_diff(full, swa), 0.0);
  // A narrower window really changes the output (the test above could not fail otherwise).
  auto narrow = m->forward_all(tokens, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 4, 0));
  EXPECT_GT(max_abs_diff(full, narrow), 1e-3);
}

TEST_P(ForwardArch, CachedDecodingEqualsRecomputingThePrefix) {
  auto m = random_model(GetParam());
  const auto& c = m->config();
  auto tokens = random_tokens(50, c.vocab_size, 11);
  for (const auto& plan : {m->full_plan(), mixed_plan(c, 6, 2)}) {
    auto all = m->forward_all(tokens, plan);
    KVCache cache(c, plan, 64);
    // Prefill 13 tokens, then a chunk of 5, then one token at a time.
    size_t pos = 0;
    std::vector<size_t> steps = {13, 5};
    while (pos + steps.back() < tokens.size() && steps.size() < 40) steps.push_back(1);
    for (size_t s : steps) {
      if (pos + s > tokens.size()) break;
      std::vector<int32_t> chunk(tokens.begin() + pos, tokens.begin() + pos + s);
      auto last = m->forward_next(chunk, cache);
      pos += s;
      std::vector<float> want(all.begin() + (pos - 1) * c.vocab_size, all.begin() + pos * c.vocab_size);
      ASSERT_LT(max_abs_diff(last, want), 1e-4) << "position " << pos - 1 << " " << plan.summary();
    }
    EXPECT_EQ(cache.length(), static_cast<int64_t>(pos));
  }
}

TEST_P(ForwardArch, GgufAndHuggingFaceFilesGiveTheSameLogits) {
  ModelConfig c = tiny(GetParam());
  ModelWeights w = random_weights(c, 21, 0.15f);
  auto dir = std::filesystem::temp_directory_path() / ("bosch_fmt_" + GetParam() + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  save_hf(c, w, (dir / "hf").string(), DType::F32);
  save_gguf(c, w, (dir / "m.gguf").string(), DType::F32);
  auto hf = Model::load((dir / "hf").string());
  auto gg = Model::load((dir / "m.gguf").string());
  Model mem(c, std::move(w), "memory");
  auto tokens = random_tokens(30, c.vocab_size, 9);
  auto plan = mixed_plan(c, 4, 1);
  auto a = hf->forward_all(tokens, plan), b = gg->forward_all(tokens, plan), ref = mem.forward_all(tokens, plan);
  EXPECT_EQ(max_abs_diff(a, ref), 0.0);
  EXPECT_EQ(max_abs_diff(b, ref), 0.0);
  EXPECT_EQ(hf->identity(), gg->identity());
  // Reduced-precision files load and stay close.
  save_hf(c, mem.weights(), (dir / "hf16").string(), DType::BF16);
  save_gguf(c, mem.weights(), (dir / "q8.gguf").string(), DType::Q8_0);
  auto a16 = Model::load((dir / "hf16").string())->forward_all(tokens, plan);
  auto q8m = Model::load((dir / "q8.gguf").string());
  auto q8 = q8m->forward_all(tokens, plan);
  // Q8_0 weights are within half a quantisation step (block max / 127 / 2) plus the fp16 rounding of the block scale of the originals.
  const auto& wq_ref = mem.weights().layers[1].w_up;
  const auto& wq_q8 = q8m->weights().layers[1].w_up;
  ASSERT_EQ(wq_ref.size(), wq_q8.size());
  for (size_t b = 0; b < wq_ref.size(); b += 32) {
    float amax = 0;
    for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::abs(wq_ref[i]));
    for (size_t i = b; i < b + 32; ++i) ASSERT_LE(std::abs(wq_ref[i] - wq_q8[i]), amax / 127 * 0.5 + amax / 1024 + 1e-6);
  }
  double scale = 0;
  for (float x : ref) scale = std::max(scale, static_cast<double>(std::abs(x)));
  EXPECT_LT(max_abs_diff(a16, ref), 0.02 * scale);
  EXPECT_LT(max_abs_diff(q8, ref), 0.15 * scale);
  EXPECT_GT(max_abs_diff(q8, ref), 0.0);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Archs, ForwardArch, ::testing::Values("llama", "qwen2", "qwen3"));

TEST(Scoring, TeacherForcedScoreMatchesFullLogitsAndGreedyGeneration) {
  auto m = random_model("qwen3", 3);
  const auto& c = m->config();
  auto prompt = random_tokens(20, c.vocab_size, 1);
  auto plan = mixed_plan(c, 5, 1);
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 6;
  auto greedy = generate(*m, plan, prompt, p);
  ASSERT_EQ(greedy.size(), 6u);
  auto s = score_answer(*m, plan, prompt, greedy);
  EXPECT_TRUE(s.all_argmax);
  // Log-probabilities equal log-softmax of the full forward.
  std::vector<int32_t> seq(prompt);
  seq.insert(seq.end(), greedy.begin(), greedy.end());
  auto all = m->forward_all(seq, plan);
  for (size_t i = 0; i < greedy.size(); ++i) {
    const float* row = &all[(prompt.size() - 1 + i) * c.vocab_size];
    double mx = *std::max_element(row, row + c.vocab_size), z = 0;
    for (int t = 0; t < c.vocab_size; ++t) z += std::exp(row[t] - mx);
    EXPECT_NEAR(s.token_logprobs[i], row[greedy[i]] - mx - std::log(z), 1e-4);
  }
  // Changing one answer token to a non-argmax token is detected.
  auto wrong = greedy;
  wrong[2] = (wrong[2] + 1) % c.vocab_size;
  EXPECT_FALSE(score_answer(*m, plan, prompt, wrong).all_argmax);
}

TEST(Generate, SamplingIsReproducibleFromTheSeed) {
  auto m = random_model("llama", 4);
  auto prompt = random_tokens(5, m->config().vocab_size, 2);
  SamplingParams p;
  p.temperature = 1.0;
  p.top_p = 0.9;
  p.max_tokens = 12;
  p.seed = 42;
  auto a = generate(*m, m->full_plan(), prompt, p), b = generate(*m, m->full_plan(), prompt, p);
  EXPECT_EQ(a, b);
  p.seed = 43;
  EXPECT_NE(a, generate(*m, m->full_plan(), prompt, p));
}

TEST(Model, Llama3RopeScalingMatchesReferenceAndSurvivesTheHfRoundTrip) {
  ModelConfig c = tiny("llama");
  c.rope_theta = 500000;
  c.rope_scaling.enabled = true;
  c.rope_scaling.factor = 8;
  c.rope_scaling.low_freq_factor = 1;
  c.rope_scaling.high_freq_factor = 4;
  c.rope_scaling.original_max_position = 64;  // small, so all three frequency bands occur
  ModelWeights w = random_weights(c, 5, 0.15f);
  auto tokens = random_tokens(70, c.vocab_size, 8);
  Model m(c, w, "scaled");
  auto got = m.forward_all(tokens, m.full_plan());
  EXPECT_LT(max_abs_diff(got, reference::reference_forward(c, w, tokens, m.full_plan())), 2e-4);
  ModelConfig plain = c;
  plain.rope_scaling.enabled = false;
  EXPECT_GT(max_abs_diff(got, Model(plain, w, "plain").forward_all(tokens, m.full_plan())), 1e-3);
  auto dir = std::filesystem::temp_directory_path() / ("bosch_rope_" + std::to_string(::getpid()));
  save_hf(c, w, dir.string(), DType::F32);
  EXPECT_EQ(max_abs_diff(Model::load(dir.string())->forward_all(tokens, m.full_plan()), got), 0.0);
  std::filesystem::remove_all(dir);
}

TEST(Model, RejectsTokenOutsideVocabularyAndMismatchedPlan) {
  auto m = random_model("qwen3");
  EXPECT_THROW(m->forward_all({1, 2, m->config().vocab_size}, m->full_plan()), Error);
  EXPECT_THROW(m->forward_all({1, 2}, AttentionPlan::full(2, 4)), Error);
}

}  // namespace
