// The engine against PyTorch: tests/data/qwen3_tiny is a random Qwen3 written by the trainer's
// export code with float64 logits computed by tools/train/model.py (an independent
// implementation of the same architecture), for full and SWA plans.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"

using namespace bosch;

namespace {

const std::string kDir = std::string(BOSCH_SOURCE_DIR) + "/tests/data/qwen3_tiny";

TEST(PyTorchReference, Qwen3TinyLogitsMatchAtEveryPosition) {
  auto ref = nlohmann::json::parse(read_file(kDir + "/reference.json"));
  auto m = Model::load(kDir);
  auto tok = load_tokenizer(kDir);
  std::vector<int32_t> ids = ref["ids"].get<std::vector<int32_t>>();
  // The fixture's ids come from its own tokenizer: ours must agree.
  EXPECT_EQ(tok->encode(ref["text"].get<std::string>(), tok->adds_bos()), ids);
  auto logits = m->forward_all(ids, m->full_plan());
  const int V = m->config().vocab_size;
  double worst = 0;
  for (size_t t = 0; t < ids.size(); ++t)
    for (int v = 0; v < V; ++v) worst = std::max(worst, std::abs(logits[t * V + v] - ref["logits"][t][v].get<double>()));
  EXPECT_LT(worst, 1e-3);
}

TEST(PyTorchReference, Qwen3TinySlidingWindowPlansMatch) {
  auto ref = nlohmann::json::parse(read_file(kDir + "/reference.json"));
  auto m = Model::load(kDir);
  const auto& c = m->config();
  std::vector<int32_t> ids = ref["long_ids"].get<std::vector<int32_t>>();
  const int V = c.vocab_size;
  for (const auto& entry : ref["long"]) {
    AttentionPlan plan = m->full_plan();
    for (const auto& h : entry["plan"]) plan.set_swa(h[0], h[1], h[2], h[3]);
    auto logits = m->forward_all(ids, plan);
    const float* last = &logits[(ids.size() - 1) * V];
    double worst = 0;
    for (int v = 0; v < V; ++v) worst = std::max(worst, std::abs(last[v] - entry["last_logits"][v].get<double>()));
    EXPECT_LT(worst, 1e-3) << plan.summary();
    auto argmax = entry["argmax"].get<std::vector<int>>();
    int mismatches = 0;
    for (size_t t = 0; t < ids.size(); ++t) {
      const float* row = &logits[t * V];
      mismatches += static_cast<int>(std::max_element(row, row + V) - row) != argmax[t];
    }
    EXPECT_EQ(mismatches, 0) << plan.summary();
  }
}

}  // namespace
