// A qwen3moe model end to end through the CLI: make-random writes it, info shows its experts,
// and a search on the text objective (the model, its tokenizer, the last-rows mode, the prefix
// cache) ends with a mask for its attention heads; the mask then runs in eval-style generation.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "masks/mask_file.h"
#include "model/model.h"
#include "util/atomic_file.h"
#include "../test_support.h"

using bosch::tests::bosch_bin;
using bosch::tests::run_cli;

using namespace bosch;
namespace fs = std::filesystem;

namespace {

TEST(MoeCli, MakeRandomInfoAndATextSearch) {
  const fs::path dir = fs::path(BOSCH_BINARY_DIR) / "moe_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string model = (dir / "tiny-moe.gguf").string();
  auto made = run_cli("make-random --arch qwen3moe --like tiny --format gguf --dtype f32 --out " + model);
  ASSERT_EQ(made.rc, 0) << made.out;
  auto info = run_cli("info " + model);
  ASSERT_EQ(info.rc, 0) << info.out;
  EXPECT_NE(info.out.find("qwen3moe"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("8 experts, 2 used per token"), std::string::npos) << info.out;
  // A text to calibrate on: the byte-level tokenizer of make-random turns it into tokens.
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "The cat sat on the mat number " + std::to_string(i % 7) + ", and the dog sat by the door. ";
  const std::string calib = (dir / "calib.txt").string();
  write_file_atomic(calib, text);
  const std::string mask = (dir / "mask.json").string();
  auto s = run_cli("search " + model + " --ratio 0.5 --window 16 --sinks 2 --lengths 96 --samples 2 --budget-probe 4"
               " --budget-group 4 --budget-polish 4 --starts locality,razor --objective text:" + calib + " --out " + mask);
  ASSERT_EQ(s.rc, 0) << s.out;
  const MaskFile mf = MaskFile::load(mask);
  const auto m = Model::load(model);
  EXPECT_EQ(mf.model.arch, "qwen3moe");
  EXPECT_EQ(mf.model.identity, m->identity());
  ASSERT_EQ(mf.swa.size(), static_cast<size_t>(m->config().n_layers));
  int swa = 0;
  for (const auto& layer : mf.swa) {
    ASSERT_EQ(layer.size(), static_cast<size_t>(m->config().n_kv_heads));
    for (uint8_t b : layer) swa += b;
  }
  EXPECT_EQ(swa, m->config().n_kv_total() / 2);
  // The mask serves: generation with the hybrid cache.
  auto g = run_cli("generate " + model + " --mask " + mask + " --prompt 'The cat' --max-tokens 8 --temperature 0");
  EXPECT_EQ(g.rc, 0) << g.out;
  fs::remove_all(dir);
}

}  // namespace
