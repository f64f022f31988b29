// Models whose weights stay in their file's type (F16, BF16, Q8_0; GGUF and safetensors): the
// forward pass on the packed weights equals the same model with every weight expanded to
// float32 (prefill: dequantised tiles + sgemm; decode: dot products on the blocks, within the
// 8-bit rounding of x for Q8_0), the matrices are views into the file (not copies), and the
// identity does not depend on the type; mapped and copied files give the same bits.
// Runs everywhere (random models written to a temporary directory).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "kernels/dispatch.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_writer.h"

using namespace bosch;

namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

struct Case {
  std::string arch, format;
  DType type;
};

class StoredTypes : public ::testing::TestWithParam<Case> {};

TEST_P(StoredTypes, PackedWeightsGiveTheExpandedModelsLogits) {
  const Case& k = GetParam();
  ModelConfig c = config_like(k.arch, "tiny");
  ModelWeights w = random_weights(c, 33, 0.15f);
  auto dir = std::filesystem::temp_directory_path() /
             ("bosch_stored_" + k.arch + k.format + dtype_name(k.type) + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (k.format == "gguf" ? "m.gguf" : "hf")).string();
  if (k.format == "gguf") save_gguf(c, w, path, k.type);
  else save_hf(c, w, path, k.type);
  auto m = Model::load(path);
  const LayerMatrices& M = m->matrices().layers[0];
  EXPECT_EQ(M.w_up.v.type, k.type);
  EXPECT_EQ(M.w_up.owned, nullptr);  // a view into the mapped file

  Model expanded(c, m->weights(), "expanded");
  EXPECT_EQ(m->identity(), expanded.identity());
  std::mt19937 g(5);
  std::vector<int32_t> tokens(24);
  for (auto& t : tokens) t = static_cast<int32_t>(g() % c.vocab_size);
  const auto plan = m->full_plan();
  const auto want = expanded.forward_all(tokens, plan);
  double scale = 0;
  for (float x : want) scale = std::max(scale, static_cast<double>(std::fabs(x)));
  EXPECT_LE(max_abs_diff(m->forward_all(tokens, plan), want), 1e-5 * scale);
  KVCache cache(c, plan, static_cast<int64_t>(tokens.size()));
  std::vector<float> decode;
  for (int32_t t : tokens) {
    auto row = m->forward_next({t}, cache);
    decode.insert(decode.end(), row.begin(), row.end());
  }
  // Decode on quantised weights quantises x to 8 bits (kernels/qdot_int8.h, llama.cpp's
  // arithmetic): 0.027-0.04 of the largest logit on these random models (test_quant_logits
  // checks it against llama.cpp's own logits); on BF16 with AVX512_BF16 x is rounded to bf16,
  // as llama.cpp does: 0.009; F16, and BF16 without it, keep float dots.
  const bool bf16x = k.type == DType::BF16 && kernels::bf16_x_dot();
  EXPECT_LE(max_abs_diff(decode, want), (dtype_is_quantized(k.type) ? 0.1 : bf16x ? 0.03 : 1e-4) * scale);

  // Either way of holding the file's bytes gives the same bits, and the page report sees which.
  auto mapped = Model::load(path, FileHold::Map);
  auto copied = Model::load(path, FileHold::Copy);
  const auto from_map = mapped->forward_all(tokens, plan);
  EXPECT_EQ(from_map, copied->forward_all(tokens, plan));
  EXPECT_EQ(from_map, m->forward_all(tokens, plan));
  const PageReport pm = mapped->weight_summary().pages, pc = copied->weight_summary().pages;
  if (pm.file_backed + pm.anonymous == 0) return;  // no /proc/self/smaps (FileBytes.PageReport* says so)
  EXPECT_GT(pm.file_backed, 0u);
  EXPECT_EQ(pm.anonymous, 0u);
  EXPECT_EQ(pc.file_backed, 0u);
  EXPECT_GE(pc.anonymous, copied->weight_summary().from_file);  // the whole file, read at load
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Types, StoredTypes,
    ::testing::Values(Case{"llama", "gguf", DType::Q8_0}, Case{"qwen3", "gguf", DType::Q8_0},
                      Case{"qwen2", "gguf", DType::F16}, Case{"llama", "gguf", DType::BF16},
                      Case{"qwen3", "hf", DType::BF16}, Case{"llama", "hf", DType::F16}),
    [](const auto& info) { return info.param.arch + "_" + info.param.format + "_" + dtype_name(info.param.type); });

}  // namespace
