#include "masks/gguf_mask.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "formats/writers.h"
#include "util/checked.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch {

namespace {
constexpr const char* kPrefix = "bosch.swa.";
constexpr const char* kRule = "query i sees key j iff j <= i and (i - j < window or j < sinks)";
constexpr const char* kReexport = "re-export the mask with `bosch export-mask MASK.json --format gguf`";

int64_t arch_int(const GGUFFile& f, const std::string& suffix, int64_t fallback) {
  const std::string arch = f.get_string("general.architecture");
  return f.get_int_or(arch + "." + suffix, fallback);
}

// The bosch.swa.* keys of the file, without the prefix ("version", "window", ...).
std::set<std::string> swa_keys(const GGUFFile& f) {
  std::set<std::string> out;
  for (const auto& [k, v] : f.metadata())
    if (k.starts_with(kPrefix)) out.insert(k.substr(std::string(kPrefix).size()));
  return out;
}

// Error naming the missing key, what it should hold, and which keys the file does have.
void require(const GGUFFile& f, const std::set<std::string>& have, int64_t version, const std::string& key,
             const std::string& expected) {
  check(have.count(key), "GGUF '{}': bosch.swa.version is {} but bosch.swa.{} is missing (expected {}); the "
        "file has only bosch.swa.{{{}}}, so its mask is incomplete: {}",
        f.path(), version, key, expected, fmt::join(have, ", "), kReexport);
}

// Version 1: one nested array of SWA head indices per layer.
void read_nested_heads(const GGUFFile& f, const ModelConfig& cfg, std::vector<std::vector<bool>>& swa) {
  const std::string& path = f.path();
  const GGUFValue* heads = f.find("bosch.swa.heads");
  check(heads->kind == GGUFValue::Kind::Array && heads->gguf_type == gguf_type::ARRAY,
        "GGUF '{}': bosch.swa.heads (version 1) must be an array of {} arrays of KV head indices, got {}", path,
        cfg.n_layers, gguf_type_name(heads->gguf_type));
  check(heads->arr.size() == static_cast<size_t>(cfg.n_layers),
        "GGUF '{}': bosch.swa.heads has {} entries, expected one per layer ({})", path, heads->arr.size(),
        cfg.n_layers);
  for (int l = 0; l < cfg.n_layers; ++l) {
    const GGUFValue& row = heads->arr[l];
    check(row.kind == GGUFValue::Kind::Array, "GGUF '{}': bosch.swa.heads[{}] must be an array of integers",
          path, l);
    for (const GGUFValue& e : row.arr) {
      check(e.kind == GGUFValue::Kind::Int && e.i >= 0 && e.i < cfg.n_kv_heads,
            "GGUF '{}': bosch.swa.heads[{}] holds {}, expected KV head indices in [0, {})", path, l,
            e.kind == GGUFValue::Kind::Int ? std::to_string(e.i) : std::string("a non-integer"),
            cfg.n_kv_heads);
      check(!swa[l][e.i], "GGUF '{}': bosch.swa.heads[{}] lists KV head {} twice", path, l, e.i);
      swa[l][e.i] = true;
    }
  }
}

// Version 2: flat flags, with the mask's shape stored beside them.
void read_flat_flags(const GGUFFile& f, const ModelConfig& cfg, std::vector<std::vector<bool>>& swa) {
  const std::string& path = f.path();
  const int64_t L = f.get_int("bosch.swa.layer_count"), H = f.get_int("bosch.swa.kv_head_count");
  check(L == cfg.n_layers && H == cfg.n_kv_heads,
        "GGUF '{}': the stored mask is for {} layers x {} KV heads (bosch.swa.layer_count/kv_head_count), "
        "the model has {} x {}",
        path, L, H, cfg.n_layers, cfg.n_kv_heads);
  auto flags = f.get_int_array("bosch.swa.head_swa");
  check(flags.size() == static_cast<size_t>(L * H),
        "GGUF '{}': bosch.swa.head_swa has {} entries, expected layer_count x kv_head_count = {} x {} = {}", path,
        flags.size(), L, H, L * H);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      const int64_t v = flags[static_cast<size_t>(l) * H + h];
      check(v == 0 || v == 1, "GGUF '{}': bosch.swa.head_swa[{}] (layer {}, KV head {}) is {}, expected 0 (full) "
            "or 1 (SWA)", path, l * H + h, l, h, v);
      swa[l][h] = v == 1;
    }
}
}  // namespace

