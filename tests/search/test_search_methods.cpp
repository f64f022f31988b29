// The search methods beside the paper's three stages (search_methods.cpp), on planted
// synthetic objectives whose right answer is known.
#include <gtest/gtest.h>

#include <cstdlib>

#include "planted.h"
#include "search/stages/stage_steps.h"
#include "search/experiments/compare.h"
#include "util/error.h"

using namespace bosch::search;
using namespace bosch::search::testing;

namespace {

EvaluatorOptions quiet(double ratio) {
  setenv("BOSCH_QUIET", "1", 1);
  EvaluatorOptions o;
  o.target_ratio = ratio;
  return o;
}

// An AND circuit: heads a and b are useful only together (converting either costs C, both C
// too), plus cheap heads. From a state with a and b SWA, restoring one alone gains nothing.
SyntheticObjective and_circuit(int L, int H, int a, int b, double C) {
  std::vector<double> unary(L * H);
  for (int i = 0; i < L * H; ++i) unary[i] = 0.01 * (1 + i % 5);
  unary[a] = unary[b] = C;
  return SyntheticObjective(L, H, unary, {{a, b, -C}});
}

}  // namespace

TEST(SearchMethods, RestorationRecoversACircuitThatNoSingleSwapCanFix) {
  const int L = 4, H = 4, a = 1, b = 6;
  auto obj = and_circuit(L, H, a, b, 1.0);
  Evaluator ev(obj, quiet(0.5));
  ev.init_references();
  HeadBits start(L * H, 0);
  start[a] = start[b] = 1;  // the circuit broken
  for (int i : {8, 9, 10, 11, 12, 13}) start[i] = 1;
  SearchOptions opt;
  opt.budget_polish = 200;
  HeadBits bits = start;
  const std::vector<double> prior = [&] {  // single-head costs in the full model
    std::vector<double> p(L * H);
    for (int i = 0; i < L * H; ++i) p[i] = obj.unary(i);
    return p;
  }();
  PolishResult r = run_polish_stage(ev, opt, bits, &prior);
  EXPECT_EQ(bits[a], 0);
  EXPECT_EQ(bits[b], 0);
  EXPECT_GE(r.restorations, 1);
  EXPECT_EQ(count_ones(bits), 8);
  // Every single swap from the start is no better: only the group move could do it.
  const double start_v = obj.value(start);
  for (int t : {a, b})
    for (int f = 0; f < L * H; ++f)
      if (!start[f]) {
        HeadBits c = start;
        c[t] = 0, c[f] = 1;
        EXPECT_LE(obj.value(c), start_v + 1e-12) << t << " -> " << f;
      }
}

TEST(SearchMethods, PlusNeverEndsWorseThanAStartItWasGiven) {
  // Decoys fool the stages' probes; the true costs given as a ranking are the optimum here.
  const int H = 6;
  std::vector<PlantedLayer> layers = {{{0, 2, 3}, {1}, 1.0}, {{1, 4, 5}, {0, 2}, 2.0}, {{0, 1, 5}, {3}, 0.5}};
  auto obj = make_planted(H, layers);
  std::vector<double> truth(3 * H);
  const HeadBits best = planted_bits(H, layers);
  for (int i = 0; i < 3 * H; ++i) truth[i] = best[i] ? 0.0 : 1.0 + i;  // planted heads lowest
  for (uint64_t seed : {1, 2, 3}) {
    Evaluator ev(obj, quiet(0.5));
    SearchOptions opt;
    opt.ratio = 0.5;
    opt.seed = seed;
    opt.budget_probe = 2, opt.budget_group = 2, opt.budget_polish = 0;  // starved stages
    opt.starts = {{"truth", truth}};
    SearchResult r = run_bosch_search(ev, opt);
    EXPECT_EQ(r.bits, best) << "seed " << seed;
    ASSERT_NE(r.milestone("bosch"), nullptr);
    ASSERT_NE(r.milestone("bosch-single"), nullptr);
    ASSERT_NE(r.milestone("bosch-plus"), nullptr);
    EXPECT_LE(r.milestone("bosch-single")->evaluations, r.milestone("bosch")->evaluations);
    EXPECT_LE(r.milestone("bosch")->evaluations, r.milestone("bosch-plus")->evaluations);
    EXPECT_GE(r.milestone("bosch-plus")->score, r.milestone("bosch")->score);
    for (const auto& s : r.starts) EXPECT_LE(r.loss, s.loss + 1e-12) << s.name;
  }
}

