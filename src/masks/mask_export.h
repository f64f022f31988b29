// Masks for other tools. Each exporter converts our window convention (query i sees key j iff
// j <= i and (i - j < W or j < S); W counts the current token) to the tool's own; see
// docs/mask-formats.md for every tool's convention and the conversion.
//   DuoAttention pattern directory: full_attention_heads.tsv (one row per layer, one value per
//     KV head: 1 = full/retrieval head, 0 = streaming head) + config.json (sink_size,
//     recent_size). DuoAttention's streaming mask is i - j < recent_size, so recent_size = W.
//   Razor-style JSON: per layer, the list of SWA KV heads (and of full ones).
//   Per-layer windows (TensorRT-LLM max_attention_window list, HF layer_types +
//     sliding_window): only for masks where every layer is all-SWA or all-full; otherwise
//     refused with an explanation.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/attention_plan.h"

namespace bosch {

// The one (W, S) shared by every SWA head of the plan; Error when heads disagree (`what`
// names the export in the message). {0, 0} when the plan has no SWA head.
std::pair<int, int> uniform_window(const AttentionPlan& plan, const std::string& what);

// DuoAttention ------------------------------------------------------------------------------
struct DuoPattern {
  std::vector<std::vector<double>> full_attention_heads;  // [layer][kv head], clipped to [0, 1]
  int sink_size = 0, recent_size = 0;
};
// Writes DIR/full_attention_heads.tsv and DIR/config.json (creates DIR).
// window/sinks_if_none: written when the plan has no SWA head (e.g. from the mask file).
void export_duo(const AttentionPlan& plan, const std::string& dir, int window_if_none = 0,
                int sinks_if_none = 0);
// Reads a pattern directory (as DuoAttention's load_attn_pattern does: values clipped to [0, 1]).
DuoPattern read_duo(const std::string& dir);
// Thresholds to a ratio as DuoAttention's sparsify_attention_heads (sparsity = ratio): the
// round(ratio * N) heads with the lowest values become SWA(W = recent_size, S = sink_size),
// ties broken by (layer, head) order so the result is deterministic. window/sinks > 0 override.
AttentionPlan plan_from_duo(const DuoPattern& p, double ratio, int n_layers, int n_kv_heads,
                            int window_override = 0, int sinks_override = -1);

// Razor-style JSON --------------------------------------------------------------------------
nlohmann::json razor_json(const AttentionPlan& plan, int window_if_none = 0, int sinks_if_none = 0);

// Per-layer windows -------------------------------------------------------------------------
// `max_context`: the window written for full layers (the model's context length).
// Error naming the first mixed layer when the mask is not layer-uniform.
nlohmann::json layer_windows_json(const AttentionPlan& plan, int64_t max_context);

}  // namespace bosch
