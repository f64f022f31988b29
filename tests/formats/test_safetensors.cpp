#include "formats/safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "formats/writers.h"
#include "formats_test_util.h"
#include "util/atomic_file.h"
#include "util/error.h"

using namespace bosch;
using bosch::testing::ScratchDir;

namespace {

TensorToWrite make_tensor(const std::string& name, std::vector<int64_t> shape, DType type,
                          float scale) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::cos(0.7f * static_cast<float>(i));
  TensorToWrite t;
  t.name = name;
  t.shape = std::move(shape);
  t.type = type;
  t.bytes = encode_f32(type, v.data(), n);
  return t;
}

void expect_matches(const SafeTensor& s, const TensorToWrite& t) {
  EXPECT_EQ(s.name, t.name);
  EXPECT_EQ(s.shape, t.shape) << t.name;
  EXPECT_EQ(s.type, t.type) << t.name;
  ASSERT_EQ(s.nbytes, t.bytes.size()) << t.name;
  if (s.nbytes) {
    EXPECT_EQ(std::memcmp(s.data, t.bytes.data(), s.nbytes), 0) << t.name;
  }
}

void expect_error_mentions(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected bosch::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
  }
}

}  // namespace

TEST(Safetensors, RoundTripsDtypesShapesAndMetadata) {
  ScratchDir dir;
  std::string path = dir.file("m.safetensors");
  std::vector<TensorToWrite> ts = {
      make_tensor("model.embed_tokens.weight", {4, 3}, DType::F32, 1.0f),
      make_tensor("a.half", {5}, DType::F16, 2.0f),
      make_tensor("b.bf16", {2, 2, 2}, DType::BF16, 3.0f),
      make_tensor("scalar", {}, DType::F32, 4.0f),
      make_tensor("empty", {0, 3}, DType::F16, 1.0f),
  };
  write_safetensors(path, ts, {{"format", "pt"}});
  SafetensorsFile f(path);
  EXPECT_EQ(f.path(), path);
  EXPECT_EQ(f.metadata()["format"], "pt");
  ASSERT_EQ(f.tensors().size(), ts.size());
  for (const TensorToWrite& t : ts) {
    auto it = std::find_if(f.tensors().begin(), f.tensors().end(),
                           [&](const SafeTensor& s) { return s.name == t.name; });
    ASSERT_NE(it, f.tensors().end()) << t.name;
    expect_matches(*it, t);
    EXPECT_EQ(it->file, path);
  }
  // The header is padded so the data starts 8-byte aligned.
  std::string bytes = bosch::testing::read_bytes(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  // No metadata: null.
  std::string plain = dir.file("plain.safetensors");
  write_safetensors(plain, {ts[0]});
  EXPECT_TRUE(SafetensorsFile(plain).metadata().is_null());
}

TEST(Safetensors, ReadsHandWrittenFile) {
  // Built byte by byte (not by our writer): two F32 tensors, data in reverse header order.
  ScratchDir dir;
  std::string json =
      R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("v":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}})";
  bosch::testing::Bytes b;
  b.u64(json.size()).raw(json);
  float vals[4] = {1, 2, 3, 4};
  b.raw(std::string(reinterpret_cast<const char*>(vals), 16));
  std::string path = dir.file("hand.safetensors");
  bosch::testing::write_bytes(path, b.b);
  SafetensorsFile f(path);
  ASSERT_EQ(f.tensors().size(), 2u);
  for (const SafeTensor& t : f.tensors()) {
    float x[2];
    std::memcpy(x, t.data, 8);
    if (t.name == "v") {
      EXPECT_EQ(x[0], 1.0f);
      EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 2}));
    } else {
      EXPECT_EQ(x[0], 3.0f);
    }
  }
}

TEST(Safetensors, SingleFileModelDir) {
  ScratchDir dir;
  write_file_atomic(dir.file("config.json"), R"({"model_type":"llama","hidden_size":8})");
  std::vector<TensorToWrite> ts = {make_tensor("x", {2, 4}, DType::BF16, 1.0f),
                                   make_tensor("y", {3}, DType::F32, 1.0f)};
  write_safetensors(dir.file("model.safetensors"), ts);
  EXPECT_TRUE(is_hf_model_dir(dir.path().string()));
  HFModelDir m(dir.path().string());
  EXPECT_EQ(m.config()["hidden_size"], 8);
  EXPECT_EQ(m.tensor_names(), (std::vector<std::string>{"x", "y"}));
  expect_matches(m.tensor("x"), ts[0]);
  EXPECT_TRUE(m.has_tensor("y"));
  EXPECT_EQ(m.find_tensor("z"), nullptr);
  expect_error_mentions([&] { m.tensor("z"); }, {dir.path().string(), "'z'"});
}

