// Static head scores (static_scores.h) and the baseline runner (baseline.h): row statistics on
// hand-made attention rows, the model's attention rows against a naive double-precision
// reference, closed forms on a model with uniform attention, and the objective sweeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/model.h"
#include "model/model_writer.h"
#include "search/baselines/baseline.h"
#include "search/stages/bosch_search.h"
#include "search/baselines/static_scores.h"
#include "search/objectives/synthetic_objective.h"
#include "tasks/task_sample.h"
#include "util/atomic_file.h"
#include "util/error.h"

using namespace bosch;
using namespace bosch::search;

namespace {

// 3 layers, 8 query / 4 KV heads, head_dim 16, vocab 300. uniform: every wq zero, so every
// query is 0 and attention is exactly uniform over the causal prefix.
std::unique_ptr<Model> tiny_model(bool uniform, uint64_t seed = 7) {
  ModelConfig c = config_like("llama", "tiny");
  ModelWeights w = random_weights(c, seed, 0.15f);
  if (uniform)
    for (auto& L : w.layers) std::fill(L.wq.begin(), L.wq.end(), 0.0f);
  return std::make_unique<Model>(c, std::move(w), uniform ? "tiny-uniform" : "tiny-random");
}

std::vector<int32_t> tokens(int n, uint64_t seed) {
  std::vector<int32_t> t(n);
  uint64_t s = seed;
  for (auto& x : t) x = static_cast<int32_t>(splitmix64(s) % 300);
  return t;
}

int ones(const HeadBits& b) { return static_cast<int>(std::count(b.begin(), b.end(), 1)); }

}  // namespace

TEST(StaticScores, RowStatisticsOnHandMadeRows) {
  // Row of query i = 5 over keys 0..5.
  const float local[] = {0.0f, 0.0f, 0.0f, 0.1f, 0.3f, 0.6f};   // mass on the last 3 keys
  const float spread[] = {0.3f, 0.3f, 0.2f, 0.1f, 0.05f, 0.05f};
  const float sink[] = {0.9f, 0.0f, 0.0f, 0.0f, 0.0f, 0.1f};
  EXPECT_NEAR(window_mass(local, 5, 2, 0), 0.9, 1e-6);
  EXPECT_NEAR(window_mass(local, 5, 3, 0), 1.0, 1e-6);
  EXPECT_NEAR(window_mass(spread, 5, 2, 0), 0.1, 1e-6);
  EXPECT_NEAR(window_mass(sink, 5, 2, 0), 0.1, 1e-6);
  EXPECT_NEAR(window_mass(sink, 5, 2, 1), 1.0, 1e-6);     // the sink counts
  EXPECT_NEAR(window_mass(spread, 5, 2, 1), 0.4, 1e-6);
  EXPECT_NEAR(window_mass(spread, 5, 1, 0), 0.05, 1e-6);  // W = 1: only itself
  EXPECT_GT(window_mass(local, 5, 2, 1), window_mass(spread, 5, 2, 1));  // local is more local
  EXPECT_NEAR(span_mass(spread, 5, 1, 3), 0.5, 1e-6);
  EXPECT_NEAR(span_mass(spread, 5, -4, 100), 1.0, 1e-6);  // clipped
  EXPECT_NEAR(span_mass(spread, 2, 0, 6), 0.8, 1e-6);     // keys beyond i are not read
}

TEST(StaticScores, EchoAndInductionKeys) {
  // prefix 1 (BOS), period 4: positions 1..4 first copy, 5..8 second copy.
  const auto k = echo_induction_keys(6, 1, 4);  // second copy's token 1 -> first copy's 1 at pos 2
  EXPECT_EQ(k.echo, 2);
  EXPECT_EQ(k.induction, 3);
  EXPECT_THROW(echo_induction_keys(4, 1, 4), Error);  // first copy
  EXPECT_THROW(echo_induction_keys(8, 1, 4), Error);  // last token: no induction target
  const auto t = repeated_random_tokens({1}, 4, 10, 20, 3);
  ASSERT_EQ(t.size(), 9u);
  EXPECT_EQ(t[0], 1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(t[1 + i], t[5 + i]);
    EXPECT_GE(t[1 + i], 10);
    EXPECT_LT(t[1 + i], 20);
  }
}

