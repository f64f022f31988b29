#include "masks/mask_file.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "model/model.h"
#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {

std::string MaskModelInfo::shape() const {
  return fmt::format("{} layers x {} KV heads ({} query heads, head_dim {}, {})", n_layers,
                     n_kv_heads, n_heads, head_dim, arch.empty() ? "?" : arch);
}

MaskModelInfo mask_model_info(const Model& m) {
  const auto& c = m.config();
  return {c.arch, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, m.identity()};
}

nlohmann::json MaskFile::to_json() const {
  nlohmann::json j;
  j["format"] = "bosch-mask";
  j["version"] = version;
  j["model"] = {{"arch", model.arch},         {"n_layers", model.n_layers},
                {"n_heads", model.n_heads},   {"n_kv_heads", model.n_kv_heads},
                {"head_dim", model.head_dim}, {"identity", model.identity}};
  j["window"] = window;
  j["sinks"] = sinks;
  j["target_ratio"] = target_ratio;
  j["swa_ratio"] = swa_ratio();  // informational; recomputed on load
  j["swa"] = swa;
  j["provenance"] = provenance;
  return j;
}

MaskFile MaskFile::from_json(const nlohmann::json& j, const std::string& src) {
  check(j.is_object(), "mask file '{}': expected a JSON object at the top level", src);
  auto field = [&](const nlohmann::json& o, const char* name, const char* where) -> const nlohmann::json& {
    check(o.contains(name), "mask file '{}': missing field '{}{}'", src, where, name);
    return o.at(name);
  };
  const std::string what = fmt::format("mask file '{}'", src);
  auto integer = [&](const nlohmann::json& o, const char* name, const char* where, int min) {
    return static_cast<int>(json_int(field(o, name, where), what, std::string(where) + name, min, kMaxInt32));
  };
  auto string = [&](const nlohmann::json& o, const char* name, const char* where) {
    const auto& v = field(o, name, where);
    return json_string(v, what, std::string(where) + name);
  };
  if (j.contains("format"))
    check(j["format"] == "bosch-mask", "mask file '{}': field 'format' must be \"bosch-mask\", got {}", src, describe_json(j["format"]));
  MaskFile m;
  m.version = integer(j, "version", "", 1);
  check(m.version <= kVersion, "mask file '{}': version {} is newer than this bosch reads ({})", src, m.version, kVersion);
  const auto& mo = field(j, "model", "");
  check(mo.is_object(), "mask file '{}': field 'model' must be an object", src);
  m.model.arch = string(mo, "arch", "model.");
  m.model.n_layers = integer(mo, "n_layers", "model.", 1);
  m.model.n_heads = integer(mo, "n_heads", "model.", 1);
  m.model.n_kv_heads = integer(mo, "n_kv_heads", "model.", 1);
  m.model.head_dim = integer(mo, "head_dim", "model.", 1);
  m.model.identity = string(mo, "identity", "model.");
  m.window = integer(j, "window", "", 0);
  m.sinks = integer(j, "sinks", "", 0);
  m.target_ratio = json_number(field(j, "target_ratio", ""), what, "target_ratio", 0, 1);
  const auto& swa = field(j, "swa", "");
  check(swa.is_array() && swa.size() == static_cast<size_t>(m.model.n_layers),
        "mask file '{}': field 'swa' must be a list of {} layers (model.n_layers), got {}", src,
        m.model.n_layers, swa.is_array() ? std::to_string(swa.size()) + " entries" : swa.type_name());
  bool any_swa = false;
  for (size_t l = 0; l < swa.size(); ++l) {
    const auto& row = swa[l];
    check(row.is_array() && row.size() == static_cast<size_t>(m.model.n_kv_heads),
          "mask file '{}': field 'swa[{}]' must list {} KV-head flags (model.n_kv_heads)", src, l, m.model.n_kv_heads);
    std::vector<uint8_t> flags;
    for (size_t h = 0; h < row.size(); ++h) {
      const auto& f = row[h];
      bool ok = (f.is_number_integer() && (f.get<int64_t>() == 0 || f.get<int64_t>() == 1)) || f.is_boolean();
      check(ok, "mask file '{}': field 'swa[{}][{}]' must be 0 or 1, got {}", src, l, h, describe_json(f));
      flags.push_back(f.is_boolean() ? f.get<bool>() : static_cast<uint8_t>(f.get<int>()));
      any_swa |= flags.back() != 0;
    }
    m.swa.push_back(std::move(flags));
  }
  check(!any_swa || m.window >= 1, "mask file '{}': field 'window' must be >= 1 when any head is SWA", src);
  if (j.contains("provenance")) m.provenance = j["provenance"];
  return m;
}

