// GGUF mask metadata (issue #26): the flat version-2 form every GGUF reader accepts, the old
// nested version-1 form still read (with a note), and partial or inconsistent bosch.swa.* keys
// refused with the key named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "formats/gguf.h"
#include "formats/writers.h"
#include "masks/gguf_mask.h"
#include "model/model_writer.h"
#include "util/error.h"

using namespace bosch;
namespace fs = std::filesystem;

namespace {

struct GgufMaskTest : ::testing::Test {
  fs::path dir;
  ModelConfig c = config_like("llama", "tiny");  // 3 layers x 4 KV heads
  std::string src, masked;
  AttentionPlan plan{3, 4};

  void SetUp() override {
    dir = fs::temp_directory_path() / ("bosch_test_gguf_mask_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    src = (dir / "src.gguf").string();
    masked = (dir / "masked.gguf").string();
    save_gguf(c, random_weights(c, 5), src, DType::F32);
    plan.set_swa(0, 1, 16, 2);
    plan.set_swa(0, 3, 16, 2);
    plan.set_swa(2, 0, 8, 0);  // layer 1 keeps every head full
    write_gguf_with_plan(src, plan, masked);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A copy of `from` with `drop` removed and `set` added to its metadata.
  std::string rewrite(const std::string& from, const std::set<std::string>& drop,
                      const std::map<std::string, GGUFValue>& set = {}) {
    GGUFFile f(from);
    std::map<std::string, GGUFValue> meta;
    for (const auto& [k, v] : f.metadata())
      if (!drop.count(k)) meta.emplace(k, v);
    for (const auto& [k, v] : set) meta[k] = v;
    std::vector<TensorToWrite> ts;
    for (const auto& t : f.tensors())
      ts.push_back({t.name, {t.dims.rbegin(), t.dims.rend()}, t.type, {t.data, t.data + t.nbytes}});
    const std::string p = (dir / "edited.gguf").string();
    write_gguf(p, meta, ts, f.alignment());
    return p;
  }
  std::string error_of(const std::string& path) {
    try {
      plan_from_gguf_metadata(GGUFFile(path), c);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(GgufMaskTest, FlatFormHasNoNestedArraysAndRoundTrips) {
  GGUFFile f(masked);
  std::set<std::string> keys;
  for (const auto& [k, v] : f.metadata()) {
    // ggml's reader (llama.cpp) refuses a file with any array of arrays (GGUF type 9 elements).
    if (v.kind == GGUFValue::Kind::Array) {
      EXPECT_NE(v.gguf_type, gguf_type::ARRAY) << k;
    }
    if (k.starts_with("bosch.swa.")) keys.insert(k);
  }
  EXPECT_EQ(keys, (std::set<std::string>{"bosch.swa.version", "bosch.swa.layer_count", "bosch.swa.kv_head_count",
                                         "bosch.swa.window", "bosch.swa.sinks", "bosch.swa.head_swa",
                                         "bosch.swa.convention"}));
  EXPECT_EQ(f.get_int("bosch.swa.version"), 2);
  EXPECT_EQ(f.get_int_array("bosch.swa.head_swa"), (std::vector<int64_t>{0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(f.get_int_array("bosch.swa.window"), (std::vector<int64_t>{16, 0, 8}));
  auto got = plan_from_gguf_metadata(f, c);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, plan);
}

TEST_F(GgufMaskTest, OldNestedFormIsStillReadWithANote) {
  GGUFValue heads;
  heads.kind = GGUFValue::Kind::Array;
  heads.gguf_type = gguf_type::ARRAY;
  for (std::vector<int64_t> row : {std::vector<int64_t>{1, 3}, std::vector<int64_t>{}, std::vector<int64_t>{0}})
    heads.arr.push_back(gguf_int_array(row, gguf_type::INT32));
  auto old = rewrite(masked, {"bosch.swa.layer_count", "bosch.swa.kv_head_count", "bosch.swa.head_swa"},
                     {{"bosch.swa.version", gguf_int(1)}, {"bosch.swa.heads", heads}});
  ::testing::internal::CaptureStderr();
  auto got = plan_from_gguf_metadata(GGUFFile(old), c);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, plan);
  EXPECT_NE(err.find("old nested form"), std::string::npos) << err;
  EXPECT_NE(err.find("export-mask"), std::string::npos) << err;
}

TEST_F(GgufMaskTest, EachMissingKeyIsNamed) {
  for (const std::string key : {"version", "layer_count", "kv_head_count", "window", "sinks", "head_swa"}) {
    const std::string msg = error_of(rewrite(masked, {"bosch.swa." + key}));
    EXPECT_NE(msg.find("bosch.swa." + key), std::string::npos) << key << ": " << msg;
    EXPECT_NE(msg.find("edited.gguf"), std::string::npos) << msg;  // names the file
    EXPECT_TRUE(msg.find("missing") != std::string::npos || msg.find("no bosch.swa.version") != std::string::npos)
        << msg;
  }
  // The window and sinks alone (the file, with bosch.swa.heads removed) are not "full attention".
  const std::string msg = error_of(rewrite(masked, {"bosch.swa.version", "bosch.swa.head_swa"}));
  EXPECT_NE(msg.find("no bosch.swa.version"), std::string::npos) << msg;
}

TEST_F(GgufMaskTest, InconsistentKeysAreRefusedOrWarned) {
  // A window for a layer without SWA heads.
  std::string msg = error_of(rewrite(masked, {}, {{"bosch.swa.window", gguf_int_array({16, 4, 8})}}));
  EXPECT_NE(msg.find("bosch.swa.window[1] = 4"), std::string::npos) << msg;
  // A flag that is neither 0 nor 1.
  msg = error_of(rewrite(masked, {}, {{"bosch.swa.head_swa", gguf_int_array({0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})}}));
  EXPECT_NE(msg.find("bosch.swa.head_swa[1] (layer 0, KV head 1) is 2"), std::string::npos) << msg;
  // The flat array of another shape.
  msg = error_of(rewrite(masked, {}, {{"bosch.swa.head_swa", gguf_int_array({0, 1, 0})}}));
  EXPECT_NE(msg.find("has 3 entries, expected layer_count x kv_head_count = 3 x 4 = 12"), std::string::npos) << msg;
  // A mask for another model shape.
  msg = error_of(rewrite(masked, {}, {{"bosch.swa.kv_head_count", gguf_int(8)}}));
  EXPECT_NE(msg.find("3 layers x 8 KV heads"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the model has 3 x 4"), std::string::npos) << msg;
  // An unknown key: read, with a warning naming it.
  ::testing::internal::CaptureStderr();
  auto got = plan_from_gguf_metadata(GGUFFile(rewrite(masked, {}, {{"bosch.swa.extra", gguf_int(1)}})), c);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(*got, plan);
  EXPECT_NE(err.find("bosch.swa.extra"), std::string::npos) << err;
  // A version this build does not know.
  msg = error_of(rewrite(masked, {}, {{"bosch.swa.version", gguf_int(3)}}));
  EXPECT_NE(msg.find("bosch.swa.version is 3"), std::string::npos) << msg;
}

}  // namespace