TEST(StaticScores, AttentionRowsMatchANaiveReference) {
  auto m = tiny_model(false);
  const auto& c = m->config();
  const auto tok = tokens(40, 5);
  const int n = static_cast<int>(tok.size());
  const std::vector<int> rows = {0, 7, 23, 39};
  // got[(l * nh + qh) * rows + r] = row
  std::vector<std::vector<float>> got(static_cast<size_t>(c.n_layers) * c.n_heads * rows.size());
  for_each_attention_row(*m, tok, rows, [&](int l, int qh, int i, const float* p) {
    const size_t r = std::find(rows.begin(), rows.end(), i) - rows.begin();
    got[(static_cast<size_t>(l) * c.n_heads + qh) * rows.size() + r].assign(p, p + i + 1);
  });
  std::vector<float> hidden(static_cast<size_t>(n) * c.d_model);
  m->embed(tok.data(), n, hidden.data());
  const int hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads;
  std::vector<float> q(n * nh * hd), k(n * nkv * hd), v(n * nkv * hd);
  double worst = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    m->attention_inputs(l, hidden.data(), n, 0, q.data(), k.data(), v.data());
    for (int qh = 0; qh < nh; ++qh) {
      const int kvh = qh / (nh / nkv);
      for (size_t r = 0; r < rows.size(); ++r) {
        const int i = rows[r];
        std::vector<double> s(i + 1);
        double mx = -1e300, z = 0;
        for (int j = 0; j <= i; ++j) {
          double d = 0;
          for (int e = 0; e < hd; ++e) d += double(q[(i * nh + qh) * hd + e]) * k[(j * nkv + kvh) * hd + e];
          s[j] = d / std::sqrt(double(hd));
          mx = std::max(mx, s[j]);
        }
        for (auto& x : s) z += (x = std::exp(x - mx));
        const auto& g = got[(static_cast<size_t>(l) * nh + qh) * rows.size() + r];
        ASSERT_EQ(g.size(), static_cast<size_t>(i + 1));
        for (int j = 0; j <= i; ++j) worst = std::max(worst, std::abs(g[j] - s[j] / z));
      }
    }
    m->forward_layers(l, l + 1, hidden.data(), n, 0, m->full_plan());
  }
  EXPECT_LT(worst, 1e-5);
  EXPECT_THROW(for_each_attention_row(*m, tok, {5, 3}, [](int, int, int, const float*) {}), Error);
  EXPECT_THROW(for_each_attention_row(*m, tok, {40}, [](int, int, int, const float*) {}), Error);
}

TEST(StaticScores, LocalityAveragesTheQueryHeadsOfEachKvHead) {
  auto m = tiny_model(false, 11);
  const auto& c = m->config();
  const int W = 5, S = 1, n = 30;
  const auto tok = tokens(n, 8);
  std::vector<int> rows;
  for (int i = W + S; i < n; ++i) rows.push_back(i);
  std::vector<double> per_q(c.n_layers * c.n_heads, 0);
  for_each_attention_row(*m, tok, rows, [&](int l, int qh, int i, const float* p) {
    per_q[l * c.n_heads + qh] += window_mass(p, i, W, S) / rows.size();
  });
  const HeadScores got = locality_scores(*m, {tok}, W, S);
  ASSERT_EQ(got.n_layers, 3);
  ASSERT_EQ(got.n_heads, 4);
  double spread = 0;
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 4; ++h) {  // GQA: query heads 2h and 2h + 1 share KV head h
      const double expect = (per_q[l * 8 + 2 * h] + per_q[l * 8 + 2 * h + 1]) / 2;
      EXPECT_NEAR(got.at(l, h), expect, 1e-9) << l << "," << h;
      spread = std::max(spread, std::abs(got.at(l, h) - got.at(0, 0)));
    }
  EXPECT_GT(spread, 1e-4);  // random heads differ, so the check above has teeth
}

