// Text normalizers from tokenizer.json that byte-level BPE models use: NFC (Qwen2/Qwen3),
// Prepend / Replace, and Sequence of those. NFC is done with ICU when the build links it
// (BOSCH_WITH_ICU); otherwise text that is not plain ASCII is passed through with a warning.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace bosch {

class Normalizer {
 public:
  // From the "normalizer" object of tokenizer.json (null -> identity). Throws Error naming
  // `file` for types it does not support.
  static Normalizer from_json(const nlohmann::json& j, const std::string& file);

  bool identity() const { return steps_.empty(); }
  // Throws Error naming the file and the step when a step would make the text longer than
  // 4x the input + 256 bytes (real normalizers: U+2581 for a space, 3x; issue #40: chained
  // Replace steps turned 100 bytes into hundreds of GB).
  std::string apply(std::string text) const;

  static bool has_icu();

 private:
  struct Step {
    enum class Kind { NFC, Prepend, Replace } kind;
    std::string a, b;  // Prepend: a; Replace: a -> b
  };
  std::vector<Step> steps_;
  std::string file_;
};

// NFC of valid UTF-8 (identity when it already is NFC).
std::string nfc(const std::string& text);

}  // namespace bosch
