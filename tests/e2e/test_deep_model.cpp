// The two-path testbed (models/deep, issue #21) measured by the engine: it answers NIAH with
// full attention (>= 0.9) and not with every KV head SWA(64, 4) (<= 0.1), and its retrieval
// heads are backups of each other: converting either copy head alone costs <= 0.1, converting
// both costs >= 0.8 (24 test-split samples; full tables: models/deep/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "tasks/niah.h"
#include "tasks/prompt_fit.h"
#include "tasks/scoring.h"
#include "tokenizer/tokenizer.h"
#include "embedded_model_checks.h"

using namespace bosch;
using bosch::tests::exact_match;
using bosch::tests::gate_samples;

namespace {

const std::string kModel = std::string(BOSCH_SOURCE_DIR) + "/models/deep";

// "L.H" of a circuit head, as models/deep/circuit.json names them.
std::pair<int, int> head_at(const nlohmann::json& circuit, const std::string& name) {
  const std::string s = circuit["heads"][name].get<std::string>();
  return {std::stoi(s.substr(0, s.find('.'))), std::stoi(s.substr(s.find('.') + 1))};
}

}  // namespace

TEST(DeepModel, GatesAndBackupCopyHeads) {
  ASSERT_TRUE(std::filesystem::exists(kModel + "/model.safetensors")) << kModel << " is part of the repository";
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  const auto& c = m->config();
  std::ifstream in(kModel + "/circuit.json");
  const auto circuit = nlohmann::json::parse(in);
  const auto samples = gate_samples(*tok);  // 8 families x 3 depths
  ASSERT_EQ(samples.size(), 24u);

  const double full = exact_match(*m, m->full_plan(), samples);
  const double swa = exact_match(*m, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 64, 4), samples);
  EXPECT_GE(full, 0.9) << "full attention (issue #21: >= 0.9)";
  EXPECT_LE(swa, 0.1) << "every KV head SWA(64, 4) (issue #21: <= 0.1)";

  const auto [la, ha] = head_at(circuit, "COPY");
  const auto [lb, hb] = head_at(circuit, "COPY_B");
  auto plan_a = m->full_plan(), plan_b = m->full_plan();
  plan_a.set_swa(la, ha, 64, 4);
  plan_b.set_swa(lb, hb, 64, 4);
  auto both = plan_a;
  both.set_swa(lb, hb, 64, 4);
  const double a = exact_match(*m, plan_a, samples), b = exact_match(*m, plan_b, samples);
  const double ab = exact_match(*m, both, samples);
  EXPECT_LE(full - a, 0.1) << "copy head of chain A alone: chain B answers";
  EXPECT_LE(full - b, 0.1) << "copy head of chain B alone: chain A answers";
  EXPECT_GE(full - ab, 0.8) << "both copy heads: no chain left";
}
