// The three BOSCH stages on synthetic objectives with planted answers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "planted.h"
#include "search/stages/stage_steps.h"
#include "search/core/combinatorics.h"

using namespace bosch::search;
using namespace bosch::search::testing;

namespace {

EvaluatorOptions quiet_options(double ratio) {
  EvaluatorOptions o;
  o.target_ratio = ratio;
  o.alpha = 1.0;
  return o;
}

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

int layer_count(const HeadBits& b, int l, int H) {
  return std::count(b.begin() + l * H, b.begin() + (l + 1) * H, 1);
}

}  // namespace

TEST(Combinatorics, ChooseAndEnumerate) {
  EXPECT_EQ(n_choose_k_capped(6, 3, 1000), 20u);
  EXPECT_EQ(n_choose_k_capped(8, 4, 1000), 70u);
  EXPECT_EQ(n_choose_k_capped(8, 0, 1000), 1u);
  EXPECT_EQ(n_choose_k_capped(8, 9, 1000), 0u);
  EXPECT_EQ(n_choose_k_capped(64, 32, 100), 101u);  // saturates instead of overflowing
  auto all = all_combinations(6, 3);
  ASSERT_EQ(all.size(), 20u);
  EXPECT_EQ(all.front(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(all.back(), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(std::set<std::vector<int>>(all.begin(), all.end()).size(), 20u);
  EXPECT_EQ(all_combinations(4, 0).size(), 1u);
}

TEST(Counts, TargetAndProbeCounts) {
  EXPECT_EQ(target_count(0.5, 5, 4), 10);
  EXPECT_EQ(target_count(0.3, 1, 10), 3);
  EXPECT_EQ(probe_count(0.3, 10), 3);  // 0.3 * 10 is a hair above 3 in floating point
  EXPECT_EQ(probe_count(0.26, 8), 3);
  EXPECT_EQ(probe_count(0.0, 8), 0);
  EXPECT_EQ(probe_count(1.0, 8), 8);
  EXPECT_EQ(layer_counts({1, 0, 1, 1, 0, 0, 0, 1}, 4), (std::vector<int>{3, 1}));
}

// ---- stage 1 ----

TEST(ProbeStage, ExhaustiveFindsPlantedSubsetOfEveryLayer) {
  const int H = 6;
  std::vector<PlantedLayer> layers = {
      {{0, 2, 3}, {1}, 1.0}, {{1, 4, 5}, {0, 2}, 2.0}, {{0, 1, 5}, {3}, 0.5}};
  auto obj = make_planted(H, layers);
  Evaluator ev(obj, quiet_options(0.5));
  ev.init_references();
  SearchOptions opt;
  opt.ratio = 0.5;
  opt.budget_probe = 20;  // = C(6, 3): exhaustive
  ProbeResult p = run_probe_stage(ev, opt);
  EXPECT_EQ(p.count, 3);
  for (int l = 0; l < 3; ++l) {
    EXPECT_TRUE(p.layers[l].exhaustive);
    EXPECT_EQ(p.layers[l].evaluations, 20 + 1) << "layer " << l << ": the probes and the up-probe";
    EXPECT_EQ(sorted(p.layers[l].best_heads), layers[l].free_heads) << "layer " << l;
  }
  EXPECT_EQ(p.cascade, planted_bits(H, layers));
  // A static ranking by single-head cost would have picked a decoy first.
  for (int l = 0; l < 3; ++l) {
    int cheapest = 0;
    for (int h = 1; h < H; ++h)
      if (obj.unary(l * H + h) < obj.unary(l * H + cheapest)) cheapest = h;
    EXPECT_EQ(std::count(layers[l].free_heads.begin(), layers[l].free_heads.end(), cheapest), 0);
  }
  // The cascade: scores fall monotonically from the top layer down.
  EXPECT_GE(p.layers[2].best_score, p.layers[1].best_score);
  EXPECT_GE(p.layers[1].best_score, p.layers[0].best_score);
}

TEST(ProbeStage, LocalSearchWithinBudgetFindsPlantedSubset) {
  const int H = 8;
  std::vector<PlantedLayer> layers = {{{0, 3, 5, 6}, {1}, 1.0},
                                      {{1, 2, 4, 7}, {0, 6}, 1.5},
                                      {{2, 3, 4, 5}, {7}, 0.7},
                                      {{0, 1, 6, 7}, {3}, 1.2}};
  for (uint64_t seed : {0, 1, 2, 3, 4}) {
    auto obj = make_planted(H, layers);
    Evaluator ev(obj, quiet_options(0.5));
    ev.init_references();
    SearchOptions opt;
    opt.ratio = 0.5;
    opt.budget_probe = 40;  // < C(8, 4) = 70
    opt.seed = seed;
    const int64_t before = ev.fresh();
    ProbeResult p = run_probe_stage(ev, opt);
    EXPECT_EQ(ev.fresh() - before, 4 * (40 + 1)) << "budget is exact (plus one up-probe a layer)";
    for (int l = 0; l < 4; ++l) {
      EXPECT_FALSE(p.layers[l].exhaustive);
      EXPECT_EQ(p.layers[l].evaluations, 40 + 1);
      EXPECT_EQ(sorted(p.layers[l].best_heads), layers[l].free_heads)
          << "seed " << seed << " layer " << l;
    }
  }
}

// ---- stage 2 ----

TEST(RatioStage, PlantedDropsGiveCoarseBuckets) {
  // 6 layers, H = 8, rho = 0.75 (K = 36, 6 per layer), step round(0.25 * 8 / 2) = 1: the two
  // least sensitive layers (drops 0.0, 0.01) get 7, the middle two 6, the two most sensitive 5.
  RatioAssignment r = assign_ratios({0.3, 0.0, 0.05, 0.2, 0.01, 0.1}, 8, 36);
  EXPECT_EQ(r.counts, (std::vector<int>{5, 7, 6, 5, 7, 6}));
  EXPECT_EQ(r.buckets, (std::vector<std::vector<int>>{{1, 4}, {2, 5}, {0, 3}}));
  EXPECT_EQ(r.tier, (std::vector<int>{2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(bucket_step(0.75, 8), 1);
  EXPECT_EQ(bucket_step(0.5, 8), 2);
  EXPECT_EQ(bucket_step(0.875, 8), 1) << "at least one head between buckets";
  EXPECT_EQ(bucket_step(0.875, 4), 1);
  // Clamped at H: the least sensitive bucket cannot take more than every head; the rest goes
  // to the middle one, and the total stays K.
  RatioAssignment full = assign_ratios({0.3, 0.0, 0.1}, 4, 11);  // rho 0.92: 4, 4, 3 near-uniform
  EXPECT_EQ(full.counts, (std::vector<int>{3, 4, 4}));
  // One bucket: the near-uniform counts, every layer in it.
  RatioAssignment one = assign_ratios({0.3, 0.0, 0.1}, 4, 6, 1);
  EXPECT_EQ(one.counts, (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(one.buckets, (std::vector<std::vector<int>>{{0, 1, 2}}));
  EXPECT_EQ(assign_ratios({1.0, 0.0}, 4, 0).counts, (std::vector<int>{0, 0}));
  EXPECT_EQ(assign_ratios({1.0, 0.0}, 4, 8).counts, (std::vector<int>{4, 4}));
}

TEST(RatioStage, ExactTotalAndMonotoneForManyShapes) {
  Rng rng(42);
  for (int trial = 0; trial < 400; ++trial) {
    const int L = 1 + static_cast<int>(rng.below(40)), H = 1 + static_cast<int>(rng.below(16));
    const int K = static_cast<int>(rng.below(L * H + 1));
    std::vector<double> drops(L);
    for (auto& d : drops)  // ties are frequent on purpose
      d = static_cast<double>(rng.below(5)) * 0.1 - (rng.below(4) == 0 ? 0.05 : 0.0);
    RatioAssignment r = assign_ratios(drops, H, K, 1 + static_cast<int>(rng.below(5)));
    int total = 0;
    for (int l = 0; l < L; ++l) {
      ASSERT_GE(r.counts[l], 0);
      ASSERT_LE(r.counts[l], H);
      ASSERT_GE(r.weights[l], 0.0);
      ASSERT_LE(r.weights[l], 1.0);
      total += r.counts[l];
    }
    ASSERT_EQ(total, K) << "L=" << L << " H=" << H;
    size_t in_buckets = 0;
    for (const auto& b : r.buckets) in_buckets += b.size();
    ASSERT_EQ(in_buckets, static_cast<size_t>(L)) << "every layer in exactly one bucket";
    for (int i = 0; i < L; ++i)
      for (int j = 0; j < L; ++j) {
        if (drops[i] < drops[j]) {
          ASSERT_GE(r.counts[i], r.counts[j]) << "less sensitive, fewer heads";
        }
      }
  }
}

TEST(RatioStage, DropsFromCascade) {
  ProbeResult p;
  p.layers.resize(3);
  p.layers[2].best_score = 0.9;
  p.layers[1].best_score = 0.85;
  p.layers[0].best_score = 0.3;
  auto d = probe_drops(p);
  EXPECT_NEAR(d[2], 0.1, 1e-12);
  EXPECT_NEAR(d[1], 0.05, 1e-12);
  EXPECT_NEAR(d[0], 0.55, 1e-12);
}

// ---- stage 3 ----

TEST(GroupStage, LnsRecoversPlantedHeadsOfAGroup) {
  // Three layers of 8 heads, 3 SWA heads each: 56^3 = 175616 assignments. Each layer has a
  // decoy (cheapest alone, costly with the free heads), a trap for one-swap descent; and two
  // cross-layer pairs entangle the layers. The search starts from the worst assignment.
  const int H = 8;
  std::vector<PlantedLayer> layers = {
      {{1, 4, 6}, {0}, 1.0}, {{0, 2, 7}, {5}, 1.0}, {{3, 5, 6}, {1}, 1.0}};
  std::vector<PairTerm> cross = {{0 * H + 2, 1 * H + 3, 1.0}, {1 * H + 4, 2 * H + 0, 1.0}};
  int found = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto obj = make_planted(H, layers, cross);
    Evaluator ev(obj, quiet_options(3.0 / 8));
    ev.init_references();
    HeadBits a(3 * H, 0);
    for (int l = 0; l < 3; ++l) {
      int placed = 0;
      for (int h = H - 1; h >= 0 && placed < 3; --h) {
        const auto& p = layers[l];
        if (std::count(p.free_heads.begin(), p.free_heads.end(), h) ||
            std::count(p.decoys.begin(), p.decoys.end(), h))
          continue;
        a[l * H + h] = 1, ++placed;
      }
    }
    SearchOptions opt;
    opt.budget_group = 400;
    opt.seed = seed;
    GroupResult g = optimise_group(ev, opt, {0, 1, 2}, a, 3);
    EXPECT_FALSE(g.exhaustive);
    EXPECT_LE(g.evaluations, 400);
    EXPECT_GE(g.evaluations, 300) << "stopped early: the stall guard ends only an exhausted space";
    EXPECT_EQ(count_ones(a), 9) << "the bucket keeps its total";
    EXPECT_EQ(g.count, 9);
    EXPECT_LT(g.end_loss, g.start_loss);
    found += a == planted_bits(H, layers);
  }
  // Measured: the planted optimum in 1/10 seeds. The marginal-guided repair is the weak spot
  // here: once a decoy is SWA, its layer's free heads look costly (their marginals were measured
  // beside the decoy) and never enter the shortlist. The whole search avoids the trap (stage 1's
  // exhaustive probes find each layer's free heads: BoschSearch.PipelineFindsPlantedOptimum).
  EXPECT_GE(found, 1) << "planted optimum found for " << found << "/10 seeds";
}

TEST(GroupStage, LnsWithoutDecoysAlwaysRecoversPlantedHeads) {
  const int H = 8;
  std::vector<PlantedLayer> layers = {{{1, 4, 6}, {}, 1.0}, {{0, 2, 7}, {}, 1.0}, {{3, 5, 6}, {}, 1.0}};
  std::vector<PairTerm> cross = {{0 * H + 2, 1 * H + 3, 1.0}, {1 * H + 4, 2 * H + 0, 1.0}};
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto obj = make_planted(H, layers, cross);
    Evaluator ev(obj, quiet_options(3.0 / 8));
    ev.init_references();
    HeadBits a(3 * H, 0);
    for (int l = 0; l < 3; ++l)
      for (int h = 0, placed = 0; h < H && placed < 3; ++h)
        if (!std::count(layers[l].free_heads.begin(), layers[l].free_heads.end(), h))
          a[l * H + h] = 1, ++placed;
    SearchOptions opt;
    opt.budget_group = 250;
    opt.seed = seed;
    optimise_group(ev, opt, {0, 1, 2}, a, 3);
    EXPECT_EQ(a, planted_bits(H, layers)) << "seed " << seed;
  }
}

// An AND pair of flat heads a and b on 4 layers x 4 heads: they answer only when both are full
// (restoring either alone gains nothing, so no marginal points at them); every other head costs
// a little when SWA.
class AndPairObjective : public Objective {
 public:
  AndPairObjective(int a, int b) : a_(a), b_(b) {}
  int n_layers() const override { return 4; }
  int n_heads() const override { return 4; }
  MaskScore evaluate(const HeadBits& bits) override {
    double cost = 0;
    for (int f = 0; f < 16; ++f)
      if (f != a_ && f != b_) cost += bits[f] * 0.001 * (1 + f % 3);
    MaskScore r;
    r.value = (bits[a_] == 0 && bits[b_] == 0 ? 1.0 : 0.0) - cost;
    return r;
  }
  std::string describe() const override { return "and-pair"; }

 private:
  int a_, b_;
};

TEST(GroupStage, RelatedRemovalRestoresAnAndPairOfOneLayer) {
  // 12 of 16 heads SWA; the start has layer 1 all SWA and four full heads elsewhere: the answer
  // needs a 2-for-2 exchange whose single flips all look useless.
  int found = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    AndPairObjective obj(5, 6);  // layer 1's heads 1 and 2
    Evaluator ev(obj, quiet_options(0.75));
    ev.init_references();
    HeadBits a(16, 1);
    for (int f : {0, 8, 12, 13}) a[f] = 0;
    SearchOptions opt;
    opt.budget_group = 200;
    opt.seed = seed;
    const GroupResult g = optimise_group(ev, opt, {0, 1, 2, 3}, a, 0);
    EXPECT_EQ(count_ones(a), 12);
    EXPECT_LE(g.evaluations, 200);
    found += a[5] == 0 && a[6] == 0;
  }
  // Measured: 8/10 with related removal, 3/10 without it (worst removal alone ranks the pair
  // last: restoring either head alone gains nothing, every other restoration a little).
  EXPECT_GE(found, 8) << "AND pair restored for " << found << "/10 seeds";
}

// Stage 1's head scores as the cascade would leave them: the needed head lowest in its layer.
ProbeResult coverage_probe() {
  ProbeResult p;
  p.count = 3;
  p.layers.resize(4);
  for (int l = 0; l < 4; ++l) p.layers[l].layer = l, p.layers[l].head_scores.assign(4, 0.9);
  p.layers[0].head_scores[1] = 0.6;
  p.layers[2].head_scores[3] = 0.7;
  return p;
}

TEST(GroupStage, CoverageRestorationsPickEachAllSwaLayersNeededHead) {
  ProbeResult p = coverage_probe();
  p.layers[3].head_scores = {0.5, 0.5, 0.5, 0.5};  // uninformative: skipped
  HeadBits b(16, 1);
  b[4] = 0;  // layer 1 not all SWA: skipped even with an informative probe
  p.layers[1].head_scores[2] = 0.1;
  EXPECT_EQ(coverage_restorations(p, {0, 1, 2, 3}, b, 4, 4), (std::vector<int>{1, 11}));  // gap 0.3, then 0.2
  EXPECT_EQ(coverage_restorations(p, {0, 1, 2, 3}, b, 4, 1), (std::vector<int>{1}));
  EXPECT_EQ(coverage_restorations(p, {2, 3}, b, 4, 4), (std::vector<int>{11}));  // only the bucket's layers
  b[4] = 1;
  EXPECT_EQ(coverage_restorations(p, {0, 1, 2, 3}, b, 4, 4), (std::vector<int>{6, 1, 11}));
}

TEST(GroupStage, CoverageMoveRestoresACrossLayerAndPair) {
  // 12 of 16 heads SWA; layers 0 and 2 start all SWA, layers 1 and 3 keep two full heads each:
  // the answer is a 2-for-2 exchange across layers whose single flips all look useless.
  int with_probe = 0, without = 0;
  const ProbeResult probe = coverage_probe();
  for (uint64_t seed = 0; seed < 10; ++seed)
    for (const ProbeResult* p : {&probe, static_cast<const ProbeResult*>(nullptr)}) {
      AndPairObjective obj(1, 11);  // across layers: layer 0's head 1, layer 2's head 3 (the shape of
                                    // models/default seed 1 at rho 0.75, issue #39)
      Evaluator ev(obj, quiet_options(0.75));
      ev.init_references();
      HeadBits a(16, 1);
      for (int f : {4, 5, 12, 13}) a[f] = 0;
      SearchOptions opt;
      opt.budget_group = 64;
      opt.seed = seed;
      const GroupResult g = optimise_group(ev, opt, {0, 1, 2, 3}, a, 0, p);
      EXPECT_EQ(count_ones(a), 12);
      const bool found = a[1] == 0 && a[11] == 0;
      if (p) {
        with_probe += found;
        EXPECT_EQ(g.coverage_accepted, 1) << "seed " << seed;
      } else {
        without += found;
        EXPECT_EQ(g.coverage_tries, 0);
      }
    }
  EXPECT_EQ(with_probe, 10);
  // Measured without stage 1's scores: 0/10 (worst removal ranks the two heads last, as
  // restoring either alone gains nothing, and related removal draws within one layer).
  EXPECT_LE(without, 2) << "without the probe: " << without << "/10";
}

TEST(GroupStage, JointMovesFindSynergyAcrossLayers) {
  // Heads A (layer 0) and B (layer 1) cost 0.5 each alone, but together 0.1 (pair -0.9);
  // the alternatives cost 0.3 each. One-layer-at-a-time descent from (alt, alt) never moves.
  const int H = 4;
  std::vector<double> unary(2 * H, 2.0);
  unary[0 * H + 1] = 0.5, unary[1 * H + 2] = 0.5;  // A, B
  unary[0 * H + 3] = 0.3, unary[1 * H + 0] = 0.3;  // alternatives
  SyntheticObjective obj(2, H, unary, {{0 * H + 1, 1 * H + 2, -0.9}});
  for (uint64_t seed : {0, 1, 2}) {
    SyntheticObjective o = obj;
    Evaluator ev(o, quiet_options(0.25));
    ev.init_references();
    HeadBits a(2 * H, 0);
    a[0 * H + 3] = a[1 * H + 0] = 1;
    SearchOptions opt;
    opt.budget_group = 27;  // < C(8, 2): LNS, not exhaustive
    opt.seed = seed;
    GroupResult g = optimise_group(ev, opt, {0, 1}, a, 1);
    EXPECT_FALSE(g.exhaustive);
    HeadBits want(2 * H, 0);
    want[0 * H + 1] = want[1 * H + 2] = 1;
    EXPECT_EQ(a, want) << "seed " << seed;
  }
}

TEST(GroupStage, ExhaustiveWhenTheGroupFits) {
  const int H = 4;
  auto obj = make_synthetic_objective("synthetic:2x4:9");
  auto& syn = static_cast<SyntheticObjective&>(*obj);
  Evaluator ev(*obj, quiet_options(0.5));
  ev.init_references();
  HeadBits a = {1, 1, 0, 0, 1, 1, 0, 0};
  SearchOptions opt;
  opt.budget_group = 70;  // = C(8, 4): the bucket's 4 SWA heads anywhere in its 2 layers
  GroupResult g = optimise_group(ev, opt, {0, 1}, a, 2);
  EXPECT_TRUE(g.exhaustive);
  EXPECT_EQ(g.evaluations, 70);
  EXPECT_DOUBLE_EQ(syn.value(a), syn.value(brute_force_best(syn, 4)));
  (void)H;
}

TEST(GroupStage, InitialAssignmentExtendsAndCutsTheProbeChoice) {
  ProbeResult p;
  p.layers.resize(2);
  p.layers[0].best_heads = {1, 3};
  p.layers[0].head_scores = {0.9, 0.2, 0.1, 0.5};  // head 0 best outside the choice; 1 > 3
  p.layers[1].best_heads = {0, 2};
  p.layers[1].head_scores = {0.3, 0.8, 0.4, 0.9};
  HeadBits b = initial_assignment(p, {3, 1}, 4);
  EXPECT_EQ(b, (HeadBits{1, 1, 0, 1, 0, 0, 1, 0}));
}

// ---- the whole search ----

TEST(BoschSearch, PipelineFindsPlantedOptimum) {
  const int H = 4;
  std::vector<PlantedLayer> layers = {{{}, {}, 3.0},                // sensitive: stays full
                                      {{0, 1, 3}, {2}, 1.0},
                                      {{0, 2, 3}, {}, 1.0},
                                      {{1, 2}, {0}, 1.0, 0.1}};  // costlier free heads
  auto obj = make_planted(H, layers);
  const HeadBits planted = planted_bits(H, layers);
  ASSERT_EQ(brute_force_best(obj, 8), planted) << "the planted answer is the optimum";
  Evaluator ev(obj, quiet_options(0.5));
  SearchOptions opt;
  opt.ratio = 0.5;
  SearchResult r = run_bosch_search(ev, opt);
  EXPECT_EQ(r.bits, planted);
  EXPECT_EQ(layer_counts(r.bits, H), (std::vector<int>{0, 3, 3, 2}));
  EXPECT_EQ(r.k_total, 8);
  int64_t staged = 0;
  for (const auto& s : r.stages) staged += s.evaluations;
  EXPECT_EQ(staged, r.evaluations);
  EXPECT_EQ(r.evaluations, r.computed);
  EXPECT_EQ(static_cast<size_t>(r.computed), obj.calls().size());
}

TEST(BoschSearch, ExactCardinalityAndBudgetsForManyShapes) {
  for (int L : {1, 2, 3, 5})
    for (int H : {1, 2, 4, 8})
      for (double rho : {0.0, 0.1, 0.25, 0.5, 0.77, 0.9, 1.0}) {
        auto obj = make_synthetic_objective(fmt::format("synthetic:{}x{}:{}", L, H, L * 31 + H));
        Evaluator ev(*obj, quiet_options(rho));
        SearchOptions opt;
        opt.ratio = rho;
        opt.budget_probe = 6;
        opt.budget_group = 10;
        opt.budget_polish = 12;
        opt.seed = 5;
        SearchResult r = run_bosch_search(ev, opt);
        const int K = target_count(rho, L, H);
        ASSERT_EQ(count_ones(r.bits), K) << L << "x" << H << " rho " << rho;
        for (const auto& p : r.probe.layers) ASSERT_LE(p.evaluations, 6 + 1);  // + the up-probe
        for (const auto& g : r.groups) ASSERT_LE(g.evaluations, 10);
        ASSERT_LE(r.polish.evaluations, 12);
        int64_t staged = 0;
        for (const auto& s : r.stages) staged += s.evaluations;
        ASSERT_EQ(staged, r.evaluations);
        if (K > 0 && K < L * H) {
          int sum = 0;
          for (int c : r.ratios.counts) sum += c;
          ASSERT_EQ(sum, K);
          size_t in_buckets = 0;
          for (const auto& b : r.ratios.buckets) in_buckets += b.size();
          ASSERT_EQ(in_buckets, static_cast<size_t>(L));
        }
      }
}

TEST(BoschSearch, SameSeedSameResultOtherSeedRuns) {
  auto run = [](uint64_t seed) {
    auto obj = make_synthetic_objective("synthetic:6x8:3");
    Evaluator ev(*obj, quiet_options(0.5));
    SearchOptions opt;
    opt.budget_probe = 12;
    opt.budget_group = 30;
    opt.seed = seed;
    return run_bosch_search(ev, opt);
  };
  SearchResult a = run(1), b = run(1), c = run(2);
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(a.to_json()["layers"].dump(), b.to_json()["layers"].dump());
  EXPECT_EQ(count_ones(c.bits), count_ones(a.bits));
  // The search beats its own starting point (the stage-2 assignment) or matches it.
  ASSERT_EQ(a.stages[2].name, "ratios");
  EXPECT_GE(a.score, a.stages[2].best_score);
}

namespace {

// Layer 1 loses nothing with up to `safe` SWA heads and everything with one more (its
// retrieval heads); every SWA head elsewhere costs 0.01. The probes (c heads) see layer 1 as
// the least sensitive layer; the adaptive ratios give it more than c heads.
class CliffObjective : public Objective {
 public:
  CliffObjective(int heads, int safe) : H(heads), safe(safe) {}
  int n_layers() const override { return 4; }
  int n_heads() const override { return H; }
  MaskScore evaluate(const HeadBits& b) override {
    int layer1 = 0, others = 0;
    for (int l = 0; l < 4; ++l)
      for (int h = 0; h < H; ++h) (l == 1 ? layer1 : others) += b[l * H + h];
    MaskScore r;
    r.value = (layer1 > safe ? 0.0 : 1.0) - 0.01 * others;
    return r;
  }
  std::string describe() const override { return "cliff"; }

 private:
  int H, safe;
};

// The whole search at rho 0.5 on a cliff of H heads, safe up to `safe` SWA heads in layer 1.
SearchResult search_cliff(int H, int safe) {
  CliffObjective obj(H, safe);
  Evaluator ev(obj, quiet_options(0.5));
  SearchOptions so;
  so.ratio = 0.5;
  return run_bosch_search(ev, so);
}

}  // namespace

TEST(RatioStage, GuardKeepsUniformCountsWhenTheAdaptiveStartLoses) {
  // H = 8, rho 0.5: c = 4, the up-probe tries 5 (safe), the least sensitive tier gets 4 + 2.
  const SearchResult r = search_cliff(8, 5);
  EXPECT_GT(r.ratios.adaptive_counts[1], 5) << "the planted trap did not trigger";
  EXPECT_TRUE(r.ratios.uniform_fallback);
  EXPECT_LT(r.ratios.adaptive_score, r.ratios.uniform_score);
  EXPECT_EQ(count_ones(r.bits), 16);
  EXPECT_LE(layer_count(r.bits, 1, 8), 5);
  EXPECT_GT(r.score, 0.9);
  EXPECT_EQ(uniform_counts({0.0, 1.0, 0.5, 1.0}, 4, 6), (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(uniform_counts({0.2, 0.1, 0.9}, 4, 7), (std::vector<int>{2, 2, 3}));
}

TEST(ProbeStage, UpProbeSeesACliffOneHeadAboveTheProbedCount) {
  // H = 4, rho 0.5: c = 2 is safe in layer 1, 3 is not. Without the up-probe layer 1 looked
  // least sensitive and stage 2 gave it 3 heads (the guard had to save the search).
  const SearchResult r = search_cliff(4, 2);
  EXPECT_NEAR(r.probe.layers[1].up_score, 0.0, 0.1);
  EXPECT_GT(r.probe.layers[0].up_score, 0.5);
  const std::vector<double> d = probe_drops(r.probe);
  for (int l : {0, 2, 3}) EXPECT_LT(d[l], d[1]) << "layer " << l;
  EXPECT_LE(r.ratios.adaptive_counts[1], 2);
  EXPECT_LE(layer_count(r.bits, 1, 4), 2);
  EXPECT_GT(r.score, 0.9);
}

// ---- polish: cross-layer swaps ----

TEST(PolishStage, ReachesTheOptimumOfAnAdditiveObjectiveFromWrongLayerCounts) {
  // Additive costs: the marginals predict every swap exactly, so the polish must end at the
  // K cheapest heads whatever the per-layer counts of the start.
  const int L = 5, H = 4, K = 10;
  Rng rng(11);
  std::vector<double> unary(L * H);
  for (double& u : unary) u = 0.01 + double(rng.below(1000)) / 1000.0;
  SyntheticObjective obj(L, H, unary);
  const HeadBits best = brute_force_best(obj, K);
  HeadBits start(L * H, 0);
  for (int i = 0; i < K; ++i) start[i] = 1;  // layers 0-1 all SWA, 2 half, 3-4 full
  ASSERT_NE(start, best);
  Evaluator ev(obj, quiet_options(0.5));
  ev.init_references();
  SearchOptions opt;
  opt.budget_polish = 2000;
  HeadBits bits = start;
  const PolishResult r = run_polish_stage(ev, opt, bits);
  EXPECT_EQ(bits, best);
  EXPECT_EQ(count_ones(bits), K);
  EXPECT_LT(r.end_loss, r.start_loss);
  EXPECT_FALSE(r.moves.empty());
  bool across = false;
  for (auto [t, f] : r.moves) across = across || t / H != f / H;
  EXPECT_TRUE(across) << "no swap moved a head to another layer";
  EXPECT_LE(r.evaluations, opt.budget_polish);
}

TEST(PolishStage, KeepsTheCountAndTheBudget) {
  auto obj = make_synthetic_objective("synthetic:4x4:2");
  SearchOptions defaults;
  EXPECT_EQ(polish_budget(defaults, 16), 32) << "auto: two rounds of marginals";
  for (int budget : {0, 1, 5, 17, -1}) {
    Evaluator ev(*obj, quiet_options(0.5));
    ev.init_references();
    HeadBits bits(16, 0);
    for (int i = 0; i < 8; ++i) bits[2 * i] = 1;
    const HeadBits start = bits;
    const double start_loss = ev.evaluate(bits).loss;
    const int64_t before = ev.fresh();
    SearchOptions opt;
    opt.budget_polish = budget;
    const PolishResult r = run_polish_stage(ev, opt, bits);
    EXPECT_EQ(count_ones(bits), 8);
    EXPECT_LE(r.evaluations, budget < 0 ? 32 : budget);
    EXPECT_EQ(ev.fresh() - before, r.evaluations);
    EXPECT_LE(ev.evaluate(bits).loss, start_loss);
    if (budget == 0) {
      EXPECT_EQ(bits, start);
    }
  }
}

TEST(BoschSearch, PaperStagesFixALayerCountTheRatiosGotWrong) {
  // rho = 0.75, c = 3 probes. Layer 2 has three costly heads (a layer of key heads), so the
  // probes see it as the one sensitive layer and stage 2 gives it fewer SWA heads than layer
  // 1, although layer 1 has a costly head too: the optimal counts (4, 3, 1, 4) are not stage
  // 2's. Only a move across layers reaches the optimum; stage 3 makes it (issue #39: a bucket's
  // total is kept, its layers' counts are not, and the joint phase moves heads between buckets).
  const int H = 4;
  std::vector<PlantedLayer> layers = {{{0, 1, 2, 3}, {}},
                                      {{0, 1, 2}, {}},
                                      {{1}, {}},
                                      {{0, 1, 2, 3}, {}}};
  auto obj = make_planted(H, layers);
  const HeadBits planted = planted_bits(H, layers);
  ASSERT_EQ(brute_force_best(obj, 12), planted);
  auto run = [&](const std::string& method, int buckets) {
    SyntheticObjective o = obj;
    Evaluator ev(o, quiet_options(0.75));
    SearchOptions opt;
    opt.ratio = 0.75;
    opt.method = method;
    opt.buckets = buckets;
    opt.budget_polish = method == "bosch" ? 0 : 64;
    opt.sweep_starts = false;
    return run_bosch_search(ev, opt);
  };
  for (int buckets : {1, 2, 3}) {
    const SearchResult paper = run("bosch", buckets);
    if (buckets == 1) {  // the near-uniform counts (3, 3, 3, 3)
      EXPECT_NE(paper.ratios.counts, layer_counts(planted, H)) << "the planted trap did not trigger";
    }
    EXPECT_EQ(paper.bits, planted) << buckets << " buckets";
    const auto json_layers = paper.to_json()["layers"];
    EXPECT_EQ(json_layers[2]["final_swa_heads"], 1);
    const SearchResult plus = run("bosch-plus", buckets);
    EXPECT_GE(plus.score, paper.score);
  }
}

TEST(GroupStage, BucketKeepsItsTotalWhileLayerCountsMove) {
  // Additive costs, 3 layers of 4 heads, the bucket's 6 SWA heads start 2 per layer; the 6
  // cheapest heads sit 4 / 2 / 0 in the layers, so the optimum needs counts to move.
  const int L = 3, H = 4;
  std::vector<double> unary = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.9, 0.8, 0.7, 0.75, 0.85, 0.95};
  SyntheticObjective obj(L, H, unary);
  const HeadBits best = brute_force_best(obj, 6);
  ASSERT_EQ(layer_counts(best, H), (std::vector<int>{4, 2, 0}));
  for (uint64_t seed : {0, 1, 2}) {
    SyntheticObjective o = obj;
    Evaluator ev(o, quiet_options(0.5));
    ev.init_references();
    HeadBits a = {1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0};
    SearchOptions opt;
    opt.budget_group = 60;  // < C(12, 6) = 924: LNS
    opt.seed = seed;
    const GroupResult g = optimise_group(ev, opt, {0, 1, 2}, a, 0);
    EXPECT_FALSE(g.exhaustive);
    EXPECT_EQ(count_ones(a), 6);
    EXPECT_EQ(a, best) << "seed " << seed;
    EXPECT_GT(g.moved, 0);
    EXPECT_LE(g.evaluations, 60);
  }
  // Two buckets {0}, {1, 2}, bucket share 1 (no joint phase): each keeps its total.
  RatioAssignment r;
  r.counts = {2, 2, 2};
  r.buckets = {{0}, {1, 2}};
  SyntheticObjective o = obj;
  Evaluator ev(o, quiet_options(0.5));
  ev.init_references();
  HeadBits a = {1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0};
  SearchOptions opt;
  opt.bucket_share = 1.0;
  run_group_stage(ev, opt, r, a);
  EXPECT_EQ(layer_counts(a, H)[0], 2);
  EXPECT_EQ(layer_counts(a, H)[1] + layer_counts(a, H)[2], 4);
  EXPECT_EQ(a, (HeadBits{1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0})) << "layer 1 takes the bucket's cheap heads";
  // With the joint phase the totals move to the optimum.
  HeadBits j = {1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0};
  SyntheticObjective o2 = obj;
  Evaluator ev2(o2, quiet_options(0.5));
  ev2.init_references();
  SearchOptions joint;
  const auto groups = run_group_stage(ev2, joint, r, j);
  ASSERT_FALSE(groups.empty());
  EXPECT_TRUE(groups.back().joint);
  EXPECT_EQ(j, best);
}

TEST(ProbeStage, NoWholeLayerProbesBelowRatioOne) {
  EXPECT_EQ(probe_count(0.875, 4), 3) << "ceil(3.5) = 4 = H: probe H - 1";
  EXPECT_EQ(probe_count(0.9, 8), 7);
  EXPECT_EQ(probe_count(0.875, 8), 7);
  EXPECT_EQ(probe_count(1.0, 4), 4);
  EXPECT_EQ(probe_count(0.5, 1), 1) << "one head per layer: nothing smaller to probe";
}
