// The dispatched dequantisation (kernels/dequant.h: the prefill tiles and get_row of qmatmul.cpp)
// against the scalar dequant_blocks, bit for bit, under each kernel set this CPU runs: random
// blocks of every type, scales of every kind (zero, subnormal, largest, inf, NaN) and unaligned
// pointers; then llama.cpp's own dequantised tensors (tests/data/quant) through get_row
// and through the tile path of matmul_nt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "../formats/sha256.h"
#include "formats/dtype.h"
#include "formats/gguf.h"
#include "kernels/dequant.h"
#include "kernels/dispatch.h"
#include "use_kernel_set.h"
#include "kernels/qmatmul.h"
#include "../test_support.h"

using namespace bosch;
using bosch::tests::UseSet;

namespace {

const DType kTypes[] = {DType::F32, DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                        DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// fp16 bit patterns a scale can hold: zeros, subnormals, the largest, infinities, quiet and
// signalling NaNs, and ordinary values.
const uint16_t kSpecialHalves[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00,
                                   0xfc00, 0x7e00, 0x7c01, 0xfd55, 0x3c00, 0xb800, 0x2e66, 0x1400};

// The offsets of a block's fp16 scales (Q6_K: d at the end; Q4_K/Q5_K: d and dmin).
std::vector<size_t> scale_offsets(DType t) {
  switch (t) {
    case DType::Q4_K: case DType::Q5_K: return {0, 2};
    case DType::Q6_K: return {208};
    case DType::Q8_0: case DType::Q4_0: case DType::Q5_0: return {0};
    default: return {};
  }
}

// nb blocks of t: random bytes (so every F16/BF16 pattern, every quant and 6-bit scale), with
// each fp16 scale a special pattern, a sane value or left random, in turn.
std::vector<uint8_t> random_blocks(DType t, size_t nb, std::mt19937& rng) {
  std::vector<uint8_t> b(dtype_block_bytes(t) * nb);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  const size_t bb = dtype_block_bytes(t);
  for (size_t i = 0; i < nb; ++i)
    for (size_t off : scale_offsets(t)) {
      uint16_t h;
      switch (rng() % 3) {
        case 0: h = kSpecialHalves[rng() % std::size(kSpecialHalves)]; break;
        case 1: h = f32_to_f16(std::ldexp(static_cast<float>(rng() % 1000) / 1000 - 0.5f, -static_cast<int>(rng() % 12)));
          break;
        default: continue;
      }
      std::memcpy(&b[i * bb + off], &h, 2);
    }
  return b;
}

std::vector<const kernels::KernelSet*> runnable_sets() {
  std::vector<const kernels::KernelSet*> out;
  for (const kernels::KernelSet* s : kernels::compiled_kernel_sets())
    if (kernels::cpu_runs(*s)) out.push_back(s);
    else std::printf("SKIPPED kernel set %s: this CPU lacks %s\n", s->name, s->features);
  return out;
}

}  // namespace

TEST(DequantFast, EqualsScalarBitForBitForEveryTypeAndSet) {
  for (const kernels::KernelSet* s : runnable_sets()) {
    UseSet use(*s);
    for (DType t : kTypes) {
      SCOPED_TRACE(std::string(s->name) + " " + dtype_name(t));
      std::mt19937 rng(17 + static_cast<uint32_t>(t));
      const bool plain = dtype_block(t) == 1;  // counts are elements: cover the 8/16-wide tails
      for (size_t nb : plain ? std::vector<size_t>{1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000}
                             : std::vector<size_t>{1, 2, 3, 7, 16, 40}) {
        for (size_t skew : {0, 1}) {  // unaligned source and destination, as rows of a tile are
          const auto blocks = random_blocks(t, nb, rng);
          std::vector<uint8_t> src(blocks.size() + skew);
          std::memcpy(src.data() + skew, blocks.data(), blocks.size());
          const size_t n = nb * dtype_block(t);
          std::vector<float> want(n), got(n + skew, -7.0f);
          dequant_blocks(t, src.data() + skew, want.data(), nb);
          dequant_blocks_fast(t, src.data() + skew, got.data() + skew, nb);
          ASSERT_EQ(std::memcmp(want.data(), got.data() + skew, n * 4), 0)
              << nb << " blocks, skew " << skew << ": first difference at element "
              << (std::mismatch(want.begin(), want.end(), got.begin() + skew,
                                [](float a, float b) { return std::memcmp(&a, &b, 4) == 0; }).first - want.begin());
          if (skew) {
            ASSERT_EQ(got[0], -7.0f);  // nothing written before dst
          }
        }
      }
    }
  }
}

// Every pair of special scales (K-quants: d and dmin, NaN payloads against each other), one
// block each, with random quants.
TEST(DequantFast, EveryPairOfSpecialScales) {
  for (const kernels::KernelSet* s : runnable_sets()) {
    UseSet use(*s);
    for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
      SCOPED_TRACE(std::string(s->name) + " " + dtype_name(t));
      std::mt19937 rng(5);
      const auto offs = scale_offsets(t);
      const size_t nb = std::size(kSpecialHalves) * std::size(kSpecialHalves), bb = dtype_block_bytes(t);
      std::vector<uint8_t> src = random_blocks(t, nb, rng);
      for (size_t i = 0; i < nb; ++i) {
        const uint16_t a = kSpecialHalves[i % std::size(kSpecialHalves)], b = kSpecialHalves[i / std::size(kSpecialHalves)];
        std::memcpy(&src[i * bb + offs[0]], &a, 2);
        if (offs.size() > 1) std::memcpy(&src[i * bb + offs[1]], &b, 2);
      }
      std::vector<float> want(nb * dtype_block(t)), got(want.size());
      dequant_blocks(t, src.data(), want.data(), nb);
      dequant_blocks_fast(t, src.data(), got.data(), nb);
      ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0);
    }
  }
}

