// `bosch make-random --format gguf` files carry a tokenizer of the shape's vocabulary size (so
// llama.cpp loads them; tests/consumers checks that), and bosch reads it back; shape errors of
// GGUF tensors print the shape found.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "formats/gguf.h"
#include "formats/writers.h"
#include "masks/gguf_mask.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/file_bytes.h"
#include "../test_support.h"

using bosch::tests::temp_dir;

using namespace bosch;
namespace fs = std::filesystem;

namespace {

TEST(RandomGguf, CarriesAByteLevelTokenizerOfTheShapesVocabSize) {
  auto dir = temp_dir("tok");
  for (const std::string arch : {"qwen2", "qwen3", "llama"}) {
    ModelConfig c = config_like(arch, "tiny");
    const std::string path = (dir / (arch + ".gguf")).string();
    save_gguf(c, random_weights(c, 1), path, DType::F32);
    GGUFFile f(path);
    EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), static_cast<size_t>(c.vocab_size));
    EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), c.vocab_size - 1);
    auto tok = load_tokenizer(path);
    EXPECT_EQ(tok->vocab_size(), c.vocab_size);
    const std::string text = "hello world, \xc3\xa9t\xc3\xa9 \xe2\x82\xac 42\n";
    auto ids = tok->encode(text);
    EXPECT_EQ(tok->decode(ids), text);
    EXPECT_LT(ids.size(), text.size());  // merges of letter pairs fired
    EXPECT_TRUE(tok->is_eog(c.vocab_size - 1));
    auto m = Model::load(path);
    EXPECT_EQ(m->config().vocab_size, c.vocab_size);
    if (arch == "qwen2") {
      EXPECT_EQ(m->config().head_dim * m->config().n_heads, m->config().d_model);
    }
  }
  fs::remove_all(dir);
}

TEST(RandomGguf, EmbeddingShapeErrorPrintsTheShape) {
  auto dir = temp_dir("shape");
  ModelConfig c = config_like("qwen3", "tiny");
  const std::string good = (dir / "good.gguf").string(), bad = (dir / "bad.gguf").string();
  save_gguf(c, random_weights(c, 1), good, DType::F32);
  GGUFFile f(good);
  std::vector<TensorToWrite> ts;
  for (const auto& t : f.tensors()) {
    std::vector<int64_t> shape(t.dims.rbegin(), t.dims.rend());
    if (t.name == "token_embd.weight") shape = {2, shape[0] / 2, shape[1]};  // 3 dims
    ts.push_back({t.name, shape, t.type, {t.data, t.data + t.nbytes}});
  }
  write_gguf(bad, f.metadata(), ts, f.alignment());
  try {
    Model::load(bad);
    FAIL() << "loaded a file with a 3-D token_embd.weight";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("token_embd.weight must be [64 x vocab]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got [64 x 150 x 2]"), std::string::npos) << msg;
  }
  fs::remove_all(dir);
}

// stdout and stderr of `bosch ARGS`, and the exit status.
std::pair<int, std::string> bosch(const std::string& args) {
  const char* e = std::getenv("BOSCH_BIN");
  const std::string bin = e ? e : std::string(BOSCH_BINARY_DIR) + "/bosch";
  std::string out;
  FILE* p = popen((bin + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

TEST(RandomGguf, InfoShowsTheExportedMaskAndNamesARemovedKey) {
  auto dir = temp_dir("info");
  ModelConfig c = config_like("qwen2", "tiny");
  const std::string src = (dir / "m.gguf").string(), masked = (dir / "masked.gguf").string();
  save_gguf(c, random_weights(c, 1), src, DType::F32);
  write_gguf_with_plan(src, AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 32, 4), masked);
  auto [rc, out] = bosch("info " + masked);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("metadata: 12/12 SWA (W=32, S=4)"), std::string::npos) << out;
  // The case: one key removed must not read as full attention.
  GGUFFile f(masked);
  std::map<std::string, GGUFValue> meta = f.metadata();
  meta.erase("bosch.swa.head_swa");
  std::vector<TensorToWrite> ts;
  for (const auto& t : f.tensors())
    ts.push_back({t.name, {t.dims.rbegin(), t.dims.rend()}, t.type, {t.data, t.data + t.nbytes}});
  const std::string partial = (dir / "partial.gguf").string();
  write_gguf(partial, meta, ts, f.alignment());
  std::tie(rc, out) = bosch("info " + partial);
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("bosch.swa.head_swa is missing"), std::string::npos) << out;
  fs::remove_all(dir);
}

// make-random's shape options replace the --like shape's dimensions (issue #21 times a narrow
// testbed's shape before anyone builds it); impossible shapes are errors naming the option.
TEST(RandomGguf, MakeRandomShapeOptionsOverrideTheLikeShape) {
  auto dir = temp_dir("shape_opts");
  for (const std::string format : {"hf", "gguf"}) {
    const std::string out = (dir / ("narrow." + format)).string();
    auto [rc, text] = bosch("make-random --like tiny --layers 5 --hidden 48 --heads 6 --kv-heads 3 --head-dim 8 "
                            "--ffn 40 --format " + format + " --dtype f16 --out " + out);
    ASSERT_EQ(rc, 0) << text;
    const ModelConfig c = Model::load(out)->config();
    EXPECT_EQ(c.n_layers, 5);
    EXPECT_EQ(c.d_model, 48);
    EXPECT_EQ(c.n_heads, 6);
    EXPECT_EQ(c.n_kv_heads, 3);
    EXPECT_EQ(c.head_dim, 8);
    EXPECT_EQ(c.d_ff, 40);
  }
  const std::string x = " --out " + (dir / "x").string();
  auto expect_error = [&](const std::string& args, const std::string& says) {
    auto [rc, text] = bosch("make-random " + args + x);
    EXPECT_NE(rc, 0) << args;
    EXPECT_NE(text.find(says), std::string::npos) << args << ": " << text;
  };
  expect_error("--like tiny --heads 6", "attention heads (6) must be a multiple of KV heads (4)");
  expect_error("--like tiny --head-dim 7", "head dimension must be even");
  expect_error("--like tiny --layers 0", "--layers: Value 0 not in range");
  expect_error("--like tiny --hidden 16777216", "--hidden: Value 16777216 not in range");
  expect_error("--arch qwen2 --like tiny --hidden 96 --head-dim 8", "--head-dim must be hidden / heads = 12");
  expect_error("--arch qwen2 --like tiny --hidden 100", "the hidden size (100) must be a multiple of the heads (8)");
  expect_error("--arch qwen3moe --like tiny --ffn 64", "--ffn sets a dense model's feed-forward size");
  // Shapes far beyond this machine are refused before anything is allocated or written.
  if (bosch::mem_available_bytes() > 0)
    expect_error("--like 14b --hidden 1000000 --format hf", "--format hf holds every weight in memory");
  expect_error("--like 14b --hidden 1000000 --format gguf --dtype q4_k", "this shape writes");
  fs::remove_all(dir);
}

}  // namespace
