#include "search/objectives/model_objective.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "kernels/ops.h"
#include "model/attention_plan.h"
#include "tasks/scoring.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::search {

ModelObjective::StateLayout ModelObjective::state_layout(const std::vector<TaskSample>& samples,
                                                         int d_model) {
  check(!samples.empty(), "search objective: no calibration samples");
  StateLayout l;
  for (const auto& s : samples) {
    check(!s.answers.empty() && s.n_tokens() >= 2,
          "search objective: calibration sample (seed {}) has no answer to score", s.seed);
    l.n_tokens.push_back(static_cast<int>(s.n_tokens()) - 1);  // the last token is never an input
    l.offset.push_back(l.floats);
    l.floats += static_cast<int64_t>(l.n_tokens.back()) * d_model;
  }
  return l;
}

ModelObjective::ModelObjective(const Model& m, std::vector<TaskSample> samples,
                               ModelObjectiveOptions opt)
    : m_(m),
      samples_(std::move(samples)),
      opt_(std::move(opt)),
      L_(m_.config().n_layers),
      H_(m_.config().n_kv_heads),
      d_(m_.config().d_model),
      layout_(state_layout(samples_, d_)),
      embedded_(static_cast<size_t>(layout_.floats)),
      cache_(L_, H_, layout_.floats, opt_.use_cache ? opt_.cache_bytes : 0) {
  check(opt_.swa.window > 0 && opt_.swa.sinks >= 0, "--window {} / --sinks {}: need window > 0, sinks >= 0",
        opt_.swa.window, opt_.swa.sinks);
  for (size_t i = 0; i < samples_.size(); ++i) {
    const auto& s = samples_[i];
    std::vector<int32_t> seq(s.prompt_ids);
    seq.insert(seq.end(), s.continuation_ids.begin(), s.continuation_ids.end() - 1);
    m_.embed(seq.data(), layout_.n_tokens[i], embedded_.data() + layout_.offset[i]);
  }
  if (opt_.kl_weight > 0) {  // the full model's answer distributions, once
    check(opt_.kl_weight < 1e6, "--kl-weight {}: expected a value in [0, 1e6)", opt_.kl_weight);
    const int V = m_.config().vocab_size;
    int64_t rows = 0;
    for (const auto& s : samples_) {
      std::vector<int> r;
      for (const auto& a : s.answers)
        for (size_t t = 0; t < a.ids.size(); ++t) r.push_back(static_cast<int>(s.prompt_ids.size()) + a.begin - 1 + static_cast<int>(t));
      rows += static_cast<int64_t>(r.size());
      answer_rows_.push_back(std::move(r));
    }
    check(rows * V <= (int64_t(1) << 28), "--kl-weight: the full model's distributions at {} answer rows x {} "
          "tokens would take {} MiB; use fewer calibration samples or --kl-weight 0", rows, V, rows * V * 4 >> 20);
    const AttentionPlan full = m_.full_plan();
    std::vector<float> h, lp;
    for (size_t i = 0; i < samples_.size(); ++i) {
      const int n = layout_.n_tokens[i];
      h.assign(embedded_.begin() + layout_.offset[i], embedded_.begin() + layout_.offset[i] + static_cast<int64_t>(n) * d_);
      m_.forward_layers(0, L_ - 1, h.data(), n, 0, full, nullptr, &ws_);
      m_.forward_last_rows(L_ - 1, h.data(), n, first_scored_row(samples_[i]), full, &ws_);
      log_softmax_rows(h.data(), answer_rows_[i], lp);
      ref_offset_.push_back(static_cast<int64_t>(ref_logprobs_.size()));
      ref_logprobs_.insert(ref_logprobs_.end(), lp.begin(), lp.end());
    }
  }
}

void ModelObjective::log_softmax_rows(const float* hidden, const std::vector<int>& rows, std::vector<float>& out) const {
  const int V = m_.config().vocab_size;
  out.resize(rows.size() * static_cast<size_t>(V));
  m_.logits(hidden, rows.data(), static_cast<int>(rows.size()), out.data());
  for (size_t r = 0; r < rows.size(); ++r) {
    float* row = out.data() + r * V;
    const float lse = static_cast<float>(log_sum_exp(row, V));
    for (int v = 0; v < V; ++v) row[v] -= lse;
  }
}