TEST(StaticScores, ClosedFormsUnderUniformAttention) {
  auto m = tiny_model(true);
  const int W = 4, S = 2, n = 20;
  // Locality: rows i >= W + S, each (W + S) / (i + 1).
  double expect = 0;
  for (int i = W + S; i < n; ++i) expect += double(W + S) / (i + 1);
  expect /= n - (W + S);
  const HeadScores loc = locality_scores(*m, {tokens(n, 1), tokens(n, 2)}, W, S);
  ASSERT_EQ(loc.values.size(), 12u);
  for (double v : loc.values) EXPECT_NEAR(v, expect, 1e-5);
  // Echo / induction: row r gets 1 / (r + 1) on each target.
  const int prefix = 1, period = 6;
  const auto t = repeated_random_tokens({1}, period, 0, 300, 4);
  double e = 0;
  for (int i = 0; i + 1 < period; ++i) e += 1.0 / (prefix + period + i + 1);
  e /= period - 1;
  const EchoInduction ei = echo_induction_scores(*m, t, prefix, period);
  for (size_t x = 0; x < 12; ++x) {
    EXPECT_NEAR(ei.echo.values[x], e, 1e-5);
    EXPECT_NEAR(ei.induction.values[x], e, 1e-5);
    EXPECT_NEAR(ei.combined.values[x], 2 * e, 1e-5);
  }
  EXPECT_THROW(echo_induction_scores(*m, t, prefix, period + 1), Error);
}

TEST(StaticScores, RetrievalRowsAndScore) {
  TaskSample s;
  s.prompt_ids = {1, 5, 6, 7, 8, 9, 10};
  s.continuation_ids = {30, 8, 11, 6, 7};  // answers " 8" (ids 30, 8) and "6 7" (ids 6, 7)
  s.answers = {{"8", {30, 8}, 0}, {"67", {6, 7}, 3}, {"x", {99, 98}, 0}};
  const auto rr = retrieval_rows(s);
  ASSERT_EQ(rr.size(), 2u);  // the third answer is not in the prompt
  EXPECT_EQ(rr[0].value_begin, 4);  // {30, 8} not found; {8} at 4
  EXPECT_EQ(rr[0].value_end, 5);
  EXPECT_EQ(rr[0].rows, (std::vector<int>{6, 7}));  // n_prompt 7: rows 7 + 0 - 1, 7 + 1 - 1
  EXPECT_EQ(rr[1].value_begin, 2);
  EXPECT_EQ(rr[1].value_end, 4);
  EXPECT_EQ(rr[1].rows, (std::vector<int>{9, 10}));
  // Uniform attention: row r puts span_len / (r + 1) on the value.
  auto m = tiny_model(true);
  int used = 0;
  const HeadScores r = retrieval_scores(*m, {s}, &used);
  EXPECT_EQ(used, 2);
  const double expect = (1.0 / 7 + 1.0 / 8 + 2.0 / 10 + 2.0 / 11) / 4;
  for (double v : r.values) EXPECT_NEAR(v, expect, 1e-5);
  TaskSample none = s;
  none.answers = {{"x", {99, 98}, 0}};
  EXPECT_THROW(retrieval_scores(*m, {none}), Error);
}

