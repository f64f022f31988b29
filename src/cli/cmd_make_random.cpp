// `bosch make-random`: a random-weight model with the real shapes of a known model, so speed
// can be measured at realistic size without downloading weights.
#include <fmt/format.h>

#include "cli/command.h"
#include "model/model_writer.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct MakeRandomOptions {
  std::string arch = "qwen3", like = "0.6b", out, format = "hf", dtype = "bf16";
  int layers = 0;
  uint64_t seed = 1;
};

void run(const MakeRandomOptions& o) {
  ModelConfig c = config_like(o.arch, o.like);
  if (o.layers > 0) c.n_layers = o.layers;
  if (o.format == "hf") {
    const GgufDtype t = parse_gguf_dtype(o.dtype);
    check(t.base == DType::F32 || t.base == DType::F16 || t.base == DType::BF16,
          "--dtype {} is only for --format gguf (safetensors holds f32, f16 or bf16)", o.dtype);
    save_hf(c, random_weights(c, o.seed), o.out, t.base);
  } else if (o.format == "gguf") {
    save_gguf_random(c, o.seed, o.out, parse_gguf_dtype(o.dtype));  // streamed: any size fits
  } else {
    fail("--format '{}' is not known (expected hf or gguf)", o.format);
  }
  fmt::print("wrote {} ({} {} layers, d={}, {} heads / {} KV, vocab {}, {})\n", o.out, c.arch, c.n_layers, c.d_model,
             c.n_heads, c.n_kv_heads, c.vocab_size, o.dtype);
}

CommandRegistrar reg("make-random", "write a random-weight model with the shapes of a real one", [](CLI::App& app) {
  auto o = std::make_shared<MakeRandomOptions>();
  app.add_option("--arch", o->arch, "llama, qwen2, qwen3 or qwen3moe");
  app.add_option("--like", o->like, "0.6b, 1.7b, 8b, 14b (Qwen3 shapes) or tiny; qwen3moe: 30b-a3b or tiny");
  app.add_option("--layers", o->layers, "override the number of layers");
  app.add_option("--format", o->format, "hf (directory) or gguf (file)");
  app.add_option("--dtype", o->dtype, "f32, f16, bf16; for gguf also q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m, q5_k_m");
  app.add_option("--seed", o->seed, "weight seed");
  app.add_option("--out", o->out, "output directory (hf) or file (gguf)")->required();
  app.callback([o] { run(*o); });
});

}  // namespace
}  // namespace bosch::cli
