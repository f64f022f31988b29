// qwen3moe (mixture-of-experts feed-forward) against the naive double-precision reference:
// routing (softmax, top k, renormalisation), both file formats and their tensor layouts,
// prefill vs cached decoding, the search's last-rows mode, and the errors of bad MoE configs.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "model/validate_weights.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "reference_model.h"
#include "../test_support.h"

using bosch::tests::temp_dir;
using bosch::tests::error_of;

using namespace bosch;
namespace fs = std::filesystem;

namespace {

using reference::mixed_plan;
using reference::random_tokens;

template <class A, class B>
double max_abs_diff(const std::vector<A>& a, const std::vector<B>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return m;
}

TEST(MoeForward, MatchesNaiveReferenceWithAndWithoutRenormalisation) {
  ModelConfig c = config_like("qwen3moe", "tiny");
  ASSERT_TRUE(c.is_moe());
  ASSERT_TRUE(c.norm_topk_prob);
  ModelWeights w = random_weights(c, 7, 0.15f);
  auto tokens = random_tokens(45, c.vocab_size, 3);
  Model m(c, w, "moe");
  for (const auto& plan : {m.full_plan(), mixed_plan(c, 5, 2), AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 9, 3)}) {
    EXPECT_LT(max_abs_diff(m.forward_all(tokens, plan), reference::reference_forward(c, w, tokens, plan)), 2e-4)
        << plan.summary();
  }
  // Without renormalisation the weights of the k experts sum below 1: other logits, also the reference's.
  ModelConfig raw = c;
  raw.norm_topk_prob = false;
  Model r(raw, w, "moe-raw");
  const auto got = r.forward_all(tokens, r.full_plan());
  EXPECT_LT(max_abs_diff(got, reference::reference_forward(raw, w, tokens, r.full_plan())), 2e-4);
  EXPECT_GT(max_abs_diff(got, m.forward_all(tokens, m.full_plan())), 1e-3);
  EXPECT_NE(r.identity(), m.identity());
}

TEST(MoeForward, HuggingFaceAndGgufFilesGiveTheReferenceLogits) {
  ModelConfig c = config_like("qwen3moe", "tiny");
  ModelWeights w = random_weights(c, 21, 0.15f);
  const auto dir = temp_dir("fmt");
  save_hf(c, w, (dir / "hf").string(), DType::F32);
  save_gguf(c, w, (dir / "m.gguf").string(), DType::F32);
  auto hf = Model::load((dir / "hf").string());
  auto gg = Model::load((dir / "m.gguf").string());
  for (const Model* m : {hf.get(), gg.get()}) {
    const auto& mc = m->config();
    EXPECT_EQ(mc.arch, "qwen3moe");
    EXPECT_EQ(mc.n_expert, c.n_expert);
    EXPECT_EQ(mc.n_expert_used, c.n_expert_used);
    EXPECT_EQ(mc.d_ff_expert, c.d_ff_expert);
    EXPECT_TRUE(mc.norm_topk_prob);
    // Every expert's slice holds that expert's weights (the GGUF dimension order).
    const auto& L = m->weights().layers[1];
    EXPECT_EQ(L.w_router, w.layers[1].w_router);
    EXPECT_EQ(L.w_gate_exps, w.layers[1].w_gate_exps);
    EXPECT_EQ(L.w_up_exps, w.layers[1].w_up_exps);
    EXPECT_EQ(L.w_down_exps, w.layers[1].w_down_exps);
    EXPECT_TRUE(L.w_gate.empty());
  }
  Model mem(c, w, "memory");
  auto tokens = random_tokens(30, c.vocab_size, 9);
  auto plan = mixed_plan(c, 4, 1);
  const auto ref = mem.forward_all(tokens, plan);
  EXPECT_EQ(max_abs_diff(hf->forward_all(tokens, plan), ref), 0.0);
  EXPECT_EQ(max_abs_diff(gg->forward_all(tokens, plan), ref), 0.0);
  EXPECT_LT(max_abs_diff(ref, reference::reference_forward(c, w, tokens, plan)), 2e-4);
  EXPECT_EQ(hf->identity(), gg->identity());
  EXPECT_EQ(hf->identity(), mem.identity());
  // Reduced precision: experts stay in their type (BF16 safetensors, Q8_0 GGUF) and stay close.
  save_hf(c, w, (dir / "hf16").string(), DType::BF16);
  save_gguf(c, w, (dir / "q8.gguf").string(), DType::Q8_0);
  auto bf = Model::load((dir / "hf16").string());
  auto q8 = Model::load((dir / "q8.gguf").string());
  EXPECT_EQ(bf->matrices().layers[0].experts.gate[3].v.type, DType::BF16);
  EXPECT_EQ(q8->matrices().layers[0].experts.down[5].v.type, DType::Q8_0);
  EXPECT_EQ(q8->matrices().layers[0].experts.router.v.type, DType::F32);
  // Against the reference on their own (dequantised) weights: quantisation moves the router's
  // inputs, so a near tie may route to another expert than the float32 model does.
  for (const Model* m : {bf.get(), q8.get()}) {
    EXPECT_LT(max_abs_diff(m->forward_all(tokens, plan), reference::reference_forward(c, m->weights(), tokens, plan)),
              2e-4);
    EXPECT_GT(max_abs_diff(m->forward_all(tokens, plan), ref), 0.0);
  }
  // Weight bytes: every expert counted; a decode step reads k of n_expert experts.
  const auto ws = gg->weight_summary();
  EXPECT_EQ(ws.from_file + ws.owned, gg->matrix_bytes());
  EXPECT_LT(ws.decode_bytes, gg->matrix_bytes());
  fs::remove_all(dir);
}