MaskFile MaskFile::load(const std::string& path) {
  return from_json(parse_json_checked(read_file(path, kMaxMaskBytes, "mask"), fmt::format("mask file '{}'", path)), path);
}

void MaskFile::save(const std::string& path) const { write_file_atomic(path, to_json().dump(2) + "\n"); }

MaskFile MaskFile::from_plan(const AttentionPlan& plan, const MaskModelInfo& model, double target_ratio,
                             nlohmann::json provenance, int window_if_none, int sinks_if_none) {
  check(plan.n_layers() == model.n_layers && plan.n_kv_heads() == model.n_kv_heads,
        "mask: the plan has {} layers x {} KV heads, the model is {}", plan.n_layers(), plan.n_kv_heads(), model.shape());
  MaskFile m;
  m.model = model;
  m.target_ratio = target_ratio;
  m.provenance = std::move(provenance);
  m.window = window_if_none;
  m.sinks = sinks_if_none;
  bool first = true;
  for (int l = 0; l < plan.n_layers(); ++l) {
    std::vector<uint8_t> row;
    for (int h = 0; h < plan.n_kv_heads(); ++h) {
      row.push_back(plan.is_swa(l, h) ? 1 : 0);
      if (!plan.is_swa(l, h)) continue;
      if (first) {
        m.window = plan.window(l, h);
        m.sinks = plan.sinks(l, h);
        first = false;
      }
      check(plan.window(l, h) == m.window && plan.sinks(l, h) == m.sinks,
            "mask: head (layer {}, KV head {}) has W={} S={}, others W={} S={}; a mask file holds one window",
            l, h, plan.window(l, h), plan.sinks(l, h), m.window, m.sinks);
    }
    m.swa.push_back(std::move(row));
  }
  return m;
}

MaskFile MaskFile::from_bits(const std::vector<uint8_t>& swa, const MaskModelInfo& model, SwaShape shape,
                             double target_ratio, nlohmann::json provenance) {
  const AttentionPlan plan = AttentionPlan::from_bits(model.n_layers, model.n_kv_heads, swa, shape.window, shape.sinks);
  return from_plan(plan, model, target_ratio, std::move(provenance), shape.window, shape.sinks);
}

AttentionPlan MaskFile::to_plan() const {
  std::vector<uint8_t> bits;
  for (const auto& row : swa) bits.insert(bits.end(), row.begin(), row.end());
  return AttentionPlan::from_bits(model.n_layers, model.n_kv_heads, bits, window, sinks);
}

double MaskFile::swa_ratio() const {
  size_t n = 0, on = 0;
  for (const auto& row : swa)
    for (uint8_t f : row) n++, on += f != 0;
  return n ? static_cast<double>(on) / n : 0;
}

void MaskFile::check_fits(const MaskModelInfo& m, const std::string& source, bool require_same_weights) const {
  bool same_shape = model.n_layers == m.n_layers && model.n_kv_heads == m.n_kv_heads &&
                    model.n_heads == m.n_heads && model.head_dim == m.head_dim;
  check(same_shape, "mask file '{}' is for a model of {}, but the model is {}", source, model.shape(), m.shape());
  check(!require_same_weights || model.identity == m.identity,
        "mask file '{}' was made for model identity {}, but the model's identity is {} (same shape, other weights)",
        source, model.identity, m.identity);
}