double ModelObjective::mean_kl(size_t sample, const float* hidden) const {
  std::vector<float> lp;
  log_softmax_rows(hidden, answer_rows_[sample], lp);
  const float* ref = ref_logprobs_.data() + ref_offset_[sample];
  double kl = 0;
  for (size_t i = 0; i < lp.size(); ++i) kl += std::exp(static_cast<double>(ref[i])) * (ref[i] - lp[i]);
  return std::max(0.0, kl / static_cast<double>(answer_rows_[sample].size()));
}

std::vector<SampleTerms> ModelObjective::evaluate_samples(const HeadBits& swa) {
  check(swa.size() == static_cast<size_t>(L_) * H_, "search objective: mask of {} bits, expected {}",
        swa.size(), static_cast<size_t>(L_) * H_);
  const AttentionPlan plan = AttentionPlan::from_bits(L_, H_, swa, opt_.swa.window, opt_.swa.sinks);
  const float* start_states = embedded_.data();
  int start = 0;
  if (opt_.use_cache) {
    const float* hit = nullptr;
    start = cache_.deepest(swa, &hit);
    if (hit) start_states = hit;
  }
  // The inputs of layers start+1 .. start+n_keep are kept for later candidates (the shallower
  // ones first: more candidates share them).
  const int n_keep = opt_.use_cache ? cache_.make_room(L_ - 1 - start, swa, start) : 0;
  std::vector<std::vector<float>> keep(n_keep, std::vector<float>(embedded_.size()));
  std::vector<SampleTerms> out;
  std::vector<float> h;
  std::optional<Progress> progress;
  if (!opt_.progress_label.empty()) progress.emplace(opt_.progress_label, samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) {
    const int n = layout_.n_tokens[i];
    const size_t rows = static_cast<size_t>(n) * d_;
    h.assign(start_states + layout_.offset[i], start_states + layout_.offset[i] + rows);
    for (int j = start; j < L_ - 1; ++j) {
      m_.forward_layers(j, j + 1, h.data(), n, 0, plan, nullptr, &ws_);
      if (j - start < n_keep) std::copy(h.begin(), h.end(), keep[j - start].begin() + layout_.offset[i]);
    }
    // The last layer only for the rows that are scored.
    const int row0 = first_scored_row(samples_[i]);
    m_.forward_last_rows(L_ - 1, h.data(), n, row0, plan, &ws_);
    stats_.layer_forwards += L_ - start;
    stats_.layer_work += (L_ - 1 - start) + m_.layer_share_of_rows(n, row0);
    const TaskSampleScore sc = score_sample_from_hidden(m_, h.data(), samples_[i]);
    const double kl = opt_.kl_weight > 0 ? mean_kl(i, h.data()) : 0.0;
    out.push_back({sc.score, sc.mean_logprob, kl,
                   opt_.exact_weight * sc.score + opt_.logprob_weight * sc.mean_logprob - opt_.kl_weight * kl});
    if (progress) progress->add(1);
  }
  for (int k = 0; k < n_keep; ++k) cache_.store(start + 1 + k, swa, std::move(keep[k]));
  stats_.layer_forwards_naive += static_cast<int64_t>(L_) * static_cast<int64_t>(samples_.size());
  ++stats_.evaluations;
  return out;
}

MaskScore combine_samples(const std::vector<SampleTerms>& s, const ModelObjectiveOptions& opt) {
  double exact = 0, logprob = 0, kl_sum = 0;
  MaskScore r;
  for (const SampleTerms& x : s) {
    exact += x.exact;
    logprob += x.logprob;
    kl_sum += x.kl;
    r.per_sample.push_back(x.value);
  }
  const double ns = static_cast<double>(s.size());
  r.exact_rate = exact / ns;
  r.mean_logprob = logprob / ns;
  r.value = opt.exact_weight * r.exact_rate + opt.logprob_weight * r.mean_logprob - opt.kl_weight * (kl_sum / ns);
  return r;
}

std::string describe_model_objective(const Model& m, const std::vector<TaskSample>& samples,
                                     const ModelObjectiveOptions& opt) {
  size_t tokens = 0;
  for (const auto& s : samples) tokens += s.n_tokens() - 1;  // the inputs: the last token is never one
  const std::string kl = opt.kl_weight > 0 ? fmt::format(" - {}*KL(full||mask)", opt.kl_weight) : "";
  return fmt::format("model {} | {} samples, {} tokens | {} | W={} S={} | S = {}*exact + {}*logprob{}",
                     m.identity(), samples.size(), tokens, opt.description, opt.swa.window, opt.swa.sinks,
                     opt.exact_weight, opt.logprob_weight, kl);
}

std::string ModelObjective::describe() const { return describe_model_objective(m_, samples_, opt_); }

}  // namespace bosch::search
