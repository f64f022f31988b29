#include "model/model_writer.h"

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "formats/writers.h"
#include "model/random_vocab.h"
#include "model/tensor_names.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/parallel.h"
#include "util/splitmix.h"

namespace bosch {

namespace {

struct Rng {
  uint64_t s;
  double uniform() { return ((splitmix64(s) >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1): log() is finite
  float normal() {  // Box-Muller
    return static_cast<float>(std::sqrt(-2.0 * std::log(uniform())) * std::cos(2 * M_PI * uniform()));
  }
};

std::vector<float> randn(Rng& r, size_t n, float std, float mean = 0) {
  std::vector<float> v(n);
  for (auto& x : v) x = mean + std * r.normal();
  return v;
}

// Inverse of the un-permutation in loader.cpp: HF row h*hd + i*hd/2 + j -> GGUF row h*hd + 2j + i.
std::vector<float> permute_rope_rows(const std::vector<float>& w, int n_heads, int hd, int in) {
  std::vector<float> out(w.size());
  for (int h = 0; h < n_heads; ++h)
    for (int j = 0; j < hd / 2; ++j)
      for (int i = 0; i < 2; ++i) {
        size_t src = (static_cast<size_t>(h) * hd + i * (hd / 2) + j) * in;
        size_t dst = (static_cast<size_t>(h) * hd + 2 * j + i) * in;
        std::copy(w.begin() + src, w.begin() + src + in, out.begin() + dst);
      }
  return out;
}

TensorToWrite tensor(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v, DType t) {
  // Norm weights and biases stay F32 (as converters do); 1-D tensors of block types cannot be quantised.
  if (shape.size() == 1 || (t == DType::Q8_0 && shape.back() % 32 != 0)) t = DType::F32;
  return {name, std::move(shape), t, encode_f32(t, v.data(), v.size())};
}

}  // namespace

ModelConfig config_like(const std::string& arch, const std::string& like) {
  ModelConfig c;
  c.arch = arch;
  if (like == "0.6b") {
    c.n_layers = 28; c.d_model = 1024; c.n_heads = 16; c.n_kv_heads = 8; c.head_dim = 128; c.d_ff = 3072;
    c.vocab_size = 151936; c.rope_theta = 1e6; c.norm_eps = 1e-6; c.tied_embeddings = true; c.max_context = 40960;
  } else if (like == "1.7b") {
    c.n_layers = 28; c.d_model = 2048; c.n_heads = 16; c.n_kv_heads = 8; c.head_dim = 128; c.d_ff = 6144;
    c.vocab_size = 151936; c.rope_theta = 1e6; c.norm_eps = 1e-6; c.tied_embeddings = true; c.max_context = 40960;
  } else if (like == "30b-a3b") {  // Qwen3-30B-A3B (config.json of Qwen/Qwen3-30B-A3B)
    c.n_layers = 48; c.d_model = 2048; c.n_heads = 32; c.n_kv_heads = 4; c.head_dim = 128; c.d_ff = 6144;
    c.vocab_size = 151936; c.rope_theta = 1e6; c.norm_eps = 1e-6; c.tied_embeddings = false; c.max_context = 40960;
    c.n_expert = 128; c.n_expert_used = 8; c.d_ff_expert = 768;
  } else if (like == "8b") {  // Qwen3-8B's config.json
    c.n_layers = 36; c.d_model = 4096; c.n_heads = 32; c.n_kv_heads = 8; c.head_dim = 128; c.d_ff = 12288;
    c.vocab_size = 151936; c.rope_theta = 1e6; c.norm_eps = 1e-6; c.tied_embeddings = false; c.max_context = 40960;
  } else if (like == "14b") {  // Qwen3-14B's config.json
    c.n_layers = 40; c.d_model = 5120; c.n_heads = 40; c.n_kv_heads = 8; c.head_dim = 128; c.d_ff = 17408;
    c.vocab_size = 151936; c.rope_theta = 1e6; c.norm_eps = 1e-6; c.tied_embeddings = false; c.max_context = 40960;
  } else if (like == "tiny") {
    c.n_layers = 3; c.d_model = 64; c.n_heads = 8; c.n_kv_heads = 4; c.head_dim = 16; c.d_ff = 96;
    c.vocab_size = 300; c.rope_theta = 10000; c.norm_eps = 1e-5; c.tied_embeddings = false; c.max_context = 4096;
  } else {
    fail("--like '{}' is not known (expected 0.6b, 1.7b, 8b, 14b, 30b-a3b or tiny)", like);
  }
  // A MoE shape only for the MoE architecture, and back: "--arch qwen3moe --like tiny" gets
  // a tiny mixture (8 experts, 2 used).
  check((arch == "qwen3moe") == (like == "30b-a3b" || (arch == "qwen3moe" && like == "tiny")),
        "--like {} is not a shape of --arch {} (qwen3moe: 30b-a3b or tiny; 30b-a3b: qwen3moe only)", like, arch);
  if (arch == "qwen3moe") {
    c.norm_topk_prob = true;
    if (like == "tiny") c.n_expert = 8, c.n_expert_used = 2, c.d_ff_expert = 32;
  }
  c.qk_norm = arch == "qwen3" || arch == "qwen3moe";
  c.qkv_bias = arch == "qwen2";
  // Qwen2 has no head_dim setting: HF and llama.cpp (attn_q must be [hidden x hidden]) take
  // hidden / heads, so the shape must follow or llama.cpp refuses the file.
  if (arch == "qwen2") c.head_dim = c.d_model / c.n_heads;
  c.validate("--arch " + arch);
  return c;
}

ModelWeights random_weights(const ModelConfig& c, uint64_t seed, float std) {
  Rng r{seed};
  const size_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  ModelWeights w;
  w.tok_embd = randn(r, V * d, std);
  w.out_norm = randn(r, d, 0.1f, 1.0f);
  if (!c.tied_embeddings) w.lm_head = randn(r, V * d, std);
  w.layers.resize(c.n_layers);
  for (auto& L : w.layers) {
    L.attn_norm = randn(r, d, 0.1f, 1.0f);
    L.wq = randn(r, nh * hd * d, std);
    L.wk = randn(r, nkv * hd * d, std);
    L.wv = randn(r, nkv * hd * d, std);
    L.wo = randn(r, d * nh * hd, std);
    if (c.qkv_bias) {
      L.bq = randn(r, nh * hd, std);
      L.bk = randn(r, nkv * hd, std);
      L.bv = randn(r, nkv * hd, std);
    }
    if (c.qk_norm) {
      L.q_norm = randn(r, hd, 0.1f, 1.0f);
      L.k_norm = randn(r, hd, 0.1f, 1.0f);
    }
    L.ffn_norm = randn(r, d, 0.1f, 1.0f);
    if (c.is_moe()) {
      const size_t E = c.n_expert, fe = c.d_ff_expert;
      L.w_router = randn(r, E * d, std);
      L.w_gate_exps = randn(r, E * fe * d, std);
      L.w_up_exps = randn(r, E * fe * d, std);
      L.w_down_exps = randn(r, E * d * fe, std);
      continue;
    }
    L.w_gate = randn(r, ff * d, std);
    L.w_up = randn(r, ff * d, std);
    L.w_down = randn(r, d * ff, std);
  }
  return w;
}

void save_hf(const ModelConfig& c, const ModelWeights& w, const std::string& dir, DType dtype) {
  std::filesystem::create_directories(dir);
  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  std::vector<TensorToWrite> ts;
  ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::tok_embd), {V, d}, w.tok_embd, dtype));
  ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::out_norm), {d}, w.out_norm, dtype));
  if (!w.lm_head.empty()) ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::lm_head), {V, d}, w.lm_head, dtype));
  for (int l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::attn_norm, l), {d}, L.attn_norm, dtype));
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::wq, l), {nh * hd, d}, L.wq, dtype));
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::wk, l), {nkv * hd, d}, L.wk, dtype));
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::wv, l), {nkv * hd, d}, L.wv, dtype));
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::wo, l), {d, nh * hd}, L.wo, dtype));
    if (c.qkv_bias) {
      ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::bq, l), {nh * hd}, L.bq, dtype));
      ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::bk, l), {nkv * hd}, L.bk, dtype));
      ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::bv, l), {nkv * hd}, L.bv, dtype));
    }
    if (c.qk_norm) {
      ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::q_norm, l), {hd}, L.q_norm, dtype));
      ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::k_norm, l), {hd}, L.k_norm, dtype));
    }
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::ffn_norm, l), {d}, L.ffn_norm, dtype));
    if (c.is_moe()) {  // Hugging Face keeps one tensor per expert
      const int64_t fe = c.d_ff_expert;
      ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::router, l), {c.n_expert, d}, L.w_router, dtype));
      auto slice = [](const std::vector<float>& all, int e, int64_t n) {
        return std::vector<float>(all.begin() + e * n, all.begin() + (e + 1) * n);
      };
      for (int e = 0; e < c.n_expert; ++e) {
        ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::expert_gate, l, e), {fe, d}, slice(L.w_gate_exps, e, fe * d), dtype));
        ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::expert_up, l, e), {fe, d}, slice(L.w_up_exps, e, fe * d), dtype));
        ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::expert_down, l, e), {d, fe}, slice(L.w_down_exps, e, d * fe), dtype));
      }
      continue;
    }
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::w_gate, l), {ff, d}, L.w_gate, dtype));
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::w_up, l), {ff, d}, L.w_up, dtype));
    ts.push_back(tensor(tensor_name(TensorFormat::hf, Weight::w_down, l), {d, ff}, L.w_down, dtype));
  }
  write_safetensors(dir + "/model.safetensors", ts);
  nlohmann::json j;
  j["architectures"] = {c.arch == "llama"      ? "LlamaForCausalLM"
                        : c.arch == "qwen2"    ? "Qwen2ForCausalLM"
                        : c.arch == "qwen3moe" ? "Qwen3MoeForCausalLM"
                                               : "Qwen3ForCausalLM"};
  j["model_type"] = c.arch == "qwen3moe" ? "qwen3_moe" : c.arch;
  if (c.is_moe()) {
    j["num_experts"] = c.n_expert;
    j["num_experts_per_tok"] = c.n_expert_used;
    j["moe_intermediate_size"] = c.d_ff_expert;
    j["norm_topk_prob"] = c.norm_topk_prob;
    j["decoder_sparse_step"] = 1;
    j["mlp_only_layers"] = nlohmann::json::array();
  }
  j["hidden_size"] = c.d_model;
  j["intermediate_size"] = c.d_ff;
  j["num_hidden_layers"] = c.n_layers;
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_context;
  j["rope_theta"] = c.rope_theta;
  j["rms_norm_eps"] = c.norm_eps;
  j["tie_word_embeddings"] = w.lm_head.empty();
  j["torch_dtype"] = dtype == DType::BF16 ? "bfloat16" : dtype == DType::F16 ? "float16" : "float32";
  if (c.rope_scaling.enabled) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling.factor},
                         {"low_freq_factor", c.rope_scaling.low_freq_factor},
                         {"high_freq_factor", c.rope_scaling.high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling.original_max_position}};
  }
  write_file_atomic(dir + "/config.json", j.dump(2) + "\n");
}

