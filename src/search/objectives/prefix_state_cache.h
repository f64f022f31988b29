// Hidden states of the calibration samples at the input of a layer, keyed by the attention bits
// of the layers below it: the input of layer j depends on bits[0 .. j*H) and nothing else, so
// a state computed for one candidate is exact for every candidate sharing that prefix. Many
// prefixes are kept at once (not just the search's current assignment), so a candidate starts
// from the deepest layer whose prefix any earlier candidate shared: stage 3's neighbours, the
// probes of one layer, and masks of other ratios all reuse each other's lower layers.
//
// An entry holds one layer input for ALL samples (one buffer, the caller's layout). Eviction:
// least recently used first, within a byte budget. Layer 0 (the embedding output) is not
// stored here; the caller keeps it.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/core/objective.h"

namespace bosch::search {

class PrefixStateCache {
 public:
  // entry_floats: floats in one entry (all samples' [n_tokens, d_model] states together).
  PrefixStateCache(int n_layers, int n_heads, int64_t entry_floats, int64_t budget_bytes);

  // The deepest layer j in [1, n_layers) whose input for `bits` is stored, with its states
  // (valid until the next store/make_room), or 0 and nullptr when none is. Marks the hit and
  // every shallower stored prefix of `bits` as just used.
  int deepest(const HeadBits& bits, const float** states);

  // Evicts least recently used entries (never the one at layer `keep_layer` for `bits`) until
  // `wanted` more entries fit the budget, or nothing more can go; returns how many fit now.
  int make_room(int wanted, const HeadBits& bits, int keep_layer);

  // Stores the input of `layer` (1 <= layer < n_layers) for `bits`. The caller checked room.
  void store(int layer, const HeadBits& bits, std::vector<float> states);

  size_t entries() const { return map_.size(); }
  int64_t bytes() const { return static_cast<int64_t>(map_.size()) * entry_bytes_; }
  int64_t budget_bytes() const { return budget_; }

 private:
  std::string key(const HeadBits& bits, int layer) const;
  struct Entry {
    std::vector<float> states;
    uint64_t last_use = 0;
  };
  int L_, H_;
  int64_t entry_floats_, entry_bytes_, budget_;
  uint64_t clock_ = 0;
  std::unordered_map<std::string, Entry> map_;  // key = the bits of the layers below
};

}  // namespace bosch::search
