#include "model/model_writer.h"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "formats/writers.h"
#include "model/random_vocab.h"
#include "util/atomic_file.h"
#include "util/error.h"
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
  } else if (like == "tiny") {
    c.n_layers = 3; c.d_model = 64; c.n_heads = 8; c.n_kv_heads = 4; c.head_dim = 16; c.d_ff = 96;
    c.vocab_size = 300; c.rope_theta = 10000; c.norm_eps = 1e-5; c.tied_embeddings = false; c.max_context = 4096;
  } else {
    fail("--like '{}' is not known (expected 0.6b, 1.7b, 30b-a3b or tiny)", like);
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
  ts.push_back(tensor("model.embed_tokens.weight", {V, d}, w.tok_embd, dtype));
  ts.push_back(tensor("model.norm.weight", {d}, w.out_norm, dtype));
  if (!w.lm_head.empty()) ts.push_back(tensor("lm_head.weight", {V, d}, w.lm_head, dtype));
  for (int l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    std::string p = "model.layers." + std::to_string(l) + ".";
    ts.push_back(tensor(p + "input_layernorm.weight", {d}, L.attn_norm, dtype));
    ts.push_back(tensor(p + "self_attn.q_proj.weight", {nh * hd, d}, L.wq, dtype));
    ts.push_back(tensor(p + "self_attn.k_proj.weight", {nkv * hd, d}, L.wk, dtype));
    ts.push_back(tensor(p + "self_attn.v_proj.weight", {nkv * hd, d}, L.wv, dtype));
    ts.push_back(tensor(p + "self_attn.o_proj.weight", {d, nh * hd}, L.wo, dtype));
    if (c.qkv_bias) {
      ts.push_back(tensor(p + "self_attn.q_proj.bias", {nh * hd}, L.bq, dtype));
      ts.push_back(tensor(p + "self_attn.k_proj.bias", {nkv * hd}, L.bk, dtype));
      ts.push_back(tensor(p + "self_attn.v_proj.bias", {nkv * hd}, L.bv, dtype));
    }
    if (c.qk_norm) {
      ts.push_back(tensor(p + "self_attn.q_norm.weight", {hd}, L.q_norm, dtype));
      ts.push_back(tensor(p + "self_attn.k_norm.weight", {hd}, L.k_norm, dtype));
    }
    ts.push_back(tensor(p + "post_attention_layernorm.weight", {d}, L.ffn_norm, dtype));
    if (c.is_moe()) {  // Hugging Face keeps one tensor per expert
      const int64_t fe = c.d_ff_expert;
      ts.push_back(tensor(p + "mlp.gate.weight", {c.n_expert, d}, L.w_router, dtype));
      auto slice = [](const std::vector<float>& all, int e, int64_t n) {
        return std::vector<float>(all.begin() + e * n, all.begin() + (e + 1) * n);
      };
      for (int e = 0; e < c.n_expert; ++e) {
        const std::string pe = p + "mlp.experts." + std::to_string(e) + ".";
        ts.push_back(tensor(pe + "gate_proj.weight", {fe, d}, slice(L.w_gate_exps, e, fe * d), dtype));
        ts.push_back(tensor(pe + "up_proj.weight", {fe, d}, slice(L.w_up_exps, e, fe * d), dtype));
        ts.push_back(tensor(pe + "down_proj.weight", {d, fe}, slice(L.w_down_exps, e, d * fe), dtype));
      }
      continue;
    }
    ts.push_back(tensor(p + "mlp.gate_proj.weight", {ff, d}, L.w_gate, dtype));
    ts.push_back(tensor(p + "mlp.up_proj.weight", {ff, d}, L.w_up, dtype));
    ts.push_back(tensor(p + "mlp.down_proj.weight", {d, ff}, L.w_down, dtype));
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

void save_gguf(const ModelConfig& c, const ModelWeights& w, const std::string& path, DType dtype) {
  check(!c.rope_scaling.enabled, "save_gguf: rope scaling is not written (use rope_freqs)");
  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
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
  ts.push_back(tensor("token_embd.weight", {V, d}, w.tok_embd, dtype));
  ts.push_back(tensor("output_norm.weight", {d}, w.out_norm, dtype));
  if (!w.lm_head.empty()) ts.push_back(tensor("output.weight", {V, d}, w.lm_head, dtype));
  for (int l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    std::string p = "blk." + std::to_string(l) + ".";
    bool perm = a == "llama";
    ts.push_back(tensor(p + "attn_norm.weight", {d}, L.attn_norm, dtype));
    ts.push_back(tensor(p + "attn_q.weight", {nh * hd, d}, perm ? permute_rope_rows(L.wq, nh, hd, d) : L.wq, dtype));
    ts.push_back(tensor(p + "attn_k.weight", {nkv * hd, d}, perm ? permute_rope_rows(L.wk, nkv, hd, d) : L.wk, dtype));
    ts.push_back(tensor(p + "attn_v.weight", {nkv * hd, d}, L.wv, dtype));
    ts.push_back(tensor(p + "attn_output.weight", {d, nh * hd}, L.wo, dtype));
    if (c.qkv_bias) {
      ts.push_back(tensor(p + "attn_q.bias", {nh * hd}, L.bq, dtype));
      ts.push_back(tensor(p + "attn_k.bias", {nkv * hd}, L.bk, dtype));
      ts.push_back(tensor(p + "attn_v.bias", {nkv * hd}, L.bv, dtype));
    }
    if (c.qk_norm) {
      ts.push_back(tensor(p + "attn_q_norm.weight", {hd}, L.q_norm, dtype));
      ts.push_back(tensor(p + "attn_k_norm.weight", {hd}, L.k_norm, dtype));
    }
    ts.push_back(tensor(p + "ffn_norm.weight", {d}, L.ffn_norm, dtype));
    if (c.is_moe()) {  // experts stacked in 3-D tensors; the router in F32, as llama.cpp's quantizer leaves it
      const int64_t E = c.n_expert, fe = c.d_ff_expert;
      ts.push_back(tensor(p + "ffn_gate_inp.weight", {E, d}, L.w_router, DType::F32));
      ts.push_back(tensor(p + "ffn_gate_exps.weight", {E, fe, d}, L.w_gate_exps, dtype));
      ts.push_back(tensor(p + "ffn_up_exps.weight", {E, fe, d}, L.w_up_exps, dtype));
      ts.push_back(tensor(p + "ffn_down_exps.weight", {E, d, fe}, L.w_down_exps, dtype));
      continue;
    }
    ts.push_back(tensor(p + "ffn_gate.weight", {ff, d}, L.w_gate, dtype));
    ts.push_back(tensor(p + "ffn_up.weight", {ff, d}, L.w_up, dtype));
    ts.push_back(tensor(p + "ffn_down.weight", {d, ff}, L.w_down, dtype));
  }
  write_gguf(path, meta, ts);
}

}  // namespace bosch
