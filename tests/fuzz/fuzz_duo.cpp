// DuoAttention pattern import: full_attention_heads.tsv, then config.json after the first NUL
// byte of the input; the pattern is thresholded at ratio 0.5.
#include <filesystem>

#include "fuzz_util.h"
#include "masks/mask_export.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool made = std::filesystem::create_directories(fuzz::scratch_dir() / "duo") || true;
  (void)made;
  auto [tsv, cfg] = fuzz::split_at_nul(data, size);
  fuzz::write_scratch("duo/full_attention_heads.tsv", tsv);
  fuzz::write_scratch("duo/config.json", cfg);
  fuzz::expect_clean([&] {
    DuoPattern p = read_duo((fuzz::scratch_dir() / "duo").string());
    const int layers = static_cast<int>(p.full_attention_heads.size());
    const int heads = static_cast<int>(p.full_attention_heads[0].size());
    plan_from_duo(p, 0.5, layers, heads, 0, -1).summary();
  });
  return 0;
}