void write_gguf_with_plan(const std::string& src_gguf, const AttentionPlan& plan,
                          const std::string& out_gguf) {
  GGUFFile f(src_gguf);
  check_output_path(out_gguf, "--out");  // the same file as the source under any path or link
  const int64_t n_layers = arch_int(f, "block_count", -1);
  const int64_t n_kv = arch_int(f, "attention.head_count_kv", arch_int(f, "attention.head_count", -1));
  check(n_layers == plan.n_layers() && n_kv == plan.n_kv_heads(),
        "GGUF mask export: '{}' has {} layers x {} KV heads, the mask has {} x {}", src_gguf, n_layers, n_kv,
        plan.n_layers(), plan.n_kv_heads());

  std::map<std::string, GGUFValue> meta;
  for (const auto& [k, v] : f.metadata())
    if (!k.starts_with(kPrefix)) meta.emplace(k, v);
  std::vector<int64_t> windows, sinks, flags;
  for (int l = 0; l < plan.n_layers(); ++l) {
    int w = 0, s = 0;
    bool any = false;
    for (int h = 0; h < plan.n_kv_heads(); ++h) {
      flags.push_back(plan.is_swa(l, h) ? 1 : 0);
      if (!plan.is_swa(l, h)) continue;
      if (!any) w = plan.window(l, h), s = plan.sinks(l, h), any = true;
      check(plan.window(l, h) == w && plan.sinks(l, h) == s,
            "GGUF mask export: layer {} has SWA heads with different (window, sinks): ({}, {}) and "
            "({}, {}); bosch.swa.* stores one pair per layer",
            l, w, s, plan.window(l, h), plan.sinks(l, h));
    }
    windows.push_back(w);
    sinks.push_back(s);
  }
  meta["bosch.swa.version"] = gguf_int(2, gguf_type::UINT32);
  meta["bosch.swa.layer_count"] = gguf_int(plan.n_layers(), gguf_type::UINT32);
  meta["bosch.swa.kv_head_count"] = gguf_int(plan.n_kv_heads(), gguf_type::UINT32);
  meta["bosch.swa.window"] = gguf_int_array(windows, gguf_type::INT32);
  meta["bosch.swa.sinks"] = gguf_int_array(sinks, gguf_type::INT32);
  meta["bosch.swa.head_swa"] = gguf_int_array(flags, gguf_type::INT32);
  meta["bosch.swa.convention"] = gguf_string(kRule);

  std::vector<TensorToWrite> tensors;
  tensors.reserve(f.tensors().size());
  for (const GGUFTensor& t : f.tensors()) {
    TensorToWrite w;
    w.name = t.name;
    w.shape.assign(t.dims.rbegin(), t.dims.rend());  // the writer takes PyTorch order
    w.type = t.type;
    w.bytes.assign(t.data, t.data + t.nbytes);
    tensors.push_back(std::move(w));
  }
  write_gguf(out_gguf, meta, tensors, f.alignment());
}

std::optional<AttentionPlan> plan_from_gguf_metadata(const GGUFFile& f, const ModelConfig& cfg) {
  const std::set<std::string> have = swa_keys(f);
  if (have.empty()) return std::nullopt;
  const std::string& path = f.path();
  check(have.count("version"),
        "GGUF '{}' has bosch.swa.{{{}}} but no bosch.swa.version: the mask keys are incomplete, so the mask "
        "cannot be read (a tool may have removed keys); {}",
        path, fmt::join(have, ", "), kReexport);
  const int64_t version = f.get_int("bosch.swa.version");
  check(version == 1 || version == 2, "GGUF '{}': bosch.swa.version is {}, this build reads versions 1 and 2", path,
        version);
  const std::set<std::string> known = version == 1
      ? std::set<std::string>{"version", "window", "sinks", "heads", "convention"}
      : std::set<std::string>{"version", "layer_count", "kv_head_count", "window", "sinks", "head_swa", "convention"};
  for (const std::string& k : have)
    if (!known.count(k))
      std::fprintf(stderr, "bosch: warning: GGUF '%s': bosch.swa.%s is not a key of bosch.swa.version %lld; "
                   "ignored\n", path.c_str(), k.c_str(), static_cast<long long>(version));
  const std::string L = std::to_string(cfg.n_layers);
  require(f, have, version, "window", "INT32[" + L + "]: W per layer");
  require(f, have, version, "sinks", "INT32[" + L + "]: S per layer");
  std::vector<std::vector<bool>> swa(cfg.n_layers, std::vector<bool>(cfg.n_kv_heads, false));
  if (version == 1) {
    require(f, have, version, "heads", "one array of SWA KV head indices per layer");
    std::fprintf(stderr, "bosch: note: GGUF '%s' stores its mask in the old nested form (bosch.swa.version 1, "
                 "bosch.swa.heads = array of arrays), which llama.cpp and other ggml-based readers refuse to "
                 "load; it is read here, but %s to get the flat version 2\n", path.c_str(), kReexport);
    read_nested_heads(f, cfg, swa);
  } else {
    const std::string flat = "INT32[" + L + " x " + std::to_string(cfg.n_kv_heads) + "]: 1 = SWA head";
    require(f, have, version, "layer_count", "UINT32 " + L);
    require(f, have, version, "kv_head_count", "UINT32 " + std::to_string(cfg.n_kv_heads));
    require(f, have, version, "head_swa", flat);
    read_flat_flags(f, cfg, swa);
  }
  auto windows = f.get_int_array("bosch.swa.window");
  auto sinks = f.get_int_array("bosch.swa.sinks");
  check(windows.size() == swa.size() && sinks.size() == swa.size(),
        "GGUF '{}': bosch.swa.window/sinks have {}/{} entries, expected one per layer ({})", path, windows.size(),
        sinks.size(), L);
  AttentionPlan plan(cfg.n_layers, cfg.n_kv_heads);
  for (int l = 0; l < cfg.n_layers; ++l) {
    const bool any = std::find(swa[l].begin(), swa[l].end(), true) != swa[l].end();
    if (!any) {
      check(windows[l] == 0 && sinks[l] == 0,
            "GGUF '{}': layer {} has no SWA heads but bosch.swa.window[{}] = {} and bosch.swa.sinks[{}] = {} "
            "(expected 0 and 0): the keys disagree",
            path, l, l, windows[l], l, sinks[l]);
      continue;
    }
    check(windows[l] >= 1 && windows[l] <= kMaxInt32 && sinks[l] >= 0 && sinks[l] <= kMaxInt32,
          "GGUF '{}': layer {} has SWA heads, so bosch.swa.window[{}] must be in [1, {}] (is {}) and "
          "bosch.swa.sinks[{}] in [0, {}] (is {})",
          path, l, l, kMaxInt32, windows[l], l, kMaxInt32, sinks[l]);
    for (int h = 0; h < cfg.n_kv_heads; ++h)
      if (swa[l][h]) plan.set_swa(l, h, static_cast<int>(windows[l]), static_cast<int>(sinks[l]));
  }
  return plan;
}

}  // namespace bosch