namespace {

// The comma-separated items of a --heads / --mask list ("" is one empty item: an error below).
std::vector<std::string> comma_items(const std::string& spec) {
  std::vector<std::string> items;
  for (size_t pos = 0; pos <= spec.size();) {
    const size_t end = std::min(spec.find(',', pos), spec.size());
    items.push_back(spec.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

// A non-empty decimal int filling the whole of [b, e), in int's range (an overflow is no index).
bool whole_int(const char* b, const char* e, int& v) {
  if (b == e) return false;
  const auto [p, ec] = std::from_chars(b, e, v);
  return ec == std::errc() && p == e;
}

}  // namespace

std::vector<int> parse_head_list(const std::string& spec, int n_layers, int n_heads, const std::string& option) {
  std::vector<int> out;
  for (const std::string& item : comma_items(spec)) {
    const size_t dot = item.find('.');
    int l = -1, h = -1;
    const bool ok = dot != std::string::npos && whole_int(item.data(), item.data() + dot, l) &&
                    whole_int(item.data() + dot + 1, item.data() + item.size(), h);
    check(ok, "{}: '{}' is not LAYER.HEAD (e.g. 3.1)", option, item.substr(0, 40));
    check(l >= 0 && l < n_layers && h >= 0 && h < n_heads, "{}: {} is outside the model's {} layers x {} KV heads",
          option, item.substr(0, 40), n_layers, n_heads);
    const int flat = l * n_heads + h;
    check(std::find(out.begin(), out.end(), flat) == out.end(), "{}: {} is listed twice", option, item.substr(0, 40));
    out.push_back(flat);
  }
  return out;
}

std::vector<int> parse_layer_list(const std::string& spec, int n_layers, const std::string& option) {
  std::vector<int> out;
  for (const std::string& item : comma_items(spec)) {
    int l = -1;
    check(whole_int(item.data(), item.data() + item.size(), l), "{}: '{}' is not a layer index (e.g. 3)", option,
          item.substr(0, 40));
    check(l >= 0 && l < n_layers, "{}: layer {} is outside the model's {} layers", option, l, n_layers);
    check(std::find(out.begin(), out.end(), l) == out.end(), "{}: layer {} is listed twice", option, l);
    out.push_back(l);
  }
  return out;
}

AttentionPlan plan_from_mask_arg(const std::string& arg, const Model& m, int window, int sinks,
                                 std::string* description, bool require_same_weights) {
  const auto& c = m.config();
  if (arg.empty() || arg == "full") {
    if (description) *description = "full";
    return AttentionPlan::full(c.n_layers, c.n_kv_heads);
  }
  if (arg == "all-swa") {
    check(window >= 1, "--mask all-swa needs --window W (>= 1), got {}", window);
    check(sinks >= 0, "--sinks must be >= 0, got {}", sinks);
    if (description) *description = fmt::format("all-swa (W={}, S={})", window, sinks);
    return AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, window, sinks);
  }
  const bool heads = arg.rfind("heads:", 0) == 0, layers = arg.rfind("layers:", 0) == 0;
  if (heads || layers) {  // the listed heads (or every head of the listed layers) SWA, the rest full
    check(window >= 1, "--mask {} needs --window W (>= 1), got {}", arg.substr(0, 40), window);
    check(sinks >= 0, "--sinks must be >= 0, got {}", sinks);
    AttentionPlan p = AttentionPlan::full(c.n_layers, c.n_kv_heads);
    if (heads) {
      for (int f : parse_head_list(arg.substr(6), c.n_layers, c.n_kv_heads, "--mask heads"))
        p.set_swa(f / c.n_kv_heads, f % c.n_kv_heads, window, sinks);
    } else {
      for (int l : parse_layer_list(arg.substr(7), c.n_layers, "--mask layers"))
        for (int h = 0; h < c.n_kv_heads; ++h) p.set_swa(l, h, window, sinks);
    }
    if (description) *description = fmt::format("{} (W={}, S={}; {})", arg, window, sinks, p.summary());
    return p;
  }
  MaskFile f = MaskFile::load(arg);
  f.check_fits(mask_model_info(m), arg, require_same_weights);
  AttentionPlan p = f.to_plan();
  if (description) *description = fmt::format("{} ({})", arg, p.summary());
  return p;
}

}  // namespace bosch
