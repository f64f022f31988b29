#include "search/experiments/pair_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

#include "util/error.h"
#include "util/progress.h"

namespace bosch::search {

std::string classify_pair(double drop_a, double drop_b, double drop_ab, double tolerance) {
  const double interaction = drop_ab - drop_a - drop_b;
  if (interaction > tolerance) return "backups";
  if (interaction < -tolerance)
    return std::min(drop_a, drop_b) >= drop_ab - tolerance ? "chain" : "overlap";
  return "additive";
}

std::string PairTable::head_name(int flat) const { return fmt::format("L{}.H{}", flat / n_heads, flat % n_heads); }

PairTable pair_table(Objective& obj, const PairTableOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  PairTable t;
  t.n_layers = obj.n_layers();
  t.n_heads = obj.n_heads();
  t.tolerance = opt.tolerance;
  t.objective = obj.describe();
  const int N = t.n_layers * t.n_heads;
  check(opt.heads.empty() ? opt.top >= 2 : opt.heads.size() >= 2,
        "pairs: need at least 2 heads to pair (--top {} / {} heads given)", opt.top, opt.heads.size());
  for (int h : opt.heads) check(h >= 0 && h < N, "pairs: head index {} outside the model's {} heads", h, N);

  const int k = opt.heads.empty() ? std::min(opt.top, N) : static_cast<int>(opt.heads.size());
  const size_t total = 2 + (opt.heads.empty() ? N : k) + static_cast<size_t>(k) * (k - 1) / 2;
  Progress progress("pairs", total);
  // Every set below is asked for once (full, all SWA, each single, each pair): no memo needed.
  auto score = [&](const std::vector<int>& swa) {
    HeadBits bits(static_cast<size_t>(N), 0);
    if (swa.size() == 1 && swa[0] == -1) std::fill(bits.begin(), bits.end(), 1);  // all SWA
    else for (int h : swa) bits[static_cast<size_t>(h)] = 1;
    const double s = obj.evaluate(bits).value;
    ++t.evaluations;
    progress.add(1);
    return s;
  };
  const double full = score({}), allswa = score({-1});
  check(full != allswa, "pairs: the objective scores the full model and the all-SWA one the same ({}): no drop "
        "can be normalised (is the calibration too short for the window?)", full);
  auto drop = [&](const std::vector<int>& swa) { return (full - score(swa)) / (full - allswa); };

  std::vector<int> heads = opt.heads;
  if (heads.empty()) heads.resize(static_cast<size_t>(N)), std::iota(heads.begin(), heads.end(), 0);
  std::vector<double> single(static_cast<size_t>(N), 0.0);
  for (int h : heads) single[static_cast<size_t>(h)] = drop({h});
  // By decreasing single drop (ties: lower index first), then the top k.
  std::stable_sort(heads.begin(), heads.end(), [&](int a, int b) { return single[a] > single[b]; });
  heads.resize(static_cast<size_t>(k));
  t.heads = heads;
  for (int h : heads) t.single_drop.push_back(single[static_cast<size_t>(h)]);

  for (size_t i = 0; i < heads.size(); ++i)
    for (size_t j = i + 1; j < heads.size(); ++j) {
      PairEntry e;
      e.a = heads[i], e.b = heads[j];
      e.drop_a = t.single_drop[i], e.drop_b = t.single_drop[j];
      e.drop_ab = drop({e.a, e.b});
      e.interaction = e.drop_ab - e.drop_a - e.drop_b;
      e.kind = classify_pair(e.drop_a, e.drop_b, e.drop_ab, opt.tolerance);
      t.pairs.push_back(e);
    }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

nlohmann::json PairTable::to_json() const {
  nlohmann::json heads_j = nlohmann::json::array(), pairs_j = nlohmann::json::array();
  for (size_t i = 0; i < heads.size(); ++i)
    heads_j.push_back({{"head", head_name(heads[i])}, {"layer", heads[i] / n_heads}, {"kv_head", heads[i] % n_heads},
                       {"single_drop", single_drop[i]}});
  for (const auto& p : pairs)
    pairs_j.push_back({{"a", head_name(p.a)}, {"b", head_name(p.b)}, {"drop_a", p.drop_a}, {"drop_b", p.drop_b},
                       {"drop_ab", p.drop_ab}, {"interaction", p.interaction}, {"kind", p.kind}});
  return {{"format", "bosch-pairs-1"}, {"n_layers", n_layers}, {"n_heads", n_heads}, {"objective", objective},
          {"tolerance", tolerance}, {"evaluations", evaluations}, {"seconds", seconds}, {"heads", heads_j},
          {"pairs", pairs_j}};
}

std::string PairTable::markdown(int max_rows) const {
  std::map<std::string, int> kinds;
  for (const auto& p : pairs) ++kinds[p.kind];
  std::string s = fmt::format(
      "{} heads, {} pairs ({} evaluations, {:.1f} s); drops normalised between the full model (0) and all "
      "heads SWA (1); interaction = drop(pair) - drop(a) - drop(b), tolerance {}: ",
      heads.size(), pairs.size(), evaluations, seconds, tolerance);
  std::string counts;
  for (const char* k : {"backups", "chain", "overlap", "additive"})
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", kinds[k], k);
  s += counts + ".\n\n| a | b | drop a | drop b | drop a+b | interaction | kind |\n|---|---|---|---|---|---|---|\n";
  std::vector<const PairEntry*> order;
  for (const auto& p : pairs) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const PairEntry* x, const PairEntry* y) { return std::abs(x->interaction) > std::abs(y->interaction); });
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < max_rows; ++i) {
    const PairEntry& p = *order[i];
    s += fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.3f} | {:+.3f} | {} |\n", head_name(p.a), head_name(p.b), p.drop_a,
                     p.drop_b, p.drop_ab, p.interaction, p.kind);
  }
  return s;
}

Heatmap PairTable::heatmap() const {
  Heatmap h;
  h.title = "Pair interaction: drop(a+b) - drop(a) - drop(b) (diagonal: single drop)";
  h.x_label = "head b";
  h.y_label = "head a";
  for (int f : heads) h.row_labels.push_back(head_name(f)), h.col_labels.push_back(head_name(f));
  const size_t k = heads.size();
  h.values.assign(k * k, 0.0);
  for (size_t i = 0; i < k; ++i) h.values[i * k + i] = single_drop[i];
  size_t n = 0;
  double span = tolerance;
  for (size_t i = 0; i < k; ++i)
    for (size_t j = i + 1; j < k; ++j, ++n) {
      h.values[i * k + j] = h.values[j * k + i] = pairs[n].interaction;
      span = std::max(span, std::abs(pairs[n].interaction));
    }
  h.vmin = -span;
  h.vmax = span;
  h.scale = ColorScale::blue_white_red;
  return h;
}

}  // namespace bosch::search
