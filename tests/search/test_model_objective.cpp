// The cached model objective against the naive reference (tasks/score_sample: every layer
// recomputed), on the stories260K model; and the layer-forward saving of a whole search.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/model.h"
#include "search/bosch_search.h"
#include "search/model_objective.h"
#include "search/rng.h"
#include "tasks/scoring.h"

using namespace bosch;
using namespace bosch::search;

namespace {

const std::string kModel = std::string(BOSCH_SOURCE_DIR) + "/../shared/models/stories260K.gguf";

std::unique_ptr<Model> load_or_skip() {
  if (!std::filesystem::exists(kModel)) return nullptr;
  return Model::load(kModel);
}

// Random-token samples with two answers each (no tokenizer needed).
std::vector<TaskSample> random_samples(int n, int prompt_len, uint64_t seed, int vocab) {
  Rng rng(seed);
  std::vector<TaskSample> out;
  for (int i = 0; i < n; ++i) {
    TaskSample s;
    s.seed = i;
    s.prompt_ids.push_back(1);
    for (int t = 1; t < prompt_len; ++t) s.prompt_ids.push_back(3 + static_cast<int>(rng.below(vocab - 3)));
    for (int t = 0; t < 5; ++t) s.continuation_ids.push_back(3 + static_cast<int>(rng.below(vocab - 3)));
    TaskAnswer a, b;
    a.ids = {s.continuation_ids.begin(), s.continuation_ids.begin() + 2};
    a.begin = 0;
    b.ids = {s.continuation_ids.begin() + 3, s.continuation_ids.end()};
    b.begin = 3;
    s.answers = {a, b};
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST(ModelObjective, CachedScoresEqualTheNaiveReference) {
  auto m = load_or_skip();
  if (!m) GTEST_SKIP() << "SKIPPED: " << kModel << " not found (needs the shared stories260K model)";
  const int L = m->config().n_layers, H = m->config().n_kv_heads;
  auto samples = random_samples(3, 60, 5, m->config().vocab_size);
  for (int64_t cache_bytes : {int64_t(1) << 30, int64_t(3 * 64 * 64 * 4 * 2)}) {  // stride 1, > 1
    ModelObjectiveOptions o;
    o.window = 8, o.sinks = 2;
    o.cache_bytes = cache_bytes;
    ModelObjective obj(*m, samples, o);
    Rng rng(9);
    HeadBits base(L * H, 0);
    for (int step = 0; step < 30; ++step) {
      HeadBits cand = base;
      const int from = static_cast<int>(rng.below(L));  // change some heads from layer `from` up
      for (int i = from * H; i < L * H; ++i)
        if (rng.below(3) == 0) cand[i] ^= 1;
      RawScore got = obj.evaluate(cand);
      const AttentionPlan plan = AttentionPlan::from_bits(L, H, cand, 8, 2);
      double exact = 0, lp = 0;
      for (const auto& s : samples) {
        SampleScore ref = score_sample(*m, plan, s);
        exact += ref.score, lp += ref.mean_logprob;
      }
      exact /= samples.size(), lp /= samples.size();
      ASSERT_DOUBLE_EQ(got.exact_rate, exact) << "step " << step;
      ASSERT_DOUBLE_EQ(got.mean_logprob, lp) << "step " << step;
      ASSERT_DOUBLE_EQ(got.value, exact + 0.01 * lp);
      if (rng.below(2)) {  // move the base, as the search does when it commits
        base = cand;
        obj.set_base(base);
      }
    }
    const auto st = obj.stats();
    EXPECT_EQ(st.layer_forwards_naive, 30 * L * 3);
    EXPECT_LT(st.layer_forwards, st.layer_forwards_naive) << "the cache saved nothing";
    if (cache_bytes < (1 << 20)) {
      EXPECT_GT(obj.checkpoint_stride(), 1);
    }
  }
}

TEST(ModelObjective, SearchSavesLayerForwards) {
  auto m = load_or_skip();
  if (!m) GTEST_SKIP() << "SKIPPED: " << kModel << " not found (needs the shared stories260K model)";
  ModelObjectiveOptions o;
  o.window = 8, o.sinks = 2;
  ModelObjective obj(*m, random_samples(2, 48, 7, m->config().vocab_size), o);
  EvaluatorOptions eo;
  eo.target_ratio = 0.5;
  Evaluator ev(obj, eo);
  SearchOptions so;
  so.budget_group = 24;
  SearchResult r = run_bosch_search(ev, so);
  EXPECT_EQ(count_ones(r.bits), 10);
  const auto j = r.to_json();
  std::printf("evaluations %lld (memo hits %lld), layer forwards %lld vs naive %lld: saving %.2fx "
              "(cache only %.2fx)\n",
              static_cast<long long>(r.evaluations), static_cast<long long>(r.memo_hits),
              static_cast<long long>(r.objective_stats.layer_forwards),
              j["layer_forwards_naive"].get<long long>(), j["layer_forward_saving"].get<double>(),
              j["layer_forward_saving_cache_only"].get<double>());
  EXPECT_GT(j["layer_forward_saving_cache_only"].get<double>(), 1.3);
}
