// Float32 -> ggml block types (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K), the inverse of formats/quant.h,
// for writing quantised GGUF files (`bosch make-random`). Our own quantisers, not ggml's search
// for the best scales: each picks its scales so that every value of a block lies inside the
// block's quantisation range, which bounds the error of each element by half a quantisation
// step (plus half a min step for Q4_K/Q5_K); tests/formats/test_quantize.cpp checks the bounds.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bosch::quant {

// Each writes `nblocks` consecutive blocks of the type from nblocks * block elements of src.
void quantize_q4_0(const float* src, uint8_t* dst, size_t nblocks);
void quantize_q8_0(const float* src, uint8_t* dst, size_t nblocks);
void quantize_q4_k(const float* src, uint8_t* dst, size_t nblocks);
void quantize_q5_k(const float* src, uint8_t* dst, size_t nblocks);
void quantize_q6_k(const float* src, uint8_t* dst, size_t nblocks);

}  // namespace bosch::quant
