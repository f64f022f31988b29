// Element types of tensors stored in model files, and their conversion to float32.
// The engine computes in float32; other types are converted once when a model is loaded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace bosch {

enum class DType { F32, F16, BF16, Q8_0 };

std::string dtype_name(DType t);
// Bytes needed for n elements (n must be a multiple of the block size for block types).
size_t dtype_bytes(DType t, size_t n);
size_t dtype_block(DType t);  // elements per block: 32 for Q8_0, else 1
// Converts n elements of type t at src to float32.
void to_f32(DType t, const void* src, float* dst, size_t n);

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);  // round to nearest even

}  // namespace bosch
