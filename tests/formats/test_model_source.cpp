// source_kind: the one place that decides what a model path names, by content.
#include "formats/model_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "formats_test_util.h"

using namespace bosch;
using bosch::testing::ScratchDir;

namespace {

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST(ModelSource, DecidedByContentNotByName) {
  ScratchDir d;
  write(d.file("weights.bin"), std::string("GGUF\x03\0\0\0", 8));
  EXPECT_EQ(source_kind(d.file("weights.bin")), SourceKind::gguf) << "the magic, whatever the name";
  write(d.file("broken.gguf"), "not a gguf");
  EXPECT_EQ(source_kind(d.file("broken.gguf")), SourceKind::gguf) << "so the GGUF reader names the bad magic";
  write(d.file("tokenizer.json"), "{}");
  EXPECT_EQ(source_kind(d.file("tokenizer.json")), SourceKind::other);
  write(d.file("tiny"), "GG");
  EXPECT_EQ(source_kind(d.file("tiny")), SourceKind::other) << "shorter than the magic";
  EXPECT_EQ(source_kind(d.file("missing.gguf")), SourceKind::other);
  std::filesystem::create_directories(d.path() / "hf");
  EXPECT_EQ(source_kind((d.path() / "hf").string()), SourceKind::other) << "a directory without config.json";
  write((d.path() / "hf" / "config.json").string(), "{}");
  EXPECT_EQ(source_kind((d.path() / "hf").string()), SourceKind::hf_dir);
}
