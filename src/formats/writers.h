// Writers for GGUF and safetensors: used by tests (round trips, malformed files), by
// `bosch make-random`, and by mask export (GGUF copy with bosch.swa.* metadata).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/dtype.h"
#include "formats/gguf.h"

namespace bosch {

struct TensorToWrite {
  std::string name;
  std::vector<int64_t> shape;  // PyTorch order (slowest first); the GGUF writer reverses it
  DType type = DType::F32;
  std::vector<uint8_t> bytes;  // already encoded in `type`
};

// Encodes float32 values into `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K: the block
// types through formats/quantize.h; n a multiple of the block). _into writes dtype_bytes(type, n).
std::vector<uint8_t> encode_f32(DType type, const float* src, size_t n);
void encode_f32_into(DType type, const float* src, size_t n, uint8_t* dst);

// GGUF v3. `metadata` maps key -> value; written in map order.
void write_gguf(const std::string& path, const std::map<std::string, GGUFValue>& metadata,
                const std::vector<TensorToWrite>& tensors, uint64_t alignment = 32);
// The same, one tensor at a time: `tensors` give names, shapes and types (their bytes are not
// used) and produce(i) returns tensor i's bytes when the writer reaches it, so a file larger
// than memory can be written.
void write_gguf_streamed(const std::string& path, const std::map<std::string, GGUFValue>& metadata,
                         const std::vector<TensorToWrite>& tensors,
                         const std::function<std::vector<uint8_t>(size_t)>& produce, uint64_t alignment = 32);
// Helpers to build GGUFValue.
GGUFValue gguf_int(int64_t v, uint32_t gguf_type = 4 /*UINT32*/);
GGUFValue gguf_float(double v);
GGUFValue gguf_bool(bool v);
GGUFValue gguf_string(std::string v);
GGUFValue gguf_string_array(const std::vector<std::string>& v);
GGUFValue gguf_float_array(const std::vector<double>& v);
GGUFValue gguf_int_array(const std::vector<int64_t>& v, uint32_t elem_type = 5 /*INT32*/);

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const nlohmann::json& metadata = nullptr);

}  // namespace bosch
