// The cached model objective against the naive reference (tasks/score_sample: every layer
// recomputed), on the stories260K model; and the layer-forward saving of a whole search.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/model.h"
#include "search/stages/bosch_search.h"
#include "search/objectives/model_objective.h"
#include "search/core/rng.h"
#include "random_samples.h"
#include "tasks/scoring.h"
#include "../test_support.h"

using namespace bosch;
using namespace bosch::search;

namespace {

const std::string kModel = bosch::tests::stories_model();

std::unique_ptr<Model> load_model() { return Model::load(kModel); }

// Random-token samples with two answers each: BOS, then tokens above the special ids.
std::vector<TaskSample> random_samples(int n, int prompt_len, uint64_t seed, int vocab) {
  return bosch::search::testing::two_answer_samples(n, seed, vocab, 3, 1, [&](int) { return prompt_len; });
}

}  // namespace

TEST(ModelObjective, CachedScoresEqualTheNaiveReference) {
  auto m = load_model();
  const int L = m->config().n_layers, H = m->config().n_kv_heads;
  auto samples = random_samples(3, 60, 5, m->config().vocab_size);
  const int64_t entry = int64_t(3) * 64 * m->config().d_model * 4;  // one layer input, all samples
  for (int64_t cache_bytes : {int64_t(1) << 30, 2 * entry}) {  // roomy; two entries at most
    ModelObjectiveOptions o;
    o.swa = {8, 2};
    o.cache_bytes = cache_bytes;
    ModelObjective obj(*m, samples, o);
    Rng rng(9);
    HeadBits base(L * H, 0);
    for (int step = 0; step < 30; ++step) {
      HeadBits cand = base;
      const int from = static_cast<int>(rng.below(L));  // change some heads from layer `from` up
      for (int i = from * H; i < L * H; ++i)
        if (rng.below(3) == 0) cand[i] ^= 1;
      MaskScore got = obj.evaluate(cand);
      const AttentionPlan plan = AttentionPlan::from_bits(L, H, cand, 8, 2);
      double exact = 0, lp = 0;
      for (const auto& s : samples) {
        TaskSampleScore ref = score_sample(*m, plan, s);
        exact += ref.score, lp += ref.mean_logprob;
      }
      exact /= samples.size(), lp /= samples.size();
      ASSERT_DOUBLE_EQ(got.exact_rate, exact) << "step " << step;
      ASSERT_DOUBLE_EQ(got.mean_logprob, lp) << "step " << step;
      ASSERT_DOUBLE_EQ(got.value, exact + 0.01 * lp);
      ASSERT_LE(obj.cache().bytes(), cache_bytes);
      if (rng.below(2)) base = cand;  // move on, as the search does when it commits
    }
    const auto st = obj.stats();
    EXPECT_EQ(st.layer_forwards_naive, 30 * L * 3);
    EXPECT_LT(st.layer_forwards, st.layer_forwards_naive) << "the cache saved nothing";
    if (cache_bytes < (1 << 20)) {
      EXPECT_LE(obj.cache().entries(), 2u);
    }
  }
}

// A candidate starts at the deepest layer whose input ANY earlier candidate shared, not only
// the last committed one: exact layer-forward counts.
TEST(ModelObjective, StartsAtTheDeepestSharedPrefix) {
  auto m = load_model();
  const int L = m->config().n_layers, H = m->config().n_kv_heads;
  ASSERT_GE(L, 4);
  const int64_t ns = 2;
  ModelObjectiveOptions o;
  o.swa = {8, 2};
  ModelObjective obj(*m, random_samples(ns, 40, 3, m->config().vocab_size), o);
  auto forwards_of = [&](const HeadBits& bits) {
    const int64_t before = obj.stats().layer_forwards;
    obj.evaluate(bits);
    return (obj.stats().layer_forwards - before) / ns;
  };
  HeadBits full(L * H, 0);
  EXPECT_EQ(forwards_of(full), L);           // nothing cached yet: all layers
  HeadBits top = full;
  top[(L - 1) * H] = 1;
  EXPECT_EQ(forwards_of(top), 1);            // shares layers 0..L-2 with the full model
  HeadBits a = full;
  a[1 * H + 1] = 1;
  EXPECT_EQ(forwards_of(a), L - 1);          // first change at layer 1
  HeadBits b = full;
  b[2 * H] = 1;
  EXPECT_EQ(forwards_of(b), L - 2);          // first change at layer 2 (vs the full model)
  HeadBits a3 = a;
  a3[3 * H + 2] = 1;
  EXPECT_EQ(forwards_of(a3), L - 3);         // shares layers 0..2 with `a`, evaluated two masks ago
  HeadBits b_top = b;
  b_top[(L - 1) * H + 1] = 1;
  EXPECT_EQ(forwards_of(b_top), 1);          // shares everything below the top with `b`
  // The cached start gives the same score as a fresh objective.
  ModelObjective fresh(*m, random_samples(ns, 40, 3, m->config().vocab_size), o);
  EXPECT_DOUBLE_EQ(obj.evaluate(a3).value, fresh.evaluate(a3).value);
}

