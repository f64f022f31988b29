// Issue #40: the classes of failure a black-box attack on the CLI found outside the fuzz
// harnesses, each tried again on the release binary. The contract for every one: a clear error
// naming the option or file (or a correct result) within seconds, no signal, no hang, no
// "internal error" or library exception text, no input or unrelated file changed, valid JSON.
// Every run is under a 4 GiB address-space limit and a 30 s kill timer.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../test_support.h"

using bosch::tests::bosch_bin;

namespace fs = std::filesystem;

namespace {

const fs::path kSource = BOSCH_SOURCE_DIR;

struct Attack {
  int rc = -1;  // exit status; 124 or 137 = killed by the timer
  std::string out;
};

// `ENV bosch ARGS` under `ulimit -v` (KiB) and a 30 s timer; stdout and stderr together.
Attack attack(const std::string& args, const std::string& env = "", long vmem_kib = 4L << 20) {
  const std::string cmd = "sh -c 'ulimit -v " + std::to_string(vmem_kib) + "; exec timeout -s KILL 30 env BOSCH_QUIET=1 " +
                          env + " " + bosch_bin() + " " + args + "' 2>&1 < /dev/null";
  Attack a;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return a;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) a.out.append(buf, n);
  const int st = pclose(p);
  a.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return a;
}

