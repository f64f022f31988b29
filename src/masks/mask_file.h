// The mask file: which (layer, KV head) pairs use sliding-window attention, for which model.
// JSON, versioned:
//   {"format": "bosch-mask", "version": 1,
//    "model": {"arch", "n_layers", "n_heads", "n_kv_heads", "head_dim", "identity"},
//    "window": W, "sinks": S, "target_ratio": r,
//    "swa": [[0, 1, 1, 0], ...]          one list per layer, one flag per KV head, 1 = SWA
//    "provenance": {...}}                free-form (search settings, scores, dates)
// A mask is refused for a model of another shape (the error states both shapes) and, unless
// allowed, for other weights (identity = Model::identity()).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/attention_plan.h"
#include "model/config.h"

namespace bosch {

class Model;

struct MaskModelInfo {
  std::string arch;
  int n_layers = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  std::string identity;
  std::string shape() const;  // "5 layers x 4 KV heads (8 query heads, head_dim 8, llama)"
};
MaskModelInfo mask_model_info(const Model& m);

struct MaskFile {
  static constexpr int kVersion = 1;
  int version = kVersion;
  MaskModelInfo model;
  int window = 0, sinks = 0;
  double target_ratio = 0;
  std::vector<std::vector<uint8_t>> swa;  // [n_layers][n_kv_heads], 1 = SWA
  nlohmann::json provenance = nlohmann::json::object();

  // Throws Error naming the file and the field on anything malformed.
  static MaskFile load(const std::string& path);
  static MaskFile from_json(const nlohmann::json& j, const std::string& source);
  nlohmann::json to_json() const;
  void save(const std::string& path) const;  // atomic

  // Every SWA head of `plan` must share one (window, sinks); a plan without SWA heads takes
  // window/sinks from the arguments.
  static MaskFile from_plan(const AttentionPlan& plan, const MaskModelInfo& model,
                            double target_ratio, nlohmann::json provenance = nlohmann::json::object(),
                            int window_if_none = 0, int sinks_if_none = 0);
  // The mask of head bits `swa` (layer-major, 1 = SWA(shape)) for `model`: what search, baseline
  // and compare write.
  static MaskFile from_bits(const std::vector<uint8_t>& swa, const MaskModelInfo& model, SwaShape shape,
                            double target_ratio, nlohmann::json provenance = nlohmann::json::object());
  AttentionPlan to_plan() const;
  double swa_ratio() const;

  // Error when the mask's shape differs from `model` (message gives both shapes) or, with
  // require_same_weights, when the identity differs. `source` names the file in messages.
  void check_fits(const MaskModelInfo& model, const std::string& source,
                  bool require_same_weights = true) const;
};

// "L.H,L.H,...": flat head indices (layer * n_heads + head), each checked against the shape and
// listed once; "L,L,...": layer indices. `option` names the flag in errors.
std::vector<int> parse_head_list(const std::string& spec, int n_layers, int n_heads, const std::string& option);
std::vector<int> parse_layer_list(const std::string& spec, int n_layers, const std::string& option);

// --mask argument: "full", "all-swa", "heads:L.H,..." (those KV heads SWA), "layers:L,..." (every
// KV head of those layers SWA) -- these three use window/sinks (window >= 1) -- or a mask file
// (checked against the model; window/sinks from the file). `description` (optional) receives
// a one-line summary for reports.
AttentionPlan plan_from_mask_arg(const std::string& arg, const Model& m, int window, int sinks,
                                 std::string* description = nullptr,
                                 bool require_same_weights = true);

}  // namespace bosch
