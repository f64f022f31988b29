#include "formats/writers.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "formats/quantize.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch {

namespace {

template <class T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

void pad_to(std::string& out, uint64_t alignment) {
  out.append((alignment - out.size() % alignment) % alignment, '\0');
}

void check_int_range(const std::string& key, int64_t v, int64_t lo, int64_t hi, uint32_t type) {
  check(v >= lo && v <= hi, "write_gguf: metadata '{}': value {} does not fit {}", key, v,
        gguf_type_name(type));
}

// Writes the payload of one value of GGUF type `type` (the type id itself is written by the caller).
void put_value(std::string& out, const std::string& key, const GGUFValue& v, uint32_t type) {
  auto want = [&](GGUFValue::Kind k, const char* what) {
    check(v.kind == k, "write_gguf: metadata '{}': type {} needs a {} value", key,
          gguf_type_name(type), what);
  };
  switch (type) {
    case gguf_type::UINT8: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, 0, UINT8_MAX, type); put<uint8_t>(out, v.i); break;
    case gguf_type::INT8: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, INT8_MIN, INT8_MAX, type); put<int8_t>(out, v.i); break;
    case gguf_type::UINT16: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, 0, UINT16_MAX, type); put<uint16_t>(out, v.i); break;
    case gguf_type::INT16: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, INT16_MIN, INT16_MAX, type); put<int16_t>(out, v.i); break;
    case gguf_type::UINT32: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, 0, UINT32_MAX, type); put<uint32_t>(out, v.i); break;
    case gguf_type::INT32: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, INT32_MIN, INT32_MAX, type); put<int32_t>(out, v.i); break;
    case gguf_type::UINT64: want(GGUFValue::Kind::Int, "integer");
      check_int_range(key, v.i, 0, INT64_MAX, type); put<uint64_t>(out, v.i); break;
    case gguf_type::INT64: want(GGUFValue::Kind::Int, "integer");
      put<int64_t>(out, v.i); break;
    case gguf_type::FLOAT32: want(GGUFValue::Kind::Float, "float");
      put<float>(out, static_cast<float>(v.f)); break;
    case gguf_type::FLOAT64: want(GGUFValue::Kind::Float, "float");
      put<double>(out, v.f); break;
    case gguf_type::BOOL: want(GGUFValue::Kind::Bool, "bool");
      put<uint8_t>(out, v.b ? 1 : 0); break;
    case gguf_type::STRING: want(GGUFValue::Kind::String, "string");
      put_string(out, v.s); break;
    case gguf_type::ARRAY: {
      want(GGUFValue::Kind::Array, "array");
      // v.gguf_type is the element type.
      check(v.gguf_type <= gguf_type::FLOAT64, "write_gguf: metadata '{}': unknown array element type {}",
            key, v.gguf_type);
      put<uint32_t>(out, v.gguf_type);
      put<uint64_t>(out, v.arr.size());
      for (const GGUFValue& e : v.arr) put_value(out, key, e, v.gguf_type);
      break;
    }
    default:
      fail("write_gguf: metadata '{}': unknown value type {}", key, type);
  }
}

// The type id written before a top-level value.
uint32_t outer_type(const GGUFValue& v) {
  return v.kind == GGUFValue::Kind::Array ? gguf_type::ARRAY : v.gguf_type;
}

int64_t checked_numel(const std::string& who, const TensorToWrite& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    check(d >= 0, "{}: tensor '{}': negative dimension {}", who, t.name, d);
    check(!__builtin_mul_overflow(n, d, &n), "{}: tensor '{}': element count overflows", who,
          t.name);
  }
  return n;
}

}  // namespace

std::vector<uint8_t> encode_f32(DType type, const float* src, size_t n) {
  check(n % dtype_block(type) == 0, "encode_f32: {} values do not fill whole {} blocks of {}", n, dtype_name(type),
        dtype_block(type));
  std::vector<uint8_t> out(dtype_bytes(type, n));
  encode_f32_into(type, src, n, out.data());
  return out;
}

void encode_f32_into(DType type, const float* src, size_t n, uint8_t* o) {
  check(n % dtype_block(type) == 0, "encode_f32: {} values do not fill whole {} blocks of {}", n, dtype_name(type),
        dtype_block(type));
  const size_t blocks = n / dtype_block(type);
  switch (type) {
    case DType::F32:
      if (n) std::memcpy(o, src, n * 4);
      break;
    case DType::F16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h = f32_to_f16(src[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      break;
    case DType::BF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      break;
    case DType::Q8_0: quant::quantize_q8_0(src, o, blocks); break;
    case DType::Q4_0: quant::quantize_q4_0(src, o, blocks); break;
    case DType::Q4_K: quant::quantize_q4_k(src, o, blocks); break;
    case DType::Q5_K: quant::quantize_q5_k(src, o, blocks); break;
    case DType::Q6_K: quant::quantize_q6_k(src, o, blocks); break;
    default:
      fail("encode_f32: writing {} is not supported (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K are)",
           dtype_name(type));
  }
}

namespace {

// Header, metadata and tensor infos, padded to the data section; checks every tensor (its
// bytes too when given).
std::string gguf_header(const std::string& path, const std::map<std::string, GGUFValue>& metadata,
                        const std::vector<TensorToWrite>& tensors, uint64_t alignment, bool with_bytes) {
  check(alignment > 0 && (alignment & (alignment - 1)) == 0,
        "write_gguf '{}': alignment {} is not a power of two", path, alignment);
  std::map<std::string, GGUFValue> meta = metadata;
  if (alignment != 32 || meta.count("general.alignment")) {
    auto it = meta.find("general.alignment");
    check(it == meta.end() || (it->second.kind == GGUFValue::Kind::Int &&
                               static_cast<uint64_t>(it->second.i) == alignment),
          "write_gguf '{}': metadata 'general.alignment' disagrees with alignment {}", path,
          alignment);
    meta["general.alignment"] = gguf_int(static_cast<int64_t>(alignment), gguf_type::UINT32);
  }

  std::string out;
  out += "GGUF";
  put<uint32_t>(out, 3);
  put<uint64_t>(out, tensors.size());
  put<uint64_t>(out, meta.size());
  for (const auto& [key, v] : meta) {
    put_string(out, key);
    uint32_t type = outer_type(v);
    put<uint32_t>(out, type);
    put_value(out, key, v, type);
  }

  std::set<std::string> names;
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    std::string who = fmt::format("write_gguf '{}'", path);
    check(names.insert(t.name).second, "{}: tensor '{}' appears twice", who, t.name);
    check(!t.shape.empty() && t.shape.size() <= 4, "{}: tensor '{}': {} dims (expected 1..4)", who,
          t.name, t.shape.size());
    int64_t numel = checked_numel(who, t);
    size_t expect = dtype_bytes(t.type, static_cast<size_t>(numel));
    if (with_bytes)
      check(t.bytes.size() == expect, "{}: tensor '{}': {} bytes given, {} {} elements need {}", who,
            t.name, t.bytes.size(), numel, dtype_name(t.type), expect);
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) put<uint64_t>(out, *it);
    put<uint32_t>(out, ggml_type_id(t.type));
    put<uint64_t>(out, offset);
    offset += (expect + alignment - 1) / alignment * alignment;
  }
  pad_to(out, alignment);
  return out;
}

}  // namespace

