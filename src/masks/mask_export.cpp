#include "masks/mask_export.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/atomic_file.h"
#include "util/staged_dir.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {

namespace {
constexpr const char* kOurRule =
    "query i attends key j iff j <= i and (i - j < window or j < sinks); the window counts the "
    "current token";
}

std::pair<int, int> uniform_window(const AttentionPlan& plan, const std::string& what) {
  std::pair<int, int> ws{0, 0};
  for (int l = 0; l < plan.n_layers(); ++l)
    for (int h = 0; h < plan.n_kv_heads(); ++h) {
      if (!plan.is_swa(l, h)) continue;
      std::pair<int, int> here{plan.window(l, h), plan.sinks(l, h)};
      if (ws.first == 0) ws = here;
      check(here == ws,
            "{}: the format has one window and one sink count for the whole model, but layer {} KV "
            "head {} has (W={}, S={}) while another SWA head has (W={}, S={})",
            what, l, h, here.first, here.second, ws.first, ws.second);
    }
  return ws;
}

// ---- DuoAttention ----------------------------------------------------------------------------

void export_duo(const AttentionPlan& plan, const std::string& dir, int window_if_none, int sinks_if_none) {
  auto [W, S] = uniform_window(plan, "DuoAttention export");
  if (W == 0) W = window_if_none, S = sinks_if_none;
  std::string tsv;
  for (int l = 0; l < plan.n_layers(); ++l) {
    for (int h = 0; h < plan.n_kv_heads(); ++h) {
      if (h) tsv += '\t';
      // numpy.savetxt's default format, which DuoAttention writes and reads back.
      tsv += plan.is_swa(l, h) ? "0.000000000000000000e+00" : "1.000000000000000000e+00";
    }
    tsv += '\n';
  }
  nlohmann::json cfg = {
      {"sink_size", S},
      {"recent_size", W},
      {"num_layers", plan.n_layers()},
      {"num_kv_heads", plan.n_kv_heads()},
      {"sparsity", plan.swa_ratio()},
      {"exported_by", "bosch export-mask --format duo"},
      {"window_convention",
       "recent_size = bosch window W: DuoAttention's streaming mask lets query i see key j iff "
       "j <= i and (i - j < recent_size or j < sink_size), which is bosch's rule. Its decode-time "
       "static cache keeps sink_size + recent_size tokens and then appends the current one, so "
       "during decoding a streaming head sees one token more than during prefill."}};
  StagedDir out(dir, "--out", {"full_attention_heads.tsv", "config.json"});  // both files or neither: an existing pattern is replaced whole
  write_file_atomic(out.path() + "/full_attention_heads.tsv", tsv);
  write_file_atomic(out.path() + "/config.json", cfg.dump(2) + "\n");
  out.commit();
}

DuoPattern read_duo(const std::string& dir) {
  DuoPattern p;
  const std::string tsv_path = dir + "/full_attention_heads.tsv", cfg_path = dir + "/config.json";
  std::istringstream in(read_file(tsv_path, kMaxMaskBytes, "DuoAttention pattern"));
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<double> row;
    std::istringstream ls(line);
    std::string cell;
    while (ls >> cell) {  // tabs (numpy) or spaces
      size_t used = 0;
      double x = 0;
      try {
        x = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      check(used == cell.size() && std::isfinite(x), "{}: line {}: '{}' is not a number", tsv_path, line_no,
            excerpt(cell));
      row.push_back(std::clamp(x, 0.0, 1.0));
    }
    if (!p.full_attention_heads.empty())
      check(row.size() == p.full_attention_heads[0].size(),
            "{}: line {} has {} values, the first line has {} (one per KV head)", tsv_path, line_no,
            row.size(), p.full_attention_heads[0].size());
    p.full_attention_heads.push_back(std::move(row));
  }
  check(!p.full_attention_heads.empty(), "{}: no rows (expected one row per layer)", tsv_path);
  const nlohmann::json cfg = parse_json_checked(read_file(cfg_path, kMaxMaskBytes, "DuoAttention config"), cfg_path);
  check(cfg.is_object(), "{}: expected a JSON object", cfg_path);
  for (const char* key : {"sink_size", "recent_size"})
    check(cfg.contains(key), "{}: field '{}' is missing (a non-negative integer)", cfg_path, key);
  p.sink_size = static_cast<int>(json_int(cfg["sink_size"], cfg_path, "sink_size", 0, kMaxInt32));
  p.recent_size = static_cast<int>(json_int(cfg["recent_size"], cfg_path, "recent_size", 0, kMaxInt32));
  return p;
}

