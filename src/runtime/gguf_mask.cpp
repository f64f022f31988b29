#include "runtime/gguf_mask.h"

#include <algorithm>

#include "formats/writers.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {

namespace {
constexpr const char* kPrefix = "bosch.swa.";
constexpr const char* kRule = "query i sees key j iff j <= i and (i - j < window or j < sinks)";

int64_t arch_int(const GGUFFile& f, const std::string& suffix, int64_t fallback) {
  const std::string arch = f.get_string("general.architecture");
  return f.get_int_or(arch + "." + suffix, fallback);
}
}  // namespace

void write_gguf_with_plan(const std::string& src_gguf, const AttentionPlan& plan,
                          const std::string& out_gguf) {
  check(src_gguf != out_gguf, "GGUF mask export: --out must differ from the source file '{}'", src_gguf);
  GGUFFile f(src_gguf);
  const int64_t n_layers = arch_int(f, "block_count", -1);
  const int64_t n_kv = arch_int(f, "attention.head_count_kv", arch_int(f, "attention.head_count", -1));
  check(n_layers == plan.n_layers() && n_kv == plan.n_kv_heads(),
        "GGUF mask export: '{}' has {} layers x {} KV heads, the mask has {} x {}", src_gguf, n_layers, n_kv,
        plan.n_layers(), plan.n_kv_heads());

  std::map<std::string, GGUFValue> meta;
  for (const auto& [k, v] : f.metadata())
    if (k.rfind(kPrefix, 0) != 0) meta.emplace(k, v);
  std::vector<int64_t> windows, sinks;
  GGUFValue heads;
  heads.kind = GGUFValue::Kind::Array;
  heads.gguf_type = gguf_type::ARRAY;
  for (int l = 0; l < plan.n_layers(); ++l) {
    int w = 0, s = 0;
    std::vector<int64_t> swa;
    for (int h = 0; h < plan.n_kv_heads(); ++h) {
      if (!plan.is_swa(l, h)) continue;
      if (swa.empty()) w = plan.window(l, h), s = plan.sinks(l, h);
      check(plan.window(l, h) == w && plan.sinks(l, h) == s,
            "GGUF mask export: layer {} has SWA heads with different (window, sinks): ({}, {}) and "
            "({}, {}); bosch.swa.* stores one pair per layer",
            l, w, s, plan.window(l, h), plan.sinks(l, h));
      swa.push_back(h);
    }
    windows.push_back(w);
    sinks.push_back(s);
    heads.arr.push_back(gguf_int_array(swa, gguf_type::INT32));
  }
  meta["bosch.swa.version"] = gguf_int(1, gguf_type::UINT32);
  meta["bosch.swa.window"] = gguf_int_array(windows, gguf_type::INT32);
  meta["bosch.swa.sinks"] = gguf_int_array(sinks, gguf_type::INT32);
  meta["bosch.swa.heads"] = heads;
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
  bool any = false;
  for (const auto& [k, v] : f.metadata()) any |= k.rfind(kPrefix, 0) == 0;
  if (!any) return std::nullopt;
  const std::string& path = f.path();
  const int64_t version = f.get_int("bosch.swa.version");
  check(version == 1, "GGUF '{}': bosch.swa.version is {}, this build reads version 1", path, version);
  auto windows = f.get_int_array("bosch.swa.window");
  auto sinks = f.get_int_array("bosch.swa.sinks");
  const GGUFValue* heads = f.find("bosch.swa.heads");
  check(heads && heads->kind == GGUFValue::Kind::Array,
        "GGUF '{}': bosch.swa.heads must be an array (one array of KV head indices per layer)", path);
  const size_t L = static_cast<size_t>(cfg.n_layers);
  check(windows.size() == L && sinks.size() == L && heads->arr.size() == L,
        "GGUF '{}': bosch.swa.window/sinks/heads have {}/{}/{} entries, expected one per layer ({})", path,
        windows.size(), sinks.size(), heads->arr.size(), L);
  AttentionPlan plan(cfg.n_layers, cfg.n_kv_heads);
  for (int l = 0; l < cfg.n_layers; ++l) {
    const GGUFValue& row = heads->arr[l];
    check(row.kind == GGUFValue::Kind::Array, "GGUF '{}': bosch.swa.heads[{}] must be an array of integers",
          path, l);
    for (const GGUFValue& e : row.arr) {
      check(e.kind == GGUFValue::Kind::Int && e.i >= 0 && e.i < cfg.n_kv_heads,
            "GGUF '{}': bosch.swa.heads[{}] holds {}, expected KV head indices in [0, {})", path, l,
            e.kind == GGUFValue::Kind::Int ? std::to_string(e.i) : std::string("a non-integer"),
            cfg.n_kv_heads);
      const int h = static_cast<int>(e.i);
      check(!plan.is_swa(l, h), "GGUF '{}': bosch.swa.heads[{}] lists KV head {} twice", path, l, h);
      check(windows[l] >= 1 && windows[l] <= kMaxInt32 && sinks[l] >= 0 && sinks[l] <= kMaxInt32,
            "GGUF '{}': layer {} has SWA heads, so bosch.swa.window[{}] must be in [1, {}] (is {}) and "
            "bosch.swa.sinks[{}] in [0, {}] (is {})",
            path, l, l, kMaxInt32, windows[l], l, kMaxInt32, sinks[l]);
      plan.set_swa(l, h, static_cast<int>(windows[l]), static_cast<int>(sinks[l]));
    }
  }
  return plan;
}

}  // namespace bosch
