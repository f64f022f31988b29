// Cardinality and placement of the mask builders behind every baseline (baseline_layers.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/baselines/baseline_layers.h"
#include "search/stages/bosch_search.h"
#include "util/error.h"

using namespace bosch;
using namespace bosch::search;

namespace {

int ones(const HeadBits& b) { return static_cast<int>(std::count(b.begin(), b.end(), 1)); }

// Per layer SWA counts.
std::vector<int> layer_counts(const HeadBits& b, int L, int H) {
  std::vector<int> c(L, 0);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) c[l] += b[l * H + h];
  return c;
}

// A layer-level mask: floor(K/H) whole layers, at most one partial layer whose SWA heads are
// exactly 0..r-1.
void expect_layer_structure(const HeadBits& b, int L, int H, int k, const std::string& what) {
  const auto c = layer_counts(b, L, H);
  int whole = 0, partial = 0;
  for (int l = 0; l < L; ++l) {
    if (c[l] == H) ++whole;
    else if (c[l] > 0) {
      ++partial;
      for (int h = 0; h < H; ++h) EXPECT_EQ(b[l * H + h], h < c[l] ? 1 : 0) << what << " layer " << l;
    }
  }
  EXPECT_EQ(whole, k / H) << what;
  EXPECT_EQ(partial, k % H ? 1 : 0) << what;
}

std::vector<int> swa_layers(const HeadBits& b, int L, int H) {
  std::vector<int> out;
  const auto c = layer_counts(b, L, H);
  for (int l = 0; l < L; ++l)
    if (c[l] == H) out.push_back(l);
  return out;
}

}  // namespace

TEST(BaselineLayers, EveryMethodHitsKExactlyForManyShapesAndRatios) {
  const double ratios[] = {0.0, 0.1, 0.2, 0.25, 1.0 / 3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.875, 0.9, 1.0};
  for (int L = 1; L <= 13; ++L)
    for (int H = 1; H <= 8; ++H)
      for (double rho : ratios) {
        const int k = target_count(rho, L, H);
        ASSERT_EQ(k, static_cast<int>(std::llround(rho * L * H)));
        const std::string what = fmt::format("L={} H={} rho={} K={}", L, H, rho, k);
        const HeadBits masks[] = {random_layers_mask(L, H, k, 3), interleaved_mask(L, H, k), bme_mask(L, H, k)};
        for (const auto& b : masks) {
          ASSERT_EQ(b.size(), static_cast<size_t>(L * H)) << what;
          EXPECT_EQ(ones(b), k) << what;
          expect_layer_structure(b, L, H, k, what);
        }
        EXPECT_EQ(ones(random_heads_mask(L, H, k, 3)), k) << what;
      }
}

