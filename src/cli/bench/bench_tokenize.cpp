// `bosch bench tokenize`: encode speed on a multi-megabyte mixed text, beside the JavaScript
// reference (tools/tokenizer-ref) measured in the same run.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>

#include "cli/command.h"
#include "tokenizer/js_reference.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch::cli {
namespace {
namespace fs = std::filesystem;

// Deterministic English prose, code, Chinese, digits and emoji, about `bytes` long.
std::string bench_text(size_t bytes) {
  static const char* words[] = {"the", "a", "of", "and", "to", "in", "is", "was", "that", "for", "it", "with",
                                "as", "he", "she", "they", "on", "be", "at", "by", "this", "had", "not", "are",
                                "but", "from", "or", "have", "an", "which", "one", "you", "were", "her", "all",
                                "their", "there", "been", "if", "more", "when", "will", "would", "who", "so",
                                "model", "attention", "window", "sliding", "tokenizer", "benchmark", "needle",
                                "haystack", "Transformer", "Lily", "park", "ball", "happy", "because", "however"};
  static const char* code[] = {"for (int i = 0; i < n; ++i) {\n", "    sum += x[i] * w[i];\n", "}\n",
                               "def forward(self, x):\n", "        return self.proj(x) + 1e-5\n",
                               "if (err != nullptr) return -1;\n", "\t// TODO: handle the edge case\n"};
  static const char* zh[] = {"我们", "今天", "模型", "注意力", "窗口", "世界", "学习", "数据", "问题", "时间",
                             "因为", "所以", "非常", "重要", "。", "，"};
  static const char* emoji[] = {"😀", "🚀", "👍🏽", "🇫🇷", "❤️", "🧑‍💻"};
  std::mt19937 rng(12345);
  std::string s;
  s.reserve(bytes + 256);
  while (s.size() < bytes) {
    unsigned kind = rng() % 10;
    if (kind < 6) {
      int n = 8 + int(rng() % 20);
      for (int i = 0; i < n; ++i) {
        std::string w = words[rng() % std::size(words)];
        if (i == 0) w[0] = char(std::toupper(w[0]));
        s += w;
        s += (rng() % 12 == 0) ? ", " : " ";
        if (rng() % 25 == 0) s += std::to_string(rng() % 100000) + " ";
      }
      s += (rng() % 5 == 0) ? "?\n" : ". ";
    } else if (kind < 8) {
      for (int i = 0; i < 4; ++i) s += code[rng() % std::size(code)];
    } else if (kind < 9) {
      for (int i = 0; i < 20; ++i) s += zh[rng() % std::size(zh)];
      s += "\n";
    } else {
      s += emoji[rng() % std::size(emoji)];
      s += "  ";
    }
  }
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct BenchOptions {
  std::string tokenizer;
  double mb = 4;
  bool no_reference = false;
};

void run_bench(const BenchOptions& o) {
  std::string self = fs::read_symlink("/proc/self/exe").parent_path().string();
  std::string install = self + "/tokenizer-ref";
  std::string harness = std::string(BOSCH_SOURCE_DIR) + "/tools/tokenizer-ref";
  std::optional<JsReference> ref;
  std::string why = "disabled by --no-reference";
  if (!o.no_reference) {
    std::fprintf(stderr, "bench tokenize: preparing the JavaScript reference in %s ...\n", install.c_str());
    ref = JsReference::setup(harness, install, &why);
  }
  std::string tok_path = o.tokenizer;
  if (tok_path.empty()) {
    check(ref.has_value(), "no tokenizer given and the JavaScript reference (which ships the Qwen3 "
                           "tokenizer.json) is unavailable: {}", why);
    tok_path = ref->qwen3_tokenizer_json();
  }
  auto t_load = std::chrono::steady_clock::now();
  std::unique_ptr<Tokenizer> tok = load_tokenizer(tok_path);
  std::printf("tokenizer: %s (vocab %d, loaded in %.2f s)\n", tok_path.c_str(), tok->vocab_size(), seconds_since(t_load));

  std::string text = bench_text(static_cast<size_t>(o.mb * 1e6));
  const double mb = text.size() / 1e6;
  tok->encode(text.substr(0, 65536));  // same warm-up as the reference gets
  auto t0 = std::chrono::steady_clock::now();
  size_t n_ids = tok->encode(text).size();
  double ours = seconds_since(t0);
  std::printf("text: %.2f MB of prose, code, Chinese, digits and emoji -> %zu tokens\n", mb, n_ids);
  std::printf("bosch encode:          %8.2f MB/s  (%.3f s, 1 thread)\n", mb / ours, ours);

  std::string one_char(100000, 'a');
  t0 = std::chrono::steady_clock::now();
  size_t n_long = tok->encode(one_char).size();
  std::printf("100 KB of one character: %.4f s (%zu tokens)\n", seconds_since(t0), n_long);

  if (!ref) {
    std::printf("JavaScript reference: SKIPPED (%s)\n", why.c_str());
    return;
  }
  std::string text_file = install + "/bench." + std::to_string(::getpid()) + ".txt";
  write_file_atomic(text_file, text);
  std::fprintf(stderr, "bench tokenize: running the JavaScript reference on the same text ...\n");
  JsReference::Bench b;
  try {
    b = ref->bench(text_file, 1, o.tokenizer.empty() ? "" : tok_path);
  } catch (...) {
    fs::remove(text_file);
    throw;
  }
  fs::remove(text_file);
  double js = b.bytes / 1e6 / b.seconds;
  std::printf("JS reference encode:   %8.2f MB/s  (%.3f s, node, @lenml/tokenizers 3.7.2)\n", js, b.seconds);
  std::printf("speedup: %.1fx (goal: >= 5x); token counts %s (%zu vs %lld)\n", (mb / ours) / js,
              static_cast<int64_t>(n_ids) == b.tokens ? "agree" : "DIFFER", n_ids, static_cast<long long>(b.tokens));
}

BenchRegistrar reg("tokenize", "tokenizer encode MB/s vs the JavaScript reference", [](CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  add_opt(app, "tokenizer", o->tokenizer, "tokenizer.json / model dir / .gguf (default: the reference's Qwen3 tokenizer.json)");
  add_opt(app, "--mb", o->mb, "size of the text in MB")->check(CLI::Range(0.1, 256.0));
  app.add_flag("--no-reference", o->no_reference, "do not run the JavaScript reference");
  app.callback([o] { run_bench(*o); });
});

}  // namespace
}  // namespace bosch::cli
