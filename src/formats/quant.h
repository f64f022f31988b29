// ggml's quantised block formats as stored in GGUF files (block_q4_0, block_q5_0, block_q8_0,
// block_q4_K, block_q5_K, block_q6_K) and their dequantisation to float32. The values are the
// ones ggml's own to_float gives, bit for bit (tests/formats/test_quant_reference.cpp): this file
// is compiled with -ffp-contract=off, because a fused d*q - m rounds once where ggml rounds twice.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bosch::quant {

constexpr size_t kQK = 32;     // elements per block of Q4_0, Q5_0, Q8_0
constexpr size_t kQK_K = 256;  // elements per super-block of the K-quants

// Bytes per block: fp16 scale(s) first (Q6_K: last) then the packed quants.
constexpr size_t kQ4_0Bytes = 2 + kQK / 2;                       // d, qs[16]
constexpr size_t kQ5_0Bytes = 2 + 4 + kQK / 2;                   // d, qh[4], qs[16]
constexpr size_t kQ8_0Bytes = 2 + kQK;                           // d, qs[32]
constexpr size_t kQ4_KBytes = 2 + 2 + 12 + kQK_K / 2;            // d, dmin, scales[12], qs[128]
constexpr size_t kQ5_KBytes = 2 + 2 + 12 + kQK_K / 8 + kQK_K / 2;  // .., qh[32], qs[128]
constexpr size_t kQ6_KBytes = kQK_K / 2 + kQK_K / 4 + kQK_K / 16 + 2;  // ql[128], qh[64], sc[16], d

// Each dequantises `nblocks` consecutive blocks from src into dst (nblocks * block elements).
void dequant_q4_0(const uint8_t* src, float* dst, size_t nblocks);
void dequant_q5_0(const uint8_t* src, float* dst, size_t nblocks);
void dequant_q8_0(const uint8_t* src, float* dst, size_t nblocks);
void dequant_q4_k(const uint8_t* src, float* dst, size_t nblocks);
void dequant_q5_k(const uint8_t* src, float* dst, size_t nblocks);
void dequant_q6_k(const uint8_t* src, float* dst, size_t nblocks);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block: the first four
// sit in the low 6 bits of bytes 0-3 / 4-7, the last four are split over bytes 8-11 (low and
// high nibble) and the top 2 bits of bytes 0-7.
inline void k_scale_min(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

}  // namespace bosch::quant
