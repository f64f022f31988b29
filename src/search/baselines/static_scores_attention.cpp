// Attention statistics of the full model for the static head rankings (static_scores.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/visibility.h"
#include "model/model.h"
#include "search/core/rng.h"
#include "search/baselines/static_scores.h"
#include "tasks/task_sample.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch::search {

double window_mass(const float* p, int i, int window, int sinks) {
  double m = 0;
  for (int j = 0; j <= i; ++j)
    if (kernels::sees_key(i, j, window, sinks)) m += p[j];
  return m;
}

double span_mass(const float* p, int i, int begin, int end) {
  double m = 0;
  for (int j = std::max(begin, 0); j < std::min(end, i + 1); ++j) m += p[j];
  return m;
}

namespace {

float dot(const float* a, const float* b, int n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // 8 lanes so the compiler vectorises the reduction
  int d = 0;
  for (; d + 8 <= n; d += 8)
    for (int t = 0; t < 8; ++t) s[t] += a[d + t] * b[d + t];
  float r = 0;
  for (; d < n; ++d) r += a[d] * b[d];
  for (float x : s) r += x;
  return r;
}

void check_tokens(const Model& m, const std::vector<int32_t>& tokens, const char* what) {
  check(!tokens.empty(), "{}: empty token sequence", what);
  for (int32_t t : tokens)
    check(t >= 0 && t < m.config().vocab_size, "{}: token id {} outside the vocabulary [0, {})", what, t,
          m.config().vocab_size);
}

}  // namespace

HeadScores group_average(const Model& m, const std::vector<double>& per_q_head) {
  const auto& c = m.config();
  HeadScores s{c.n_layers, c.n_kv_heads, std::vector<double>(static_cast<size_t>(c.n_layers) * c.n_kv_heads, 0)};
  const int g = c.group_size();
  for (int l = 0; l < c.n_layers; ++l)
    for (int qh = 0; qh < c.n_heads; ++qh)
      s.values[static_cast<size_t>(l) * c.n_kv_heads + qh / g] += per_q_head[static_cast<size_t>(l) * c.n_heads + qh] / g;
  return s;
}

void for_each_attention_row(const Model& m, const std::vector<int32_t>& tokens,
                            const std::vector<int>& rows, const AttentionRowFn& fn) {
  const auto& c = m.config();
  const int n = static_cast<int>(tokens.size());
  for (size_t r = 0; r < rows.size(); ++r)
    check(rows[r] >= 0 && rows[r] < n && (r == 0 || rows[r] > rows[r - 1]),
          "attention rows must be ascending within [0, {}), got {} at index {}", n, rows[r], r);
  const int hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, g = c.group_size();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> hidden(static_cast<size_t>(n) * c.d_model);
  std::vector<float> q(static_cast<size_t>(n) * nh * hd), k(static_cast<size_t>(n) * nkv * hd),
      v(static_cast<size_t>(n) * nkv * hd);
  m.embed(tokens.data(), n, hidden.data());
  const AttentionPlan full = m.full_plan();
  Workspace ws;  // scratch of the per-layer forward calls below
  for (int l = 0; l < c.n_layers; ++l) {
    m.attention_inputs(l, hidden.data(), n, 0, q.data(), k.data(), v.data(), &ws);
    parallel_for(nh, [&](size_t b, size_t e) {
      std::vector<float> p(n);
      for (size_t qh = b; qh < e; ++qh) {
        const int kvh = static_cast<int>(qh) / g;
        for (int i : rows) {
          const float* qi = &q[(static_cast<size_t>(i) * nh + qh) * hd];
          float mx = -INFINITY;
          for (int j = 0; j <= i; ++j) {
            p[j] = scale * dot(qi, &k[(static_cast<size_t>(j) * nkv + kvh) * hd], hd);
            mx = std::max(mx, p[j]);
          }
          double sum = 0;
          for (int j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - mx));
          const float inv = static_cast<float>(1.0 / sum);
          for (int j = 0; j <= i; ++j) p[j] *= inv;
          fn(l, static_cast<int>(qh), i, p.data());
        }
      }
    });
    if (l + 1 < c.n_layers) m.forward_layers(l, l + 1, hidden.data(), n, 0, full, nullptr, &ws);
  }
}

HeadScores locality_scores(const Model& m, const std::vector<std::vector<int32_t>>& sequences,
                           int window, int sinks) {
  check(window >= 1 && sinks >= 0, "locality score: window must be >= 1 and sinks >= 0 (got {}, {})", window, sinks);
  check(!sequences.empty(), "locality score: no calibration sequences");
  const auto& c = m.config();
  std::vector<double> acc(static_cast<size_t>(c.n_layers) * c.n_heads, 0);
  for (const auto& seq : sequences) {
    check_tokens(m, seq, "locality score");
    const int n = static_cast<int>(seq.size());
    std::vector<int> rows;  // rows where SWA hides a key; every row when there is none
    for (int i = n > window + sinks ? window + sinks : 0; i < n; ++i) rows.push_back(i);
    std::vector<double> per(acc.size(), 0);
    for_each_attention_row(m, seq, rows, [&](int l, int qh, int i, const float* p) {
      per[static_cast<size_t>(l) * c.n_heads + qh] += window_mass(p, i, window, sinks);
    });
    for (size_t x = 0; x < acc.size(); ++x) acc[x] += per[x] / rows.size() / sequences.size();
  }
  return group_average(m, acc);
}

