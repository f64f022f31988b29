// The entanglement table on planted objectives, where every interaction is known: with
// S(z) = -sum unary - sum pair terms, interaction(a, b) = pair_ab / (S(full) - S(all SWA)).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "search/experiments/pair_table.h"
#include "search/objectives/synthetic_objective.h"
#include "util/error.h"

namespace bosch::search {
namespace {

// 2 layers x 4 heads. Heads 0 and 1 are backups (a pair term of +0.4: together they cost far more
// than apart), 2 and 3 a chain (each alone costs 0.3, both together 0.3 too), 4 and 5 overlap.
SyntheticObjective planted() {
  std::vector<double> unary = {0.05, 0.05, 0.3, 0.3, 0.2, 0.1, 0.01, 0.0};
  std::vector<PairTerm> pairs = {{0, 1, 0.4}, {2, 3, -0.3}, {4, 5, -0.08}};
  return SyntheticObjective(2, 4, unary, pairs);
}

TEST(PairTable, RecoversEveryPlantedInteractionExactly) {
  SyntheticObjective obj = planted();
  PairTableOptions opt;
  opt.top = 6;
  const PairTable t = pair_table(obj, opt);
  const double z = 0.05 + 0.05 + 0.3 + 0.3 + 0.2 + 0.1 + 0.01 + 0.4 - 0.3 - 0.08;  // -S(all SWA)
  // The six heads with the largest single drop, largest first (ties: lower index first).
  EXPECT_EQ(t.heads, (std::vector<int>{2, 3, 4, 5, 0, 1}));
  ASSERT_EQ(t.single_drop.size(), 6u);
  EXPECT_NEAR(t.single_drop[0], 0.3 / z, 1e-12);
  std::map<std::pair<int, int>, double> planted_terms = {{{0, 1}, 0.4}, {{2, 3}, -0.3}, {{4, 5}, -0.08}};
  ASSERT_EQ(t.pairs.size(), 15u);
  for (const auto& p : t.pairs) {
    const auto key = std::make_pair(std::min(p.a, p.b), std::max(p.a, p.b));
    const double want = planted_terms.count(key) ? planted_terms[key] / z : 0.0;
    EXPECT_NEAR(p.interaction, want, 1e-12) << t.head_name(p.a) << " + " << t.head_name(p.b);
    EXPECT_NEAR(p.drop_ab, p.drop_a + p.drop_b + want, 1e-12);
  }
  // 2 references + 8 singles + 15 pairs, each evaluated once.
  EXPECT_EQ(t.evaluations, 25);
  EXPECT_EQ(obj.calls().size(), 25u);
}

TEST(PairTable, ClassifiesBackupsChainsAndOverlaps) {
  SyntheticObjective obj = planted();
  PairTableOptions opt;
  opt.top = 6;
  const PairTable t = pair_table(obj, opt);
  auto kind = [&](int a, int b) {
    for (const auto& p : t.pairs)
      if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return p.kind;
    return std::string("missing");
  };
  EXPECT_EQ(kind(0, 1), "backups");
  EXPECT_EQ(kind(2, 3), "chain");
  EXPECT_EQ(kind(4, 5), "overlap");
  EXPECT_EQ(kind(2, 4), "additive");
  const std::string md = t.markdown(3);
  EXPECT_NE(md.find("1 backups, 1 chain, 1 overlap, 12 additive"), std::string::npos) << md;
  // The strongest interaction first.
  EXPECT_LT(md.find("| L0.H0 | L0.H1 |"), md.find("| L0.H2 | L0.H3 |")) << md;
}

TEST(PairTable, NamedHeadsAndTheirErrors) {
  SyntheticObjective obj = planted();
  PairTableOptions opt;
  opt.heads = parse_head_list("0.1,0.0,1.3", 2, 4, "--heads");
  EXPECT_EQ(opt.heads, (std::vector<int>{1, 0, 7}));
  const PairTable t = pair_table(obj, opt);
  EXPECT_EQ(t.pairs.size(), 3u);
  EXPECT_EQ(t.evaluations, 2 + 3 + 3);  // only the named heads' singles
  const auto hm = t.heatmap();
  EXPECT_EQ(hm.values.size(), 9u);
  EXPECT_THROW(parse_head_list("0.1,2.0", 2, 4, "--heads"), Error);   // layer 2 of 2
  EXPECT_THROW(parse_head_list("0.1,0.1", 2, 4, "--heads"), Error);   // twice
  EXPECT_THROW(parse_head_list("01", 2, 4, "--heads"), Error);        // no dot
  EXPECT_THROW(parse_head_list("0.x", 2, 4, "--heads"), Error);
  PairTableOptions one;
  one.heads = {3};
  EXPECT_THROW(pair_table(obj, one), Error);
}

}  // namespace
}  // namespace bosch::search