// Every matrix of llama.cpp's quantised tiny llama (README in tests/data/quant): get_row
// row by row gives the tensor llama.cpp dequantised (its sha256), and the prefill tile path
// (matmul_nt with x = the identity, so y = W^T exactly) gives the same values.
TEST(DequantFast, LlamaCppTensorsThroughGetRowAndPrefillTiles) {
  const std::string dir = bosch::tests::test_data("quant");
  for (const kernels::KernelSet* s : runnable_sets()) {
    UseSet use(*s);
    for (const char* file : {"q8_0", "q4_0", "q5_0", "q4_k_s", "q4_k_m", "q5_k_m", "q6_k"}) {
      const std::string base = dir + "/tiny-llama-" + file;
      std::ifstream in(base + ".dequant.json");
      ASSERT_TRUE(in) << base << ".dequant.json";
      const nlohmann::json ref = nlohmann::json::parse(in);
      GGUFFile f(base + ".gguf");
      int matrices = 0;
      for (const auto& rt : ref["tensors"]) {
        const GGUFTensor& t = f.tensor(rt["name"].get<std::string>());
        if (t.dims.size() != 2 || t.type == DType::F32) continue;
        SCOPED_TRACE(std::string(s->name) + " " + base + " " + t.name + " " + dtype_name(t.type));
        const WeightView w{t.type, t.data, t.dims[1], t.dims[0]};
        const int64_t n = w.rows, k = w.cols;
        std::vector<float> rows(static_cast<size_t>(n * k));
        for (int64_t r = 0; r < n; ++r) get_row(w, r, rows.data() + r * k);
        EXPECT_EQ(test::sha256_hex(rows.data(), rows.size() * 4), rt["sha256_dequant_f32"].get<std::string>());
        std::vector<float> eye(static_cast<size_t>(k * k), 0.0f), y(static_cast<size_t>(k * n));
        for (int64_t i = 0; i < k; ++i) eye[static_cast<size_t>(i * k + i)] = 1.0f;
        matmul_nt(eye.data(), w, y.data(), static_cast<int>(k));
        // y[i][r] = W[r][i] exactly: one product by 1, the rest by 0 (== also equates the -0 that
        // a sum with +0 terms turns into +0).
        for (int64_t i = 0; i < k; ++i)
          for (int64_t r = 0; r < n; ++r)
            ASSERT_EQ(y[static_cast<size_t>(i * n + r)], rows[static_cast<size_t>(r * k + i)]) << "row " << r << " col " << i;
        ++matrices;
      }
      EXPECT_GE(matrices, 15) << base;  // 2 layers x 7 + token_embd + output
    }
  }
}
