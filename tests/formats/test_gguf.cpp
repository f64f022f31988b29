#include "formats/gguf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "formats/writers.h"
#include "formats_test_util.h"
#include "util/error.h"
#include "../test_support.h"

using namespace bosch;
using bosch::testing::ScratchDir;

namespace {

std::string stories_path() { return bosch::tests::stories_model(); }

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return v;
}

TensorToWrite make_tensor(const std::string& name, std::vector<int64_t> shape, DType type,
                          const std::vector<float>& values) {
  TensorToWrite t;
  t.name = name;
  t.shape = std::move(shape);
  t.type = type;
  t.bytes = encode_f32(type, values.data(), values.size());
  return t;
}

GGUFValue nested_array() {
  GGUFValue outer;
  outer.kind = GGUFValue::Kind::Array;
  outer.gguf_type = gguf_type::ARRAY;
  outer.arr.push_back(gguf_int_array({1, 2, 3}, gguf_type::INT16));
  outer.arr.push_back(gguf_int_array({}, gguf_type::INT16));
  outer.arr.push_back(gguf_int_array({-7}, gguf_type::INT16));
  return outer;
}

std::map<std::string, GGUFValue> every_value_type() {
  std::map<std::string, GGUFValue> m;
  m["t.u8"] = gguf_int(255, gguf_type::UINT8);
  m["t.i8"] = gguf_int(-128, gguf_type::INT8);
  m["t.u16"] = gguf_int(65535, gguf_type::UINT16);
  m["t.i16"] = gguf_int(-32768, gguf_type::INT16);
  m["t.u32"] = gguf_int(4294967295LL, gguf_type::UINT32);
  m["t.i32"] = gguf_int(-2147483647LL - 1, gguf_type::INT32);
  m["t.u64"] = gguf_int(std::numeric_limits<int64_t>::max(), gguf_type::UINT64);
  m["t.i64"] = gguf_int(std::numeric_limits<int64_t>::min(), gguf_type::INT64);
  m["t.f32"] = gguf_float(0.15625);  // exact in f32
  GGUFValue f64 = gguf_float(0.1);
  f64.gguf_type = gguf_type::FLOAT64;
  m["t.f64"] = f64;
  m["t.bool"] = gguf_bool(true);
  m["t.bool0"] = gguf_bool(false);
  m["t.str"] = gguf_string("h\xc3\xa9llo \0 world");
  m["t.empty_str"] = gguf_string("");
  m["a.str"] = gguf_string_array({"a", "", "ccc"});
  m["a.f32"] = gguf_float_array({1.5, -2.25});
  m["a.i32"] = gguf_int_array({-1, 0, 2147483647});
  m["a.u8"] = gguf_int_array({0, 255}, gguf_type::UINT8);
  m["a.u64"] = gguf_int_array({5}, gguf_type::UINT64);
  m["a.empty"] = gguf_int_array({}, gguf_type::UINT32);
  GGUFValue bools;
  bools.kind = GGUFValue::Kind::Array;
  bools.gguf_type = gguf_type::BOOL;
  bools.arr = {gguf_bool(true), gguf_bool(false)};
  m["a.bool"] = bools;
  GGUFValue f64s = gguf_float_array({0.1, 1e300});
  f64s.gguf_type = gguf_type::FLOAT64;
  for (auto& e : f64s.arr) e.gguf_type = gguf_type::FLOAT64;
  m["a.f64"] = f64s;
  m["a.nested"] = nested_array();
  return m;
}