TEST(ModelObjective, SearchSavesLayerForwards) {
  auto m = load_model();
  ModelObjectiveOptions o;
  o.swa = {8, 2};
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
  EXPECT_GT(j["work_saving"].get<double>(), j["layer_forward_saving"].get<double>());
  // A second search on the same objective (as compare runs one per ratio) reports its own cost.
  eo.target_ratio = 0.75;
  Evaluator ev2(obj, eo);
  so.ratio = 0.75;
  SearchResult r2 = run_bosch_search(ev2, so);
  EXPECT_EQ(r.objective_stats.evaluations + r2.objective_stats.evaluations, obj.stats().evaluations);
  EXPECT_EQ(r.objective_stats.layer_forwards + r2.objective_stats.layer_forwards, obj.stats().layer_forwards);
  EXPECT_GT(r2.objective_stats.layer_forwards, 0);
}

// The KL term against an independent reference: whole forward passes of the full model and of
// the mask (Model::forward_all), KL(full || mask) at every answer row in double precision.
TEST(ModelObjective, KlTermEqualsTheReferenceDivergence) {
  auto m = load_model();
  const int L = m->config().n_layers, H = m->config().n_kv_heads, V = m->config().vocab_size;
  auto samples = random_samples(3, 60, 7, V);
  ModelObjectiveOptions o;
  o.swa = {8, 2};
  ModelObjective plain(*m, samples, o);
  o.kl_weight = 0.5;
  ModelObjective with_kl(*m, samples, o);
  HeadBits bits(L * H, 0);
  for (int i = 0; i < L * H; i += 2) bits[i] = 1;
  const AttentionPlan plan = AttentionPlan::from_bits(L, H, bits, 8, 2), full = m->full_plan();
  double kl_mean = 0;
  for (const auto& s : samples) {
    std::vector<int32_t> seq(s.prompt_ids);
    seq.insert(seq.end(), s.continuation_ids.begin(), s.continuation_ids.end() - 1);
    const auto lf = m->forward_all(seq, full), lm = m->forward_all(seq, plan);
    double kl = 0;
    int rows = 0;
    for (const auto& a : s.answers)
      for (size_t t = 0; t < a.ids.size(); ++t, ++rows) {
        const size_t r = s.prompt_ids.size() + a.begin - 1 + t;
        auto lsm = [&](const std::vector<float>& x, int v) {
          double mx = -1e300, z = 0;
          for (int u = 0; u < V; ++u) mx = std::max(mx, double(x[r * V + u]));
          for (int u = 0; u < V; ++u) z += std::exp(double(x[r * V + u]) - mx);
          return double(x[r * V + v]) - mx - std::log(z);
        };
        for (int v = 0; v < V; ++v) kl += std::exp(lsm(lf, v)) * (lsm(lf, v) - lsm(lm, v));
      }
    kl_mean += kl / rows / samples.size();
  }
  EXPECT_GT(kl_mean, 1e-4);  // the mask changes the answer distributions
  const MaskScore a = plain.evaluate(bits), b = with_kl.evaluate(bits);
  EXPECT_NEAR(b.value, a.value - 0.5 * kl_mean, 1e-4 * (1 + kl_mean));
  EXPECT_EQ(a.exact_rate, b.exact_rate);
  // The full model is at distance 0 from itself.
  const HeadBits none(L * H, 0);
  EXPECT_NEAR(with_kl.evaluate(none).value, plain.evaluate(none).value, 1e-6);
  EXPECT_NE(with_kl.describe(), plain.describe());  // a journal of one is not resumed by the other
}
