#include "search/baselines/baseline.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "masks/mask_export.h"
#include "model/model.h"
#include "search/baselines/baseline_layers.h"
#include "search/core/head_bits.h"
#include "tasks/task_sample.h"
#include "util/error.h"

namespace bosch::search {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct MethodInfo {
  const char* name;
  const char* help;
};
const std::vector<MethodInfo>& methods() {
  static const std::vector<MethodInfo> m = {
      {"rand", "RAND: whole layers in a seeded random order"},
      {"intr", "INTR: interleaving, full layers evenly spaced (last of each block)"},
      {"bme", "BME: full attention kept in the first, middle and last layers"},
      {"rand-heads", "random heads (seeded)"},
      {"locality", "attention-mass locality: most local heads (share inside W + S) first"},
      {"razor", "Razor-style echo + induction score on repeated random tokens, lowest first"},
      {"retrieval", "retrieval score: attention on the needle while copying the answer, lowest first"},
      {"gate", "Fisher-style gate sensitivity (squared finite difference), lowest first"},
      {"ablation", "single-head ablation: calibration score drop with only that head SWA, lowest first"},
      {"apl", "APL: peak lag, distance from the answer rows to their attention peak, lowest first"},
      {"qada", "QADA: QAdA's Gaussian estimate of the attention share SWA hides, lowest first"},
      {"proxy", "PROXY: DuoAttention-style hidden-state change with only that head SWA, lowest first"},
      {"duo", "DuoAttention full_attention_heads.tsv thresholded to the ratio"},
  };
  return m;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const std::vector<std::string>& baseline_methods() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& m : methods()) v.push_back(m.name);
    return v;
  }();
  return names;
}

std::string canonical_baseline(const std::string& name) {
  std::string s = lower(name);
  // The BOSCH paper's names (docs/search.md): FISHER and DCAM are ours under another name.
  if (s == "fisher" || s == "gate-sensitivity") s = "gate";
  if (s == "dcam") s = "locality";
  if (s == "random-heads") s = "rand-heads";
  if (s == "interleave" || s == "interleaving") s = "intr";
  if (s == "echo" || s == "induction" || s == "echo-induction") s = "razor";
  if (std::find(baseline_methods().begin(), baseline_methods().end(), s) != baseline_methods().end()) return s;
  std::string known;
  for (const auto& n : baseline_methods()) known += (known.empty() ? "" : ", ") + n;
  fail("unknown baseline method '{}'; known: {}", name, known);
}

bool is_static_start_ranking(const std::string& name) {
  if (!is_baseline_method(name)) return false;
  const std::string c = canonical_baseline(name);
  return c == "locality" || c == "razor" || c == "retrieval" || c == "apl" || c == "qada" || c == "proxy";
}

