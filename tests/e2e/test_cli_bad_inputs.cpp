// Issue #24, at the level a user meets it: the release CLI on each class of bad file the fuzzers
// found gives a clear error (exit status 1, "bosch: error:" naming the file and the field), never
// a signal, an "internal error" or a runaway allocation (every run under a 2 GiB address-space
// limit). The parsers' own tests (tests/formats, tests/tokenizer, tests/masks, tests/search)
// check the messages in detail; this checks that nothing between them and the user loses them.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include "../test_support.h"

using bosch::tests::bosch_bin;

namespace fs = std::filesystem;

namespace {

const fs::path kSource = BOSCH_SOURCE_DIR;

struct Run {
  int status = -1;  // exit status, or 128 + signal
  std::string err;
};

// `bosch ARGS` with stdin from `input`, 2 GiB of address space; stderr captured.
Run run_bosch(const std::string& args, const std::string& input = "") {
  const std::string cmd = "sh -c 'ulimit -v 2097152; printf \"%s\" \"" + input + "\" | " + bosch_bin() + " " + args +
                          " 2>&1 >/dev/null'";
  Run r;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) r.err.append(buf.data(), n);
  const int st = pclose(p.release());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

std::string nested(const std::string& key, int depth) {
  return "{\"" + key + "\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

class CliBadInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bosch-bad-inputs-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A copy of the embedded default model with one file replaced.
  fs::path model_with(const std::string& file, const std::string& content) {
    const fs::path m = dir_ / ("model-" + std::to_string(++models_));
    fs::copy(kSource / "models/default", m, fs::copy_options::recursive);
    write(m / file, content);
    return m;
  }
  static std::string read(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  fs::path dir_;
  int models_ = 0;
};

// The contract: exit 1, one "bosch: error:" line holding `want`, no internal error.
void expect_clear_error(const Run& r, const std::string& want) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("bosch: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(want), std::string::npos) << "expected '" << want << "' in: " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 2000u) << "the error dumps user data whole: " << r.err.substr(0, 300);
}

TEST_F(CliBadInputs, DeeplyNestedJsonInEveryJsonReader) {
  const int depth = 100000;  // the stack overflow the fuzzers found was at tens of thousands of levels
  write(dir_ / "mask.json", nested("format", depth));
  expect_clear_error(run_bosch("info --mask " + (dir_ / "mask.json").string()), "nested deeper than");
  expect_clear_error(run_bosch("info " + model_with("config.json", nested("a", depth)).string()),
                     "config.json");
  // safetensors: 8-byte little-endian header length, then the header.
  const std::string header = nested("w", depth);
  std::string st(8, '\0');
  for (int i = 0; i < 8; ++i) st[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  expect_clear_error(run_bosch("info " + model_with("model.safetensors", st + header).string()), "nested deeper than");
}

TEST_F(CliBadInputs, NumbersOutOfRangeOrNotIntegers) {
  const fs::path bad = kSource / "tests/data/malformed";
  expect_clear_error(run_bosch("info --mask " + (bad / "mask_window_1e400.json").string()), "mask_window_1e400.json");
  expect_clear_error(run_bosch("info --mask " + (bad / "mask_window_2pow31.json").string()), "mask_window_2pow31.json");
  for (const char* f : {"config_layers_wrap", "config_hidden_fraction", "config_context_huge"}) {
    SCOPED_TRACE(f);
    expect_clear_error(run_bosch("info " + model_with("config.json", read(bad / (std::string(f) + ".json"))).string()),
                       "config.json: field '");
  }
}

TEST_F(CliBadInputs, TokenizerIdsAreCheckedBeforeAnyAllocation) {
  const fs::path bad = kSource / "tests/data/malformed";
  for (const char* f : {"tokenizer_huge_added_id", "tokenizer_max_added_id", "tokenizer_negative_added_id",
                        "tokenizer_float_vocab_id", "tokenizer_no_vocab", "tokenizer_split_pattern_number"}) {
    SCOPED_TRACE(f);
    const fs::path m = model_with("tokenizer.json", read(bad / (std::string(f) + ".json")));
    expect_clear_error(run_bosch("tokenize " + m.string(), "hello"), "tokenizer.json: field ");
  }
}

TEST_F(CliBadInputs, TamperedJournalLineIsRefusedOnResume) {
  const std::string out = (dir_ / "s.json").string(), journal = (dir_ / "j.jsonl").string();
  const std::string args = "search --objective synthetic:4x4 --ratio 0.5 --out " + out + " --journal " + journal;
  ASSERT_EQ(run_bosch(args).status, 0);
  std::string text = read(journal);
  // Change a recorded score without touching its checksum.
  const size_t at = text.find("\"raw\":-");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "\"raw\":-1");
  write(journal, text);
  expect_clear_error(run_bosch("search --objective synthetic:4x4 --ratio 0.5 --out " + out + " --resume " + journal),
                     "checksum mismatch");
}

}  // namespace
