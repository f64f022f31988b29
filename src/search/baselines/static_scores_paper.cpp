// The static head scores of the BOSCH paper's baselines that our other rankings do not already
// give (docs/search.md says which published definition each follows and why):
//   APL    peak lag: distance from the answer rows to the key their attention peaks on
//   QADA   QAdA's Gaussian bulk estimate: share of a query's attention the hidden keys would take
//   PROXY  DuoAttention's distillation target: hidden-state change with only that head SWA
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/model.h"
#include "search/baselines/static_scores.h"
#include "tasks/scoring.h"
#include "tasks/task_sample.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch::search {
namespace {

// prompt + continuation without its last token (teacher forcing), and the rows that predict
// the answer tokens.
std::vector<int32_t> forced_tokens(const TaskSample& s) {
  std::vector<int32_t> t = s.prompt_ids;
  t.insert(t.end(), s.continuation_ids.begin(), s.continuation_ids.end());
  if (!s.continuation_ids.empty()) t.pop_back();
  return t;
}

}  // namespace

HeadScores peak_lag_scores(const Model& m, const std::vector<TaskSample>& calib) {
  check(!calib.empty(), "APL score: no calibration samples");
  const auto& c = m.config();
  std::vector<double> acc(static_cast<size_t>(c.n_layers) * c.n_heads, 0);
  int64_t n_rows = 0;
  for (const auto& s : calib) {
    const std::vector<int32_t> tokens = forced_tokens(s);
    std::vector<int> rows;
    for (int i = std::max(0, first_scored_row(s)); i < static_cast<int>(tokens.size()); ++i) rows.push_back(i);
    if (rows.empty()) continue;
    n_rows += static_cast<int64_t>(rows.size());
    for_each_attention_row(m, tokens, rows, [&](int l, int qh, int i, const float* p) {
      const int peak = static_cast<int>(std::max_element(p, p + i + 1) - p);
      acc[static_cast<size_t>(l) * c.n_heads + qh] += i - peak;
    });
  }
  check(n_rows > 0, "APL score: the calibration samples have no answer rows");
  for (auto& x : acc) x /= static_cast<double>(n_rows);
  return group_average(m, acc);
}

HeadScores qada_scores(const Model& m, const std::vector<TaskSample>& calib, int window, int sinks) {
  check(!calib.empty(), "QAdA score: no calibration samples");
  check(window >= 1 && sinks >= 0, "QAdA score: window must be >= 1 and sinks >= 0 (got {}, {})", window, sinks);
  const auto& c = m.config();
  const int hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, g = c.group_size();
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  std::vector<double> acc(static_cast<size_t>(c.n_layers) * nh, 0);
  int64_t n_rows = 0;
  const AttentionPlan full = m.full_plan();
  Workspace ws;  // scratch of the per-layer forward calls below
  for (const auto& s : calib) {
    const std::vector<int32_t> tokens = forced_tokens(s);
    const int n = static_cast<int>(tokens.size());
    const int first = window + sinks;  // rows where SWA hides at least one key
    if (n <= first) continue;
    n_rows += n - first;
    std::vector<float> hidden(static_cast<size_t>(n) * c.d_model);
    std::vector<float> q(static_cast<size_t>(n) * nh * hd), k(static_cast<size_t>(n) * nkv * hd),
        v(static_cast<size_t>(n) * nkv * hd);
    m.embed(tokens.data(), n, hidden.data());
    for (int l = 0; l < c.n_layers; ++l) {
      m.attention_inputs(l, hidden.data(), n, 0, q.data(), k.data(), v.data(), &ws);
      parallel_for(nkv, [&](size_t b, size_t e) {
        std::vector<double> sum(hd), outer(static_cast<size_t>(hd) * hd);
        std::vector<double> local;
        for (size_t kvh = b; kvh < e; ++kvh) {
          std::fill(sum.begin(), sum.end(), 0.0);
          std::fill(outer.begin(), outer.end(), 0.0);
          int n_bulk = 0;
          for (int i = first; i < n; ++i) {
            // The keys hidden from row i are [sinks, i - window]: add key i - window.
            const float* kn = &k[(static_cast<size_t>(i - window) * nkv + kvh) * hd];
            for (int a = 0; a < hd; ++a) {
              sum[a] += kn[a];
              for (int bb = 0; bb <= a; ++bb) outer[static_cast<size_t>(a) * hd + bb] += double(kn[a]) * kn[bb];
            }
            ++n_bulk;
            for (int qh = static_cast<int>(kvh) * g; qh < (static_cast<int>(kvh) + 1) * g; ++qh) {
              const float* qi = &q[(static_cast<size_t>(i) * nh + qh) * hd];
              // Bulk: n scores ~ N(q.mu, q S q^T) (scaled), expected sum of exp = log-normal mean;
              // q S q^T = q O q^T / n - (q.mu)^2 with O the sum of the keys' outer products.
              double qmu = 0, qoq = 0;
              for (int a = 0; a < hd; ++a) {
                qmu += qi[a] * sum[a];
                double row = 0;
                for (int bb = 0; bb < a; ++bb) row += 2 * outer[static_cast<size_t>(a) * hd + bb] * qi[bb];
                qoq += qi[a] * (row + outer[static_cast<size_t>(a) * hd + a] * qi[a]);
              }
              qmu /= n_bulk;
              const double qsq = std::max(0.0, qoq / n_bulk - qmu * qmu);
              const double log_bulk = std::log(double(n_bulk)) + scale * qmu + 0.5 * scale * scale * qsq;
              // Local: the exact scores of the keys SWA keeps.
              local.clear();
              for (int j = 0; j <= i; j = (j + 1 == sinks && i - window + 1 > sinks) ? i - window + 1 : j + 1) {
                double d = 0;
                const float* kj = &k[(static_cast<size_t>(j) * nkv + kvh) * hd];
                for (int a = 0; a < hd; ++a) d += qi[a] * kj[a];
                local.push_back(scale * d);
              }
              const double mx = *std::max_element(local.begin(), local.end());
              double se = 0;
              for (double x : local) se += std::exp(x - mx);
              const double log_local = mx + std::log(se);
              acc[static_cast<size_t>(l) * nh + qh] += 1.0 / (1.0 + std::exp(log_local - log_bulk));
            }
          }
        }
      });
      if (l + 1 < c.n_layers) m.forward_layers(l, l + 1, hidden.data(), n, 0, full, nullptr, &ws);
    }
  }
  check(n_rows > 0, "QAdA score: every calibration sample is shorter than window + sinks = {}", window + sinks);
  for (auto& x : acc) x /= static_cast<double>(n_rows);
  return group_average(m, acc);
}