TEST(MoeForward, CachedDecodingEqualsPrefill) {
  ModelConfig c = config_like("qwen3moe", "tiny");
  Model m(c, random_weights(c, 11, 0.15f), "moe");
  auto tokens = random_tokens(50, c.vocab_size, 11);
  for (const auto& plan : {m.full_plan(), mixed_plan(c, 6, 2)}) {
    auto all = m.forward_all(tokens, plan);
    KVCache cache(c, plan, 64);
    size_t pos = 0;
    for (size_t s : {13, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 1}) {
      std::vector<int32_t> chunk(tokens.begin() + pos, tokens.begin() + pos + s);
      auto last = m.forward_next(chunk, cache);
      pos += s;
      std::vector<float> want(all.begin() + (pos - 1) * c.vocab_size, all.begin() + pos * c.vocab_size);
      ASSERT_LT(max_abs_diff(last, want), 1e-4) << "position " << pos - 1 << " " << plan.summary();
    }
  }
}

TEST(MoeForward, LastLayerOnLastRowsMatchesTheReference) {
  ModelConfig c = config_like("qwen3moe", "tiny");
  ModelWeights w = random_weights(c, 5, 0.15f);
  Model m(c, w, "moe");
  const int n = 41, d = c.d_model;
  auto tokens = random_tokens(n, c.vocab_size, 2);
  const auto plan = mixed_plan(c, 5, 2);
  const auto want = reference::reference_forward(c, w, tokens, plan);
  for (int row0 : {0, 17, n - 1}) {
    std::vector<float> h(static_cast<size_t>(n) * d);
    m.embed(tokens.data(), n, h.data());
    Workspace ws;
    m.forward_layers(0, c.n_layers - 1, h.data(), n, 0, plan, nullptr, &ws);
    m.forward_last_rows(c.n_layers - 1, h.data(), n, row0, plan, &ws);
    std::vector<int> rows;
    for (int r = row0; r < n; ++r) rows.push_back(r);
    std::vector<float> got(rows.size() * c.vocab_size);
    m.logits(h.data(), rows.data(), static_cast<int>(rows.size()), got.data(), &ws);
    const std::vector<double> ref(want.begin() + static_cast<size_t>(row0) * c.vocab_size, want.end());
    EXPECT_LT(max_abs_diff(got, ref), 2e-4) << "row0 " << row0;
  }
  EXPECT_LT(m.layer_share_of_rows(n, n - 1), 0.5);
}

// Qwen3-30B-A3B's shape, without its weights: the config and the bytes it implies.
TEST(MoeConfig, ThirtyBA3BShape) {
  ModelConfig c = config_like("qwen3moe", "30b-a3b");
  EXPECT_EQ(c.n_layers, 48);
  EXPECT_EQ(c.d_model, 2048);
  EXPECT_EQ(c.n_heads, 32);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.n_expert, 128);
  EXPECT_EQ(c.n_expert_used, 8);
  EXPECT_EQ(c.d_ff_expert, 768);
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_THROW(config_like("qwen3", "30b-a3b"), Error);
  EXPECT_THROW(config_like("qwen3moe", "0.6b"), Error);
}

TEST(MoeConfig, BadConfigsAreClearErrors) {
  ModelConfig c = config_like("qwen3moe", "tiny");
  ModelWeights w = random_weights(c, 3, 0.1f);
  const auto dir = temp_dir("bad");
  save_hf(c, w, (dir / "hf").string(), DType::F32);
  const std::string cfg_path = (dir / "hf" / "config.json").string();
  const auto good = nlohmann::json::parse(read_file(cfg_path));
  auto with = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = good;
    change(j);
    write_file_atomic(cfg_path, j.dump(2));
    return error_of([&] { Model::load((dir / "hf").string()); });
  };
  auto has = [](const std::string& e, const std::string& part) {
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  has(with([](auto& j) { j["decoder_sparse_step"] = 2; }), "decoder_sparse_step is 2");
  has(with([](auto& j) { j["mlp_only_layers"] = {1}; }), "mlp_only_layers must be an empty list");
  has(with([](auto& j) { j["num_experts_per_tok"] = 9; }), "experts used per token must be in [1, 8]");
  has(with([](auto& j) { j.erase("num_experts"); }), "no field 'num_experts'");
  has(with([](auto& j) { j["moe_intermediate_size"] = 48; }), "mlp.experts.0.gate_proj.weight has shape [32, 64], expected [48, 64]");
  has(with([](auto& j) { j["num_experts"] = 9; }), "mlp.gate.weight has shape [8, 64], expected [9, 64]");
  // A stacked expert tensor of the wrong size, in memory: the error names layer and tensor.
  ModelWeights short_w = w;
  short_w.layers[2].w_down_exps.pop_back();
  has(error_of([&] { Model(c, short_w, "mem"); }), "layer 2 experts' down has 16383 values, expected 16384");
  // A dense architecture with experts is refused.
  ModelConfig dense = config_like("qwen3", "tiny");
  dense.n_expert = 4, dense.n_expert_used = 2;
  has(error_of([&] { dense.validate("cfg"); }), "architecture 'qwen3' has no experts");
  fs::remove_all(dir);
}

}  // namespace
