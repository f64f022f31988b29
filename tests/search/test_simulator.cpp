// The search simulator at Qwen3 scale (simulator.h) and its compare over seeded instances
// (simulated_compare.h): the planted structure behaves as documented (OR paths, AND chains,
// local costs), instances are reproducible, calibration and test draw different samples, and
// the compare's statistics are the per-instance ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "search/experiments/simulated_compare.h"
#include "search/objectives/simulator.h"
#include "util/error.h"
#include "util/parallel.h"

using namespace bosch::search;

namespace {

std::shared_ptr<const SimulatedModel> model(const std::string& shape, uint64_t seed) {
  return std::make_shared<const SimulatedModel>(SimulatedModel::draw(simulator_shape(shape), seed));
}

}  // namespace

TEST(Simulator, ShapesAndSpecs) {
  EXPECT_EQ(simulator_shape("qwen3-8b").n_layers, 36);
  EXPECT_EQ(simulator_shape("qwen3-8b").n_heads, 8);
  EXPECT_EQ(simulator_shape("qwen3-30b-a3b").n_layers * simulator_shape("qwen3-30b-a3b").n_heads, 192);
  EXPECT_TRUE(is_simulator_spec("synthetic:qwen3-14b"));
  EXPECT_FALSE(is_simulator_spec("synthetic:8x4:1"));  // the small planted objective
  EXPECT_FALSE(is_simulator_spec("niah"));
  const SimulatorSpec s = parse_simulator_spec("synthetic:qwen3-1.7b:77");
  EXPECT_EQ(s.params.n_layers, 28);
  EXPECT_EQ(s.seed, 77u);
  EXPECT_EQ(parse_simulator_spec("synthetic:qwen3-1.7b").seed, 1u);
  try {
    parse_simulator_spec("synthetic:qwen3-8b:-3");
    FAIL() << "negative seed accepted";
  } catch (const bosch::Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed '-3'"), std::string::npos) << e.what();
  }
  try {
    simulator_shape("llama-7b");
    FAIL();
  } catch (const bosch::Error& e) {
    EXPECT_NE(std::string(e.what()).find("qwen3-30b-a3b"), std::string::npos) << e.what();
  }
}

TEST(Simulator, InstancesAreReproducibleAndSplitsIndependent) {
  auto a = model("qwen3-8b", 5), b = model("qwen3-8b", 5), c = model("qwen3-8b", 6);
  HeadBits z(288, 0);
  for (int i = 0; i < 288; i += 3) z[i] = 1;
  EXPECT_EQ(a->success(z), b->success(z));
  EXPECT_NE(a->success(z), c->success(z));
  SimulatedObjective cal(a, SimulatedSplit::calibration), cal2(b, SimulatedSplit::calibration),
      test(a, SimulatedSplit::test);
  const MaskScore r1 = cal.evaluate(z), r2 = cal2.evaluate(z), rt = test.evaluate(z);
  EXPECT_EQ(r1.per_sample, r2.per_sample);
  EXPECT_EQ(r1.per_sample.size(), 64u);
  EXPECT_EQ(rt.per_sample.size(), 512u);
  EXPECT_NE(r1.value, rt.value);  // independent samples of the same success probabilities
  EXPECT_NE(cal.describe(), test.describe());
  double mean = 0;
  for (double v : r1.per_sample) mean += v / 64;
  EXPECT_NEAR(mean, r1.value, 1e-12);
}

TEST(Simulator, RetrievalIsAnOrOfAndChains) {
  auto m = model("qwen3-1.7b", 3);
  const int N = 28 * 8;
  const HeadBits full(N, 0);
  const auto p_full = m->success(full);
  for (double p : p_full) EXPECT_GT(p, 0.85);
  for (double p : m->success(HeadBits(N, 1))) EXPECT_LT(p, 0.02);
  // Retrieval heads only: local costs aside, converting every head of every path leaves only
  // the floor; converting one path leaves the others working.
  for (int f = 0; f < 4; ++f) {
    const auto& paths = m->paths[f];
    ASSERT_GE(paths.size(), 2u);
    for (const auto& path : paths) {
      ASSERT_FALSE(path.heads.empty());
      std::set<int> layers;
      for (int h : path.heads) layers.insert(h / 8);
      EXPECT_EQ(layers.size(), path.heads.size());  // a chain crosses layers
      for (int h : path.heads) EXPECT_GE(h / 8, static_cast<int>(28 * 0.3));  // middle and upper layers
    }
    HeadBits one_head(N, 0);
    one_head[paths[0].heads.back()] = 1;  // breaks the primary chain (AND)
    HeadBits all_paths(N, 0);
    for (const auto& path : paths) all_paths[path.heads[0]] = 1;  // breaks every path
    const double cost_one = p_full[f] - m->success(one_head)[f];
    const double cost_all = p_full[f] - m->success(all_paths)[f];
    EXPECT_GT(cost_all, 0.5) << "family " << f;
    EXPECT_LT(cost_one, cost_all) << "family " << f;  // a backup takes over (OR)
  }
}