// A refusal: non-zero, not a signal or the timer, our words (holding `want`), no library text.
void expect_refused(const Attack& a, const std::string& want) {
  EXPECT_NE(a.rc, 0) << a.out;
  EXPECT_LT(a.rc, 124) << "signal or hang: " << a.out;
  EXPECT_NE(a.out.find(want), std::string::npos) << "expected '" << want << "' in: " << a.out;
  EXPECT_EQ(a.out.find("internal error"), std::string::npos) << a.out;
  EXPECT_EQ(a.out.find("exception"), std::string::npos) << a.out;
  EXPECT_EQ(a.out.find("terminate called"), std::string::npos) << a.out;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class CliAttack : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = bosch::tests::temp_dir("cli_attack"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path copy_default_model(const std::string& name = "model") {
    const fs::path m = dir_ / name;
    fs::copy(kSource / "models/default", m, fs::copy_options::recursive);
    return m;
  }
  fs::path dir_;
};

TEST_F(CliAttack, SyntheticSpecIsParsedStrictly) {
  const std::string out = (dir_ / "m.json").string();
  for (const char* spec : {"65536x65536", "46341x46341", "4294967297x4", "8x4junk", "8x4:1x", "8x-4", "0x4",
                           "8x4:-1", "x4", "8x", "8x4:18446744073709551616"}) {
    SCOPED_TRACE(spec);
    expect_refused(attack(std::string("search --objective synthetic:") + spec + " --ratio 0.5 --out " + out),
                   "expected synthetic:LxH");
  }
  EXPECT_FALSE(fs::exists(out));
  const Attack ok = attack("search --objective synthetic:4x4:7 --ratio 0.5 --out " + out);
  EXPECT_EQ(ok.rc, 0) << ok.out;
}

TEST_F(CliAttack, NonFiniteAndWrappingNumbersAreRefused) {
  const std::string gen = "generate --max-tokens 2 ";
  expect_refused(attack(gen + "--temperature nan"), "--temperature");
  expect_refused(attack(gen + "--temperature inf"), "finite");
  expect_refused(attack(gen + "--top-p nan"), "--top-p");
  expect_refused(attack(gen + "--seed -1"), "negative");
  expect_refused(attack(gen + "--seed 18446744073709551621"), "outside");
  expect_refused(attack(gen + "--seed 0x10"), "decimal integer");
  expect_refused(attack(gen + "--max-tokens 010x"), "decimal integer");
  const std::string search = "search --objective synthetic:4x4 --ratio 0.5 --out " + (dir_ / "m.json").string() + " ";
  expect_refused(attack(search + "--cache-gb nan"), "--cache-gb");
  expect_refused(attack(search + "--cache-gb 1e30"), "--cache-gb");
  expect_refused(attack(search + "--logprob-weight -7"), "--logprob-weight");
  expect_refused(attack(search + "--logprob-weight nan"), "--logprob-weight");
  expect_refused(attack(search + "--alpha nan"), "--alpha");
  expect_refused(attack(search + "--lengths=-5"), "--lengths");
  expect_refused(attack(search + "--ratio nan"), "--ratio");
  expect_refused(attack("pairs --top 2 --tolerance nan"), "--tolerance");
  // A well-formed value still works (decimal, scientific).
  EXPECT_EQ(attack(search + "--alpha 1e0 --seed 3").rc, 0);
}

TEST_F(CliAttack, ResourceSizesAreBoundedBeforeAnyAllocation) {
  expect_refused(attack("bench decode --context 1000000000"), "--context");
  expect_refused(attack("bench decode --context 4096,1e9"), "--context");
  expect_refused(attack("bench prefill --attn-n 1000000000"), "--attn-n");
  expect_refused(attack("info --context=-1"), "--context");
  expect_refused(attack("info --context 0"), "--context");
  expect_refused(attack("info --context 9223372036854775807"), "--context");
  // Within the flags' ranges but beyond what the process may have (the 4 GiB address-space
  // limit here): refused by size before the buffer is made (util/memory_budget.h).
  expect_refused(attack("bench attention --n 1048576 --heads 1024 --kv-heads 1024 --head-dim 1024"),
                 "more than the");
  // A length the flag admits (<= 2^24 tokens) but no forward pass here can hold: refused
  // before the samples are made (that took 11 s, then the pass ran out of memory).
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(attack("eval --suite niah:passkey --lengths 16000000 --depths 1"), "--lengths 16000000");
  expect_refused(attack("search --ratio 0.5 --lengths 16000000 --out " + (dir_ / "m.json").string()), "--lengths 16000000");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  const Attack ok = attack("info --context 4096");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_EQ(ok.out.find("nan"), std::string::npos) << ok.out;
}

TEST_F(CliAttack, ThreadCountIsBoundedAndAFailedThreadIsNotFatal) {
  expect_refused(attack("generate --max-tokens 2", "BOSCH_THREADS=100000"), "BOSCH_THREADS=100000");
  expect_refused(attack("generate --max-tokens 2", "BOSCH_THREADS=4x"), "BOSCH_THREADS");
  // 1000 threads with 8 MiB stacks do not fit 1 GiB of address space: fewer threads, a warning,
  // and the right answer.
  const Attack ref = attack("generate --max-tokens 4", "BOSCH_THREADS=2");
  ASSERT_EQ(ref.rc, 0) << ref.out;
  const Attack a = attack("generate --max-tokens 4", "BOSCH_THREADS=1000", 1L << 20);
  EXPECT_EQ(a.rc, 0) << a.out;
  EXPECT_NE(a.out.find("threads"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find(ref.out.substr(ref.out.rfind('\n', ref.out.size() - 2) + 1)), std::string::npos)
      << "different text with fewer threads:\n" << a.out << "\nvs\n" << ref.out;
}

TEST_F(CliAttack, PipesDevicesAndFoldersAreNotReadAsFiles) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string out = (dir_ / "m.json").string();
  expect_refused(attack("info --mask " + fifo.string()), "not a regular file");
  expect_refused(attack("info --mask /dev/zero"), "not a regular file");
  expect_refused(attack("info --mask " + dir_.string()), "not a regular file");
  expect_refused(attack("search --objective synthetic:4x4 --ratio 0.5 --out " + out + " --resume " + fifo.string()),
                 "not a regular file");
  expect_refused(attack("search --objective synthetic:4x4 --ratio 0.5 --out " + out + " --resume /dev/zero"),
                 "not a regular file");
  expect_refused(attack("search --objective text:/dev/zero --ratio 0.5 --out " + out), "not a regular file");
  // A model folder whose files are a FIFO and a device.
  const fs::path m = copy_default_model();
  fs::remove(m / "tokenizer.json");
  ASSERT_EQ(::mkfifo((m / "tokenizer.json").c_str(), 0600), 0);
  expect_refused(attack("tokenize " + m.string()), "not a regular file");
  fs::remove(m / "model.safetensors");
  fs::create_symlink("/dev/zero", m / "model.safetensors");
  expect_refused(attack("info " + m.string()), "not a regular file");
}

TEST_F(CliAttack, AnOutputIsNeverTheSameFileAsAnInput) {
  const fs::path m = copy_default_model();
  const fs::path weights = m / "model.safetensors";
  const std::string before = slurp(weights);
  const std::string search = "search " + m.string() + " --ratio 0.5 --objective niah:passkey --lengths 512 --depths 1 --samples 1 ";
  // The journal named as the model's weights (a different spelling of the same path).
  expect_refused(attack(search + "--out " + (dir_ / "m.json").string() + " --journal " + (m / "." / "model.safetensors").string()),
                 "is the input file");
  // The mask written over the weights through a hard link.
  fs::create_hard_link(weights, dir_ / "link.safetensors");
  expect_refused(attack(search + "--out " + (dir_ / "link.safetensors").string()), "is the input file");
  EXPECT_EQ(slurp(weights), before) << "the model file changed";
  // GGUF export onto its own source under another spelling.
  const std::string gguf = (dir_ / "tiny.gguf").string(), mask = (dir_ / "mask.json").string();
  ASSERT_EQ(attack("make-random --like tiny --format gguf --dtype f32 --out " + gguf).rc, 0);
  ASSERT_EQ(attack("baseline " + gguf + " --method rand-heads --ratio 0.5 --out " + mask).rc, 0);
  const std::string gguf_before = slurp(gguf);
  expect_refused(attack("export-mask " + mask + " --format gguf --model " + gguf + " --out " +
                        (dir_ / "." / "tiny.gguf").string()),
                 "is the input file");
  EXPECT_EQ(slurp(gguf), gguf_before) << "the GGUF source changed";
}

TEST_F(CliAttack, OutputsAreCheckedBeforeTheRun) {
  fs::path file = dir_ / "plain";
  std::ofstream(file) << "x";
  const std::string json = (dir_ / "c.json").string();
  const std::string compare = "compare --objective synthetic:qwen3-1.7b --instances 1 --ratios 0.5 --methods gate ";
  const Attack a = attack(compare + "--json " + json + " --report " + (file / "sub").string());
  expect_refused(a, "--report");
  EXPECT_FALSE(fs::exists(json)) << "the JSON was written before the report folder failed";
  expect_refused(attack(compare + "--json " + (dir_ / "no-such-folder" / "c.json").string()),
                 "does not exist");
}

TEST_F(CliAttack, LogitsJsonIsValidForAnyModelPath) {
  const fs::path m = copy_default_model("we\"ird\\name");
  const std::string out = (dir_ / "l.json").string();
  // The path travels in the environment: no shell quoting stands between it and bosch.
  ::setenv("ATTACK_MODEL", m.c_str(), 1);
  const Attack a = attack("logits \"$ATTACK_MODEL\" --tokens 1,2,3 --json " + out);
  ::unsetenv("ATTACK_MODEL");
  ASSERT_EQ(a.rc, 0) << a.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));  // throws (fails the test) when invalid
  EXPECT_EQ(j.at("model").get<std::string>().find("we\"ird\\name") != std::string::npos, true);
  EXPECT_EQ(j.at("logits").size(), 3u);
}

