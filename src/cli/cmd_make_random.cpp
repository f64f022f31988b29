// `bosch make-random`: a random-weight model with the real shapes of a known model, so speed
// can be measured at realistic size without downloading weights. Shape options override the
// --like shape (a narrow testbed's cost is measured before anyone builds its circuit).
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.h"
#include "formats/dtype.h"
#include "model/model_writer.h"
#include "util/error.h"
#include "util/file_bytes.h"

namespace bosch::cli {
namespace {

struct MakeRandomOptions {
  std::string arch = "qwen3", like = "0.6b", out, format = "hf", dtype = "bf16";
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;  // 0: as --like
  uint64_t seed = 1;
};

// Weights of the shape (every expert of a MoE).
double weight_count(const ModelConfig& c) {
  const double d = c.d_model, attn = d * c.head_dim * 2.0 * (c.n_heads + c.n_kv_heads);
  const double ffn = c.is_moe() ? d * c.n_expert * (1.0 + 3.0 * c.d_ff_expert) : 3.0 * d * c.d_ff;
  return c.n_layers * (attn + ffn) + (c.tied_embeddings ? 1.0 : 2.0) * c.vocab_size * d;
}

void run(const MakeRandomOptions& o) {
  ModelConfig c = config_like(o.arch, o.like);
  for (auto [v, field] : {std::pair{o.layers, &c.n_layers}, {o.hidden, &c.d_model}, {o.heads, &c.n_heads},
                          {o.kv_heads, &c.n_kv_heads}, {o.head_dim, &c.head_dim}, {o.ffn, &c.d_ff}})
    if (v > 0) *field = v;
  check(o.ffn == 0 || !c.is_moe(), "--ffn sets a dense model's feed-forward size; --arch qwen3moe has experts");
  if (c.arch == "qwen2") {  // Qwen2 has no head_dim setting (config_like): hidden / heads
    check(c.d_model % c.n_heads == 0, "--arch qwen2: the hidden size ({}) must be a multiple of the heads ({})",
          c.d_model, c.n_heads);
    check(o.head_dim == 0 || o.head_dim == c.d_model / c.n_heads,
          "--arch qwen2: --head-dim must be hidden / heads = {} (llama.cpp reads no head dim), got {}",
          c.d_model / c.n_heads, o.head_dim);
    c.head_dim = c.d_model / c.n_heads;
  }
  c.validate("bosch make-random --like " + o.like + " with the shape options");
  const GgufDtype t = parse_gguf_dtype(o.dtype);
  // Bytes per weight of the written file (a quantised type's block bytes over its elements).
  const double file_bytes = weight_count(c) * static_cast<double>(dtype_block_bytes(t.base)) /
                            static_cast<double>(dtype_block(t.base));
  if (o.format == "hf") {
    check(t.base == DType::F32 || t.base == DType::F16 || t.base == DType::BF16,
          "--dtype {} is only for --format gguf (safetensors holds f32, f16 or bf16)", o.dtype);
    // random_weights holds float32, then save_hf an encoded copy of every tensor until it writes.
    const double need = weight_count(c) * 4 + file_bytes, avail = static_cast<double>(mem_available_bytes());
    check(avail == 0 || need < 0.8 * avail,
          "--format hf holds every weight in memory (float32, then encoded): {:.1f} GB for this shape, but 80% of "
          "the {:.1f} GB available is the limit; use --format gguf (written as it is made) or a smaller shape",
          need / 1e9, avail / 1e9);
    save_hf(c, random_weights(c, o.seed), o.out, t.base);
  } else if (o.format == "gguf") {
    std::error_code ec;
    const auto dir = std::filesystem::absolute(o.out).parent_path();
    const auto space = std::filesystem::space(dir, ec);
    check(ec || file_bytes < static_cast<double>(space.available),
          "--out {}: this shape writes {:.1f} GB, but {} has {:.1f} GB free", o.out, file_bytes / 1e9, dir.string(),
          static_cast<double>(space.available) / 1e9);
    save_gguf_random(c, o.seed, o.out, t);  // streamed: memory holds one tensor
  } else {
    fail("--format '{}' is not known (expected hf or gguf)", o.format);
  }
  fmt::print("wrote {} ({} {} layers, d={}, {} heads / {} KV, vocab {}, {})\n", o.out, c.arch, c.n_layers, c.d_model,
             c.n_heads, c.n_kv_heads, c.vocab_size, o.dtype);
}

CommandRegistrar reg("make-random", "write a random-weight model with the shapes of a real one", [](CLI::App& app) {
  auto o = std::make_shared<MakeRandomOptions>();
  add_opt(app, "--arch", o->arch, "llama, qwen2, qwen3 or qwen3moe");
  add_opt(app, "--like", o->like, "0.6b, 1.7b, 8b, 14b (Qwen3 shapes) or tiny; qwen3moe: 30b-a3b or tiny");
  const auto shape = [&](const char* name, int* v, const char* what) {
    add_opt(app, name, *v, std::string("override ") + what)->check(CLI::Range(1, (1 << 24) - 1));
  };
  shape("--layers", &o->layers, "the number of layers");
  shape("--hidden", &o->hidden, "the hidden size");
  shape("--heads", &o->heads, "the number of query heads");
  shape("--kv-heads", &o->kv_heads, "the number of KV heads");
  shape("--head-dim", &o->head_dim, "the head dimension");
  shape("--ffn", &o->ffn, "the feed-forward size (dense models)");
  add_opt(app, "--format", o->format, "hf (directory) or gguf (file)");
  add_opt(app, "--dtype", o->dtype, "f32, f16, bf16; for gguf also q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m, q5_k_m");
  add_opt(app, "--seed", o->seed, "weight seed");
  add_opt(app, "--out", o->out, "output directory (hf) or file (gguf)")->required();
  app.callback([o] { run(*o); });
});

}  // namespace
}  // namespace bosch::cli
