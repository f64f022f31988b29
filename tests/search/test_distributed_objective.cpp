// The pieces of the MPI split that need no MPI (tests/mpi/check_mpi.py runs mpirun): shard
// boundaries, and per-sample results of sample shards, combined in sample order, giving the very
// bits of one objective over all samples (what makes every rank count give the same search).
#include <gtest/gtest.h>

#include <cstring>

#include "model/model.h"
#include "random_samples.h"
#include "search/objectives/distributed_objective.h"
#include "search/core/rng.h"
#include "util/error.h"
#include "util/mpi_comm.h"

using namespace bosch;
using namespace bosch::search;

namespace {

const std::string kModel = std::string(BOSCH_SOURCE_DIR) + "/models/default";

// Random-token samples of various lengths with two answers each (no tokenizer needed).
std::vector<TaskSample> random_samples(int n, uint64_t seed, int vocab) {
  return bosch::search::testing::two_answer_samples(n, seed, vocab, 0, -1, [](int i) { return 30 + 17 * (i % 4); });
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const MaskScore& a, const MaskScore& b) {
  EXPECT_TRUE(same_bits(a.value, b.value)) << a.value << " vs " << b.value;
  EXPECT_TRUE(same_bits(a.exact_rate, b.exact_rate));
  EXPECT_TRUE(same_bits(a.mean_logprob, b.mean_logprob));
  ASSERT_EQ(a.per_sample.size(), b.per_sample.size());
  for (size_t i = 0; i < a.per_sample.size(); ++i) EXPECT_TRUE(same_bits(a.per_sample[i], b.per_sample[i])) << i;
}

std::vector<TaskSample> slice(const std::vector<TaskSample>& s, size_t b, size_t e) {
  return {s.begin() + static_cast<long>(b), s.begin() + static_cast<long>(e)};
}

}  // namespace

TEST(ShardBounds, ContiguousCoveringAndBalancedByTokens) {
  std::vector<TaskSample> s(10);
  for (size_t i = 0; i < s.size(); ++i) s[i].prompt_ids.assign(i < 5 ? 10 : 30, 1);  // 50 + 150 tokens
  EXPECT_EQ(shard_bounds(s, 1), (std::vector<size_t>{0, 10}));
  EXPECT_EQ(shard_bounds(s, 2), (std::vector<size_t>{0, 7, 10}));  // 110 | 90 tokens: the closest cut
  const auto b4 = shard_bounds(s, 4);
  ASSERT_EQ(b4.size(), 5u);
  EXPECT_EQ(b4.front(), 0u);
  EXPECT_EQ(b4.back(), 10u);
  for (size_t r = 0; r + 1 < b4.size(); ++r) EXPECT_LE(b4[r], b4[r + 1]);
  // More ranks than samples: some shards are empty, every sample is still held exactly once.
  const auto b = shard_bounds(std::vector<TaskSample>(s.begin(), s.begin() + 2), 5);
  EXPECT_EQ(b.size(), 6u);
  EXPECT_EQ(b.back(), 2u);
  for (size_t r = 0; r + 1 < b.size(); ++r) EXPECT_LE(b[r], b[r + 1]);
  EXPECT_THROW(shard_bounds(s, 0), Error);
}

TEST(DistributedObjective, ShardsCombinedInOrderGiveTheBitsOfOneObjective) {
  auto m = Model::load(kModel);
  const int L = m->config().n_layers, H = m->config().n_kv_heads;
  const auto samples = random_samples(7, 3, m->config().vocab_size);
  ModelObjectiveOptions o;
  o.swa = {8, 2}, o.logprob_weight = 0.37, o.kl_weight = 0.21;
  ModelObjective whole(*m, samples, o);
  for (int ranks : {2, 3, 7}) {
    const auto b = shard_bounds(samples, ranks);
    std::vector<std::unique_ptr<ModelObjective>> shards;
    for (int r = 0; r < ranks; ++r)
      if (b[r + 1] > b[r]) shards.push_back(std::make_unique<ModelObjective>(*m, slice(samples, b[r], b[r + 1]), o));
    Rng rng(ranks);
    for (int t = 0; t < 6; ++t) {  // masks sharing prefixes, so the shards' caches are used
      HeadBits bits(static_cast<size_t>(L) * H);
      for (auto& x : bits) x = rng.below(2);
      if (t % 2) bits[bits.size() - 1] ^= 1;
      std::vector<SampleTerms> all;
      for (auto& s : shards) {
        const auto part = s->evaluate_samples(bits);
        all.insert(all.end(), part.begin(), part.end());
      }
      expect_same(combine_samples(all, o), whole.evaluate(bits));
    }
  }
}

TEST(DistributedObjective, OneProcessIsTheModelObjective) {
  ASSERT_EQ(mpi::size(), 1);  // the unit tests run without a launcher
  auto m = Model::load(kModel);
  const int L = m->config().n_layers, H = m->config().n_kv_heads;
  const auto samples = random_samples(4, 5, m->config().vocab_size);
  ModelObjectiveOptions o;
  o.swa = {8, 2}, o.description = "random";
  ModelObjective whole(*m, samples, o);
  DistributedObjective dist(*m, samples, o);
  EXPECT_EQ(dist.describe(), whole.describe());
  EXPECT_EQ(dist.local_samples(), samples.size());
  EXPECT_EQ(dist.bytes_per_evaluation(), 0);
  for (int t = 0; t < 3; ++t) {
    HeadBits bits(static_cast<size_t>(L) * H, 0);
    for (int i = 0; i <= t; ++i) bits[static_cast<size_t>(i) * 5 % bits.size()] = 1;
    expect_same(dist.evaluate(bits), whole.evaluate(bits));
  }
  EXPECT_EQ(dist.stats().evaluations, 3);
  EXPECT_EQ(dist.stats().layer_forwards, whole.stats().layer_forwards);
  EXPECT_THROW(dist.evaluate(HeadBits(3, 0)), Error);
  EXPECT_FALSE(make_model_objective(*m, samples, o) == nullptr);
}