namespace {

// One tensor of a GGUF model: name, PyTorch shape, block index (-1: not in a block) and the
// float values, produced when the writer reaches it (so a whole model is never in memory).
struct GgufEntry {
  std::string name;
  std::vector<int64_t> shape;
  int layer = -1;
  std::function<std::vector<float>()> values;
};

// The tensors of `c` in GGUF names and conventions (llama Q/K rows permuted as llama.cpp's
// converter does); get(role, layer, n) gives the HF-layout values of a tensor of n elements.
using TensorGetter = std::function<std::vector<float>(const std::string& role, int layer, size_t n)>;

std::vector<GgufEntry> gguf_entries(const ModelConfig& c, const TensorGetter& get) {
  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  std::vector<GgufEntry> es;
  auto add = [&](std::string name, std::vector<int64_t> shape, const std::string& role, int layer,
                 int permute_heads = 0) {
    size_t n = 1;
    for (int64_t x : shape) n *= static_cast<size_t>(x);
    const int64_t in = shape.back();
    es.push_back({std::move(name), std::move(shape), layer, [=, &get] {
                    std::vector<float> v = get(role, layer, n);
                    return permute_heads ? permute_rope_rows(v, permute_heads, static_cast<int>(hd), static_cast<int>(in)) : v;
                  }});
  };
  add(tensor_name(TensorFormat::gguf, Weight::tok_embd), {V, d}, "tok_embd", -1);
  add(tensor_name(TensorFormat::gguf, Weight::out_norm), {d}, "out_norm", -1);
  if (!c.tied_embeddings) add(tensor_name(TensorFormat::gguf, Weight::lm_head), {V, d}, "lm_head", -1);
  const bool perm = c.arch == "llama";
  for (int l = 0; l < c.n_layers; ++l) {
    add(tensor_name(TensorFormat::gguf, Weight::attn_norm, l), {d}, "attn_norm", l);
    add(tensor_name(TensorFormat::gguf, Weight::wq, l), {nh * hd, d}, "wq", l, perm ? static_cast<int>(nh) : 0);
    add(tensor_name(TensorFormat::gguf, Weight::wk, l), {nkv * hd, d}, "wk", l, perm ? static_cast<int>(nkv) : 0);
    add(tensor_name(TensorFormat::gguf, Weight::wv, l), {nkv * hd, d}, "wv", l);
    add(tensor_name(TensorFormat::gguf, Weight::wo, l), {d, nh * hd}, "wo", l);
    if (c.qkv_bias) {
      add(tensor_name(TensorFormat::gguf, Weight::bq, l), {nh * hd}, "bq", l);
      add(tensor_name(TensorFormat::gguf, Weight::bk, l), {nkv * hd}, "bk", l);
      add(tensor_name(TensorFormat::gguf, Weight::bv, l), {nkv * hd}, "bv", l);
    }
    if (c.qk_norm) {
      add(tensor_name(TensorFormat::gguf, Weight::q_norm, l), {hd}, "q_norm", l);
      add(tensor_name(TensorFormat::gguf, Weight::k_norm, l), {hd}, "k_norm", l);
    }
    add(tensor_name(TensorFormat::gguf, Weight::ffn_norm, l), {d}, "ffn_norm", l);
    if (c.is_moe()) {  // experts stacked in 3-D tensors (the router stays F32: gguf_type_of)
      const int64_t E = c.n_expert, fe = c.d_ff_expert;
      add(tensor_name(TensorFormat::gguf, Weight::router, l), {E, d}, "w_router", l);
      add(tensor_name(TensorFormat::gguf, Weight::gate_exps, l), {E, fe, d}, "w_gate_exps", l);
      add(tensor_name(TensorFormat::gguf, Weight::up_exps, l), {E, fe, d}, "w_up_exps", l);
      add(tensor_name(TensorFormat::gguf, Weight::down_exps, l), {E, d, fe}, "w_down_exps", l);
      continue;
    }
    add(tensor_name(TensorFormat::gguf, Weight::w_gate, l), {ff, d}, "w_gate", l);
    add(tensor_name(TensorFormat::gguf, Weight::w_up, l), {ff, d}, "w_up", l);
    add(tensor_name(TensorFormat::gguf, Weight::w_down, l), {d, ff}, "w_down", l);
  }
  return es;
}

// llama.cpp's mixes give some layers' attn_v and ffn_down more bits: the first and last eighth
// of the blocks and every third block in between.
bool more_bits_layer(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

bool ends_with(const std::string& s, const std::string& t) {
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

DType gguf_type_of(const GgufDtype& spec, const GgufEntry& e, const ModelConfig& c) {
  if (e.shape.size() == 1) return DType::F32;  // norms and biases stay F32, as converters do
  if (ends_with(e.name, "ffn_gate_inp.weight")) return DType::F32;  // the MoE router, as llama.cpp's quantizer leaves it
  DType t = spec.base;
  if (spec.mix != DType::F32) {  // Q4_K_M / Q5_K_M
    const bool tied_embd = c.tied_embeddings && e.name == tensor_name(TensorFormat::gguf, Weight::tok_embd);
    if (e.name == tensor_name(TensorFormat::gguf, Weight::lm_head) || tied_embd) t = DType::Q6_K;  // the LM head
    else if ((ends_with(e.name, "attn_v.weight") || ends_with(e.name, "ffn_down.weight")) &&
             more_bits_layer(e.layer, c.n_layers))
      t = spec.mix;
  }
  // Rows (the last PyTorch dim) must hold whole blocks; small test shapes fall back.
  const int64_t in = e.shape.back();
  if (dtype_block(t) > 1 && in % static_cast<int64_t>(dtype_block(t)) != 0)
    t = in % 32 == 0 ? DType::Q8_0 : DType::F32;
  return t;
}

// Writes the entries through the streaming GGUF writer, encoding each tensor in parallel chunks
// of rows when it is reached.
void write_entries(const ModelConfig& c, const std::vector<GgufEntry>& es, const std::string& path,
                   const GgufDtype& spec) {
  check(!c.rope_scaling.enabled, "save_gguf: rope scaling is not written (use rope_freqs)");
  const std::string a = c.arch;
  std::map<std::string, GGUFValue> meta;
  meta["general.architecture"] = gguf_string(a);
  meta["general.name"] = gguf_string("bosch random " + a);
  meta[a + ".block_count"] = gguf_int(c.n_layers);
  meta[a + ".embedding_length"] = gguf_int(c.d_model);
  meta[a + ".feed_forward_length"] = gguf_int(c.d_ff);
  meta[a + ".attention.head_count"] = gguf_int(c.n_heads);
  meta[a + ".attention.head_count_kv"] = gguf_int(c.n_kv_heads);
  meta[a + ".attention.key_length"] = gguf_int(c.head_dim);
  meta[a + ".attention.value_length"] = gguf_int(c.head_dim);
  meta[a + ".context_length"] = gguf_int(c.max_context);
  meta[a + ".rope.freq_base"] = gguf_float(c.rope_theta);
  meta[a + ".attention.layer_norm_rms_epsilon"] = gguf_float(c.norm_eps);
  if (c.is_moe()) {
    check(c.norm_topk_prob, "save_gguf: qwen3moe GGUF files always renormalise the top-k weights");
    meta[a + ".expert_count"] = gguf_int(c.n_expert);
    meta[a + ".expert_used_count"] = gguf_int(c.n_expert_used);
    meta[a + ".expert_feed_forward_length"] = gguf_int(c.d_ff_expert);
  }
  // A tokenizer of the shape's vocabulary size: GGUF tools (llama.cpp) refuse files without one.
  // Test shapes below 257 tokens cannot hold the 256 byte tokens and are written without.
  if (c.vocab_size >= 257) add_byte_level_vocab(meta, c.vocab_size, pre_tokenizer_for_arch(a));
  std::vector<TensorToWrite> ts;
  for (const GgufEntry& e : es) ts.push_back({e.name, e.shape, gguf_type_of(spec, e, c), {}});
  write_gguf_streamed(path, meta, ts, [&](size_t i) {
    const std::vector<float> v = es[i].values();
    const DType t = ts[i].type;
    const size_t in = static_cast<size_t>(es[i].shape.back()), rows = v.size() / in;
    std::vector<uint8_t> out(dtype_bytes(t, v.size()));
    const size_t row_bytes = dtype_bytes(t, in);
    parallel_for(rows, [&](size_t b, size_t e) {
      encode_f32_into(t, v.data() + b * in, (e - b) * in, out.data() + b * row_bytes);
    }, 64);
    return out;
  });
}

// Near-normal(mean, std) values of one tensor from (seed, name): the sum of the four 16-bit
// parts of one splitmix64 output (Irwin-Hall, bounded at 3.46 std), 20x cheaper than Box-Muller,
// which would take minutes for an 8B model. Chunks of 64K elements each have their own stream,
// so they are generated in parallel and do not depend on the thread count.
std::vector<float> random_tensor(uint64_t seed, const std::string& name, size_t n, float std, float mean) {
  constexpr size_t kChunk = size_t{1} << 16;
  const uint64_t tseed = hash_combine(seed, hash_string(name));
  const float scale = std / (65535.0f * std::sqrt(4.0f / 12.0f));  // a sum of 4 U(0, 65535)
  std::vector<float> v(n);
  parallel_for((n + kChunk - 1) / kChunk, [&](size_t b, size_t e) {
    for (size_t ch = b; ch < e; ++ch) {
      uint64_t state = hash_combine(tseed, ch);
      for (size_t i = ch * kChunk; i < std::min(n, (ch + 1) * kChunk); ++i) {
        const uint64_t r = splitmix64(state);
        const float sum = static_cast<float>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48));
        v[i] = mean + (sum - 2.0f * 65535.0f) * scale;
      }
    }
  });
  return v;
}

}  // namespace

