// Model::load: GGUF files and Hugging Face directories into one layout (PyTorch [out, in]
// linear weights, rotate-half RoPE order). Linear weights stay in the file's type, as views
// into its memory map; norms and biases are converted to float32. GGUF "llama" files store
// Q/K rows permuted for adjacent-pair RoPE (llama.cpp's convert script); those two matrices
// are copied with their rows un-permuted (still in their type: rows are whole blocks) so one
// RoPE kernel serves every source and both give the same logits for the same model.
#include <cstring>

#include <nlohmann/json.hpp>

#include "formats/gguf.h"
#include "formats/model_source.h"
#include "formats/safetensors.h"
#include "model/model.h"
#include "model/tensor_names.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch {

namespace {

std::vector<float> to_floats(DType t, const void* data, int64_t numel) {
  std::vector<float> out(static_cast<size_t>(numel));
  to_f32(t, data, out.data(), out.size());
  return out;
}

// GGUF llama Q/K rows: head h, row h*hd + 2j + i  <->  HF row h*hd + i*hd/2 + j.
WeightMatrix unpermute_rope_rows(const WeightMatrix& w, int n_heads, int hd) {
  const size_t rb = w.v.row_bytes();
  auto out = std::make_shared<std::vector<uint8_t>>(w.v.bytes());
  for (int h = 0; h < n_heads; ++h)
    for (int j = 0; j < hd / 2; ++j)
      for (int i = 0; i < 2; ++i) {
        const int64_t src = static_cast<int64_t>(h) * hd + 2 * j + i;
        const int64_t dst = static_cast<int64_t>(h) * hd + i * (hd / 2) + j;
        std::memcpy(out->data() + dst * rb, w.v.row(src), rb);
      }
  WeightView v = w.v;
  v.data = out->data();
  return {v, std::move(out)};
}

// A [rows, cols] view of tensor bytes (shape already checked against the config). Files need
// not align tensors to 4 bytes (safetensors; GGUF with general.alignment 1 or 2): a misaligned
// F32 matrix is copied, since BLAS reads it as floats; other types are read bytewise.
WeightMatrix view_of(DType t, const uint8_t* data, int64_t rows, int64_t cols) {
  WeightView v{t, data, rows, cols};
  if (t != DType::F32 || reinterpret_cast<uintptr_t>(data) % alignof(float) == 0) return {v, nullptr};
  auto copy = std::make_shared<std::vector<uint8_t>>(data, data + v.bytes());
  v.data = copy->data();
  return {v, std::move(copy)};
}

// Dimensions: [1, 2^24) like ModelConfig::validate, so nothing wraps on the way to int.
constexpr int64_t kMaxDim = (1 << 24) - 1;

// ---------------------------------------------------------------- GGUF

struct GGUFLoader {
  const GGUFFile& f;
  std::string arch;

  std::string key(const std::string& k) const { return arch + "." + k; }