void expect_same_value(const GGUFValue& a, const GGUFValue& b, const std::string& key) {
  ASSERT_EQ(a.kind, b.kind) << key;
  EXPECT_EQ(a.gguf_type, b.gguf_type) << key;
  switch (a.kind) {
    case GGUFValue::Kind::Int: EXPECT_EQ(a.i, b.i) << key; break;
    case GGUFValue::Kind::Float:
      if (a.gguf_type == gguf_type::FLOAT32) {
        EXPECT_EQ(static_cast<float>(a.f), b.f) << key;
      } else {
        EXPECT_EQ(a.f, b.f) << key;
      }
      break;
    case GGUFValue::Kind::Bool: EXPECT_EQ(a.b, b.b) << key; break;
    case GGUFValue::Kind::String: EXPECT_EQ(a.s, b.s) << key; break;
    case GGUFValue::Kind::Array:
      ASSERT_EQ(a.arr.size(), b.arr.size()) << key;
      for (size_t i = 0; i < a.arr.size(); ++i) {
        expect_same_value(a.arr[i], b.arr[i], key + "[" + std::to_string(i) + "]");
      }
      break;
  }
}

}  // namespace

TEST(GGUF, RoundTripsEveryValueType) {
  ScratchDir dir;
  auto meta = every_value_type();
  // The string with an embedded NUL must survive: build it with its real length.
  meta["t.str"] = gguf_string(std::string("h\xc3\xa9llo \0 world", 14));
  std::string path = dir.file("values.gguf");
  write_gguf(path, meta, {});
  GGUFFile f(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_TRUE(f.tensors().empty());
  ASSERT_EQ(f.metadata().size(), meta.size());
  for (const auto& [key, v] : meta) {
    ASSERT_TRUE(f.has(key)) << key;
    expect_same_value(v, *f.find(key), key);
  }
  EXPECT_EQ(f.get_string("t.str").size(), 14u);
  EXPECT_EQ(f.get_int("t.u32"), 4294967295LL);
  EXPECT_EQ(f.get_float("t.f64"), 0.1);
  EXPECT_EQ(f.get_float("t.u8"), 255.0);  // integers are accepted as floats
  EXPECT_TRUE(f.get_bool("t.bool"));
  EXPECT_EQ(f.get_string_array("a.str"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f.get_float_array("a.f32"), (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(f.get_float_array("a.i32"), (std::vector<double>{-1, 0, 2147483647}));
  EXPECT_EQ(f.get_int_array("a.i32"), (std::vector<int64_t>{-1, 0, 2147483647}));
  EXPECT_TRUE(f.get_int_array("a.empty").empty());
  EXPECT_EQ(f.find("a.nested")->arr[2].arr[0].i, -7);

  // The file is laid out in map order, so the bytes are deterministic.
  std::string again = dir.file("again.gguf");
  write_gguf(again, meta, {});
  EXPECT_EQ(bosch::testing::read_bytes(path), bosch::testing::read_bytes(again));
}

TEST(GGUF, TypedGettersNameFileAndKey) {
  ScratchDir dir;
  std::string path = dir.file("getters.gguf");
  write_gguf(path, every_value_type(), {});
  GGUFFile f(path);
  try {
    f.get_int("t.str");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("t.str"), std::string::npos) << m;
    EXPECT_NE(m.find("integer"), std::string::npos) << m;
  }
  try {
    f.get_string("no.such.key");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no.such.key"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
  }
  EXPECT_THROW(f.get_float("t.str"), Error);
  EXPECT_THROW(f.get_bool("t.u8"), Error);
  EXPECT_THROW(f.get_string_array("a.i32"), Error);
  EXPECT_THROW(f.get_int_array("a.f32"), Error);
  EXPECT_THROW(f.get_int_array("a.empty_floats_absent"), Error);
  EXPECT_THROW(f.get_int_array("t.u8"), Error);  // not an array
  EXPECT_EQ(f.get_int_or("absent", 42), 42);
  EXPECT_EQ(f.get_float_or("absent", 0.5), 0.5);
  EXPECT_EQ(f.get_string_or("absent", "x"), "x");
  EXPECT_EQ(f.get_int_or("t.u16", 1), 65535);
  EXPECT_THROW(f.get_int_or("t.str", 1), Error);  // present but wrong type still throws
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
  EXPECT_THROW(f.tensor("nope"), Error);
}

TEST(GGUF, RoundTripsEveryTensorType) {
  ScratchDir dir;
  std::string path = dir.file("tensors.gguf");
  std::vector<TensorToWrite> ts = {
      make_tensor("a.f32", {3, 5}, DType::F32, ramp(15, 2.0f)),
      make_tensor("b.f16", {7}, DType::F16, ramp(7, 3.0f)),
      make_tensor("c.bf16", {2, 3, 4}, DType::BF16, ramp(24, 100.0f)),
      make_tensor("d.q8", {2, 64}, DType::Q8_0, ramp(128, 1.0f)),
      make_tensor("e.4d", {1, 2, 1, 3}, DType::F32, ramp(6, 1.0f)),
  };
  std::map<std::string, GGUFValue> meta = {{"general.architecture", gguf_string("llama")}};
  write_gguf(path, meta, ts);
  GGUFFile f(path);
  ASSERT_EQ(f.tensors().size(), ts.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    const GGUFTensor& g = f.tensors()[k];
    EXPECT_EQ(g.name, ts[k].name);
    EXPECT_EQ(g.type, ts[k].type);
    std::vector<int64_t> reversed(ts[k].shape.rbegin(), ts[k].shape.rend());
    EXPECT_EQ(g.dims, reversed) << g.name;
    ASSERT_EQ(g.nbytes, ts[k].bytes.size()) << g.name;
    EXPECT_EQ(std::memcmp(g.data, ts[k].bytes.data(), g.nbytes), 0) << g.name;
    EXPECT_EQ(g.offset % 32, 0u);
    EXPECT_EQ(&f.tensor(g.name), &g);
  }
  EXPECT_EQ(f.tensor("d.q8").numel(), 128);
  EXPECT_EQ(f.tensor("d.q8").dims, (std::vector<int64_t>{64, 2}));
  std::vector<float> q(128), ref = ramp(128, 1.0f);
  to_f32(DType::Q8_0, f.tensor("d.q8").data, q.data(), 128);
  for (size_t i = 0; i < 128; ++i) EXPECT_NEAR(q[i], ref[i], 0.01f);
  std::vector<float> a(15);
  to_f32(DType::F32, f.tensor("a.f32").data, a.data(), 15);
  EXPECT_EQ(a, ramp(15, 2.0f));
}

// A loaded model holds mapping() alone (model/loader.cpp): the tensor bytes stay readable after
// the GGUFFile, with its metadata, is gone.
TEST(GGUF, MappingOutlivesTheFile) {
  ScratchDir dir;
  std::string path = dir.file("mapping.gguf");
  write_gguf(path, {{"general.architecture", gguf_string("llama")}}, {make_tensor("a", {3, 5}, DType::F32, ramp(15, 2.0f))});
  std::shared_ptr<const void> keep;
  const float* data = nullptr;
  {
    GGUFFile f(path);
    keep = f.mapping();
    data = reinterpret_cast<const float*>(f.tensor("a").data);
  }
  EXPECT_EQ(std::vector<float>(data, data + 15), ramp(15, 2.0f));
}

TEST(GGUF, CustomAlignmentAndVersion2) {
  ScratchDir dir;
  std::string path = dir.file("align.gguf");
  std::vector<TensorToWrite> ts = {make_tensor("x", {3}, DType::F32, ramp(3, 1.0f)),
                                   make_tensor("y", {5}, DType::F16, ramp(5, 1.0f))};
  write_gguf(path, {}, ts, 64);
  {
    GGUFFile f(path);
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.get_int("general.alignment"), 64);
    EXPECT_EQ(f.tensor("y").offset, 64u);
    FileBytes raw(path);
    EXPECT_EQ((f.tensor("x").data - raw.data()) % 64, 0);
  }
  // v2 has the same layout as v3 for little-endian files.
  std::string bytes = bosch::testing::read_bytes(path);
  bytes[4] = 2;
  std::string v2 = dir.file("v2.gguf");
  bosch::testing::write_bytes(v2, bytes);
  GGUFFile f2(v2);
  EXPECT_EQ(f2.version(), 2u);
  EXPECT_EQ(f2.tensors().size(), 2u);
}

TEST(GGUF, WriterRefusesInconsistentInput) {
  ScratchDir dir;
  std::string path = dir.file("bad.gguf");
  EXPECT_THROW(write_gguf(path, {{"k", gguf_int(256, gguf_type::UINT8)}}, {}), Error);
  EXPECT_THROW(write_gguf(path, {{"k", gguf_int(-1, gguf_type::UINT32)}}, {}), Error);
  GGUFValue wrong = gguf_string("x");
  wrong.gguf_type = gguf_type::INT32;  // kind and type disagree
  EXPECT_THROW(write_gguf(path, {{"k", wrong}}, {}), Error);
  TensorToWrite t = make_tensor("t", {4}, DType::F32, ramp(4, 1.0f));
  t.bytes.pop_back();
  EXPECT_THROW(write_gguf(path, {}, {t}), Error);
  TensorToWrite a = make_tensor("t", {4}, DType::F32, ramp(4, 1.0f));
  EXPECT_THROW(write_gguf(path, {}, {a, a}), Error);  // duplicate name
  EXPECT_THROW(write_gguf(path, {}, {a}, 48), Error);  // alignment not a power of two
  EXPECT_FALSE(std::filesystem::exists(path));         // nothing half-written
}

TEST(GGUF, ReadsStories260K) {
  std::string path = stories_path();
  GGUFFile f(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.block_count"), 5);
  EXPECT_EQ(f.get_int("llama.embedding_length"), 64);
  EXPECT_EQ(f.get_int("llama.attention.head_count"), 8);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv"), 4);
  EXPECT_NEAR(f.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-9);
  EXPECT_EQ(f.tensors().size(), 48u);
  const GGUFTensor& emb = f.tensor("token_embd.weight");
  EXPECT_EQ(emb.dims, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(emb.type, DType::F32);
  EXPECT_EQ(emb.nbytes, 64u * 512 * 4);
  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens.size(), 512u);
  EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores").size(), 512u);
  EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), 2);
  // Weights are finite and not all zero.
  std::vector<float> w(64 * 512);
  to_f32(emb.type, emb.data, w.data(), w.size());
  double sum_sq = 0;
  for (float v : w) {
    ASSERT_TRUE(std::isfinite(v));
    sum_sq += double(v) * v;
  }
  EXPECT_GT(sum_sq, 0.0);
  // Re-writing the model through the writer gives a file the reader sees identically.
  ScratchDir dir;
  std::vector<TensorToWrite> ts;
  for (const GGUFTensor& t : f.tensors()) {
    TensorToWrite o;
    o.name = t.name;
    o.shape.assign(t.dims.rbegin(), t.dims.rend());
    o.type = t.type;
    o.bytes.assign(t.data, t.data + t.nbytes);
    ts.push_back(std::move(o));
  }
  std::string copy = dir.file("copy.gguf");
  write_gguf(copy, f.metadata(), ts, f.alignment());
  GGUFFile g(copy);
  ASSERT_EQ(g.metadata().size(), f.metadata().size());
  for (const auto& [k, v] : f.metadata()) expect_same_value(v, *g.find(k), k);
  ASSERT_EQ(g.tensors().size(), f.tensors().size());
  for (size_t k = 0; k < g.tensors().size(); ++k) {
    EXPECT_EQ(g.tensors()[k].dims, f.tensors()[k].dims);
    EXPECT_EQ(std::memcmp(g.tensors()[k].data, f.tensors()[k].data, f.tensors()[k].nbytes), 0);
  }
}