TEST(Safetensors, ShardedIndexDir) {
  ScratchDir dir;
  write_file_atomic(dir.file("config.json"), R"({"model_type":"qwen2"})");
  std::vector<TensorToWrite> s1 = {make_tensor("layers.0.w", {4, 4}, DType::F16, 1.0f),
                                   make_tensor("embed", {8, 4}, DType::F32, 2.0f)};
  std::vector<TensorToWrite> s2 = {make_tensor("layers.1.w", {4, 4}, DType::BF16, 3.0f)};
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), s1);
  write_safetensors(dir.file("model-00002-of-00002.safetensors"), s2);
  nlohmann::json index = {{"metadata", {{"total_size", 1234}}},
                          {"weight_map",
                           {{"layers.0.w", "model-00001-of-00002.safetensors"},
                            {"embed", "model-00001-of-00002.safetensors"},
                            {"layers.1.w", "model-00002-of-00002.safetensors"}}}};
  write_file_atomic(dir.file("model.safetensors.index.json"), index.dump());
  HFModelDir m(dir.path().string());
  EXPECT_EQ(m.tensor_names().size(), 3u);
  expect_matches(m.tensor("layers.0.w"), s1[0]);
  expect_matches(m.tensor("embed"), s1[1]);
  expect_matches(m.tensor("layers.1.w"), s2[0]);
  EXPECT_EQ(m.tensor("layers.1.w").file, dir.file("model-00002-of-00002.safetensors"));
}

TEST(Safetensors, MissingShardOrConfigIsAnError) {
  ScratchDir dir;
  write_file_atomic(dir.file("config.json"), "{}");
  write_safetensors(dir.file("a.safetensors"), {make_tensor("t1", {2}, DType::F32, 1.0f)});
  nlohmann::json index = {{"weight_map", {{"t1", "a.safetensors"}, {"t2", "b.safetensors"}}}};
  write_file_atomic(dir.file("model.safetensors.index.json"), index.dump());
  expect_error_mentions([&] { HFModelDir m(dir.path().string()); },
                        {"b.safetensors", "t2", "missing", "model.safetensors.index.json"});

  // A tensor listed in the index but absent from its shard.
  index = {{"weight_map", {{"t1", "a.safetensors"}, {"t3", "a.safetensors"}}}};
  write_file_atomic(dir.file("model.safetensors.index.json"), index.dump());
  expect_error_mentions([&] { HFModelDir m(dir.path().string()); }, {"t3", "a.safetensors"});

  // No weight_map.
  write_file_atomic(dir.file("model.safetensors.index.json"), R"({"metadata":{}})");
  expect_error_mentions([&] { HFModelDir m(dir.path().string()); }, {"weight_map"});

  // No weights at all.
  std::filesystem::remove(dir.file("model.safetensors.index.json"));
  expect_error_mentions([&] { HFModelDir m(dir.path().string()); }, {"model.safetensors"});

  // No config.json.
  std::filesystem::remove(dir.file("config.json"));
  EXPECT_FALSE(is_hf_model_dir(dir.path().string()));
  expect_error_mentions([&] { HFModelDir m(dir.path().string()); }, {"config.json"});
  EXPECT_FALSE(is_hf_model_dir(dir.file("a.safetensors")));
  EXPECT_FALSE(is_hf_model_dir(dir.file("nonexistent")));

  // Bad config.json.
  write_file_atomic(dir.file("config.json"), "{not json");
  expect_error_mentions([&] { HFModelDir m(dir.path().string()); }, {"config.json", "JSON"});
}

TEST(Safetensors, WriterRefusesBadInput) {
  ScratchDir dir;
  TensorToWrite q = make_tensor("q", {32}, DType::Q8_0, 1.0f);
  EXPECT_THROW(write_safetensors(dir.file("q.safetensors"), {q}), Error);
  TensorToWrite t = make_tensor("t", {3}, DType::F32, 1.0f);
  EXPECT_THROW(write_safetensors(dir.file("d.safetensors"), {t, t}), Error);
  EXPECT_THROW(write_safetensors(dir.file("m.safetensors"), {t}, {{"n", 1}}), Error);
  t.bytes.resize(8);
  EXPECT_THROW(write_safetensors(dir.file("s.safetensors"), {t}), Error);
}