AttentionPlan plan_from_duo(const DuoPattern& p, double ratio, int n_layers, int n_kv_heads,
                            int window_override, int sinks_override) {
  check(ratio >= 0 && ratio <= 1, "DuoAttention import: --ratio must be in [0, 1], got {}", ratio);
  check(static_cast<int>(p.full_attention_heads.size()) == n_layers &&
            static_cast<int>(p.full_attention_heads[0].size()) == n_kv_heads,
        "DuoAttention import: the pattern is {} layers x {} KV heads, the model has {} x {}",
        p.full_attention_heads.size(), p.full_attention_heads[0].size(), n_layers, n_kv_heads);
  const int W = window_override > 0 ? window_override : p.recent_size;
  const int S = sinks_override >= 0 ? sinks_override : p.sink_size;
  const int N = n_layers * n_kv_heads;
  const int n_swa = static_cast<int>(std::llround(ratio * N));
  check(n_swa == 0 || W >= 1,
        "DuoAttention import: recent_size is {} in config.json; a window of at least 1 is needed "
        "(give --window)",
        W);
  std::vector<int> order(N);
  std::iota(order.begin(), order.end(), 0);
  auto value = [&](int i) { return p.full_attention_heads[i / n_kv_heads][i % n_kv_heads]; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return value(a) < value(b); });
  AttentionPlan plan(n_layers, n_kv_heads);
  for (int r = 0; r < n_swa; ++r) plan.set_swa(order[r] / n_kv_heads, order[r] % n_kv_heads, W, S);
  return plan;
}

// ---- Razor-style -----------------------------------------------------------------------------

nlohmann::json razor_json(const AttentionPlan& plan, int window_if_none, int sinks_if_none) {
  auto [W, S] = uniform_window(plan, "Razor export");
  if (W == 0) W = window_if_none, S = sinks_if_none;
  nlohmann::json swa = nlohmann::json::array(), full = nlohmann::json::array();
  for (int l = 0; l < plan.n_layers(); ++l) {
    nlohmann::json s = nlohmann::json::array(), f = nlohmann::json::array();
    for (int h = 0; h < plan.n_kv_heads(); ++h) (plan.is_swa(l, h) ? s : f).push_back(h);
    swa.push_back(s);
    full.push_back(f);
  }
  return {{"format", "razor-swa-heads"},
          {"version", 1},
          {"num_layers", plan.n_layers()},
          {"num_kv_heads", plan.n_kv_heads()},
          {"window_size", W},
          {"sink_size", S},
          {"swa_ratio", plan.swa_ratio()},
          {"window_convention", kOurRule},
          {"swa_kv_heads", swa},
          {"full_kv_heads", full}};
}

// ---- Per-layer windows -----------------------------------------------------------------------

nlohmann::json layer_windows_json(const AttentionPlan& plan, int64_t max_context) {
  check(max_context > 0, "layer-windows export: the model's context length is needed for full layers "
                         "(give --model or --max-context)");
  for (int l = 0; l < plan.n_layers(); ++l) {
    std::vector<int> swa, full;
    for (int h = 0; h < plan.n_kv_heads(); ++h) (plan.is_swa(l, h) ? swa : full).push_back(h);
    check(swa.empty() || full.empty(),
          "layer-windows export: layer {} mixes SWA KV heads [{}] and full KV heads [{}]. Engines that "
          "take one attention window per layer (TensorRT-LLM max_attention_window, Hugging Face "
          "layer_types) cannot express a per-head mask; export with --format duo, razor or gguf "
          "instead, or search a layer-uniform mask",
          l, fmt::join(swa, ", "), fmt::join(full, ", "));
  }
  auto [W, S] = uniform_window(plan, "layer-windows export");
  nlohmann::json windows = nlohmann::json::array(), types = nlohmann::json::array();
  for (int l = 0; l < plan.n_layers(); ++l) {
    const bool swa = plan.n_kv_heads() > 0 && plan.is_swa(l, 0);
    windows.push_back(swa ? int64_t(W) : max_context);
    types.push_back(swa ? "sliding_attention" : "full_attention");
  }
  nlohmann::json j = {
      {"format", "bosch-layer-windows"},
      {"version", 1},
      {"window_convention", kOurRule},
      {"tensorrt_llm", {{"max_attention_window", windows}, {"sink_token_length", S}}},
      // Qwen2/Qwen3 configs drop sliding_window unless use_sliding_window is true.
      {"huggingface",
       {{"layer_types", types},
        {"sliding_window", W == 0 ? nlohmann::json(nullptr) : nlohmann::json(W)},
        {"use_sliding_window", W > 0}}},
      {"llama_cpp", {{"n_swa", W}, {"swa_layers", types}}}};
  nlohmann::json warnings = nlohmann::json::array();
  if (S > 0)
    warnings.push_back(fmt::format(
        "the mask keeps {} sink tokens; Hugging Face layer_types/sliding_window and llama.cpp n_swa "
        "have no sinks, so those engines will attend to the window only",
        S));
  j["warnings"] = warnings;
  return j;
}

}  // namespace bosch