TEST(BaselineLayers, InterleavingPlacement) {
  // 8 layers x 4 heads: 0.75 keeps layers 3 and 7 full; 0.5 converts every other layer
  // (0, 2, 4, 6); 0.875 keeps only the last layer full.
  EXPECT_EQ(interleaved_full_layers(8, 2), (std::vector<int>{3, 7}));
  EXPECT_EQ(swa_layers(interleaved_mask(8, 4, 24), 8, 4), (std::vector<int>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(swa_layers(interleaved_mask(8, 4, 16), 8, 4), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(swa_layers(interleaved_mask(8, 4, 28), 8, 4), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  // 5 x 4 at 0.5: K = 10 = 2 whole layers + 2 heads. Full set for f = 3 is {0, 2, 4}; layers 1, 3
  // are SWA and the lowest kept layer (0) gets heads 0 and 1.
  const HeadBits b = interleaved_mask(5, 4, 10);
  EXPECT_EQ(layer_counts(b, 5, 4), (std::vector<int>{2, 4, 0, 4, 0}));
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 1);
  EXPECT_EQ(b[2], 0);
}

TEST(BaselineLayers, BeginMiddleEndPlacement) {
  EXPECT_EQ(bme_keep_order(5), (std::vector<int>{0, 2, 4, 1, 3}));
  EXPECT_EQ(bme_keep_order(8), (std::vector<int>{0, 3, 7, 1, 4, 6, 2, 5}));
  EXPECT_EQ(bme_keep_order(1), (std::vector<int>{0}));
  EXPECT_EQ(bme_keep_order(2), (std::vector<int>{0, 1}));
  for (int L = 1; L <= 40; ++L) {  // always a permutation
    auto o = bme_keep_order(L);
    std::sort(o.begin(), o.end());
    std::vector<int> id(L);
    std::iota(id.begin(), id.end(), 0);
    EXPECT_EQ(o, id) << L;
  }
  // 8 x 4, K = 20: 5 whole layers converted, first/middle/last (0, 3, 7) kept.
  EXPECT_EQ(layer_counts(bme_mask(8, 4, 20), 8, 4), (std::vector<int>{0, 4, 4, 0, 4, 4, 4, 0}));
  // K = 18: 4 whole layers (2, 5, 6, 4 in reverse keep order), then layer 1 (keep[3]) gets 2 heads.
  EXPECT_EQ(layer_counts(bme_mask(8, 4, 18), 8, 4), (std::vector<int>{0, 2, 4, 0, 4, 4, 4, 0}));
}

TEST(BaselineLayers, LayerMethodsAreNestedAcrossRatios) {
  // RAND and BME convert in a fixed order, so a higher ratio's SWA set contains the lower's.
  const int L = 9, H = 4;
  for (int k = 0; k < L * H; ++k) {
    for (auto f : {+[](int k) { return random_layers_mask(9, 4, k, 11); }, +[](int k) { return bme_mask(9, 4, k); }}) {
      const HeadBits a = f(k), b = f(k + 1);
      for (int i = 0; i < L * H; ++i) EXPECT_LE(a[i], b[i]) << "k=" << k << " head " << i;
    }
  }
}

TEST(BaselineLayers, RandomOrdersAreSeededPermutations) {
  EXPECT_EQ(random_layer_order(16, 5), random_layer_order(16, 5));
  EXPECT_NE(random_layer_order(16, 5), random_layer_order(16, 6));
  auto o = random_layer_order(16, 5);
  std::sort(o.begin(), o.end());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(o[i], i);
  EXPECT_EQ(random_heads_mask(6, 4, 9, 1), random_heads_mask(6, 4, 9, 1));
  EXPECT_NE(random_heads_mask(6, 4, 9, 1), random_heads_mask(6, 4, 9, 2));
}

TEST(BaselineLayers, LowestKPicksTheLowestScoresWithDeterministicTies) {
  const std::vector<double> s = {0.5, 0.1, 0.9, 0.1, NAN, -2.0};
  EXPECT_EQ(lowest_k(s, 0), (HeadBits{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(lowest_k(s, 1), (HeadBits{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(lowest_k(s, 2), (HeadBits{0, 1, 0, 0, 0, 1}));  // tie 0.1: index 1 before 3
  EXPECT_EQ(lowest_k(s, 3), (HeadBits{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(lowest_k(s, 5), (HeadBits{1, 1, 1, 1, 0, 1}));  // NaN last
  EXPECT_EQ(lowest_k(s, 6), (HeadBits{1, 1, 1, 1, 1, 1}));
  EXPECT_THROW(lowest_k(s, 7), Error);
  EXPECT_THROW(lowest_k(s, -1), Error);
  // All ties: the first k flat indices.
  EXPECT_EQ(lowest_k(std::vector<double>(5, 1.0), 2), (HeadBits{1, 1, 0, 0, 0}));
}

TEST(BaselineLayers, BadInputsAreErrors) {
  EXPECT_THROW(convert_layers_in_order({0, 0}, 2, 2, 1), Error);
  EXPECT_THROW(convert_layers_in_order({0, 1}, 2, 2, 5), Error);
  EXPECT_THROW(convert_layers_in_order({0}, 2, 2, 1), Error);
  EXPECT_THROW(interleaved_mask(2, 2, -1), Error);
}