HeadScores proxy_scores(const Model& m, const std::vector<TaskSample>& calib, int window, int sinks) {
  check(!calib.empty(), "PROXY score: no calibration samples");
  const auto& c = m.config();
  const int L = c.n_layers, H = c.n_kv_heads, d = c.d_model;
  HeadScores s{L, H, std::vector<double>(static_cast<size_t>(L) * H, 0)};
  const AttentionPlan full = m.full_plan();
  Workspace ws;  // scratch of the per-layer forward calls below
  for (const auto& smp : calib) {
    const std::vector<int32_t> tokens = forced_tokens(smp);
    const int n = static_cast<int>(tokens.size());
    const int row0 = std::max(0, first_scored_row(smp));
    std::vector<float> base(static_cast<size_t>(n) * d);
    m.embed(tokens.data(), n, base.data());
    // Layer inputs of the full model: head h of layer l changes nothing below l.
    std::vector<std::vector<float>> inputs(L);
    std::vector<float> h = base;
    for (int l = 0; l < L; ++l) {
      inputs[l] = h;
      m.forward_layers(l, l + 1, h.data(), n, 0, full, nullptr, &ws);
    }
    const std::vector<float>& out_full = h;
    double norm = 0;
    for (int i = row0; i < n; ++i)
      for (int x = 0; x < d; ++x) norm += double(out_full[static_cast<size_t>(i) * d + x]) * out_full[static_cast<size_t>(i) * d + x];
    norm = std::max(norm, 1e-30);
    for (int l = 0; l < L; ++l)
      for (int kvh = 0; kvh < H; ++kvh) {
        HeadBits one(static_cast<size_t>(L) * H, 0);
        one[static_cast<size_t>(l) * H + kvh] = 1;
        const AttentionPlan plan = AttentionPlan::from_bits(L, H, one, window, sinks);
        std::vector<float> x = inputs[l];
        m.forward_layers(l, L, x.data(), n, 0, plan, nullptr, &ws);
        double dist = 0;
        for (int i = row0; i < n; ++i)
          for (int y = 0; y < d; ++y) {
            const double diff = double(x[static_cast<size_t>(i) * d + y]) - out_full[static_cast<size_t>(i) * d + y];
            dist += diff * diff;
          }
        s.values[static_cast<size_t>(l) * H + kvh] += dist / norm / static_cast<double>(calib.size());
      }
  }
  return s;
}

}  // namespace bosch::search