bool is_baseline_method(const std::string& name) {
  try {
    canonical_baseline(name);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string baseline_description(const std::string& name) {
  const std::string c = canonical_baseline(name);
  for (const auto& m : methods())
    if (c == m.name) return m.help;
  return c;
}

BaselineRunner::BaselineRunner(BaselineInputs in) : in_(std::move(in)) {
  check(in_.n_layers > 0 && in_.n_heads > 0, "baseline: the model shape is {} layers x {} KV heads",
        in_.n_layers, in_.n_heads);
}

void BaselineRunner::compute_sweep() {
  if (sweep_) return;
  check(in_.objective != nullptr, "baselines gate/ablation need the calibration objective");
  check(in_.objective->n_layers() == in_.n_layers && in_.objective->n_heads() == in_.n_heads,
        "baseline: the objective is {} x {} heads, the model {} x {}", in_.objective->n_layers(),
        in_.objective->n_heads(), in_.n_layers, in_.n_heads);
  const auto t0 = Clock::now();
  sweep_ = std::make_unique<SingleHeadSweep>(single_head_sweep(*in_.objective));
  sweep_seconds_ = since(t0);
}

const BaselineRunner::Cached& BaselineRunner::scores_for(const std::string& method) {
  if (auto it = cache_.find(method); it != cache_.end()) return it->second;
  Cached c;
  const auto t0 = Clock::now();
  const size_t N = static_cast<size_t>(in_.n_layers) * in_.n_heads;
  auto need_model = [&] {
    check(in_.model != nullptr, "baseline {} needs the model", method);
    const auto& cfg = in_.model->config();
    check(cfg.n_layers == in_.n_layers && cfg.n_kv_heads == in_.n_heads,
          "baseline {}: the model is {} x {} KV heads, expected {} x {}", method, cfg.n_layers,
          cfg.n_kv_heads, in_.n_layers, in_.n_heads);
  };
  auto need_calib = [&] {
    check(in_.calib != nullptr && !in_.calib->empty(), "baseline {} needs calibration samples", method);
  };
  if (method == "locality") {
    need_model();
    need_calib();
    check(in_.swa.window >= 1, "baseline locality needs the window W (>= 1)");
    std::vector<std::vector<int32_t>> seqs;
    for (const auto& s : *in_.calib) {
      auto t = s.prompt_ids;
      t.insert(t.end(), s.continuation_ids.begin(), s.continuation_ids.end());
      seqs.push_back(std::move(t));
    }
    HeadScores share = locality_scores(*in_.model, seqs, in_.swa.window, in_.swa.sinks);
    for (double v : share.values) c.importance.push_back(-v);
    c.scores = {{"locality_share", share.to_json()}, {"sequences", seqs.size()}};
  } else if (method == "razor") {
    need_model();
    const int ctx = in_.model->config().max_context;
    int period = in_.razor_period > 0 ? in_.razor_period : std::max(64, 2 * (in_.swa.window + in_.swa.sinks));
    const int prefix = static_cast<int>(in_.razor_prefix.size());
    if (ctx > 0 && prefix + 2 * period > ctx) period = (ctx - prefix) / 2;
    const int vocab = in_.model->config().vocab_size;
    // Skip the lowest ids (special and byte tokens in most vocabularies) when the vocabulary is large.
    const int lo = vocab > 1024 ? 256 : 0;
    const auto tokens = repeated_random_tokens(in_.razor_prefix, period, lo, vocab, in_.seed);
    EchoInduction ei = echo_induction_scores(*in_.model, tokens, prefix, period);
    c.importance = ei.combined.values;
    c.scores = {{"echo", ei.echo.to_json()}, {"induction", ei.induction.to_json()}, {"period", period},
                {"token_range", {lo, vocab}}, {"seed", in_.seed}};
  } else if (method == "retrieval") {
    need_model();
    need_calib();
    int used = 0;
    HeadScores r = retrieval_scores(*in_.model, *in_.calib, &used);
    c.importance = r.values;
    c.scores = {{"retrieval", r.to_json()}, {"answers_located", used}, {"samples", in_.calib->size()}};
  } else if (method == "apl") {
    need_model();
    need_calib();
    HeadScores r = peak_lag_scores(*in_.model, *in_.calib);
    c.importance = r.values;
    c.scores = {{"peak_lag", r.to_json()}, {"samples", in_.calib->size()}};
  } else if (method == "qada") {
    need_model();
    need_calib();
    HeadScores r = qada_scores(*in_.model, *in_.calib, in_.swa.window, in_.swa.sinks);
    c.importance = r.values;
    c.scores = {{"bulk_share", r.to_json()}, {"samples", in_.calib->size()}};
  } else if (method == "proxy") {
    need_model();
    need_calib();
    HeadScores r = proxy_scores(*in_.model, *in_.calib, in_.swa.window, in_.swa.sinks);
    c.importance = r.values;
    c.scores = {{"hidden_change", r.to_json()}, {"samples", in_.calib->size()}};
  } else if (method == "gate" || method == "ablation") {
    compute_sweep();
    const HeadScores& s = method == "gate" ? sweep_->gate : sweep_->ablation;
    c.importance = s.values;
    c.evaluations = sweep_->evaluations;
    c.scores = {{method, s.to_json()}, {"full_score", sweep_->full.value}};
    if (method == "gate") c.scores["uses_logprob"] = sweep_->gate_uses_logprob;
    // The sweep is shared: both methods report its whole cost (what building either alone takes).
    c.seconds = sweep_seconds_;
  } else if (method == "rand-heads") {
    c.importance.resize(N);  // unused: random_heads_mask draws its own permutation
  } else {
    fail("baseline {} has no static scores", method);
  }
  check(c.importance.size() == N, "baseline {}: {} scores for {} heads", method, c.importance.size(), N);
  if (method != "gate" && method != "ablation") c.seconds = since(t0);
  return cache_.emplace(method, std::move(c)).first->second;
}

const std::vector<double>& BaselineRunner::importance(const std::string& method) {
  return scores_for(canonical_baseline(method)).importance;
}

BaselineMask BaselineRunner::run(const std::string& name, double ratio) {
  const std::string method = canonical_baseline(name);
  check(ratio >= 0 && ratio <= 1, "baseline {}: ratio must be in [0, 1], got {}", method, ratio);
  const int L = in_.n_layers, H = in_.n_heads;
  BaselineMask r;
  r.method = method;
  r.ratio = ratio;
  r.k = target_count(ratio, L, H);
  const auto t0 = Clock::now();
  bool ranked = false;
  r.provenance = {{"method", method}, {"description", baseline_description(method)}, {"ratio", ratio},
                  {"k", r.k}, {"window", in_.swa.window}, {"sinks", in_.swa.sinks}};
  if (method == "rand") {
    r.bits = random_layers_mask(L, H, r.k, in_.seed);
    r.provenance["layer_order"] = random_layer_order(L, in_.seed);
    r.provenance["seed"] = in_.seed;
  } else if (method == "intr") {
    r.bits = interleaved_mask(L, H, r.k);
    r.provenance["full_layers"] = interleaved_full_layers(L, L - r.k / H);
  } else if (method == "bme") {
    r.bits = bme_mask(L, H, r.k);
    r.provenance["keep_order"] = bme_keep_order(L);
  } else if (method == "rand-heads") {
    r.bits = random_heads_mask(L, H, r.k, in_.seed);
    r.provenance["seed"] = in_.seed;
  } else if (method == "duo") {
    check(!in_.duo_dir.empty(), "baseline duo needs the DuoAttention pattern directory (--duo DIR)");
    const DuoPattern p = read_duo(in_.duo_dir);
    r.bits = plan_from_duo(p, ratio, L, H, std::max(in_.swa.window, 0), -1).bits();
    r.provenance["duo_dir"] = in_.duo_dir;
  } else {
    ranked = true;
    const Cached& c = scores_for(method);  // its one-time cost is c.seconds
    const auto t1 = Clock::now();
    r.bits = lowest_k(c.importance, r.k);
    r.evaluations = c.evaluations;
    r.provenance["scores"] = c.scores;
    r.seconds = c.seconds + since(t1);
  }
  if (!ranked) r.seconds = since(t0);
  check(static_cast<int>(std::count(r.bits.begin(), r.bits.end(), 1)) == r.k,
        "baseline {}: produced {} SWA heads instead of K = {} (a bug)", method,
        std::count(r.bits.begin(), r.bits.end(), 1), r.k);
  return r;
}

}  // namespace bosch::search