  // dims_pt: expected shape in PyTorch order ([out, in]); GGUF lists it reversed.
  std::vector<float> get(const std::string& name, std::vector<int64_t> dims_pt) const {
    const GGUFTensor& t = f.tensor(name);
    std::vector<int64_t> want(dims_pt.rbegin(), dims_pt.rend());
    if (t.dims != want) {
      fail("{}: tensor {} has shape [{}], expected [{}] (GGUF order) from the metadata", f.path(), name,
           fmt::join(t.dims, ", "), fmt::join(want, ", "));
    }
    return to_floats(t.type, t.data, t.numel());
  }
  // A linear weight [rows, cols], kept in the file's type.
  WeightMatrix matrix(const std::string& name, int64_t rows, int64_t cols) const {
    const GGUFTensor& t = f.tensor(name);
    if (t.dims != std::vector<int64_t>{cols, rows}) {
      fail("{}: tensor {} has shape [{}], expected [{}, {}] (GGUF order) from the metadata", f.path(), name,
           fmt::join(t.dims, ", "), cols, rows);
    }
    return view_of(t.type, t.data, rows, cols);
  }
  // qwen3moe experts stacked in one tensor, [n_expert, rows, cols] in PyTorch order (GGUF lists
  // [cols, rows, n_expert]): one view per expert into the file's bytes.
  std::vector<WeightMatrix> experts(const std::string& name, int n_expert, int64_t rows, int64_t cols) const {
    const GGUFTensor& t = f.tensor(name);
    if (t.dims != std::vector<int64_t>{cols, rows, n_expert}) {
      fail("{}: tensor {} has shape [{}], expected [{}, {}, {}] (GGUF order: in, out, experts) from the metadata",
           f.path(), name, fmt::join(t.dims, ", "), cols, rows, n_expert);
    }
    return expert_slices(view_of(t.type, t.data, n_expert * rows, cols), n_expert, rows);
  }
};

std::unique_ptr<Model> load_gguf(const GGUFFile& f) {
  const std::string& path = f.path();
  GGUFLoader g{f, f.get_string("general.architecture")};
  ModelConfig c;
  c.arch = g.arch;
  check(c.arch == "llama" || c.arch == "qwen2" || c.arch == "qwen3" || c.arch == "qwen3moe",
        "{}: general.architecture is '{}', supported: llama, qwen2, qwen3, qwen3moe", path, excerpt(c.arch));
  // Dimensions in [1, 2^24) (ModelConfig::validate), read without wrapping to int.
  auto dim = [&](const std::string& k) { return static_cast<int>(f.get_int_in(g.key(k), 1, kMaxDim)); };
  auto dim_or = [&](const std::string& k, int fb) {
    return static_cast<int>(f.get_int_in_or(g.key(k), fb, 1, kMaxDim));
  };
  c.n_layers = dim("block_count");
  c.d_model = dim("embedding_length");
  c.n_heads = dim("attention.head_count");
  c.n_kv_heads = dim_or("attention.head_count_kv", c.n_heads);
  c.head_dim = dim_or("attention.key_length", c.d_model / c.n_heads);
  if (c.arch == "qwen3moe") {
    c.n_expert = dim("expert_count");
    c.n_expert_used = dim("expert_used_count");
    c.d_ff_expert = dim("expert_feed_forward_length");
    c.norm_topk_prob = true;  // Qwen3-MoE's routing (llama.cpp's qwen3moe graph renormalises too)
    c.d_ff = dim_or("feed_forward_length", c.d_ff_expert);  // unused: every layer is MoE
  } else {
    c.d_ff = dim("feed_forward_length");
  }
  c.max_context = static_cast<int>(f.get_int_in_or(g.key("context_length"), 0, 0, kMaxInt32));
  c.rope_theta = f.get_float_or(g.key("rope.freq_base"), 10000.0);
  c.norm_eps = f.get_float_or(g.key("attention.layer_norm_rms_epsilon"), 1e-5);
  c.qkv_bias = c.arch == "qwen2";
  c.qk_norm = c.arch == "qwen3" || c.arch == "qwen3moe";
  const GGUFTensor& emb = f.tensor(tensor_name(TensorFormat::gguf, Weight::tok_embd));
  check(emb.dims.size() == 2 && emb.dims[0] == c.d_model,
        "{}: token_embd.weight must be [{} x vocab] (GGUF order, embedding_length {} x vocabulary), got [{}]", path,
        c.d_model, c.d_model, fmt::join(emb.dims, " x "));
  c.vocab_size = static_cast<int>(int_in_range(emb.dims[1], 1, kMaxDim, path, "token_embd.weight vocabulary size"));
  c.tied_embeddings = f.find_tensor(tensor_name(TensorFormat::gguf, Weight::lm_head)) == nullptr;
  c.validate(path);

  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  ModelWeights w;
  ModelMatrices mw;
  mw.keep_alive = f.mapping();  // not the metadata: the tokenizer's arrays are freed on return
  mw.tok_embd = g.matrix(tensor_name(TensorFormat::gguf, Weight::tok_embd), V, d);
  w.out_norm = g.get(tensor_name(TensorFormat::gguf, Weight::out_norm), {d});
  if (!c.tied_embeddings) mw.lm_head = g.matrix(tensor_name(TensorFormat::gguf, Weight::lm_head), V, d);
  // The last layer's first tensor, before the per-layer tables are sized: a block_count the file
  // does not hold (up to 2^24 passes validate) is an error, not gigabytes of empty layers.
  const std::string last = tensor_name(TensorFormat::gguf, Weight::attn_norm, c.n_layers - 1);
  check(f.find_tensor(last) != nullptr, "{}: {} is {}, but the file has no tensor {}", path, g.key("block_count"),
        c.n_layers, last);
  w.layers.resize(c.n_layers);
  mw.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    auto& L = w.layers[l];
    auto& M = mw.layers[l];
    L.attn_norm = g.get(tensor_name(TensorFormat::gguf, Weight::attn_norm, l), {d});
    M.wq = g.matrix(tensor_name(TensorFormat::gguf, Weight::wq, l), nh * hd, d);
    M.wk = g.matrix(tensor_name(TensorFormat::gguf, Weight::wk, l), nkv * hd, d);
    M.wv = g.matrix(tensor_name(TensorFormat::gguf, Weight::wv, l), nkv * hd, d);
    M.wo = g.matrix(tensor_name(TensorFormat::gguf, Weight::wo, l), d, nh * hd);
    if (c.arch == "llama") {
      M.wq = unpermute_rope_rows(M.wq, c.n_heads, c.head_dim);
      M.wk = unpermute_rope_rows(M.wk, c.n_kv_heads, c.head_dim);
    }
    if (c.qkv_bias) {
      L.bq = g.get(tensor_name(TensorFormat::gguf, Weight::bq, l), {nh * hd});
      L.bk = g.get(tensor_name(TensorFormat::gguf, Weight::bk, l), {nkv * hd});
      L.bv = g.get(tensor_name(TensorFormat::gguf, Weight::bv, l), {nkv * hd});
    }
    if (c.qk_norm) {
      L.q_norm = g.get(tensor_name(TensorFormat::gguf, Weight::q_norm, l), {hd});
      L.k_norm = g.get(tensor_name(TensorFormat::gguf, Weight::k_norm, l), {hd});
    }
    L.ffn_norm = g.get(tensor_name(TensorFormat::gguf, Weight::ffn_norm, l), {d});
    if (c.is_moe()) {
      const int64_t fe = c.d_ff_expert;
      M.experts.router = g.matrix(tensor_name(TensorFormat::gguf, Weight::router, l), c.n_expert, d);
      M.experts.gate = g.experts(tensor_name(TensorFormat::gguf, Weight::gate_exps, l), c.n_expert, fe, d);
      M.experts.up = g.experts(tensor_name(TensorFormat::gguf, Weight::up_exps, l), c.n_expert, fe, d);
      M.experts.down = g.experts(tensor_name(TensorFormat::gguf, Weight::down_exps, l), c.n_expert, d, fe);
      continue;
    }
    M.w_gate = g.matrix(tensor_name(TensorFormat::gguf, Weight::w_gate, l), ff, d);
    M.w_up = g.matrix(tensor_name(TensorFormat::gguf, Weight::w_up, l), ff, d);
    M.w_down = g.matrix(tensor_name(TensorFormat::gguf, Weight::w_down, l), d, ff);
  }
  // Llama-3 GGUFs carry the rope scaling as per-frequency factors (rope_freqs.weight).
  if (const GGUFTensor* rf = f.find_tensor(tensor_name(TensorFormat::gguf, Weight::rope_freqs))) {
    check(rf->numel() == hd / 2, "{}: rope_freqs.weight has {} values, expected {}", path, rf->numel(), hd / 2);
    auto factors = to_floats(rf->type, rf->data, rf->numel());
    auto m = std::make_unique<Model>(c, std::move(w), std::move(mw), path);
    m->set_rope_factors(factors);
    return m;
  }
  return std::make_unique<Model>(c, std::move(w), std::move(mw), path);
}

