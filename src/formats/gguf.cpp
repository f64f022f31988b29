#include "formats/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "util/checked.h"
#include "util/error.h"

namespace bosch {

namespace {

// Limits far above any real model, low enough that a corrupt count fails before allocating.
constexpr uint64_t kMaxTensors = 1ull << 22;
constexpr uint64_t kMaxKV = 1ull << 22;
constexpr uint32_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kMaxAlignment = 1ull << 16;

// Bounds-checked little-endian reader over the mapped file. Every read names its field.
class Cursor {
 public:
  Cursor(const std::string& path, const uint8_t* data, size_t size)
      : path_(path), data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <class T>
  T read(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const std::string& field) {
    uint64_t len = read<uint64_t>(field + " (string length)");
    check(len <= remaining(), "GGUF '{}': {}: string length {} exceeds the {} bytes left in the file",
          path_, field, len, remaining());
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

  void need(size_t n, const std::string& field) const {
    check(n <= remaining(), "GGUF '{}': {}: file ends at byte {} (need {} bytes at offset {})",
          path_, field, size_, n, pos_);
  }

 private:
  const std::string& path_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Smallest encoded size of one value of a GGUF type (used to bound counts by the bytes left).
uint64_t min_value_bytes(uint32_t t) {
  switch (t) {
    case gguf_type::UINT8: case gguf_type::INT8: case gguf_type::BOOL: return 1;
    case gguf_type::UINT16: case gguf_type::INT16: return 2;
    case gguf_type::UINT32: case gguf_type::INT32: case gguf_type::FLOAT32: return 4;
    case gguf_type::UINT64: case gguf_type::INT64: case gguf_type::FLOAT64: return 8;
    case gguf_type::STRING: return 8;
    case gguf_type::ARRAY: return 12;
    default: return 0;
  }
}

GGUFValue read_value(Cursor& c, const std::string& path, uint32_t type, const std::string& field,
                     int depth) {
  GGUFValue v;
  v.gguf_type = type;
  switch (type) {
    case gguf_type::UINT8: v.i = c.read<uint8_t>(field); break;
    case gguf_type::INT8: v.i = c.read<int8_t>(field); break;
    case gguf_type::UINT16: v.i = c.read<uint16_t>(field); break;
    case gguf_type::INT16: v.i = c.read<int16_t>(field); break;
    case gguf_type::UINT32: v.i = c.read<uint32_t>(field); break;
    case gguf_type::INT32: v.i = c.read<int32_t>(field); break;
    case gguf_type::INT64: v.i = c.read<int64_t>(field); break;
    case gguf_type::UINT64: {
      uint64_t u = c.read<uint64_t>(field);
      check(u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
            "GGUF '{}': {}: UINT64 value {} is larger than INT64_MAX", path, field, u);
      v.i = static_cast<int64_t>(u);
      break;
    }
    case gguf_type::FLOAT32:
      v.kind = GGUFValue::Kind::Float;
      v.f = c.read<float>(field);
      break;
    case gguf_type::FLOAT64:
      v.kind = GGUFValue::Kind::Float;
      v.f = c.read<double>(field);
      break;
    case gguf_type::BOOL: {
      v.kind = GGUFValue::Kind::Bool;
      uint8_t b = c.read<uint8_t>(field);
      check(b <= 1, "GGUF '{}': {}: BOOL byte is {} (expected 0 or 1)", path, field, b);
      v.b = b != 0;
      break;
    }
    case gguf_type::STRING:
      v.kind = GGUFValue::Kind::String;
      v.s = c.read_string(field);
      break;
    case gguf_type::ARRAY: {
      check(depth < kMaxArrayDepth, "GGUF '{}': {}: arrays nested deeper than {}", path, field,
            kMaxArrayDepth);
      v.kind = GGUFValue::Kind::Array;
      uint32_t elem = c.read<uint32_t>(field + " (array element type)");
      uint64_t minb = min_value_bytes(elem);
      check(minb != 0, "GGUF '{}': {}: unknown array element type {}", path, field, elem);
      v.gguf_type = elem;
      uint64_t n = c.read<uint64_t>(field + " (array length)");
      check(n <= c.remaining() / minb,
            "GGUF '{}': {}: array length {} of {} cannot fit in the {} bytes left in the file",
            path, field, n, gguf_type_name(elem), c.remaining());
      v.arr.reserve(static_cast<size_t>(n));
      for (uint64_t k = 0; k < n; ++k) {
        v.arr.push_back(read_value(c, path, elem, field, depth + 1));
      }
      break;
    }
    default:
      fail("GGUF '{}': {}: unknown value type {}", path, field, type);
  }
  return v;
}

std::optional<DType> dtype_from_ggml(uint32_t t) {
  switch (t) {
    case 0: return DType::F32;
    case 1: return DType::F16;
    case 2: return DType::Q4_0;
    case 6: return DType::Q5_0;
    case 8: return DType::Q8_0;
    case 12: return DType::Q4_K;
    case 13: return DType::Q5_K;
    case 14: return DType::Q6_K;
    case 30: return DType::BF16;
    default: return std::nullopt;
  }
}

bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

std::string gguf_type_name(uint32_t t) {
  static const char* names[] = {"UINT8",  "INT8", "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
                                "BOOL",   "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"};
  if (t < std::size(names)) return names[t];
  return fmt::format("type {}", t);
}

uint32_t ggml_type_id(DType t) {
  switch (t) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q8_0: return 8;
    case DType::Q4_0: return 2;
    case DType::Q5_0: return 6;
    case DType::Q4_K: return 12;
    case DType::Q5_K: return 13;
    case DType::Q6_K: return 14;
    case DType::BF16: return 30;
  }
  fail("ggml_type_id: unknown dtype {}", static_cast<int>(t));
}

std::string ggml_type_name(uint32_t t) {
  static const char* names[] = {
      "F32",     "F16",     "Q4_0",    "Q4_1",    "Q4_2",   "Q4_3",    "Q5_0",    "Q5_1",
      "Q8_0",    "Q8_1",    "Q2_K",    "Q3_K",    "Q4_K",   "Q5_K",    "Q6_K",    "Q8_K",
      "IQ2_XXS", "IQ2_XS",  "IQ3_XXS", "IQ1_S",   "IQ4_NL", "IQ3_S",   "IQ2_S",   "IQ4_XS",
      "I8",      "I16",     "I32",     "I64",     "F64",    "IQ1_M",   "BF16",    "Q4_0_4_4",
      "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0",   "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8",
      "MXFP4"};
  if (t < std::size(names)) return names[t];
  return "unknown";
}

int64_t GGUFTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

GGUFFile::GGUFFile(const std::string& path, FileHold hold) : path_(path) {
  file_ = std::make_shared<const FileBytes>(path, hold);
  const uint8_t* base = file_->data();
  const size_t size = file_->size();
  Cursor c(path_, base, size);

  // Header.
  c.need(4, "magic");
  check(std::memcmp(base, "GGUF", 4) == 0,
        "GGUF '{}': magic: expected \"GGUF\", found bytes {:02x} {:02x} {:02x} {:02x}", path,
        base[0], base[1], base[2], base[3]);
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  check(version_ == 2 || version_ == 3, "GGUF '{}': version: {} is not supported (expected 2 or 3{})",
        path, version_,
        (version_ == 0x02000000u || version_ == 0x03000000u) ? "; this is a big-endian file" : "");
  uint64_t tensor_count = c.read<uint64_t>("tensor_count");
  uint64_t kv_count = c.read<uint64_t>("metadata_kv_count");
  // A KV pair takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info at least 24.
  check(kv_count <= kMaxKV && kv_count <= c.remaining() / 13,
        "GGUF '{}': metadata_kv_count: {} pairs cannot fit in a {}-byte file (limit {})", path,
        kv_count, size, kMaxKV);
  check(tensor_count <= kMaxTensors && tensor_count <= c.remaining() / 24,
        "GGUF '{}': tensor_count: {} tensors cannot fit in a {}-byte file (limit {})", path,
        tensor_count, size, kMaxTensors);

  // Metadata.
  for (uint64_t k = 0; k < kv_count; ++k) {
    std::string key = c.read_string(fmt::format("metadata key #{}", k));
    check(!key.empty(), "GGUF '{}': metadata key #{} is empty", path, k);
    check(!meta_.count(key), "GGUF '{}': metadata key '{}' appears twice", path, excerpt(key));
    std::string field = fmt::format("metadata '{}'", excerpt(key));
    uint32_t type = c.read<uint32_t>(field + " (value type)");
    meta_.emplace(key, read_value(c, path_, type, field, 0));
  }

  if (const GGUFValue* a = find("general.alignment")) {
    check(a->kind == GGUFValue::Kind::Int,
          "GGUF '{}': metadata 'general.alignment': expected an integer, found {}", path,
          gguf_type_name(a->gguf_type));
    check(a->i > 0 && static_cast<uint64_t>(a->i) <= kMaxAlignment && (a->i & (a->i - 1)) == 0,
          "GGUF '{}': metadata 'general.alignment': {} is not a power of two in [1, {}]", path,
          a->i, kMaxAlignment);
    alignment_ = static_cast<uint64_t>(a->i);
  }

  // Tensor infos.
  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t k = 0; k < tensor_count; ++k) {
    GGUFTensor t;
    t.name = c.read_string(fmt::format("tensor #{} name", k));
    check(!tensor_index_.count(t.name), "GGUF '{}': tensor name '{}' appears twice", path, excerpt(t.name));
    std::string what = fmt::format("tensor '{}'", excerpt(t.name));
    uint32_t n_dims = c.read<uint32_t>(what + " n_dims");
    check(n_dims >= 1 && n_dims <= kMaxDims, "GGUF '{}': {} n_dims: {} (expected 1..{})", path,
          what, n_dims, kMaxDims);
    int64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = c.read<uint64_t>(fmt::format("{} dims[{}]", what, d));
      check(dim > 0 && dim <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
            "GGUF '{}': {} dims[{}]: {} (expected a positive size)", path, what, d, dim);
      t.dims.push_back(static_cast<int64_t>(dim));
      check(!mul_overflows(numel, static_cast<int64_t>(dim), &numel),
            "GGUF '{}': {} dims: element count overflows 64 bits", path, what);
    }
    uint32_t type = c.read<uint32_t>(what + " type");
    std::optional<DType> dt = dtype_from_ggml(type);
    check(dt.has_value(),
          "GGUF '{}': {} type: ggml type {} ({}) is not supported (supported: F32, F16, BF16, "
          "Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K)",
          path, what, type, ggml_type_name(type));
    t.type = *dt;
    if (dtype_is_quantized(t.type)) {  // rows hold whole blocks
      check(t.dims[0] % static_cast<int64_t>(dtype_block(t.type)) == 0,
            "GGUF '{}': {} dims[0]: {} is not a multiple of the {} block size {}", path, what,
            t.dims[0], dtype_name(t.type), dtype_block(t.type));
    }
    check(static_cast<uint64_t>(numel) <= std::numeric_limits<uint64_t>::max() / 4,
          "GGUF '{}': {} dims: {} elements is too large", path, what, numel);
    t.nbytes = dtype_bytes(t.type, static_cast<size_t>(numel));
    t.offset = c.read<uint64_t>(what + " offset");
    check(t.offset % alignment_ == 0, "GGUF '{}': {} offset: {} is not a multiple of the alignment {}",
          path, what, t.offset, alignment_);
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  // Data section: starts at the next multiple of the alignment after the tensor infos.
  uint64_t data_start = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (!tensors_.empty()) {
    check(data_start <= size,
          "GGUF '{}': data section: starts at byte {} but the file has only {} bytes", path,
          data_start, size);
  }
  const uint64_t data_size = data_start <= size ? size - data_start : 0;
  for (GGUFTensor& t : tensors_) {
    check(t.offset <= data_size && t.nbytes <= data_size - t.offset,
          "GGUF '{}': tensor '{}' offset: bytes [{}, {}) of the data section lie beyond its end "
          "({} bytes; file truncated?)",
          path, excerpt(t.name), t.offset, t.offset + t.nbytes, data_size);
    t.data = base + data_start + t.offset;
  }

