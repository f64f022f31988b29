// Malformed model files: every load either throws bosch::Error naming the file and the field, or
// (for a truncation past all tensor data) succeeds. Never a crash, never another exception type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "formats/gguf.h"
#include "formats/safetensors.h"
#include "formats/writers.h"
#include "formats_test_util.h"
#include "util/error.h"

using namespace bosch;
using bosch::testing::Bytes;
using bosch::testing::ScratchDir;
using bosch::testing::read_bytes;
using bosch::testing::write_bytes;

namespace {

TensorToWrite make_tensor(const std::string& name, std::vector<int64_t> shape, DType type) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i));
  TensorToWrite t;
  t.name = name;
  t.shape = std::move(shape);
  t.type = type;
  t.bytes = encode_f32(type, v.data(), n);
  return t;
}

// Loads the file; returns "" on success or the Error message. Any other exception fails the test.
template <class Loader>
std::string try_load(const std::string& path) {
  try {
    Loader f(path);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// Expects the load to throw bosch::Error whose message contains the path and every part.
template <class Loader>
void expect_error(const std::string& path, const std::vector<std::string>& parts) {
  std::string m;
  try {
    Loader f(path);
    ADD_FAILURE() << "loading " << path << " succeeded; expected an error mentioning "
                  << ::testing::PrintToString(parts);
    return;
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_NE(m.find(path), std::string::npos) << "path missing from: " << m;
  for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' missing from: " << m;
}

// Cut points: every byte of [0, header_end], and `spread` points across the rest, plus the
// bytes around the end of the last tensor.
std::vector<size_t> cut_points(size_t header_end, size_t data_end, size_t size, size_t spread) {
  std::vector<size_t> cuts;
  for (size_t c = 0; c <= header_end && c < size; ++c) cuts.push_back(c);
  for (size_t k = 1; k <= spread; ++k) cuts.push_back(header_end + (size - header_end) * k / (spread + 1));
  for (size_t c : {data_end - 1, data_end, data_end + 1, size - 1}) {
    if (c < size) cuts.push_back(c);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

std::string valid_gguf(const ScratchDir& dir) {
  std::map<std::string, GGUFValue> meta;
  meta["general.architecture"] = gguf_string("llama");
  meta["llama.block_count"] = gguf_int(5);
  meta["llama.rope.freq_base"] = gguf_float(10000.0);
  meta["tokenizer.ggml.tokens"] = gguf_string_array({"<unk>", "<s>", "</s>", "hello"});
  meta["tokenizer.ggml.scores"] = gguf_float_array({0, 0, 0, -1.5});
  meta["flag"] = gguf_bool(true);
  GGUFValue nested;
  nested.kind = GGUFValue::Kind::Array;
  nested.gguf_type = gguf_type::ARRAY;
  nested.arr = {gguf_int_array({1, 2}), gguf_int_array({3})};
  meta["nested"] = nested;
  std::vector<TensorToWrite> ts = {make_tensor("token_embd.weight", {4, 8}, DType::F32),
                                   make_tensor("blk.0.attn_q.weight", {2, 32}, DType::Q8_0),
                                   make_tensor("blk.0.ffn.weight", {3, 5}, DType::F16),
                                   make_tensor("output_norm.weight", {8}, DType::BF16)};
  std::string path = dir.file("valid.gguf");
  write_gguf(path, meta, ts);
  return path;
}

// Header: magic, version, counts.
Bytes gguf_head(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
  Bytes b;
  b.raw("GGUF").u32(version).u64(n_tensors).u64(n_kv);
  return b;
}

// A file with one tensor: info fields as given, then 32-byte aligned zero data of `data_bytes`.
std::string one_tensor_gguf(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
                            uint64_t offset, size_t data_bytes) {
  Bytes b = gguf_head(1, 0);
  b.str(name).u32(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) b.u64(d);
  b.u32(type).u64(offset).pad(32);
  b.raw(std::string(data_bytes, '\0'));
  return b.b;
}

}  // namespace

TEST(Malformed, TruncatedGGUFNeverCrashes) {
  ScratchDir dir;
  std::string bytes = read_bytes(valid_gguf(dir));
  GGUFFile full(dir.file("valid.gguf"));
  // Locate the data section independently of the reader's pointers: find the first tensor's bytes.
  const GGUFTensor& t0 = full.tensors()[0];
  size_t first = bytes.find(std::string(reinterpret_cast<const char*>(t0.data), t0.nbytes));
  ASSERT_NE(first, std::string::npos);
  size_t data_start = first - t0.offset;
  size_t data_end = 0;  // end of the last tensor's bytes
  for (const GGUFTensor& t : full.tensors()) {
    data_end = std::max(data_end, data_start + static_cast<size_t>(t.offset) + t.nbytes);
  }
  ASSERT_GT(data_start, 200u);
  ASSERT_LT(data_end, bytes.size() + 1);
  std::string cut_path = dir.file("cut.gguf");
  size_t errors = 0, loads = 0;
  for (size_t cut : cut_points(data_start, data_end, bytes.size() + 1, 40)) {
    write_bytes(cut_path, bytes.substr(0, cut));
    std::string err = try_load<GGUFFile>(cut_path);
    if (err.empty()) {
      ++loads;
      EXPECT_GE(cut, data_end) << "truncated at " << cut << " of " << bytes.size()
                               << " but loaded without error";
    } else {
      ++errors;
      EXPECT_NE(err.find(cut_path), std::string::npos) << "cut " << cut << ": " << err;
      EXPECT_LT(cut, data_end) << "cut " << cut << " is past all data but failed: " << err;
    }
  }
  EXPECT_GT(errors, data_start);
  EXPECT_GE(loads, 1u);
}

TEST(Malformed, CorruptedGGUFBytesNeverCrash) {
  ScratchDir dir;
  std::string bytes = read_bytes(valid_gguf(dir));
  GGUFFile full(dir.file("valid.gguf"));
  std::string path = dir.file("flip.gguf");
  std::mt19937 rng(1234);
  const size_t header_len = 24 + 400;  // mostly metadata and tensor infos
  for (int k = 0; k < 1500; ++k) {
    std::string b = bytes;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int j = 0; j < flips; ++j) {
      size_t pos = rng() % std::min(header_len, b.size());
      b[pos] = static_cast<char>(b[pos] ^ (1u << (rng() % 8)) ^ ((rng() % 4 == 0) ? 0xff : 0));
    }
    write_bytes(path, b);
    std::string err = try_load<GGUFFile>(path);
    if (!err.empty()) {
      EXPECT_NE(err.find(path), std::string::npos) << err;
    }
  }
}

TEST(Malformed, TruncatedSafetensorsNeverCrashes) {
  ScratchDir dir;
  std::string path = dir.file("valid.safetensors");
  write_safetensors(path,
                    {make_tensor("a", {4, 8}, DType::F32), make_tensor("b", {3, 5}, DType::F16),
                     make_tensor("c", {7}, DType::BF16)},
                    {{"format", "pt"}});
  std::string bytes = read_bytes(path);
  uint64_t header_len;
  std::memcpy(&header_len, bytes.data(), 8);
  size_t data_start = 8 + header_len;
  size_t data_end = bytes.size();  // the writer leaves no trailing bytes
  std::string cut_path = dir.file("cut.safetensors");
  size_t errors = 0, loads = 0;
  for (size_t cut : cut_points(data_start, data_end, bytes.size() + 1, 30)) {
    write_bytes(cut_path, bytes.substr(0, cut));
    std::string err = try_load<SafetensorsFile>(cut_path);
    if (err.empty()) {
      ++loads;
      EXPECT_GE(cut, data_end) << "cut " << cut;
    } else {
      ++errors;
      EXPECT_NE(err.find(cut_path), std::string::npos) << "cut " << cut << ": " << err;
    }
  }
  EXPECT_GT(errors, data_start);
  EXPECT_EQ(loads, 1u);  // only the untruncated file
}

TEST(Malformed, GGUFHeaderFields) {
  ScratchDir dir;
  std::string p = dir.file("h.gguf");

  write_bytes(p, "GGUX" + gguf_head(0, 0).b.substr(4));
  expect_error<GGUFFile>(p, {"magic"});
  write_bytes(p, "GG");
  expect_error<GGUFFile>(p, {"magic"});
  write_bytes(p, "");
  expect_error<GGUFFile>(p, {"magic"});

  write_bytes(p, gguf_head(0, 0, 1).b);
  expect_error<GGUFFile>(p, {"version", "1"});
  write_bytes(p, gguf_head(0, 0, 99).b);
  expect_error<GGUFFile>(p, {"version", "99"});

  write_bytes(p, gguf_head(1ull << 40, 0).b);
  expect_error<GGUFFile>(p, {"tensor_count", "1099511627776"});
  write_bytes(p, gguf_head(0, 1ull << 40).b);
  expect_error<GGUFFile>(p, {"metadata_kv_count"});
  write_bytes(p, gguf_head(0, 0).b.substr(0, 20));
  expect_error<GGUFFile>(p, {"metadata_kv_count"});

  write_bytes(p, gguf_head(0, 0).b);  // empty but valid
  EXPECT_NO_THROW(GGUFFile f(p));
}

TEST(Malformed, GGUFMetadataFields) {
  ScratchDir dir;
  std::string p = dir.file("m.gguf");

  // Key string longer than the file.
  write_bytes(p, gguf_head(0, 1).u64(1000000000000ull).raw(std::string(64, 'a')).b);
  expect_error<GGUFFile>(p, {"metadata key #0", "string length 1000000000000"});
  // Value string longer than the file.
  write_bytes(p, gguf_head(0, 1).str("k").u32(gguf_type::STRING).u64(1 << 20).raw("xy").b);
  expect_error<GGUFFile>(p, {"metadata 'k'", "string length"});
  // Array length that cannot fit: fails before allocating.
  write_bytes(p, gguf_head(0, 1).str("arr").u32(gguf_type::ARRAY).u32(gguf_type::UINT64)
                     .u64(1ull << 60).b);
  expect_error<GGUFFile>(p, {"metadata 'arr'", "array length"});
  // Unknown value type and unknown array element type.
  write_bytes(p, gguf_head(0, 1).str("k").u32(13).u32(0).b);
  expect_error<GGUFFile>(p, {"metadata 'k'", "value type 13"});
  write_bytes(p, gguf_head(0, 1).str("k").u32(gguf_type::ARRAY).u32(77).u64(0).b);
  expect_error<GGUFFile>(p, {"metadata 'k'", "element type 77"});
  // Duplicate key.
  write_bytes(p, gguf_head(0, 2).str("k").u32(gguf_type::UINT8).put<uint8_t>(1)
                     .str("k").u32(gguf_type::UINT8).put<uint8_t>(2).b);
  expect_error<GGUFFile>(p, {"'k'", "twice"});
  // Bool byte other than 0/1; UINT64 above INT64_MAX.
  write_bytes(p, gguf_head(0, 1).str("b").u32(gguf_type::BOOL).put<uint8_t>(2).b);
  expect_error<GGUFFile>(p, {"metadata 'b'", "BOOL"});
  write_bytes(p, gguf_head(0, 1).str("u").u32(gguf_type::UINT64).u64(~0ull).b);
  expect_error<GGUFFile>(p, {"metadata 'u'", "INT64_MAX"});
  // Bad alignment values.
  write_bytes(p, gguf_head(0, 1).str("general.alignment").u32(gguf_type::UINT32).u32(3).b);
  expect_error<GGUFFile>(p, {"general.alignment", "power of two"});
  write_bytes(p, gguf_head(0, 1).str("general.alignment").u32(gguf_type::UINT32).u32(0).b);
  expect_error<GGUFFile>(p, {"general.alignment"});
  write_bytes(p, gguf_head(0, 1).str("general.alignment").u32(gguf_type::STRING).str("32").b);
  expect_error<GGUFFile>(p, {"general.alignment", "integer"});
  // Arrays nested too deep.
  Bytes deep = gguf_head(0, 1).str("deep").u32(gguf_type::ARRAY);
  for (int d = 0; d < 20; ++d) deep.u32(gguf_type::ARRAY).u64(1);
  deep.u32(gguf_type::UINT8).u64(0);
  write_bytes(p, deep.b);
  expect_error<GGUFFile>(p, {"metadata 'deep'", "nested"});
}

TEST(Malformed, GGUFTensorInfoFields) {
  ScratchDir dir;
  std::string p = dir.file("t.gguf");

  write_bytes(p, one_tensor_gguf("w", {4}, 0, 0, 16));
  EXPECT_NO_THROW(GGUFFile f(p));  // the baseline is valid

  write_bytes(p, one_tensor_gguf("w", {1, 1, 1, 1, 1, 1, 1}, 0, 0, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'", "n_dims", "7"});
  write_bytes(p, one_tensor_gguf("w", {}, 0, 0, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'", "n_dims"});
  write_bytes(p, one_tensor_gguf("w", {4, 0}, 0, 0, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'", "dims[1]"});
  write_bytes(p, one_tensor_gguf("w", {1ull << 62, 1ull << 62}, 0, 0, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'", "overflow"});
  write_bytes(p, one_tensor_gguf("w", {1ull << 62}, 0, 0, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'"});
  write_bytes(p, one_tensor_gguf("w", {4}, 0, 1 << 20, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'", "offset"});
  write_bytes(p, one_tensor_gguf("w", {4}, 0, 4, 48));
  expect_error<GGUFFile>(p, {"tensor 'w'", "offset", "alignment"});
  write_bytes(p, one_tensor_gguf("w", {8}, 0, 0, 16));  // needs 32 bytes, 16 present
  expect_error<GGUFFile>(p, {"tensor 'w'", "offset", "beyond"});
  write_bytes(p, one_tensor_gguf("blk.0.attn_q.weight", {256}, 10, 0, 84));  // Q2_K: not read
  expect_error<GGUFFile>(p, {"tensor 'blk.0.attn_q.weight'", "type", "10", "Q2_K"});
  write_bytes(p, one_tensor_gguf("w", {128}, 12, 0, 144));  // Q4_K rows must hold whole blocks
  expect_error<GGUFFile>(p, {"tensor 'w'", "Q4_K", "256"});
  write_bytes(p, one_tensor_gguf("w", {256}, 14, 0, 200));  // one Q6_K block is 210 bytes
  expect_error<GGUFFile>(p, {"tensor 'w'", "offset", "beyond"});
  write_bytes(p, one_tensor_gguf("w", {4}, 200, 0, 16));
  expect_error<GGUFFile>(p, {"tensor 'w'", "type", "200", "unknown"});
  write_bytes(p, one_tensor_gguf("w", {16}, 8, 0, 64));  // Q8_0 rows must hold whole blocks
  expect_error<GGUFFile>(p, {"tensor 'w'", "Q8_0"});
  // Tensor name longer than the file.
  write_bytes(p, gguf_head(1, 0).u64(1ull << 50).raw(std::string(64, 'w')).b);
  expect_error<GGUFFile>(p, {"tensor #0 name", "string length"});
  // Data section that starts past the end (tensor infos end right at the file end).
  write_bytes(p, one_tensor_gguf("w", {4}, 0, 0, 0).substr(0, 24 + 8 + 1 + 4 + 8 + 4 + 8));
  expect_error<GGUFFile>(p, {"data section"});

  // Two tensors: duplicate names, and overlapping byte ranges.
  auto two = [](const std::string& n1, uint64_t off1, const std::string& n2, uint64_t off2) {
    Bytes b = gguf_head(2, 0);
    b.str(n1).u32(1).u64(16).u32(0).u64(off1);
    b.str(n2).u32(1).u64(16).u32(0).u64(off2);
    b.pad(32).raw(std::string(128, '\0'));
    return b.b;
  };
  write_bytes(p, two("a", 0, "b", 64));
  EXPECT_NO_THROW(GGUFFile f(p));
  write_bytes(p, two("a", 0, "a", 64));
  expect_error<GGUFFile>(p, {"'a'", "twice"});
  write_bytes(p, two("a", 0, "b", 32));
  expect_error<GGUFFile>(p, {"overlap", "'a'", "'b'"});
}

TEST(Malformed, SafetensorsFields) {
  ScratchDir dir;
  std::string p = dir.file("s.safetensors");
  auto file = [](const std::string& json, size_t data_bytes) {
    Bytes b;
    b.u64(json.size()).raw(json).raw(std::string(data_bytes, '\0'));
    return b.b;
  };
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", 16));
  EXPECT_NO_THROW(SafetensorsFile f(p));

  write_bytes(p, Bytes().u64(1ull << 40).raw("{}").b);
  expect_error<SafetensorsFile>(p, {"header length", "1099511627776"});
  write_bytes(p, "abc");
  expect_error<SafetensorsFile>(p, {"header length"});
  write_bytes(p, file(R"({"w":{"dtype":"F32",)", 16));
  expect_error<SafetensorsFile>(p, {"JSON"});
  write_bytes(p, file(R"([1,2])", 0));
  expect_error<SafetensorsFile>(p, {"header", "object"});
  write_bytes(p, file(R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})", 16));
  expect_error<SafetensorsFile>(p, {"tensor 'ids'", "dtype", "I64"});
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", 32));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "data_offsets", "24"});
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[16,0]}})", 32));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "data_offsets"});
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[16,32]}})", 16));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "data_offsets", "beyond"});
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0]}})", 16));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "data_offsets"});
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[-2,2],"data_offsets":[0,16]}})", 16));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "shape"});
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],)"
                      R"("data_offsets":[0,16]}})", 16));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "shape"});
  write_bytes(p, file(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", 8));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "dtype"});
  write_bytes(p, file(R"({"w":[1]})", 8));
  expect_error<SafetensorsFile>(p, {"tensor 'w'"});
  write_bytes(p, file(R"({"__metadata__":{"n":1}})", 0));
  expect_error<SafetensorsFile>(p, {"__metadata__", "'n'"});
  write_bytes(p, file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                      R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 24));
  expect_error<SafetensorsFile>(p, {"overlaps"});
  // Issue #24: deep nesting (was a stack overflow) and long names (quoted whole).
  write_bytes(p, file(R"({"w":)" + std::string(40000, '[') + std::string(40000, ']') + "}", 0));
  expect_error<SafetensorsFile>(p, {"safetensors header", "nested deeper than 64 levels"});
  const std::string long_name(200000, 'n');
  write_bytes(p, file(R"({")" + long_name + R"(":{"dtype":"X"}})", 0));
  EXPECT_LT(try_load<SafetensorsFile>(p).size(), 400u) << "the tensor name is excerpted";
  write_bytes(p, file(R"({"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", 8));
  expect_error<SafetensorsFile>(p, {"tensor 'w'", "shape", "2.0"});
}

TEST(Malformed, GGUFLongNamesAreExcerptedAndIntegersRangeChecked) {
  ScratchDir dir;
  std::string p = dir.file("names.gguf");
  const std::string long_key(300000, 'k');
  write_bytes(p, gguf_head(0, 2).str(long_key).u32(gguf_type::UINT8).raw("\x01").str(long_key)
                     .u32(gguf_type::UINT8).raw("\x01").b);
  const std::string m = try_load<GGUFFile>(p);
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m.substr(0, 300);
  EXPECT_LT(m.size(), 400u) << "the key is excerpted";
  write_bytes(p, gguf_head(0, 1).str("n").u32(gguf_type::UINT64).u64((1ull << 32) + 5).b);
  GGUFFile f(p);
  EXPECT_EQ(f.get_int_in("n", 0, int64_t(1) << 40), (int64_t(1) << 32) + 5);
  try {
    f.get_int_in("n", 1, 2147483647);
    ADD_FAILURE() << "wrapped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("metadata 'n' is 4294967301, expected an integer in [1, 2147483647]"),
              std::string::npos) << e.what();
  }
}
