// Mask export/import: DuoAttention pattern round trip, Razor JSON, per-layer windows (and the
// refusal of per-head masks), GGUF copy with bosch.swa.* metadata read back as the same plan.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "formats/gguf.h"
#include "formats/writers.h"
#include "masks/gguf_mask.h"
#include "masks/mask_export.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "../test_support.h"

using bosch::tests::temp_dir;

namespace {

using namespace bosch;
namespace fs = std::filesystem;

AttentionPlan random_plan(int L, int H, double ratio, int W, int S, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int> idx(L * H);
  for (int i = 0; i < L * H; ++i) idx[i] = i;
  std::shuffle(idx.begin(), idx.end(), rng);
  AttentionPlan p(L, H);
  for (int r = 0; r < static_cast<int>(ratio * L * H); ++r) p.set_swa(idx[r] / H, idx[r] % H, W, S);
  return p;
}

TEST(DuoExport, RoundTripAtTheSameRatio) {
  auto dir = temp_dir("duo");
  for (double ratio : {0.0, 0.25, 0.75, 1.0}) {
    AttentionPlan plan = random_plan(28, 8, ratio, 1024, 4, 3);
    export_duo(plan, dir.string(), 1024, 4);
    DuoPattern p = read_duo(dir.string());
    EXPECT_EQ(p.recent_size, 1024);
    EXPECT_EQ(p.sink_size, 4);
    ASSERT_EQ(p.full_attention_heads.size(), 28u);
    AttentionPlan back = plan_from_duo(p, plan.swa_ratio(), 28, 8);
    EXPECT_EQ(back, plan) << "ratio " << ratio;
  }
  fs::remove_all(dir);
}

TEST(DuoImport, ThresholdsTheLowestValuesToTheRatio) {
  auto dir = temp_dir("duo_import");
  // 2 layers x 4 heads; values outside [0, 1] are clipped as DuoAttention does.
  write_file_atomic((dir / "full_attention_heads.tsv").string(),
                    "-9.5e-05\t0.9\t0.3\t1.0\n0.55\t1.2\t0.01\t0.7\n");
  write_file_atomic((dir / "config.json").string(), R"({"sink_size": 128, "recent_size": 256, "lr": 0.02})");
  DuoPattern p = read_duo(dir.string());
  EXPECT_DOUBLE_EQ(p.full_attention_heads[0][0], 0.0);
  EXPECT_DOUBLE_EQ(p.full_attention_heads[1][1], 1.0);
  AttentionPlan plan = plan_from_duo(p, 0.5, 2, 4);  // 4 of 8: values 0, 0.01, 0.3, 0.55
  EXPECT_EQ(plan.count_swa(), 4);
  EXPECT_TRUE(plan.is_swa(0, 0) && plan.is_swa(1, 2) && plan.is_swa(0, 2) && plan.is_swa(1, 0));
  EXPECT_EQ(plan.window(0, 0), 256);
  EXPECT_EQ(plan.sinks(0, 0), 128);
  EXPECT_EQ(plan_from_duo(p, 0.25, 2, 4, 64, 0).window(1, 2), 64);
  EXPECT_THROW(plan_from_duo(p, 0.5, 3, 4), Error);  // shape mismatch
  EXPECT_THROW(plan_from_duo(p, 1.5, 2, 4), Error);
  write_file_atomic((dir / "full_attention_heads.tsv").string(), "0.1\t0.2\n0.3\n");
  EXPECT_THROW(read_duo(dir.string()), Error);  // ragged
  write_file_atomic((dir / "full_attention_heads.tsv").string(), "0.1\tabc\n");
  EXPECT_THROW(read_duo(dir.string()), Error);
  fs::remove_all(dir);
}

TEST(RazorExport, ListsSwaHeadsPerLayer) {
  AttentionPlan plan(3, 4);
  plan.set_swa(0, 1, 64, 4);
  plan.set_swa(0, 3, 64, 4);
  plan.set_swa(2, 0, 64, 4);
  auto j = razor_json(plan);
  EXPECT_EQ(j["swa_kv_heads"], nlohmann::json::parse("[[1,3],[],[0]]"));
  EXPECT_EQ(j["full_kv_heads"][1], nlohmann::json::parse("[0,1,2,3]"));
  EXPECT_EQ(j["window_size"], 64);
  EXPECT_EQ(j["sink_size"], 4);
  plan.set_swa(1, 1, 32, 4);
  EXPECT_THROW(razor_json(plan), Error);  // two different windows
}

TEST(LayerWindowsExport, UniformMaskGivesPerLayerWindows) {
  AttentionPlan plan(4, 2);
  for (int h = 0; h < 2; ++h) {
    plan.set_swa(0, h, 1024, 0);
    plan.set_swa(2, h, 1024, 0);
  }
  auto j = layer_windows_json(plan, 40960);
  EXPECT_EQ(j["tensorrt_llm"]["max_attention_window"], nlohmann::json::parse("[1024,40960,1024,40960]"));
  EXPECT_EQ(j["huggingface"]["layer_types"][0], "sliding_attention");
  EXPECT_EQ(j["huggingface"]["layer_types"][1], "full_attention");
  EXPECT_EQ(j["huggingface"]["sliding_window"], 1024);
  EXPECT_TRUE(j["warnings"].empty());
}

TEST(LayerWindowsExport, RefusesPerHeadMaskWithExplanation) {
  AttentionPlan plan(4, 2);
  plan.set_swa(0, 0, 1024, 4);
  plan.set_swa(0, 1, 1024, 4);
  plan.set_swa(1, 1, 1024, 4);
  try {
    layer_windows_json(plan, 40960);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("layer 1 mixes SWA KV heads [1] and full KV heads [0]"), std::string::npos) << m;
    EXPECT_NE(m.find("--format duo, razor or gguf"), std::string::npos) << m;
  }
}

