// The embedded default model (models/default, issue #5) measured by the engine, not by its
// trainer: on test-split NIAH samples of all 8 families it answers with full attention (issue #5:
// >= 90%) and fails once every KV head is SWA(64, 4) (<= 20%), so a regression in the loader,
// tokenizer, kernels or task generator shows up here. (Full numbers: models/README.md.)
#include <gtest/gtest.h>

#include <filesystem>

#include "model/model.h"
#include "search/objectives/calibration.h"
#include "util/error.h"
#include "tasks/niah.h"
#include "tasks/prompt_fit.h"
#include "tasks/scoring.h"
#include "tokenizer/tokenizer.h"
#include "embedded_model_checks.h"

using namespace bosch;
using bosch::tests::exact_match;
using bosch::tests::gate_samples;

namespace {

const std::string kModel = std::string(BOSCH_SOURCE_DIR) + "/models/default";

}  // namespace

TEST(DefaultModel, AnswersNiahWithFullAttentionAndNotWithEveryHeadSwa) {
  ASSERT_TRUE(std::filesystem::exists(kModel + "/model.safetensors"))
      << kModel << " has no weights: the default model is part of the repository";
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  const auto& c = m->config();
  EXPECT_GE(c.n_layers, 8);
  EXPECT_GE(c.n_kv_heads, 4);
  auto samples = gate_samples(*tok);  // 8 families x 3 depths
  ASSERT_EQ(samples.size(), 24u);
  double full = exact_match(*m, m->full_plan(), samples);
  double swa = exact_match(*m, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 64, 4), samples);
  RecordProperty("full_exact_match", std::to_string(full));
  RecordProperty("all_swa_exact_match", std::to_string(swa));
  EXPECT_GE(full, 0.9) << "full attention, 24 test-split NIAH samples at 1024 tokens (issue #5: >= 0.9)";
  EXPECT_LE(swa, 0.2) << "every KV head SWA(64, 4): the needles are out of reach";
}

// --calib-solved-only keeps exactly the calibration samples the full model answers, and says so.
TEST(DefaultModel, SolvedOnlyCalibrationKeepsWhatTheFullModelAnswers) {
  ASSERT_TRUE(std::filesystem::exists(kModel + "/model.safetensors"));
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  search::CalibrationOptions co;
  co.objective = "niah:multiquery,multivalue";  // the two families it misses some of
  co.lengths = {1024};
  co.depths = 3;
  const auto all = search::make_calibration(*tok, co);
  co.solved_only = true;
  const auto solved = search::make_calibration(*tok, co, m.get());
  ScoreOptions so;
  so.progress = false;
  size_t exact = 0;
  for (const auto& s : score_samples(*m, m->full_plan(), all.samples, so)) exact += s.exact ? 1 : 0;
  ASSERT_GT(exact, 0u);
  ASSERT_LT(exact, all.samples.size()) << "the model answers every sample: the filter is not exercised";
  ASSERT_EQ(solved.samples.size(), exact);
  for (const auto& s : score_samples(*m, m->full_plan(), solved.samples, so)) EXPECT_TRUE(s.exact);
  EXPECT_NE(solved.description.find("solved by the full model"), std::string::npos) << solved.description;
  co.objective = "text:" + kModel + "/config.json";
  co.lengths = {100};
  EXPECT_THROW(search::make_calibration(*tok, co, m.get()), Error);
}