// ---------------------------------------------------------------- Hugging Face

// config.json fields: exact integers in range, finite numbers, strings, bools (util/checked.h).
const nlohmann::json* cfg_find(const nlohmann::json& j, const std::string& key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}
const nlohmann::json& cfg_need(const nlohmann::json& j, const std::string& key, const std::string& file) {
  const nlohmann::json* v = cfg_find(j, key);
  if (!v) fail("{}: config.json has no field '{}'", file, key);
  return *v;
}
int cfg_dim(const nlohmann::json& j, const std::string& key, const std::string& file) {
  return static_cast<int>(json_int(cfg_need(j, key, file), file, key, 1, kMaxDim));
}
int cfg_dim_or(const nlohmann::json& j, const std::string& key, int fallback, const std::string& file) {
  return cfg_find(j, key) ? cfg_dim(j, key, file) : fallback;
}
double cfg_number_or(const nlohmann::json& j, const std::string& key, double fallback, const std::string& file) {
  const nlohmann::json* v = cfg_find(j, key);
  return v ? json_number(*v, file, key, -1e300, 1e300) : fallback;
}
bool cfg_bool_or(const nlohmann::json& j, const std::string& key, bool fallback, const std::string& file) {
  const nlohmann::json* v = cfg_find(j, key);
  return v ? json_bool(*v, file, key) : fallback;
}
std::string cfg_string_or(const nlohmann::json& j, const std::string& key, const std::string& fallback,
                          const std::string& file) {
  const nlohmann::json* v = cfg_find(j, key);
  return v ? json_string(*v, file, key) : fallback;
}

