// Static per-head scores for the head-level baselines, computed once (then every ratio takes
// its top-K). Two kinds:
//  - attention statistics of the FULL model (no mask), from post-RoPE q/k of each layer
//    (Model::attention_inputs): attention-mass locality, Razor-style echo/induction, and
//    retrieval (attention on the needle while the answer is copied). Each is computed per query
//    head and averaged over the query heads of a KV head's GQA group.
//  - single-head sweeps through the calibration Objective (N + 1 evaluations): the exact
//    objective drop when only that head is SWA (single-head ablation), and a gate sensitivity
//    (see below). The Objective holds the calibration data only: never test data.
// Conventions: scores are per KV head, layer-major (layer * n_heads + head) like HeadBits.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/core/objective.h"

namespace bosch {
class Model;
class Progress;
struct TaskSample;
}  // namespace bosch

namespace bosch::search {

struct HeadScores {
  int n_layers = 0, n_heads = 0;
  std::vector<double> values;  // [n_layers * n_heads]
  double at(int l, int h) const { return values[static_cast<size_t>(l) * n_heads + h]; }
  nlohmann::json to_json() const;  // [[layer 0 heads...], ...]
};

// ---- per-row statistics (pure; tested on hand-made attention rows) ----
// p = the softmax row of query position i over keys 0..i (length i + 1).
// Mass on the keys an SWA(window, sinks) head would still see: i - j < window or j < sinks.
double window_mass(const float* p, int i, int window, int sinks);
// Mass on keys [begin, end) (clipped to 0..i).
double span_mass(const float* p, int i, int begin, int end);

// Calls fn(layer, q_head, row, p) for every layer, query head and row in `rows` (ascending,
// each < tokens.size()), p being the full model's causal softmax row (scale 1/sqrt(head_dim),
// as the attention kernel). fn may run concurrently for different (layer, q_head) pairs,
// never for the same pair, so accumulators indexed by (layer, q_head) need no locking.
using AttentionRowFn = std::function<void(int layer, int q_head, int row, const float* p)>;
void for_each_attention_row(const Model& m, const std::vector<int32_t>& tokens,
                            const std::vector<int>& rows, const AttentionRowFn& fn);

// Per (layer, KV head): the mean of per-query-head values [n_layers * n_heads] over its GQA group.
HeadScores group_average(const Model& m, const std::vector<double>& per_q_head);

// ---- attention statistics of the full model ----
// Attention-mass locality: share of attention probability inside the window (+ sinks), over
// the rows where SWA hides something (i >= window + sinks; all rows if the sequence is shorter),
// averaged over rows, then over sequences. High = local = converted first.
HeadScores locality_scores(const Model& m, const std::vector<std::vector<int32_t>>& sequences,
                           int window, int sinks);

// Razor-style echo / induction on random tokens repeated twice: sequence = prefix + x + x with
// |x| = period. For the second copy's position i (0 <= i < period - 1): echo = attention on the
// same token's position in the first copy, induction = on the token after it. Averaged over i.
// combined = echo + induction, the retrieval-like score (lowest converted first).
struct EchoInduction {
  HeadScores echo, induction, combined;
};
// prefix tokens (e.g. BOS) then `period` tokens drawn uniformly from [token_lo, token_hi),
// seeded, repeated once.
std::vector<int32_t> repeated_random_tokens(const std::vector<int32_t>& prefix, int period,
                                            int32_t token_lo, int32_t token_hi, uint64_t seed);
// For a query row of the second copy (prefix + period + i, 0 <= i < period - 1): the key of the
// same token in the first copy (echo) and of the token after it (induction).
struct EchoInductionKeys {
  int echo = 0, induction = 0;
};
EchoInductionKeys echo_induction_keys(int row, int prefix, int period);
EchoInduction echo_induction_scores(const Model& m, const std::vector<int32_t>& tokens,
                                    int prefix, int period);

// Retrieval (DuoAttention / Razor "retrieval heads"): on calibration NIAH samples,
// teacher-forced (prompt + continuation), the attention mass on the needle's value tokens in
// the prompt, at the rows that predict the answer tokens; averaged over all those rows.
// The value's token span is found by matching the answer's ids in the prompt (dropping the
// first id when that does not match, since a leading-space token may merge differently).
// `used` receives the number of answers found; Error when none is.
struct RetrievalRows {
  int value_begin = 0, value_end = 0;  // span of the value in the token sequence
  std::vector<int> rows;               // rows predicting the answer's tokens
};
// The spans and rows of one sample (answers not found in the prompt are left out).
std::vector<RetrievalRows> retrieval_rows(const TaskSample& s);
HeadScores retrieval_scores(const Model& m, const std::vector<TaskSample>& calib, int* used = nullptr);

// ---- the BOSCH paper's other static scores (static_scores_paper.cpp; docs/search.md) ----
// APL (peak lag): at the rows that predict the answer tokens of calibration samples, the
// distance from the row to the key its attention peaks on, averaged. High = looks far = kept full.
HeadScores peak_lag_scores(const Model& m, const std::vector<TaskSample>& calib);
// QADA (QAdA, Donhauser et al. 2025): per query row i >= W + S, the share of attention the keys
// SWA hides would take, with their scores modelled as Gaussian from the keys' mean and
// covariance (log-normal mean of the bulk, exact scores of the kept keys); averaged over rows.
// High = long-context = kept full.
HeadScores qada_scores(const Model& m, const std::vector<TaskSample>& calib, int window, int sinks);
// PROXY (DuoAttention's distillation target, without training): squared L2 change of the last
// layer's output at the answer rows when only that head is SWA, relative to its norm; N + 1
// forward passes of every calibration sample. High = kept full.
HeadScores proxy_scores(const Model& m, const std::vector<TaskSample>& calib, int window, int sinks);

// ---- single-head sweeps through the Objective ----
// For each head h: the objective with only h SWA (everything else full), plus the full model:
// N + 1 evaluations, shared by both scores.
//  ablation: S(full) - S(only h SWA), the exact drop (lowest converted first).
//  gate: (lp(full) - lp(only h SWA))^2 with lp the mean answer log-probability: a squared
//        FINITE DIFFERENCE of the log-likelihood under switching the head's full/SWA gate from
//        1 to 0 (step 1), an empirical-Fisher-style sensitivity; not a gradient. Objectives that
//        report no log-probability (all zero) fall back to the raw score S.
struct SingleHeadSweep {
  HeadScores ablation, gate;
  MaskScore full;
  std::vector<MaskScore> single;  // per head
  int64_t evaluations = 0;
  bool gate_uses_logprob = true;
};
SingleHeadSweep single_head_sweep(Objective& obj);

}  // namespace bosch::search
