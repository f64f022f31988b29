#include "search/experiments/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch::search {

double jaccard_distance(const HeadBits& a, const HeadBits& b) {
  check(a.size() == b.size(), "Jaccard distance: masks of {} and {} heads", a.size(), b.size());
  size_t inter = 0, uni = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    inter += a[i] && b[i];
    uni += a[i] || b[i];
  }
  return uni == 0 ? 0.0 : 1.0 - static_cast<double>(inter) / static_cast<double>(uni);
}

std::vector<Turnover> head_turnover(const CompareResult& r) {
  std::vector<double> ratios = r.ratios;
  std::sort(ratios.begin(), ratios.end());
  std::vector<Turnover> out;
  for (const auto& m : r.methods) {
    Turnover t;
    t.method = m;
    for (size_t i = 0; i + 1 < ratios.size(); ++i) {
      const CompareRow* a = r.find(m, ratios[i]);
      const CompareRow* b = r.find(m, ratios[i + 1]);
      if (!a || !b) continue;
      t.from.push_back(ratios[i]);
      t.to.push_back(ratios[i + 1]);
      t.distance.push_back(jaccard_distance(a->bits, b->bits));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string ratio_tag(double ratio) { return fmt::format("{}", ratio); }

namespace {
std::string header(const std::string& first, const std::vector<std::string>& cols) {
  std::string h = fmt::format("| {} |", first), sep = "|---|";
  for (const auto& c : cols) h += fmt::format(" {} |", c), sep += "---|";
  return fmt::format("{}\n{}\n", h, sep);
}
std::string num(double v) { return fmt::format("{:.3f}", v); }
}  // namespace

std::string markdown_table(const CompareResult& r) {
  const char* second = r.exact_metric ? "exact match" : "mean log-probability of the scored tokens";
  std::string out = fmt::format("Test split, each cell: normalized score / {} "
                                "(normalized = (S - S_allswa) / (S_full - S_allswa)).\n\n", second);
  out += header("ratio (K)", r.methods);
  for (double ratio : r.ratios) {
    int k = 0;
    std::string line;
    for (const auto& m : r.methods) {
      const CompareRow* row = r.find(m, ratio);
      if (!row) {
        line += " - |";
        continue;
      }
      k = row->k;
      line += fmt::format(" {} / {} |", row->normalized ? num(*row->normalized) : std::string("n/a"),
                          r.exact_metric ? num(row->exact_match) : fmt::format("{:.4f}", row->test.mean_logprob));
    }
    out += fmt::format("| {} ({}) |", ratio, k) + line + "\n";
  }
  if (r.exact_metric)
    out += fmt::format("\nReferences (test): full model S = {:.4f}, exact match {:.3f}; all-SWA S = {:.4f}, exact match {:.3f}.\n",
                       r.test_full.value, r.test_full.exact_rate, r.test_allswa.value, r.test_allswa.exact_rate);
  else
    out += fmt::format("\nReferences (test): full model mean log-probability {:.4f}; all-SWA {:.4f}.\n",
                       r.test_full.mean_logprob, r.test_allswa.mean_logprob);
  return out;
}

std::string versus_markdown(const CompareResult& r) {
  std::string out;
  for (const auto& row : r.rows) {
    if (!row.vs_baseline) continue;
    if (out.empty())
      out = fmt::format("Search methods against the best baseline on test at each ratio: normalized test score "
                        "difference, mean and 95% paired-bootstrap interval over the {} test samples ({} resamples); "
                        "calibration S^ beside test S^, and the cost.\n\n"
                        "| ratio | method | calib S^ | test S^ | best baseline (test S^) | difference [95% CI] | "
                        "evaluations | seconds |\n|---|---|---|---|---|---|---|---|\n",
                        row.vs_baseline->samples, row.vs_baseline->resamples);
    const CompareRow* b = r.find(row.vs_baseline->baseline, row.ratio);
    const auto& v = *row.vs_baseline;
    const char* verdict = v.lo > 0 ? " (better)" : v.hi < 0 ? " (worse)" : "";
    out += fmt::format("| {} | {} | {} | {} | {} ({}) | {:+.3f} [{:+.3f}, {:+.3f}]{} | {} | {:.1f} |\n", row.ratio,
                       row.method, row.calib_normalized ? num(*row.calib_normalized) : std::string("n/a"),
                       row.normalized ? num(*row.normalized) : std::string("n/a"), v.baseline,
                       b && b->normalized ? num(*b->normalized) : std::string("n/a"), v.diff, v.lo, v.hi, verdict,
                       row.evaluations, row.seconds);
  }
  return out;
}

std::string turnover_markdown(const std::vector<Turnover>& t) {
  if (t.empty() || t[0].from.empty()) return "Head turnover: needs at least two ratios.\n";
  std::vector<std::string> cols;
  for (size_t i = 0; i < t[0].from.size(); ++i) cols.push_back(fmt::format("{} -> {}", t[0].from[i], t[0].to[i]));
  std::string out = "Head turnover: Jaccard distance between the SWA sets of consecutive ratios.\n\n";
  out += header("method", cols);
  for (const auto& x : t) {
    out += fmt::format("| {} |", x.method);
    for (double d : x.distance) out += fmt::format(" {} |", num(d));
    out += "\n";
  }
  return out;
}

std::string sensitivity_markdown(const CompareResult& r) {
  if (r.sensitivity.empty()) return "Per-layer sensitivity: no search ran.\n";
  std::vector<std::string> cols;
  for (const auto& s : r.sensitivity) cols.push_back(fmt::format("drop / weight / SWA heads @ {}", s.ratio));
  std::string out = "Stage-1 per-layer sensitivity (drop = normalized score lost when the layer's best "
                    "probe set joins the cascade; weight 1 = least sensitive; SWA heads: stage 2's "
                    "count, -> the answer's where the polish moved heads).\n\n";
  out += header("layer", cols);
  for (int l = 0; l < r.n_layers; ++l) {
    out += fmt::format("| {} |", l);
    for (const auto& s : r.sensitivity) {
      if (l < static_cast<int>(s.drops.size()) && l < static_cast<int>(s.weights.size()) &&
          l < static_cast<int>(s.counts.size())) {
        std::string heads = fmt::format("{}", s.counts[l]);
        if (l < static_cast<int>(s.final_counts.size()) && s.final_counts[l] != s.counts[l])
          heads += fmt::format(" -> {}", s.final_counts[l]);
        out += fmt::format(" {:.4f} / {:.3f} / {} |", s.drops[l], s.weights[l], heads);
      } else {
        out += " - |";
      }
    }
    out += "\n";
  }
  return out;
}

Heatmap sensitivity_heatmap(const CompareResult& r) {
  Heatmap h;
  h.title = "Stage-1 per-layer drop (normalized score)";
  h.x_label = "ratio";
  h.y_label = "layer";
  for (int l = 0; l < r.n_layers; ++l) h.row_labels.push_back(std::to_string(l));
  for (const auto& s : r.sensitivity) h.col_labels.push_back(ratio_tag(s.ratio));
  double vmax = 0;
  h.values.assign(h.row_labels.size() * h.col_labels.size(), NAN);
  for (size_t c = 0; c < r.sensitivity.size(); ++c)
    for (int l = 0; l < r.n_layers && l < static_cast<int>(r.sensitivity[c].drops.size()); ++l) {
      const double d = r.sensitivity[c].drops[l];
      h.values[static_cast<size_t>(l) * h.col_labels.size() + c] = d;
      if (std::isfinite(d)) vmax = std::max(vmax, d);
    }
  h.vmin = 0;
  h.vmax = vmax > 0 ? vmax : 1;
  h.scale = ColorScale::white_blue;
  h.decimals = 3;
  return h;
}

Heatmap mask_heatmap(const HeadBits& bits, int n_layers, int n_heads, const std::string& title) {
  check(bits.size() == static_cast<size_t>(n_layers) * n_heads, "mask picture: {} bits for {} x {} heads",
        bits.size(), n_layers, n_heads);
  Heatmap h;
  h.title = title;
  h.x_label = "KV head";
  h.y_label = "layer";
  for (int l = 0; l < n_layers; ++l) h.row_labels.push_back(std::to_string(l));
  for (int k = 0; k < n_heads; ++k) h.col_labels.push_back(std::to_string(k));
  for (uint8_t b : bits) h.values.push_back(b ? 1.0 : 0.0);
  h.scale = ColorScale::white_blue;
  h.show_values = false;
  h.cell_width = h.cell_height = 22;
  return h;
}

std::vector<std::string> write_compare_report(const CompareResult& r, const std::string& dir,
                                              const std::string& title) {
  std::vector<std::string> written;
  std::filesystem::create_directories(std::filesystem::path(dir) / "masks");
  for (const auto& row : r.rows) {
    const std::string p = fmt::format("{}/masks/{}-r{}.svg", dir, row.method, ratio_tag(row.ratio));
    write_heatmap_svg(p, mask_heatmap(row.bits, r.n_layers, r.n_heads,
                                      fmt::format("{} at ratio {} (K = {}), blue = SWA", row.method, row.ratio, row.k)));
    written.push_back(p);
  }
  std::string md = fmt::format("# {}\n\n{}\n{}\n{}\n{}", title, markdown_table(r), versus_markdown(r), turnover_markdown(head_turnover(r)),
                               sensitivity_markdown(r));
  md += "\nCost to build each mask (calibration evaluations / seconds):\n\n";
  md += header("ratio", r.methods);
  for (double ratio : r.ratios) {
    md += fmt::format("| {} |", ratio);
    for (const auto& m : r.methods) {
      const CompareRow* row = r.find(m, ratio);
      md += row ? fmt::format(" {} / {:.1f}s |", row->evaluations, row->seconds) : std::string(" - |");
    }
    md += "\n";
  }
  md += "\nMask pictures: masks/<method>-r<ratio>.svg (layers x KV heads).\n";
  if (!r.sensitivity.empty()) {
    const std::string p = dir + "/sensitivity.svg";
    write_heatmap_svg(p, sensitivity_heatmap(r));
    written.push_back(p);
  }
  const std::string mdp = dir + "/report.md";
  write_file_atomic(mdp, md);
  written.push_back(mdp);
  return written;
}

}  // namespace bosch::search