  // Tensor byte ranges must not overlap.
  std::vector<const GGUFTensor*> by_offset;
  for (const GGUFTensor& t : tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GGUFTensor* a, const GGUFTensor* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const GGUFTensor* a = by_offset[k - 1];
    const GGUFTensor* b = by_offset[k];
    check(a->offset + a->nbytes <= b->offset,
          "GGUF '{}': tensor '{}' offset: bytes [{}, {}) overlap tensor '{}' at [{}, {})", path,
          excerpt(b->name), b->offset, b->offset + b->nbytes, excerpt(a->name), a->offset, a->offset + a->nbytes);
  }
}

const GGUFValue* GGUFFile::find(const std::string& key) const {
  auto it = meta_.find(key);
  return it == meta_.end() ? nullptr : &it->second;
}

namespace {

const char* kind_name(GGUFValue::Kind k) {
  switch (k) {
    case GGUFValue::Kind::Int: return "integer";
    case GGUFValue::Kind::Float: return "float";
    case GGUFValue::Kind::Bool: return "bool";
    case GGUFValue::Kind::String: return "string";
    case GGUFValue::Kind::Array: return "array";
  }
  return "?";
}

const GGUFValue& require(const GGUFFile& f, const std::string& key, GGUFValue::Kind kind,
                         const char* expected) {
  const GGUFValue* v = f.find(key);
  check(v != nullptr, "GGUF '{}': metadata key '{}' is missing (expected {})", f.path(), key,
        expected);
  check(v->kind == kind, "GGUF '{}': metadata '{}': expected {}, found {}", f.path(), key, expected,
        kind_name(v->kind));
  return *v;
}

const GGUFValue& require_float(const GGUFFile& f, const std::string& key) {
  const GGUFValue* v = f.find(key);
  check(v != nullptr, "GGUF '{}': metadata key '{}' is missing (expected a number)", f.path(), key);
  check(v->kind == GGUFValue::Kind::Float || v->kind == GGUFValue::Kind::Int,
        "GGUF '{}': metadata '{}': expected a number, found {}", f.path(), key, kind_name(v->kind));
  return *v;
}

// Arrays are homogeneous, so the element type id decides (also for empty arrays).
GGUFValue::Kind kind_of_type(uint32_t t) {
  switch (t) {
    case gguf_type::FLOAT32: case gguf_type::FLOAT64: return GGUFValue::Kind::Float;
    case gguf_type::BOOL: return GGUFValue::Kind::Bool;
    case gguf_type::STRING: return GGUFValue::Kind::String;
    case gguf_type::ARRAY: return GGUFValue::Kind::Array;
    default: return GGUFValue::Kind::Int;
  }
}

const GGUFValue& require_array(const GGUFFile& f, const std::string& key, uint32_t elem_kind_mask,
                               const char* expected) {
  const GGUFValue& v = require(f, key, GGUFValue::Kind::Array, expected);
  check(elem_kind_mask & (1u << static_cast<int>(kind_of_type(v.gguf_type))),
        "GGUF '{}': metadata '{}': expected {}, found an array of {}", f.path(), key, expected,
        gguf_type_name(v.gguf_type));
  return v;
}

constexpr uint32_t bit(GGUFValue::Kind k) { return 1u << static_cast<int>(k); }

}  // namespace

int64_t GGUFFile::get_int(const std::string& key) const {
  return require(*this, key, GGUFValue::Kind::Int, "an integer").i;
}

double GGUFFile::get_float(const std::string& key) const {
  const GGUFValue& v = require_float(*this, key);
  return v.kind == GGUFValue::Kind::Float ? v.f : static_cast<double>(v.i);
}

std::string GGUFFile::get_string(const std::string& key) const {
  return require(*this, key, GGUFValue::Kind::String, "a string").s;
}

bool GGUFFile::get_bool(const std::string& key) const {
  return require(*this, key, GGUFValue::Kind::Bool, "a bool").b;
}

std::vector<std::string> GGUFFile::get_string_array(const std::string& key) const {
  const GGUFValue& v =
      require_array(*this, key, bit(GGUFValue::Kind::String), "an array of strings");
  std::vector<std::string> out;
  out.reserve(v.arr.size());
  for (const GGUFValue& e : v.arr) out.push_back(e.s);
  return out;
}

std::vector<double> GGUFFile::get_float_array(const std::string& key) const {
  const GGUFValue& v = require_array(
      *this, key, bit(GGUFValue::Kind::Float) | bit(GGUFValue::Kind::Int), "an array of numbers");
  std::vector<double> out;
  out.reserve(v.arr.size());
  for (const GGUFValue& e : v.arr) {
    out.push_back(e.kind == GGUFValue::Kind::Float ? e.f : static_cast<double>(e.i));
  }
  return out;
}

std::vector<int64_t> GGUFFile::get_int_array(const std::string& key) const {
  const GGUFValue& v =
      require_array(*this, key, bit(GGUFValue::Kind::Int), "an array of integers");
  std::vector<int64_t> out;
  out.reserve(v.arr.size());
  for (const GGUFValue& e : v.arr) out.push_back(e.i);
  return out;
}

int64_t GGUFFile::get_int_in(const std::string& key, int64_t lo, int64_t hi) const {
  return int_in_range(get_int(key), lo, hi, fmt::format("GGUF '{}'", path_), "metadata '" + key + "'");
}

int64_t GGUFFile::get_int_in_or(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const {
  return has(key) ? get_int_in(key, lo, hi) : fallback;
}

int64_t GGUFFile::get_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}

double GGUFFile::get_float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}

std::string GGUFFile::get_string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

const GGUFTensor* GGUFFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GGUFTensor& GGUFFile::tensor(const std::string& name) const {
  const GGUFTensor* t = find_tensor(name);
  check(t != nullptr, "GGUF '{}': tensor '{}' is missing", path_, name);
  return *t;
}

}  // namespace bosch
