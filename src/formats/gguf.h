// GGUF v2/v3 reader (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
// Parses metadata and tensor infos, checks every offset and size against the file, and exposes
// tensor data from a read-only mmap. Any inconsistency throws bosch::Error naming the file and
// the field.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "formats/dtype.h"
#include "util/file_bytes.h"

namespace bosch {

// GGUF metadata value type ids (gguf.md "gguf_metadata_value_type").
namespace gguf_type {
constexpr uint32_t UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
                   BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12;
}
std::string gguf_type_name(uint32_t gguf_type);  // "UINT32", ...; "type N" when unknown

// ggml tensor type ids this engine reads: F32 0, F16 1, Q4_0 2, Q5_0 6, Q8_0 8, Q4_K 12, Q5_K 13,
// Q6_K 14, BF16 30.
uint32_t ggml_type_id(DType t);
std::string ggml_type_name(uint32_t ggml_type);  // "Q4_K", ...; "unknown" when not a ggml type

// One metadata value. Integers of every width are kept as int64 (uint64 beyond INT64_MAX is
// refused), floats as double; arrays are homogeneous.
struct GGUFValue {
  enum class Kind { Int, Float, Bool, String, Array } kind = Kind::Int;
  uint32_t gguf_type = 0;          // original GGUF type id (for arrays: element type)
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<GGUFValue> arr;
};

struct GGUFTensor {
  std::string name;
  std::vector<int64_t> dims;       // GGUF order: dims[0] is the fastest-varying (ne0)
  DType type = DType::F32;
  uint64_t offset = 0;             // relative to the data section
  const uint8_t* data = nullptr;   // points into the mmap
  size_t nbytes = 0;
  int64_t numel() const;
};

class GGUFFile {
 public:
  // hold: how the bytes are kept (util/file_bytes.h); Map for metadata readers.
  explicit GGUFFile(const std::string& path, FileHold hold = FileHold::Map);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }

  bool has(const std::string& key) const { return meta_.count(key) != 0; }
  const GGUFValue* find(const std::string& key) const;
  const std::map<std::string, GGUFValue>& metadata() const { return meta_; }
  // Typed getters: throw Error naming the file and key when missing or of the wrong type.
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;  // accepts integer values too
  std::string get_string(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::vector<std::string> get_string_array(const std::string& key) const;
  std::vector<double> get_float_array(const std::string& key) const;
  std::vector<int64_t> get_int_array(const std::string& key) const;
  // An integer in [lo, hi], else Error naming the file, the key and the range (no wrapping).
  int64_t get_int_in(const std::string& key, int64_t lo, int64_t hi) const;
  int64_t get_int_in_or(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const;
  // Optional variants return the fallback when the key is absent (but still throw on wrong type).
  int64_t get_int_or(const std::string& key, int64_t fallback) const;
  double get_float_or(const std::string& key, double fallback) const;
  std::string get_string_or(const std::string& key, const std::string& fallback) const;

  // The mapped bytes alone: keeps every tensor's data valid without the parsed metadata (a
  // vocabulary's token and merge arrays are ~25 MiB of it).
  std::shared_ptr<const void> mapping() const { return file_; }

  const std::vector<GGUFTensor>& tensors() const { return tensors_; }
  const GGUFTensor* find_tensor(const std::string& name) const;  // nullptr when absent
  const GGUFTensor& tensor(const std::string& name) const;       // throws when absent

 private:
  std::string path_;
  std::shared_ptr<const FileBytes> file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, GGUFValue> meta_;
  std::vector<GGUFTensor> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace bosch