std::unique_ptr<Model> load_hf(const std::string& dir, FileHold hold) {
  auto hf = std::make_shared<HFModelDir>(dir, hold);
  const HFModelDir& m = *hf;
  const auto& j = m.config();
  const std::string file = dir + "/config.json";
  ModelConfig c;
  std::string mt = json_string(cfg_need(j, "model_type", file), file, "model_type");
  if (mt == "llama" || mt == "mistral") c.arch = "llama";
  else if (mt == "qwen2" || mt == "qwen3") c.arch = mt;
  else if (mt == "qwen3_moe") c.arch = "qwen3moe";
  else fail("{}: model_type '{}' is not supported (expected llama, mistral, qwen2, qwen3 or qwen3_moe)", file, excerpt(mt));
  c.n_layers = cfg_dim(j, "num_hidden_layers", file);
  c.d_model = cfg_dim(j, "hidden_size", file);
  c.n_heads = cfg_dim(j, "num_attention_heads", file);
  c.n_kv_heads = cfg_dim_or(j, "num_key_value_heads", c.n_heads, file);
  check(c.n_heads > 0, "{}: num_attention_heads must be positive", file);
  c.head_dim = cfg_dim_or(j, "head_dim", c.d_model / c.n_heads, file);
  if (c.arch == "qwen3moe") {
    c.n_expert = cfg_dim(j, "num_experts", file);
    c.n_expert_used = cfg_dim(j, "num_experts_per_tok", file);
    c.d_ff_expert = cfg_dim(j, "moe_intermediate_size", file);
    c.norm_topk_prob = cfg_bool_or(j, "norm_topk_prob", false, file);  // transformers' default
    c.d_ff = cfg_dim_or(j, "intermediate_size", c.d_ff_expert, file);  // unused: every layer is MoE
    // Dense layers among the MoE ones (Qwen3MoeConfig) are not implemented: no Qwen3-MoE release has them.
    const int step = cfg_dim_or(j, "decoder_sparse_step", 1, file);
    check(step == 1, "{}: decoder_sparse_step is {}, only 1 (every layer a mixture of experts) is supported", file,
          step);
    if (const auto* v = cfg_find(j, "mlp_only_layers"))
      check(v->is_array() && v->empty(), "{}: mlp_only_layers must be an empty list (dense layers in a MoE model "
            "are not supported), got {}", file, excerpt(v->dump()));
  } else {
    c.d_ff = cfg_dim(j, "intermediate_size", file);
  }
  c.vocab_size = cfg_dim(j, "vocab_size", file);
  if (const auto* v = cfg_find(j, "max_position_embeddings"))
    c.max_context = static_cast<int>(json_int(*v, file, "max_position_embeddings", 0, kMaxInt32));
  c.rope_theta = cfg_number_or(j, "rope_theta", 10000.0, file);
  c.norm_eps = cfg_number_or(j, "rms_norm_eps", 1e-6, file);
  c.qk_norm = c.arch == "qwen3" || c.arch == "qwen3moe";
  c.qkv_bias = c.arch == "qwen2" || cfg_bool_or(j, "attention_bias", false, file);
  c.tied_embeddings = cfg_bool_or(j, "tie_word_embeddings", false, file) || !m.has_tensor(tensor_name(TensorFormat::hf, Weight::lm_head));
  if (j.contains("rope_scaling") && j["rope_scaling"].is_object()) {
    const auto& rs = j["rope_scaling"];
    std::string type = cfg_string_or(rs, "rope_type", cfg_string_or(rs, "type", "", file), file);
    if (type == "llama3") {
      c.rope_scaling.enabled = true;
      c.rope_scaling.factor = json_number(cfg_need(rs, "factor", file), file, "rope_scaling.factor", 1e-6, 1e6);
      c.rope_scaling.low_freq_factor = cfg_number_or(rs, "low_freq_factor", 1.0, file);
      c.rope_scaling.high_freq_factor = cfg_number_or(rs, "high_freq_factor", 4.0, file);
      if (const auto* v = cfg_find(rs, "original_max_position_embeddings"))
        c.rope_scaling.original_max_position = json_int(*v, file, "rope_scaling.original_max_position_embeddings", 1, kMaxInt32);
    } else if (!type.empty() && type != "default") {
      fail("{}: rope_scaling type '{}' is not supported (expected llama3 or none)", file, excerpt(type));
    }
  }
  c.validate(file);

  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  auto get = [&](const std::string& name, std::vector<int64_t> shape) {
    const SafeTensor& t = m.tensor(name);
    if (t.shape != shape)
      fail("{}: tensor {} has shape [{}], expected [{}] from config.json", t.file, name, fmt::join(t.shape, ", "),
           fmt::join(shape, ", "));
    return to_floats(t.type, t.data, t.numel());
  };
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
    const SafeTensor& t = m.tensor(name);
    if (t.shape != std::vector<int64_t>{rows, cols})
      fail("{}: tensor {} has shape [{}], expected [{}, {}] from config.json", t.file, name, fmt::join(t.shape, ", "),
           rows, cols);
    return view_of(t.type, t.data, rows, cols);
  };
  ModelWeights w;
  ModelMatrices mw;
  mw.keep_alive = hf;
  mw.tok_embd = matrix(tensor_name(TensorFormat::hf, Weight::tok_embd), V, d);
  w.out_norm = get(tensor_name(TensorFormat::hf, Weight::out_norm), {d});
  if (!c.tied_embeddings) mw.lm_head = matrix(tensor_name(TensorFormat::hf, Weight::lm_head), V, d);
  const std::string last = tensor_name(TensorFormat::hf, Weight::attn_norm, c.n_layers - 1);
  check(m.has_tensor(last), "{}: num_hidden_layers is {}, but the weights have no tensor {}", file, c.n_layers, last);
  w.layers.resize(c.n_layers);
  mw.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    auto& L = w.layers[l];
    auto& M = mw.layers[l];
    L.attn_norm = get(tensor_name(TensorFormat::hf, Weight::attn_norm, l), {d});
    M.wq = matrix(tensor_name(TensorFormat::hf, Weight::wq, l), nh * hd, d);
    M.wk = matrix(tensor_name(TensorFormat::hf, Weight::wk, l), nkv * hd, d);
    M.wv = matrix(tensor_name(TensorFormat::hf, Weight::wv, l), nkv * hd, d);
    M.wo = matrix(tensor_name(TensorFormat::hf, Weight::wo, l), d, nh * hd);
    if (c.qkv_bias) {
      L.bq = get(tensor_name(TensorFormat::hf, Weight::bq, l), {nh * hd});
      L.bk = get(tensor_name(TensorFormat::hf, Weight::bk, l), {nkv * hd});
      L.bv = get(tensor_name(TensorFormat::hf, Weight::bv, l), {nkv * hd});
    }
    if (c.qk_norm) {
      L.q_norm = get(tensor_name(TensorFormat::hf, Weight::q_norm, l), {hd});
      L.k_norm = get(tensor_name(TensorFormat::hf, Weight::k_norm, l), {hd});
    }
    L.ffn_norm = get(tensor_name(TensorFormat::hf, Weight::ffn_norm, l), {d});
    if (c.is_moe()) {
      const int64_t fe = c.d_ff_expert;
      M.experts.router = matrix(tensor_name(TensorFormat::hf, Weight::router, l), c.n_expert, d);
      for (int e = 0; e < c.n_expert; ++e) {
        M.experts.gate.push_back(matrix(tensor_name(TensorFormat::hf, Weight::expert_gate, l, e), fe, d));
        M.experts.up.push_back(matrix(tensor_name(TensorFormat::hf, Weight::expert_up, l, e), fe, d));
        M.experts.down.push_back(matrix(tensor_name(TensorFormat::hf, Weight::expert_down, l, e), d, fe));
      }
      continue;
    }
    M.w_gate = matrix(tensor_name(TensorFormat::hf, Weight::w_gate, l), ff, d);
    M.w_up = matrix(tensor_name(TensorFormat::hf, Weight::w_up, l), ff, d);
    M.w_down = matrix(tensor_name(TensorFormat::hf, Weight::w_down, l), d, ff);
  }
  return std::make_unique<Model>(c, std::move(w), std::move(mw), dir);
}

}  // namespace

std::unique_ptr<Model> Model::load(const std::string& path, FileHold hold) {
  return load(ModelFile::open(path, hold));
}

std::unique_ptr<Model> Model::load(const ModelFile& file) {
  if (file.kind == SourceKind::hf_dir) return load_hf(file.path, file.hold);
  check(file.kind == SourceKind::gguf && file.gguf, "'{}': not an opened model file", file.path);
  return load_gguf(*file.gguf);
}

}  // namespace bosch