TEST(SearchMethods, LayerSearchFindsTheCheapestLayersExhaustively) {
  const int L = 6, H = 2;
  std::vector<double> unary(L * H);
  const std::vector<double> layer_cost = {0.5, 0.1, 0.9, 0.05, 0.3, 0.7};
  for (int i = 0; i < L * H; ++i) unary[i] = layer_cost[i / H];
  SyntheticObjective obj(L, H, unary);
  Evaluator ev(obj, quiet(0.5));
  SearchOptions opt;
  opt.method = "bosch-layer";
  opt.ratio = 0.5;  // K = 6: three whole layers, the cheapest are 3, 1, 4
  SearchResult r = run_bosch_search(ev, opt);
  HeadBits want(L * H, 0);
  for (int l : {1, 3, 4}) want[l * H] = want[l * H + 1] = 1;
  EXPECT_EQ(r.bits, want);
  EXPECT_EQ(r.evaluations, 2 + 20);  // the references + C(6, 3)
}

TEST(SearchMethods, MultiAndSingleReturnExactlyK) {
  auto obj = make_planted(4, {{{0, 1}, {2}, 1.0}, {{2, 3}, {}, 1.0}, {{1, 3}, {0}, 1.0}});
  for (const std::string m : {"bosch-multi", "bosch-single", "bosch"}) {
    Evaluator ev(obj, quiet(0.5));
    SearchOptions opt;
    opt.method = m;
    opt.ratio = 0.5;
    opt.budget_multi = 40;
    SearchResult r = run_bosch_search(ev, opt);
    EXPECT_EQ(count_ones(r.bits), 6) << m;
    EXPECT_EQ(r.method, m);
    if (m == "bosch-multi") {
      EXPECT_LE(r.evaluations, 2 + 40 + 1);
    }
  }
  Evaluator ev(obj, quiet(0.5));
  SearchOptions bad;
  bad.method = "bosch-nope";
  EXPECT_THROW(run_bosch_search(ev, bad), bosch::Error);
}

// Regression (found by the simulator at the Qwen3-30B-A3B shape): at a ratio where some layers
// are entirely SWA, the LNS's random repair had no full head to move a destroyed head to and
// divided by zero.
TEST(SearchMethods, MultiHandlesLayersThatAreEntirelySwa) {
  auto obj = make_synthetic_objective("synthetic:12x4:1");
  Evaluator ev(*obj, quiet(0.875));
  SearchOptions opt;
  opt.method = "bosch-multi";
  opt.ratio = 0.875;
  opt.budget_multi = 200;
  opt.exact_repair = 4;  // repairs beyond every placement: the marginal shortlist runs
  SearchResult r = run_bosch_search(ev, opt);
  EXPECT_EQ(count_ones(r.bits), 42);  // round(0.875 * 48)
}

TEST(SearchMethods, PairedBootstrapSeesOnlyAClearDifference) {
  std::vector<double> a(100), b(100);
  for (int i = 0; i < 100; ++i) a[i] = (i % 10 < 8) ? 1 : 0, b[i] = (i % 10 < 3) ? 1 : 0;
  PairedInterval clear = paired_bootstrap(a, b, 1.0, 2000, 1);
  EXPECT_NEAR(clear.diff, 0.5, 1e-12);
  EXPECT_GT(clear.lo, 0.3);
  EXPECT_LT(clear.hi, 0.7);
  // One flipped answer out of 100 is no evidence either way.
  std::vector<double> c = b;
  c[5] = 1;
  PairedInterval noise = paired_bootstrap(c, b, 1.0, 2000, 1);
  EXPECT_LE(noise.lo, 0.0);
  EXPECT_GE(noise.hi, 0.0);
}