TEST(GGUFMask, CopyCarriesThePlanAndTheSameWeights) {
  auto dir = temp_dir("gguf");
  ModelConfig c = config_like("llama", "tiny");
  const std::string src = (dir / "src.gguf").string(), out = (dir / "masked.gguf").string();
  save_gguf(c, random_weights(c, 5, 0.1f), src, DType::F32);
  AttentionPlan plan = random_plan(c.n_layers, c.n_kv_heads, 0.5, 16, 2, 9);
  plan.set_full(1, 0);
  plan.set_full(1, 1);
  plan.set_full(1, 2);
  plan.set_full(1, 3);  // a layer without SWA heads
  write_gguf_with_plan(src, plan, out);

  GGUFFile f(out);
  auto got = plan_from_gguf_metadata(f, c);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, plan);
  EXPECT_EQ(f.get_int_array("bosch.swa.window")[1], 0);
  EXPECT_FALSE(plan_from_gguf_metadata(GGUFFile(src), c).has_value());

  auto a = Model::load(src), b = Model::load(out);
  std::vector<int32_t> toks = {1, 5, 7, 9, 200, 3, 3, 3, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50};
  EXPECT_EQ(a->forward_all(toks, plan), b->forward_all(toks, *got));
  EXPECT_EQ(a->identity(), b->identity());

  // Re-export replaces the keys.
  const std::string out2 = (dir / "masked2.gguf").string();
  AttentionPlan all = AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 8, 0);
  write_gguf_with_plan(out, all, out2);
  EXPECT_EQ(*plan_from_gguf_metadata(GGUFFile(out2), c), all);

  EXPECT_THROW(write_gguf_with_plan(src, AttentionPlan::full(c.n_layers + 1, c.n_kv_heads), out2), Error);
  fs::remove_all(dir);
}

