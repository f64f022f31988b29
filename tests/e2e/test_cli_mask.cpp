// `bosch generate --mask` (hybrid KV cache) prints the same text as the library's masked engine
// with the plain cache, and `bosch info --mask` prints the exact KV formula.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "model/generate.h"
#include "model/hybrid_kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "../test_support.h"

using bosch::tests::bosch_bin;

using namespace bosch;

namespace {

const std::string kModel = bosch::tests::stories_model();

std::string run(const std::string& args) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen((bosch_bin() + " " + args + " 2>/dev/null").c_str(), "r"), pclose);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) out.append(buf.data(), n);
  return out;
}

TEST(CliMask, GenerateWithAllSwaMaskMatchesTheMaskedEngine) {
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  const auto& c = m->config();
  auto plan = AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 16, 2);
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 120;  // far past the window
  for (int32_t id = 0; id < tok->vocab_size(); ++id)
    if (tok->is_eog(id)) p.stop_ids.push_back(id);  // as the CLI does
  std::string want = tok->decode(generate(*m, plan, {tok->bos_id()}, p));
  std::string got = run("generate " + kModel + " --temperature 0 --max-tokens 120 --mask all-swa --window 16 --sinks 2");
  ASSERT_FALSE(got.empty());
  if (got.back() == '\n') got.pop_back();
  EXPECT_EQ(got, want);
  // The window really changes the story (so the comparison above could fail).
  std::string full = run("generate " + kModel + " --temperature 0 --max-tokens 120");
  EXPECT_NE(full.substr(0, full.size() - 1), want);
}

TEST(CliMask, InfoPrintsTheExactHybridKvBytes) {
  auto m = Model::load(kModel);
  const auto& c = m->config();
  auto plan = AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 16, 2);
  std::string info = run("info " + kModel + " --mask all-swa --window 16 --sinks 2 --context 4096");
  // 5 layers x 4 heads x min(4096, 18) positions x 8 dims x 2 (K, V) x 4 bytes = 23040 B.
  EXPECT_EQ(hybrid_kv_bytes(c, plan, 4096), 5 * 4 * 18 * 8 * 2 * 4);
  EXPECT_NE(info.find("22.5 KiB"), std::string::npos) << info;
  EXPECT_NE(info.find("5.0 MiB"), std::string::npos) << info;  // full: 1280 B x 4096
}

}  // namespace
