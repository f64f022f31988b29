// Element types of tensors stored in model files, and their conversion to float32.
// The engine computes in float32; weights stay in their file's type and are converted a block
// of rows at a time by the kernels (kernels/qmatmul.h). Block layouts: formats/quant.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace bosch {

enum class DType { F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K };

std::string dtype_name(DType t);
// Bytes needed for n elements (n must be a multiple of the block size for block types).
size_t dtype_bytes(DType t, size_t n);
size_t dtype_block(DType t);  // elements per block: 32 (Q8_0, Q4_0, Q5_0), 256 (K-quants), else 1
size_t dtype_block_bytes(DType t);  // bytes per block (per element for F32/F16/BF16)
bool dtype_is_quantized(DType t);
// Converts n elements of type t at src to float32 (threads for large n).
void to_f32(DType t, const void* src, float* dst, size_t n);
// Converts nblocks whole blocks (elements for F32/F16/BF16) on the calling thread only.
void dequant_blocks(DType t, const void* src, float* dst, size_t nblocks);

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);  // round to nearest even

}  // namespace bosch