TEST(GGUFMask, MalformedMetadataIsRefused) {
  auto dir = temp_dir("gguf_bad");
  ModelConfig c = config_like("llama", "tiny");
  const std::string src = (dir / "src.gguf").string();
  save_gguf(c, random_weights(c, 5), src, DType::F32);
  GGUFFile f(src);
  auto write_with = [&](std::map<std::string, GGUFValue> extra) {
    std::map<std::string, GGUFValue> meta(f.metadata().begin(), f.metadata().end());
    for (auto& [k, v] : extra) meta[k] = v;
    std::vector<TensorToWrite> ts;
    for (auto& t : f.tensors())
      ts.push_back({t.name, {t.dims.rbegin(), t.dims.rend()}, t.type, {t.data, t.data + t.nbytes}});
    const std::string p = (dir / "bad.gguf").string();
    write_gguf(p, meta, ts, f.alignment());
    return p;
  };
  GGUFValue heads;
  heads.kind = GGUFValue::Kind::Array;
  heads.gguf_type = gguf_type::ARRAY;
  for (int l = 0; l < c.n_layers; ++l) heads.arr.push_back(gguf_int_array({0, 9}, gguf_type::INT32));
  std::vector<int64_t> w(c.n_layers, 16), s(c.n_layers, 0);
  auto p = write_with({{"bosch.swa.version", gguf_int(1)},
                       {"bosch.swa.window", gguf_int_array(w)},
                       {"bosch.swa.sinks", gguf_int_array(s)},
                       {"bosch.swa.heads", heads}});
  EXPECT_THROW(plan_from_gguf_metadata(GGUFFile(p), c), Error);  // head 9 >= 4 KV heads
  auto p2 = write_with({{"bosch.swa.version", gguf_int(1)}, {"bosch.swa.window", gguf_int_array({16})}});
  EXPECT_THROW(plan_from_gguf_metadata(GGUFFile(p2), c), Error);  // sinks/heads missing
  // Issue #24: a window or sink count beyond int32 was used modulo 2^32 (2^32 + 5 -> W = 5).
  heads.arr.clear();
  for (int l = 0; l < c.n_layers; ++l) heads.arr.push_back(gguf_int_array({0}, gguf_type::INT32));
  for (auto [wv, sv] : {std::pair<int64_t, int64_t>{(int64_t(1) << 32) + 5, 4}, {16, (int64_t(1) << 32) + 4}}) {
    std::vector<int64_t> wide_w(c.n_layers, wv), wide_s(c.n_layers, sv);
    auto p3 = write_with({{"bosch.swa.version", gguf_int(1)},
                          {"bosch.swa.window", gguf_int_array(wide_w, gguf_type::INT64)},
                          {"bosch.swa.sinks", gguf_int_array(wide_s, gguf_type::INT64)},
                          {"bosch.swa.heads", heads}});
    try {
      plan_from_gguf_metadata(GGUFFile(p3), c);
      ADD_FAILURE() << "accepted window " << wv << " sinks " << sv;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("bosch.swa.window[0] must be in [1, 2147483647] (is " + std::to_string(wv) + ")"), std::string::npos) << m;
      EXPECT_NE(m.find("bosch.swa.sinks[0] in [0, 2147483647] (is " + std::to_string(sv) + ")"), std::string::npos) << m;
    }
  }
  fs::remove_all(dir);
}

TEST(DuoImport, ConfigIntegersDoNotWrapAndDeepJsonIsRefused) {
  auto dir = temp_dir("duo_bad_config");
  write_file_atomic((dir / "full_attention_heads.tsv").string(), "0.1\t0.2\n");
  const std::string cfg = (dir / "config.json").string();
  write_file_atomic(cfg, R"({"sink_size": 4, "recent_size": 4294967298})");  // was read as 2
  std::string e;
  try { read_duo(dir.string()); } catch (const Error& x) { e = x.what(); }
  EXPECT_NE(e.find("config.json: field 'recent_size' must be an integer in [0, 2147483647], got 4294967298"), std::string::npos) << e;
  write_file_atomic(cfg, R"({"sink_size": 4, "recent_size": 64, "x": )" + std::string(30000, '{') + "}");
  e.clear();
  try { read_duo(dir.string()); } catch (const Error& x) { e = x.what(); }
  EXPECT_NE(e.find("config.json: JSON nested deeper than 64 levels"), std::string::npos) << e;
  fs::remove_all(dir);
}

}  // namespace