TEST(StaticScores, SingleHeadSweepGivesExactDropsAndSquaredDifferences) {
  const std::vector<double> unary = {0.3, 0.1, 0.0, 0.5, 0.2, 0.05};
  SyntheticObjective obj(2, 3, unary);
  const SingleHeadSweep s = single_head_sweep(obj);
  EXPECT_EQ(s.evaluations, 7);
  EXPECT_EQ(obj.calls().size(), 7u);
  EXPECT_FALSE(s.gate_uses_logprob);  // the synthetic objective reports no log-probability
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(s.ablation.values[i], unary[i], 1e-12);
    EXPECT_NEAR(s.gate.values[i], unary[i] * unary[i], 1e-12);
    EXPECT_EQ(ones(obj.calls()[i + 1]), 1);
    EXPECT_EQ(obj.calls()[i + 1][i], 1);
  }
}

TEST(BaselineRunner, EveryMethodHitsKAndReusesItsScores) {
  auto m = tiny_model(false);
  const int L = 3, H = 4;
  std::vector<double> unary(L * H);
  for (int i = 0; i < L * H; ++i) unary[i] = 0.01 * ((i * 7) % 12);
  SyntheticObjective obj(L, H, unary);
  TaskSample s;
  s.prompt_ids = tokens(48, 9);
  s.prompt_ids[20] = 42, s.prompt_ids[21] = 43;
  s.continuation_ids = {42, 43, 2};
  s.answers = {{"v", {42, 43}, 0}};
  std::vector<TaskSample> calib = {s};
  const auto dir = std::filesystem::temp_directory_path() / ("bosch_duo_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_file_atomic((dir / "full_attention_heads.tsv").string(), "0.9\t0.1\t0.5\t0.5\n1\t0\t0.2\t0.3\n0.4\t0.8\t0.7\t0.6\n");
  write_file_atomic((dir / "config.json").string(), R"({"sink_size": 2, "recent_size": 8})");

  BaselineInputs in;
  in.n_layers = L, in.n_heads = H, in.swa = {8, 2}, in.seed = 1;
  in.model = m.get(), in.objective = &obj, in.calib = &calib, in.razor_period = 12, in.duo_dir = dir.string();
  BaselineRunner runner(in);
  for (double rho : {0.0, 0.25, 0.4, 0.5, 0.75, 0.875, 1.0})
    for (const auto& method : baseline_methods()) {
      const BaselineMask b = runner.run(method, rho);
      EXPECT_EQ(b.k, target_count(rho, L, H)) << method;
      EXPECT_EQ(ones(b.bits), b.k) << method << " at " << rho;
      EXPECT_EQ(b.evaluations, method == "gate" || method == "ablation" ? L * H + 1 : 0) << method;
    }
  EXPECT_EQ(obj.calls().size(), static_cast<size_t>(L * H + 1));  // one sweep shared by gate and ablation
  // ablation converts the lowest unary costs: 0 (head 0), 0.01 (head 7), 0.02 (head 2).
  EXPECT_EQ(runner.run("ablation", 0.25).bits, (HeadBits{1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0}));
  // duo: the 3 lowest values 0 (1,1), 0.1 (0,1), 0.2 (1,2).
  EXPECT_EQ(runner.run("duo", 0.25).bits, (HeadBits{0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(runner.run("RAND", 0.5).bits, runner.run("rand", 0.5).bits);  // aliases and case
  EXPECT_EQ(runner.run("fisher", 0.5).method, "gate");
  EXPECT_THROW(runner.run("nope", 0.5), Error);
  EXPECT_THROW(runner.run("bme", 1.5), Error);
  // Methods without their inputs fail with an Error, not a crash.
  BaselineInputs bare;
  bare.n_layers = L, bare.n_heads = H, bare.swa = {8, 0};
  BaselineRunner empty(bare);
  for (const char* needs : {"locality", "razor", "retrieval", "gate", "ablation", "duo"})
    EXPECT_THROW(empty.run(needs, 0.5), Error) << needs;
  EXPECT_EQ(ones(empty.run("intr", 0.5).bits), 6);
  std::filesystem::remove_all(dir);
}
