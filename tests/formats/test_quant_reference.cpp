// Dequantisation of every quantised type against llama.cpp's own values: the tiny llama GGUFs
// in tests/data/quant (quantised by llama-quantize) and the sha256 of each tensor
// dequantised by gguf-py and ggml (README there). Equal bit for bit, not within a tolerance.
// The hand-built blocks below check the layouts independently of llama.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/dtype.h"
#include "formats/gguf.h"
#include "formats/quant.h"
#include "sha256.h"
#include "../test_support.h"

using namespace bosch;

namespace {

const std::string kDir = bosch::tests::test_data("quant");

class QuantReference : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantReference, EveryTensorDequantisesBitForBit) {
  const std::string base = kDir + "/tiny-llama-" + GetParam();
  std::ifstream in(base + ".dequant.json");
  const nlohmann::json ref = nlohmann::json::parse(in);
  GGUFFile f(base + ".gguf");
  ASSERT_EQ(ref["tensors"].size(), f.tensors().size());
  for (const auto& rt : ref["tensors"]) {
    const std::string name = rt["name"];
    SCOPED_TRACE(base + ".gguf tensor " + name);
    const GGUFTensor& t = f.tensor(name);
    EXPECT_EQ(dtype_name(t.type), rt["ggml_type"].get<std::string>());
    EXPECT_EQ(ggml_type_id(t.type), rt["ggml_type_id"].get<uint32_t>());
    EXPECT_EQ(t.dims, rt["ne"].get<std::vector<int64_t>>());
    EXPECT_EQ(t.nbytes, rt["quantized_bytes"].get<size_t>());
    EXPECT_EQ(test::sha256_hex(t.data, t.nbytes), rt["sha256_quantized"].get<std::string>());
    std::vector<float> y(static_cast<size_t>(t.numel()));
    to_f32(t.type, t.data, y.data(), y.size());
    EXPECT_EQ(test::sha256_hex(y.data(), y.size() * 4), rt["sha256_dequant_f32"].get<std::string>());
    const auto first8 = rt["first8"].get<std::vector<double>>();
    for (size_t i = 0; i < first8.size(); ++i) EXPECT_EQ(y[i], static_cast<float>(first8[i])) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, QuantReference,
                         ::testing::Values("q8_0", "q4_0", "q5_0", "q4_k_s", "q4_k_m", "q5_k_m", "q6_k"));

// The samples file holds rows 0-31 of blk.0.attn_k.weight per type, dequantised by llama.cpp.
TEST(QuantReferenceSamples, AttnKRowsMatch) {
  const std::string path = kDir + "/tiny-llama.dequant-samples-f32.gguf";
  GGUFFile samples(path);
  const std::pair<const char*, const char*> cases[] = {{"Q8_0", "q8_0"}, {"Q4_0", "q4_0"}, {"Q5_0", "q5_0"},
                                                       {"Q4_K", "q4_k_m"}, {"Q5_K", "q5_k_m"}, {"Q6_K", "q6_k"}};
  for (auto [type, file] : cases) {
    SCOPED_TRACE(type);
    const GGUFTensor& want = samples.tensor(std::string(type) + "/blk.0.attn_k.weight");
    ASSERT_EQ(want.type, DType::F32);
    GGUFFile src(kDir + "/tiny-llama-" + file + ".gguf");
    const GGUFTensor& t = src.tensor("blk.0.attn_k.weight");
    ASSERT_EQ(dtype_name(t.type), type);
    std::vector<float> y(static_cast<size_t>(want.numel()));
    to_f32(t.type, t.data, y.data(), y.size());  // the first 32 rows
    EXPECT_EQ(std::memcmp(y.data(), want.data, y.size() * 4), 0);
  }
}

}  // namespace

