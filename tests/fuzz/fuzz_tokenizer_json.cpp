// tokenizer.json (+ tokenizer_config.json after the first NUL byte of the input), then
// encode/decode of a fixed text.
#include <filesystem>

#include "fuzz_util.h"
#include "tokenizer/tokenizer.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool made = std::filesystem::create_directories(fuzz::scratch_dir() / "tok") || true;
  (void)made;
  auto [tok_json, cfg_json] = fuzz::split_at_nul(data, size);
  const std::string path = fuzz::write_scratch("tok/tokenizer.json", tok_json);
  const auto cfg = fuzz::scratch_dir() / "tok/tokenizer_config.json";
  if (cfg_json.empty()) std::filesystem::remove(cfg);
  else fuzz::write_scratch("tok/tokenizer_config.json", cfg_json);
  fuzz::expect_clean([&] {
    auto tok = load_tokenizer_json(path);
    auto ids = tok->encode("Hello world, <|im_start|> 123 \xc3\xa9t\xc3\xa9!\n", true);
    for (int32_t id : ids) tok->token_bytes(id);
    tok->decode(ids);
  });
  return 0;
}
