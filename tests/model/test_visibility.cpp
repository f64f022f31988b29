// The visibility rule (kernels/visibility.h) against a second formulation: the keys a query
// sees as a set, the sinks' prefix and the window's suffix.
#include "kernels/visibility.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "model/attention_plan.h"

using bosch::kernels::sees_key;

static_assert(sees_key(5, 5, 1, 0) && !sees_key(5, 4, 1, 0), "W = 1 sees only the query itself");
static_assert(sees_key(9, 0, 2, 1) && !sees_key(9, 1, 2, 1), "sink 0 is kept, key 1 is not");
static_assert(!sees_key(3, 4, 0, 0) && sees_key(3, 0, 0, 0), "full attention is causal");

TEST(Visibility, MatchesTheSinksPlusWindowSet) {
  for (int w = 0; w <= 6; ++w)
    for (int s = 0; s <= 3; ++s)
      for (int i = 0; i < 12; ++i) {
        std::set<int> seen;
        if (w == 0) {
          for (int j = 0; j <= i; ++j) seen.insert(j);
        } else {
          for (int j = 0; j < std::min(s, i + 1); ++j) seen.insert(j);
          for (int j = std::max(0, i - w + 1); j <= i; ++j) seen.insert(j);
        }
        for (int j = 0; j < 14; ++j)
          EXPECT_EQ(sees_key(i, j, w, s), seen.count(j) == 1) << "i " << i << " j " << j << " W " << w << " S " << s;
      }
}

TEST(Visibility, AttentionPlanUsesTheRule) {
  bosch::AttentionPlan p(1, 2);
  p.set_swa(0, 1, 3, 1);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(p.visible(0, 0, i, j), j <= i);
      EXPECT_EQ(p.visible(0, 1, i, j), sees_key(i, j, 3, 1));
    }
}
