// The BPE merge loop shared by the byte-level tokenizer: repeatedly merge the adjacent pair with
// the lowest rank (leftmost on ties), as Hugging Face tokenizers do. Short words use a direct
// scan; longer ones a binary heap over a linked list, so a 100 KB word is O(n log n).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bosch {

// Open-addressing map (left id, right id) -> (rank, merged id).
class MergeTable {
 public:
  struct Merge {
    int32_t rank = -1, id = -1;
  };
  void reserve(size_t n);
  void insert(int32_t left, int32_t right, int32_t rank, int32_t merged);  // first insert wins
  Merge find(int32_t left, int32_t right) const {
    if (left < 0 || right < 0 || slots_.empty()) return {};
    uint64_t key = pack(left, right);
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.m;
      if (s.key == kEmpty) return {};
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  struct Slot {
    uint64_t key = kEmpty;
    Merge m;
  };
  static uint64_t pack(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  static size_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  void grow();
  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

// Merges `ids` in place (symbols with id -1 never merge).
void bpe_merge(const MergeTable& table, std::vector<int32_t>& ids);

}  // namespace bosch
