#include "search/objectives/distributed_objective.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch::search {

std::vector<size_t> shard_bounds(const std::vector<TaskSample>& samples, int n_ranks) {
  check(n_ranks >= 1, "shard_bounds: {} ranks", n_ranks);
  std::vector<long long> prefix{0};  // tokens before sample i
  for (const auto& s : samples) prefix.push_back(prefix.back() + static_cast<long long>(s.n_tokens()));
  const long long total = prefix.back();
  std::vector<size_t> b{0};
  for (int r = 1; r < n_ranks; ++r) {
    size_t i = b.back();  // first cut at or past r/n_ranks of the tokens, or the one before if closer
    while (i < samples.size() && prefix[i] * n_ranks < total * r) ++i;
    if (i > b.back() && (total * r - prefix[i - 1] * n_ranks) < (prefix[i] * n_ranks - total * r)) --i;
    b.push_back(i);
  }
  b.push_back(samples.size());
  return b;
}

DistributedObjective::DistributedObjective(const Model& m, const std::vector<TaskSample>& samples,
                                           ModelObjectiveOptions opt)
    : opt_(std::move(opt)),
      L_(m.config().n_layers),
      H_(m.config().n_kv_heads),
      rank_(mpi::rank()),
      n_ranks_(mpi::size()),
      n_samples_(samples.size()),
      bounds_(shard_bounds(samples, n_ranks_)),
      description_(describe_model_objective(m, samples, opt_)) {
  check(!samples.empty(), "search objective: no calibration samples");
  const auto b = samples.begin();
  if (local_samples() > 0)
    shard_ = std::make_unique<ModelObjective>(
        m, std::vector<TaskSample>(b + static_cast<long>(bounds_[rank_]), b + static_cast<long>(bounds_[rank_ + 1])),
        opt_);
  if (const char* e = std::getenv("BOSCH_MPI_TEST_KILL"); e && *e) {
    int r = -1, end = 0;
    long long at = -1;
    const bool parsed = std::sscanf(e, "%d:%lld%n", &r, &at, &end) == 2;
    kill_signal_ = parsed && std::strcmp(e + end, ":stop") == 0 ? SIGSTOP : SIGKILL;
    check(parsed && (e[end] == '\0' || kill_signal_ == SIGSTOP),
          "BOSCH_MPI_TEST_KILL={}: expected RANK:EVALUATION[:stop]", e);
    if (r == rank_) kill_at_ = at;
  }
}

long long DistributedObjective::bytes_per_evaluation() const {
  const long long root_samples = static_cast<long long>(bounds_[1] - bounds_[0]);
  const long long to_root = 8LL * (4LL * (static_cast<long long>(n_samples_) - root_samples) + 3LL * (n_ranks_ - 1));
  return to_root + 8LL * (n_ranks_ - 1) * (6LL + static_cast<long long>(n_samples_));
}

std::string DistributedObjective::summary() const {
  size_t lo = n_samples_, hi = 0;
  for (int r = 0; r < n_ranks_; ++r) {
    lo = std::min(lo, bounds_[r + 1] - bounds_[r]);
    hi = std::max(hi, bounds_[r + 1] - bounds_[r]);
  }
  return fmt::format("{} MPI ranks, {}-{} of {} samples each, {} payload bytes sent per evaluation", n_ranks_, lo,
                     hi, n_samples_, bytes_per_evaluation());
}

MaskScore DistributedObjective::evaluate(const HeadBits& swa) {
  check(swa.size() == static_cast<size_t>(L_) * H_, "search objective: mask of {} bits, expected {}",
        swa.size(), static_cast<size_t>(L_) * H_);
  if (kill_at_ == stats_.evaluations) std::raise(kill_signal_);  // a rank dying or hanging (tests)
  // This rank's part: its cost counters, then (exact, logprob, kl, value) per sample of its shard.
  std::vector<double> mine(3);
  if (shard_) {
    const ObjectiveStats before = shard_->stats();
    for (const SampleTerms& s : shard_->evaluate_samples(swa)) mine.insert(mine.end(), {s.exact, s.logprob, s.kl, s.value});
    const ObjectiveStats d = shard_->stats().since(before);
    mine[0] = static_cast<double>(d.layer_forwards);
    mine[1] = d.layer_work;
    mine[2] = static_cast<double>(d.layer_forwards_naive);
  }
  std::vector<int> counts(n_ranks_);
  for (int r = 0; r < n_ranks_; ++r) counts[r] = 3 + 4 * static_cast<int>(bounds_[r + 1] - bounds_[r]);
  const std::vector<double> all = mpi::gather_to_root(mine, counts);

  // Rank 0 combines in global sample order; every rank takes its numbers (same bits everywhere).
  const int n_out = 6 + static_cast<int>(n_samples_);
  std::vector<double> out;
  if (rank_ == 0) {
    std::vector<SampleTerms> results;
    results.reserve(n_samples_);
    double cost[3] = {0, 0, 0};
    size_t at = 0;
    for (int r = 0; r < n_ranks_; ++r) {
      for (int k = 0; k < 3; ++k) cost[k] += all[at + k];
      for (int i = 3; i < counts[r]; i += 4)
        results.push_back({all[at + i], all[at + i + 1], all[at + i + 2], all[at + i + 3]});
      at += static_cast<size_t>(counts[r]);
    }
    const MaskScore raw = combine_samples(results, opt_);
    out = {raw.value, raw.exact_rate, raw.mean_logprob, cost[0], cost[1], cost[2]};
    out.insert(out.end(), raw.per_sample.begin(), raw.per_sample.end());
  }
  mpi::broadcast(out, n_out);
  MaskScore r;
  r.value = out[0], r.exact_rate = out[1], r.mean_logprob = out[2];
  r.per_sample.assign(out.begin() + 6, out.end());
  stats_.layer_forwards += static_cast<int64_t>(out[3]);
  stats_.layer_work += out[4];
  stats_.layer_forwards_naive += static_cast<int64_t>(out[5]);
  ++stats_.evaluations;
  return r;
}

std::unique_ptr<Objective> make_model_objective(const Model& m, const std::vector<TaskSample>& samples,
                                                const ModelObjectiveOptions& opt) {
  if (mpi::distributed()) return std::make_unique<DistributedObjective>(m, samples, opt);
  return std::make_unique<ModelObjective>(m, samples, opt);
}

}  // namespace bosch::search
