#include "formats/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "formats/quant.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch {

namespace {

constexpr size_t kParallelGrain = 1 << 16;      // elements; below this threads cost more than they save

}  // namespace

std::string dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::Q8_0: return "Q8_0";
    case DType::Q4_0: return "Q4_0";
    case DType::Q5_0: return "Q5_0";
    case DType::Q4_K: return "Q4_K";
    case DType::Q5_K: return "Q5_K";
    case DType::Q6_K: return "Q6_K";
  }
  return "unknown";
}

size_t dtype_block(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16: return 1;
    case DType::Q8_0: case DType::Q4_0: case DType::Q5_0: return quant::kQK;
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return quant::kQK_K;
  }
  fail("dtype_block: unknown dtype {}", static_cast<int>(t));
}

size_t dtype_block_bytes(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::Q8_0: return quant::kQ8_0Bytes;
    case DType::Q4_0: return quant::kQ4_0Bytes;
    case DType::Q5_0: return quant::kQ5_0Bytes;
    case DType::Q4_K: return quant::kQ4_KBytes;
    case DType::Q5_K: return quant::kQ5_KBytes;
    case DType::Q6_K: return quant::kQ6_KBytes;
  }
  fail("dtype_block_bytes: unknown dtype {}", static_cast<int>(t));
}

bool dtype_is_quantized(DType t) { return dtype_block(t) > 1; }

size_t dtype_bytes(DType t, size_t n) {
  const size_t block = dtype_block(t);
  // Not check(): its arguments, dtype_name's string among them, would be built on every call.
  if (n % block != 0) fail("{} element count {} is not a multiple of the block size {}", dtype_name(t), n, block);
  return n / block * dtype_block_bytes(t);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {  // inf / nan: keep the payload
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {  // normal
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  } else if (mant == 0) {  // signed zero
    bits = sign;
  } else {  // subnormal: value = mant * 2^-24, exact in f32
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(bits);
}

uint16_t f32_to_f16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) {  // inf or nan (nan stays nan: force a mantissa bit)
    if (mant == 0) return sign | 0x7c00;
    return static_cast<uint16_t>(sign | 0x7c00 | 0x200 | (mant >> 13));
  }
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;  // overflow -> inf
  if (e <= 0) {
    // Subnormal half (or underflow to zero). Shift the full 24-bit significand.
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
    uint32_t m = mant | 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - e);  // 13 + (1 - e)
    uint32_t half = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;  // may carry into normal: fine
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // carry may round up to inf: correct
  return static_cast<uint16_t>(sign | half);
}

float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;  // round to nearest, ties to even
  return static_cast<uint16_t>(x >> 16);
}

void dequant_blocks(DType t, const void* src, float* dst, size_t nblocks) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  switch (t) {
    case DType::Q8_0: return quant::dequant_q8_0(s, dst, nblocks);
    case DType::Q4_0: return quant::dequant_q4_0(s, dst, nblocks);
    case DType::Q5_0: return quant::dequant_q5_0(s, dst, nblocks);
    case DType::Q4_K: return quant::dequant_q4_k(s, dst, nblocks);
    case DType::Q5_K: return quant::dequant_q5_k(s, dst, nblocks);
    case DType::Q6_K: return quant::dequant_q6_k(s, dst, nblocks);
    case DType::F32: std::memcpy(dst, s, nblocks * 4); return;
    case DType::F16: {
      size_t i = 0;
#if defined(__F16C__)
      // Hardware conversion: exact like f16_to_f32 (every half is a float), 8 at a time.
      for (; i + 8 <= nblocks; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * i))));
#endif
      for (; i < nblocks; ++i) {
        uint16_t h;
        std::memcpy(&h, s + 2 * i, 2);
        dst[i] = f16_to_f32(h);
      }
      return;
    }
    case DType::BF16:
      for (size_t i = 0; i < nblocks; ++i) {
        uint16_t h;
        std::memcpy(&h, s + 2 * i, 2);
        dst[i] = bf16_to_f32(h);
      }
      return;
  }
  fail("dequant_blocks: unknown dtype {}", static_cast<int>(t));
}

void to_f32(DType t, const void* src, float* dst, size_t n) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  switch (t) {
    case DType::F32:
      std::memcpy(dst, s, n * 4);
      return;
    case DType::F16:
      parallel_for(n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          uint16_t h;
          std::memcpy(&h, s + 2 * i, 2);
          dst[i] = f16_to_f32(h);
        }
      }, kParallelGrain);
      return;
    case DType::BF16:
      parallel_for(n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          uint16_t h;
          std::memcpy(&h, s + 2 * i, 2);
          dst[i] = bf16_to_f32(h);
        }
      }, kParallelGrain);
      return;
    case DType::Q8_0: case DType::Q4_0: case DType::Q5_0:
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: {
      const size_t block = dtype_block(t), bytes = dtype_block_bytes(t);
      check(n % block == 0, "{} element count {} is not a multiple of the block size {}", dtype_name(t), n,
            block);
      parallel_for(n / block, [&](size_t b, size_t e) {
        dequant_blocks(t, s + b * bytes, dst + b * block, e - b);
      }, kParallelGrain / block);
      return;
    }
  }
  fail("to_f32: unknown dtype {}", static_cast<int>(t));
}

}  // namespace bosch