std::vector<int32_t> repeated_random_tokens(const std::vector<int32_t>& prefix, int period,
                                            int32_t token_lo, int32_t token_hi, uint64_t seed) {
  check(period >= 2, "echo/induction: the random period must be >= 2 tokens, got {}", period);
  check(token_lo >= 0 && token_hi > token_lo, "echo/induction: empty token range [{}, {})", token_lo, token_hi);
  Rng rng(seed ^ 0x4543484f494e4455ull);  // "ECHOINDU"
  std::vector<int32_t> x(period);
  for (auto& t : x) t = token_lo + static_cast<int32_t>(rng.below(static_cast<uint64_t>(token_hi - token_lo)));
  std::vector<int32_t> out = prefix;
  out.insert(out.end(), x.begin(), x.end());
  out.insert(out.end(), x.begin(), x.end());
  return out;
}

EchoInductionKeys echo_induction_keys(int row, int prefix, int period) {
  const int i = row - prefix - period;  // position in the second copy
  check(i >= 0 && i + 1 < period, "echo/induction: row {} is not in the second copy (prefix {}, period {})", row,
        prefix, period);
  return {prefix + i, prefix + i + 1};
}

EchoInduction echo_induction_scores(const Model& m, const std::vector<int32_t>& tokens, int prefix,
                                    int period) {
  check_tokens(m, tokens, "echo/induction score");
  check(period >= 2 && prefix >= 0 && static_cast<int>(tokens.size()) == prefix + 2 * period,
        "echo/induction score: expected prefix + 2 x period = {} tokens, got {}", prefix + 2 * period, tokens.size());
  const auto& c = m.config();
  std::vector<int> rows;
  for (int i = 0; i + 1 < period; ++i) rows.push_back(prefix + period + i);
  const size_t nq = static_cast<size_t>(c.n_layers) * c.n_heads;
  std::vector<double> echo(nq, 0), induction(nq, 0);
  for_each_attention_row(m, tokens, rows, [&](int l, int qh, int row, const float* p) {
    const EchoInductionKeys key = echo_induction_keys(row, prefix, period);
    echo[static_cast<size_t>(l) * c.n_heads + qh] += p[key.echo] / rows.size();
    induction[static_cast<size_t>(l) * c.n_heads + qh] += p[key.induction] / rows.size();
  });
  EchoInduction r;
  r.echo = group_average(m, echo);
  r.induction = group_average(m, induction);
  r.combined = r.echo;
  for (size_t x = 0; x < r.combined.values.size(); ++x) r.combined.values[x] += r.induction.values[x];
  return r;
}

std::vector<RetrievalRows> retrieval_rows(const TaskSample& s) {
  std::vector<RetrievalRows> out;
  const int n_prompt = static_cast<int>(s.prompt_ids.size());
  auto find = [&](const int32_t* ids, int len) {
    if (len <= 0) return -1;
    for (int b = 0; b + len <= n_prompt; ++b)
      if (std::equal(ids, ids + len, s.prompt_ids.begin() + b)) return b;
    return -1;
  };
  for (const auto& a : s.answers) {
    const int len = static_cast<int>(a.ids.size());
    int skip = 0, at = find(a.ids.data(), len);
    if (at < 0 && len > 1) skip = 1, at = find(a.ids.data() + 1, len - 1);
    if (at < 0) continue;
    RetrievalRows r;
    r.value_begin = at;
    r.value_end = at + len - skip;
    // Row n_prompt + begin + t - 1 predicts continuation token begin + t.
    for (int t = 0; t < len; ++t) r.rows.push_back(n_prompt + a.begin + t - 1);
    out.push_back(std::move(r));
  }
  return out;
}

HeadScores retrieval_scores(const Model& m, const std::vector<TaskSample>& calib, int* used) {
  const auto& c = m.config();
  std::vector<double> acc(static_cast<size_t>(c.n_layers) * c.n_heads, 0);
  int64_t n_rows = 0;
  int found = 0;
  for (const auto& s : calib) {
    const auto spans = retrieval_rows(s);
    if (spans.empty()) continue;
    found += static_cast<int>(spans.size());
    std::vector<int32_t> tokens = s.prompt_ids;
    tokens.insert(tokens.end(), s.continuation_ids.begin(), s.continuation_ids.end() - 1);
    check_tokens(m, tokens, "retrieval score");
    // Rows may repeat across answers only if answers overlap, which they do not; merge anyway.
    std::vector<int> rows;
    std::vector<std::pair<int, int>> span_of_row(tokens.size(), {0, 0});
    for (const auto& sp : spans)
      for (int r : sp.rows) rows.push_back(r), span_of_row[r] = {sp.value_begin, sp.value_end};
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    n_rows += static_cast<int64_t>(rows.size());
    for_each_attention_row(m, tokens, rows, [&](int l, int qh, int i, const float* p) {
      acc[static_cast<size_t>(l) * c.n_heads + qh] += span_mass(p, i, span_of_row[i].first, span_of_row[i].second);
    });
  }
  check(found > 0, "retrieval score: no calibration answer was found among its prompt's tokens "
                   "({} samples); cannot locate the needles", calib.size());
  for (auto& x : acc) x /= static_cast<double>(n_rows);
  if (used) *used = found;
  return group_average(m, acc);
}

}  // namespace bosch::search