TEST_F(CliAttack, ModelValuesMustBeFiniteAndInRange) {
  for (const auto& [theta, want] : std::vector<std::pair<std::string, std::string>>{
           {"1e-300", "rope theta"}, {"0.5", "rope theta"}, {"1e400", "number overflow"}}) {
    SCOPED_TRACE(theta);
    const fs::path m = copy_default_model("m" + theta);
    nlohmann::json cfg = nlohmann::json::parse(slurp(m / "config.json"));
    std::string text = cfg.dump();
    const std::string key = "\"rope_theta\":";
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t end = text.find_first_of(",}", at);
    text.replace(at + key.size(), end - at - key.size(), theta);
    std::ofstream(m / "config.json") << text;
    expect_refused(attack("generate " + m.string() + " --max-tokens 2"), want);
  }
}

// A tokenizer.json can make its text grow without bound (chained Replace steps) or make its
// split regex backtrack quadratically (PCRE2's per-match limit never trips). Both are bounded
// per input byte, with an error naming the file and the step; a real tokenizer is unaffected.
TEST_F(CliAttack, TokenizerWorkIsBoundedPerInputByte) {
  const fs::path m = dir_ / "tok";
  fs::copy(kSource / "tests/data/qwen3_tiny", m, fs::copy_options::recursive);
  const fs::path tj = m / "tokenizer.json";
  const nlohmann::json original = nlohmann::json::parse(slurp(tj));
  const fs::path text = dir_ / "text.txt";
  std::ofstream(text) << "A plain sentence, 12 words and digits 345, as real text has.\n";
  const auto a0 = attack("tokenize " + m.string() + " < " + text.string());
  EXPECT_EQ(a0.rc, 0) << a0.out;

  nlohmann::json grow = original;  // each step multiplies every 'a' by 16
  grow["normalizer"] = {{"type", "Sequence"}, {"normalizers", nlohmann::json::array()}};
  for (int i = 0; i < 10; ++i)
    grow["normalizer"]["normalizers"].push_back(
        {{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", std::string(16, 'a')}});
  std::ofstream(tj) << grow.dump();
  std::ofstream(text) << std::string(100, 'a');
  expect_refused(attack("tokenize " + m.string() + " < " + text.string()), "over the bound of 4x the input");

  nlohmann::json quadratic = original;  // \w+ runs to the end, fails the lookahead, one \w matches
  quadratic["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", "\\w+(?=\\d)|\\w"}}}, {"behavior", "Isolated"}, {"invert", false}},
        original["pre_tokenizer"]}}};
  std::ofstream(tj) << quadratic.dump();
  std::ofstream(text) << std::string(320 * 1024, 'a');  // ~50 s without the bound
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(attack("tokenize " + m.string() + " < " + text.string()), "passed its time bound");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// A multi-file output (compare --report, export-mask --format duo) appears whole or not at all:
// written into a sibling folder and swapped in; an existing folder holding files the output does
// not write is refused before the run and left as it was.
TEST_F(CliAttack, MultiFileOutputsAppearWholeOrNotAtAll) {
  const std::string compare = "compare --objective synthetic:qwen3-1.7b --instances 1 --ratios 0.5 --methods gate ";
  const fs::path mine = dir_ / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "notes.txt") << "keep me";
  const std::string json = (dir_ / "c.json").string();
  expect_refused(attack(compare + "--json " + json + " --report " + mine.string()), "holds 'notes.txt'");
  EXPECT_EQ(slurp(mine / "notes.txt"), "keep me");
  EXPECT_FALSE(fs::exists(json));

  const fs::path report = dir_ / "report";
  for (int run = 0; run < 2; ++run) {  // a new folder, then the same folder replaced
    const Attack a = attack(compare + "--report " + report.string());
    ASSERT_EQ(a.rc, 0) << a.out;
    EXPECT_TRUE(fs::exists(report / "report.md"));
    EXPECT_TRUE(fs::exists(report / "compare.json"));
  }
  size_t siblings = 0;
  for (const auto& e : fs::directory_iterator(dir_)) siblings += e.path().filename().string()[0] == '.';
  EXPECT_EQ(siblings, 0u) << "a staging folder was left behind";

  const std::string mask = (kSource / "docs/results/stories260K-compare/masks/bosch-r0.5.json").string();
  expect_refused(attack("export-mask " + mask + " --format duo --out " + mine.string()), "holds 'notes.txt'");
  EXPECT_EQ(slurp(mine / "notes.txt"), "keep me");
  const fs::path duo = dir_ / "duo";
  const Attack d = attack("export-mask " + mask + " --format duo --out " + duo.string());
  ASSERT_EQ(d.rc, 0) << d.out;
  EXPECT_TRUE(fs::exists(duo / "full_attention_heads.tsv") && fs::exists(duo / "config.json"));
}

}  // namespace