GgufDtype parse_gguf_dtype(const std::string& s) {
  static const std::map<std::string, GgufDtype> known = {
      {"f32", {DType::F32, DType::F32}},    {"f16", {DType::F16, DType::F32}},   {"bf16", {DType::BF16, DType::F32}},
      {"q8_0", {DType::Q8_0, DType::F32}},  {"q4_0", {DType::Q4_0, DType::F32}}, {"q4_k", {DType::Q4_K, DType::F32}},
      {"q5_k", {DType::Q5_K, DType::F32}},  {"q6_k", {DType::Q6_K, DType::F32}}, {"q4_k_m", {DType::Q4_K, DType::Q6_K}},
      {"q5_k_m", {DType::Q5_K, DType::Q6_K}}};
  auto it = known.find(s);
  if (it != known.end()) return it->second;
  std::string names;
  for (const auto& [k, v] : known) names += (names.empty() ? "" : ", ") + k;
  fail("--dtype '{}' is not known (expected one of {})", s, names);
}

void save_gguf(const ModelConfig& c, const ModelWeights& w, const std::string& path, DType dtype) {
  const TensorGetter get = [&](const std::string& role, int l, size_t) -> std::vector<float> {
    if (l < 0) return role == "tok_embd" ? w.tok_embd : role == "out_norm" ? w.out_norm : w.lm_head;
    const auto& L = w.layers[l];
    static const std::map<std::string, std::vector<float> LayerWeights::*> m = {
        {"attn_norm", &LayerWeights::attn_norm}, {"wq", &LayerWeights::wq}, {"wk", &LayerWeights::wk},
        {"wv", &LayerWeights::wv}, {"wo", &LayerWeights::wo}, {"bq", &LayerWeights::bq}, {"bk", &LayerWeights::bk},
        {"bv", &LayerWeights::bv}, {"q_norm", &LayerWeights::q_norm}, {"k_norm", &LayerWeights::k_norm},
        {"ffn_norm", &LayerWeights::ffn_norm}, {"w_gate", &LayerWeights::w_gate}, {"w_up", &LayerWeights::w_up},
        {"w_down", &LayerWeights::w_down}, {"w_router", &LayerWeights::w_router},
        {"w_gate_exps", &LayerWeights::w_gate_exps}, {"w_up_exps", &LayerWeights::w_up_exps},
        {"w_down_exps", &LayerWeights::w_down_exps}};
    return L.*(m.at(role));
  };
  ModelConfig cc = c;
  cc.tied_embeddings = w.lm_head.empty();
  write_entries(cc, gguf_entries(cc, get), path, {dtype, DType::F32});
}

void save_gguf_random(const ModelConfig& c, uint64_t seed, const std::string& path, const GgufDtype& dtype, float std) {
  const TensorGetter get = [&](const std::string& role, int l, size_t n) {
    const bool norm = role == "attn_norm" || role == "ffn_norm" || role == "out_norm" || role == "q_norm" ||
                      role == "k_norm";
    return random_tensor(seed, role + "." + std::to_string(l), n, norm ? 0.1f : std, norm ? 1.0f : 0.0f);
  };
  write_entries(c, gguf_entries(c, get), path, dtype);
}

}  // namespace bosch
