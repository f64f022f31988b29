#include "search/model_objective.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/attention_plan.h"
#include "tasks/scoring.h"
#include "util/error.h"

namespace bosch::search {

ModelObjective::ModelObjective(const Model& m, std::vector<TaskSample> samples,
                               ModelObjectiveOptions opt)
    : m_(m), samples_(std::move(samples)), opt_(std::move(opt)) {
  const ModelConfig& c = m_.config();
  L_ = c.n_layers, H_ = c.n_kv_heads, d_ = c.d_model;
  check(!samples_.empty(), "search objective: no calibration samples");
  check(opt_.window > 0 && opt_.sinks >= 0, "--window {} / --sinks {}: need window > 0, sinks >= 0",
        opt_.window, opt_.sinks);
  base_.assign(static_cast<size_t>(L_) * H_, 0);
  int64_t per_layer = 0;
  for (const auto& s : samples_) {
    check(!s.answers.empty() && s.n_tokens() >= 2,
          "search objective: calibration sample (seed {}) has no answer to score", s.seed);
    const int n = static_cast<int>(s.n_tokens()) - 1;  // the last token is never an input
    n_tokens_.push_back(n);
    per_layer += int64_t(n) * d_ * int64_t(sizeof(float));
  }
  // Checkpoint stride: the smallest k whose ceil(L / k) checkpoints fit the memory limit
  // (layer 0, the embedding output, is always kept).
  stride_ = opt_.use_cache ? 1 : L_;
  while (stride_ < L_ && per_layer * ((L_ + stride_ - 1) / stride_) > opt_.cache_bytes) ++stride_;
  const int n_ckpt = (L_ + stride_ - 1) / stride_;
  states_.resize(samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) {
    const auto& s = samples_[i];
    std::vector<int32_t> seq(s.prompt_ids);
    seq.insert(seq.end(), s.continuation_ids.begin(), s.continuation_ids.end() - 1);
    states_[i].resize(n_ckpt);
    states_[i][0].resize(static_cast<size_t>(n_tokens_[i]) * d_);
    m_.embed(seq.data(), n_tokens_[i], states_[i][0].data());
  }
}

int64_t ModelObjective::cache_bytes() const {
  int64_t b = 0;
  for (const auto& s : states_)
    for (const auto& c : s) b += static_cast<int64_t>(c.capacity() * sizeof(float));
  return b;
}

int ModelObjective::first_difference(const HeadBits& a, const HeadBits& b) const {
  for (int l = 0; l < L_; ++l)
    for (int h = 0; h < H_; ++h)
      if (a[static_cast<size_t>(l) * H_ + h] != b[static_cast<size_t>(l) * H_ + h]) return l;
  return L_;
}

void ModelObjective::set_base(const HeadBits& swa) {
  check(swa.size() == base_.size(), "search objective: mask of {} bits, expected {}", swa.size(),
        base_.size());
  valid_upto_ = std::min(valid_upto_, first_difference(base_, swa));
  base_ = swa;
}

RawScore ModelObjective::evaluate(const HeadBits& swa) {
  check(swa.size() == base_.size(), "search objective: mask of {} bits, expected {}", swa.size(),
        base_.size());
  const AttentionPlan plan = AttentionPlan::from_bits(L_, H_, swa, opt_.window, opt_.sinks);
  const int f = first_difference(base_, swa);
  // Start at the highest valid checkpoint at or below the first changed layer.
  const int start_ckpt = std::min(f, valid_upto_) / stride_;
  const int start = start_ckpt * stride_;
  // Checkpoints in (start, f] get refilled on the way (those layers are base layers).
  const int refill_to = std::min(f, L_ - 1);
  double exact = 0, logprob = 0;
  std::vector<float> h;
  for (size_t i = 0; i < samples_.size(); ++i) {
    const int n = n_tokens_[i];
    h = states_[i][start_ckpt];
    for (int j = start; j < L_; ++j) {
      if (j > start && j <= refill_to && j % stride_ == 0 && j > valid_upto_)
        states_[i][j / stride_] = h;
      m_.forward_layers(j, j + 1, h.data(), n, 0, plan);
      ++stats_.layer_forwards;
    }
    const SampleScore sc = score_sample_from_hidden(m_, h.data(), samples_[i]);
    exact += sc.score;
    logprob += sc.mean_logprob;
  }
  valid_upto_ = std::max(valid_upto_, (refill_to / stride_) * stride_);
  const double ns = static_cast<double>(samples_.size());
  stats_.layer_forwards_naive += static_cast<int64_t>(L_) * static_cast<int64_t>(samples_.size());
  ++stats_.evaluations;
  RawScore r;
  r.exact_rate = exact / ns;
  r.mean_logprob = logprob / ns;
  r.value = opt_.exact_weight * r.exact_rate + opt_.logprob_weight * r.mean_logprob;
  return r;
}

std::string ModelObjective::describe() const {
  size_t tokens = 0;
  for (int n : n_tokens_) tokens += n;
  return fmt::format("model {} | {} samples, {} tokens | {} | W={} S={} | S = {}*exact + {}*logprob",
                     m_.identity(), samples_.size(), tokens, opt_.description, opt_.window,
                     opt_.sinks, opt_.exact_weight, opt_.logprob_weight);
}

}  // namespace bosch::search