TEST(SimulatedCompare, StatisticsAreThePerInstanceOnesAndThreadCountDoesNotMatter) {
  setenv("BOSCH_QUIET", "1", 1);
  SimulatedCompareOptions o;
  o.spec = parse_simulator_spec("synthetic:qwen3-30b-a3b:11");
  o.instances = 3;
  o.compare.ratios = {0.5, 0.875};
  o.compare.methods = {"bosch-plus", "ablation", "rand"};
  o.compare.swa = {64, 4};
  o.compare.search.budget_probe = 8, o.compare.search.budget_group = 16;
  bosch::set_num_threads(1);
  const SimulatedCompareResult one = run_simulated_compare(o);
  bosch::set_num_threads(2);
  const SimulatedCompareResult two = run_simulated_compare(o);
  ASSERT_EQ(one.cells.size(), 6u);
  for (size_t i = 0; i < one.cells.size(); ++i) {
    const SimulatedCell& c = one.cells[i];
    EXPECT_EQ(c.per_instance, two.cells[i].per_instance) << c.method;
    ASSERT_EQ(c.per_instance.size(), 3u);
    double mean = 0;
    for (double v : c.per_instance) mean += v / 3;
    EXPECT_NEAR(c.test, mean, 1e-12);
    EXPECT_LE(c.lo, c.test + 1e-12);
    EXPECT_GE(c.hi, c.test - 1e-12);
    EXPECT_EQ(c.vs_baseline.has_value(), c.method == "bosch-plus");
    if (c.vs_baseline) {
      EXPECT_EQ(c.wins + c.ties + c.losses, 3);
      EXPECT_NE(c.vs_baseline->baseline, "bosch-plus");
    }
  }
  // bosch-plus starts from the ablation ranking, so on calibration it never ends below it.
  for (double r : o.compare.ratios)
    EXPECT_GE(one.find("bosch-plus", r)->calib + 1e-9, one.find("ablation", r)->calib) << r;
  const auto j = one.to_json();
  EXPECT_EQ(j["results"].size(), 6u);
  EXPECT_EQ(j["simulator"]["shape"], "qwen3-30b-a3b");
  EXPECT_NE(simulated_markdown(one).find("won / tied / lost"), std::string::npos);
}

TEST(SimulatedCompare, RefusesMethodsThatReadWeights) {
  SimulatedCompareOptions o;
  o.spec = parse_simulator_spec("synthetic:qwen3-8b");
  o.instances = 1;
  o.compare.ratios = {0.5};
  o.compare.methods = {"locality"};
  try {
    run_simulated_compare(o);
    FAIL();
  } catch (const bosch::Error& e) {
    EXPECT_NE(std::string(e.what()).find("locality"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(needs_model_weights("razor"));
  EXPECT_FALSE(needs_model_weights("fisher"));  // alias of gate
  EXPECT_FALSE(needs_model_weights("bosch-multi"));
}

TEST(Simulator, SamplesOfAFamilyLeanOnTheirOwnHeads) {
  auto m = model("qwen3-8b", 2);
  SimulatedObjective cal(m, SimulatedSplit::calibration);
  // per_sample = exact (0 or 1) + 0.01 log p_s, and 0.01 log p_s > -0.14: the log part is what
  // is left after removing the 0/1.
  auto log_part = [](const MaskScore& x, int s) { return x.per_sample[s] - (x.per_sample[s] > 0.5 ? 1.0 : 0.0); };
  HeadBits z(288, 0);
  for (int i = 0; i < 288; i += 2) z[i] = 1;
  const MaskScore half = cal.evaluate(z), full = cal.evaluate(HeadBits(288, 0));
  // Samples 0 and 4 are both of family 0: with every head full they agree; with half the heads
  // SWA their own head factors make them differ.
  EXPECT_NEAR(log_part(full, 0), log_part(full, 4), 1e-12);
  EXPECT_GT(std::abs(log_part(half, 0) - log_part(half, 4)), 1e-6);
}

// Issue #39's control: ls gets, per instance and ratio, exactly the fresh evaluations bosch spent
// (stage 1 included), whatever order the methods are listed in.
TEST(SimulatedCompare, LsGetsTheBudgetBoschSpent) {
  setenv("BOSCH_QUIET", "1", 1);
  SimulatedCompareOptions o;
  o.spec = parse_simulator_spec("synthetic:qwen3-30b-a3b:5");
  o.instances = 2;
  o.compare.ratios = {0.75};
  o.compare.methods = {"ls", "bosch", "gate"};
  o.compare.swa = {64, 4};
  const SimulatedCompareResult r = run_simulated_compare(o);
  const SimulatedCell* ls = r.find("ls", 0.75);
  const SimulatedCell* paper = r.find("bosch", 0.75);
  ASSERT_TRUE(ls && paper);
  EXPECT_GT(paper->evaluations, 192) << "stage 1 included";
  EXPECT_DOUBLE_EQ(ls->evaluations, paper->evaluations);
  ASSERT_TRUE(paper->vs_ls.has_value());
  EXPECT_NEAR(paper->vs_ls->diff, paper->test - ls->test, 1e-12);
  // ls never ends below the best static ranking it started from, on calibration.
  EXPECT_GE(ls->calib + 1e-9, r.find("gate", 0.75)->calib);
}