// Hand-built blocks with values worked out from the layout.
TEST(QuantBlocks, Q4_0AndQ5_0) {
  uint8_t b[quant::kQ5_0Bytes] = {};
  const uint16_t two = f32_to_f16(2.0f);
  std::memcpy(b, &two, 2);
  b[2] = 0x13;  // Q4_0: qs[0] = 0x13 -> element 0 = (3-8)*2, element 16 = (1-8)*2
  float y[32];
  quant::dequant_q4_0(b, y, 1);
  EXPECT_EQ(y[0], -10.0f);
  EXPECT_EQ(y[16], -14.0f);
  EXPECT_EQ(y[1], -16.0f);  // nibble 0
  std::memset(b + 2, 0, sizeof b - 2);
  const uint32_t qh = (1u << 0) | (1u << 17);  // 5th bit of elements 0 and 17
  std::memcpy(b + 2, &qh, 4);
  b[6] = 0x21;  // element 0: 1|16 -> 1; element 16: 2 -> -14
  b[7] = 0x30;  // element 1: 0 -> -16; element 17: 3|16 -> 3
  quant::dequant_q5_0(b, y, 1);
  EXPECT_EQ(y[0], 2.0f);
  EXPECT_EQ(y[16], -28.0f);
  EXPECT_EQ(y[1], -32.0f);
  EXPECT_EQ(y[17], 6.0f);
}

TEST(QuantBlocks, KScalesOfSubBlocks) {
  uint8_t s[12] = {};
  s[1] = 0x40 | 5;  // sub-block 1 scale 5; top bits -> high bits of sub-block 5's scale
  s[5] = 0x80 | 7;  // sub-block 1 min 7; top bits -> high bits of sub-block 5's min
  s[9] = 0x93;      // sub-block 5: low nibble scale 3, high nibble min 9
  uint8_t sc, m;
  quant::k_scale_min(1, s, &sc, &m);
  EXPECT_EQ(sc, 5);
  EXPECT_EQ(m, 7);
  quant::k_scale_min(5, s, &sc, &m);
  EXPECT_EQ(sc, 3 | (1 << 4));
  EXPECT_EQ(m, 9 | (2 << 4));
}

TEST(QuantBlocks, Q4_KQ5_KQ6_K) {
  const uint16_t one = f32_to_f16(1.0f), half = f32_to_f16(0.5f);
  uint8_t b4[quant::kQ4_KBytes] = {};
  std::memcpy(b4, &one, 2);
  std::memcpy(b4 + 2, &half, 2);
  b4[4 + 0] = 2;   // sub-block 0: scale 2
  b4[4 + 4] = 3;   // sub-block 0: min 3
  b4[4 + 1] = 4;   // sub-block 1: scale 4, min 0
  b4[16] = 0x75;   // element 0: 5, element 32: 7
  float y[256];
  quant::dequant_q4_k(b4, y, 1);
  EXPECT_EQ(y[0], 2.0f * 5 - 1.5f);
  EXPECT_EQ(y[1], -1.5f);
  EXPECT_EQ(y[32], 28.0f);
  EXPECT_EQ(y[64], 0.0f);

  uint8_t b5[quant::kQ5_KBytes] = {};
  std::memcpy(b5, b4, 16);
  b5[16 + 0] = 0x02;  // qh[0] bit 1: element 32 gets +16
  b5[48] = 0x75;
  quant::dequant_q5_k(b5, y, 1);
  EXPECT_EQ(y[0], 2.0f * 5 - 1.5f);
  EXPECT_EQ(y[32], 4.0f * 23);

  uint8_t b6[quant::kQ6_KBytes] = {};
  b6[0] = 0x21;            // element 0 low 1, element 64 low 2
  b6[128] = 0x01 | 0x30;   // element 0 high 1 -> 17; element 64 high 3 -> 2|48 = 50
  b6[192 + 0] = 3;         // scale of elements 0-15
  b6[192 + 4] = static_cast<uint8_t>(-2);  // scale of elements 64-79
  std::memcpy(b6 + 208, &half, 2);
  quant::dequant_q6_k(b6, y, 1);
  EXPECT_EQ(y[0], 0.5f * 3 * (17 - 32));
  EXPECT_EQ(y[64], 0.5f * -2 * (50 - 32));
  EXPECT_EQ(y[1], 0.5f * 3 * -32);
}

// dequant_blocks converts F16 with the hardware where built: same values as f16_to_f32.
TEST(QuantBlocks, F16BlocksEqualScalarConversion) {
  std::vector<uint16_t> h(65536);
  for (uint32_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint16_t>(i);
  std::vector<float> y(h.size());
  dequant_blocks(DType::F16, h.data(), y.data(), h.size());
  for (uint32_t i = 0; i < h.size(); ++i) {
    const float want = f16_to_f32(h[i]);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(y[i])) << i;
    else EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(want)) << i;
  }
}