void write_gguf(const std::string& path, const std::map<std::string, GGUFValue>& metadata,
                const std::vector<TensorToWrite>& tensors, uint64_t alignment) {
  std::string out = gguf_header(path, metadata, tensors, alignment, true);
  for (const TensorToWrite& t : tensors) {
    out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    pad_to(out, alignment);
  }
  write_file_atomic(path, out);
}

void write_gguf_streamed(const std::string& path, const std::map<std::string, GGUFValue>& metadata,
                         const std::vector<TensorToWrite>& tensors,
                         const std::function<std::vector<uint8_t>(size_t)>& produce, uint64_t alignment) {
  AtomicFileWriter f(path);
  f.write(gguf_header(path, metadata, tensors, alignment, false));
  const std::string zeros(alignment, '\0');
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<uint8_t> bytes = produce(i);
    const TensorToWrite& t = tensors[i];
    const size_t expect = dtype_bytes(t.type, static_cast<size_t>(checked_numel("write_gguf", t)));
    check(bytes.size() == expect, "write_gguf '{}': tensor '{}': {} bytes produced, {} expected", path, t.name,
          bytes.size(), expect);
    f.write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    f.write(std::string_view(zeros.data(), (alignment - bytes.size() % alignment) % alignment));
  }
  f.commit();
}

GGUFValue gguf_int(int64_t v, uint32_t gguf_type) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::Int;
  r.gguf_type = gguf_type;
  r.i = v;
  return r;
}

GGUFValue gguf_float(double v) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::Float;
  r.gguf_type = gguf_type::FLOAT32;
  r.f = v;
  return r;
}

GGUFValue gguf_bool(bool v) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::Bool;
  r.gguf_type = gguf_type::BOOL;
  r.b = v;
  return r;
}

GGUFValue gguf_string(std::string v) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::String;
  r.gguf_type = gguf_type::STRING;
  r.s = std::move(v);
  return r;
}

GGUFValue gguf_string_array(const std::vector<std::string>& v) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::Array;
  r.gguf_type = gguf_type::STRING;
  for (const std::string& s : v) r.arr.push_back(gguf_string(s));
  return r;
}

GGUFValue gguf_float_array(const std::vector<double>& v) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::Array;
  r.gguf_type = gguf_type::FLOAT32;
  for (double d : v) r.arr.push_back(gguf_float(d));
  return r;
}

GGUFValue gguf_int_array(const std::vector<int64_t>& v, uint32_t elem_type) {
  GGUFValue r;
  r.kind = GGUFValue::Kind::Array;
  r.gguf_type = elem_type;
  for (int64_t i : v) r.arr.push_back(gguf_int(i, elem_type));
  return r;
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const nlohmann::json& metadata) {
  std::string who = fmt::format("write_safetensors '{}'", path);
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.is_null()) {
    check(metadata.is_object(), "{}: __metadata__ must be a JSON object of strings", who);
    for (const auto& [k, v] : metadata.items()) {
      check(v.is_string(), "{}: __metadata__ '{}' must be a string", who, k);
    }
    header["__metadata__"] = metadata;
  }
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    check(t.name != "__metadata__" && !header.contains(t.name), "{}: tensor '{}' appears twice",
          who, t.name);
    check(t.type != DType::Q8_0, "{}: tensor '{}': safetensors has no Q8_0 dtype", who, t.name);
    int64_t numel = checked_numel(who, t);
    size_t expect = dtype_bytes(t.type, static_cast<size_t>(numel));
    check(t.bytes.size() == expect, "{}: tensor '{}': {} bytes given, {} {} elements need {}", who,
          t.name, t.bytes.size(), numel, dtype_name(t.type), expect);
    header[t.name] = {{"dtype", dtype_name(t.type)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned, as the reference does
  std::string out;
  put<uint64_t>(out, json.size());
  out += json;
  // Data in header (name) order would also be valid; we keep the caller's order.
  for (const TensorToWrite& t : tensors) {
    out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  }
  write_file_atomic(path, out);
}

}  // namespace bosch
