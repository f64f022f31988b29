#include "search/objectives/prefix_state_cache.h"

#include "util/error.h"

namespace bosch::search {

PrefixStateCache::PrefixStateCache(int n_layers, int n_heads, int64_t entry_floats, int64_t budget_bytes)
    : L_(n_layers),
      H_(n_heads),
      entry_floats_(entry_floats),
      entry_bytes_(entry_floats * static_cast<int64_t>(sizeof(float))),
      budget_(budget_bytes) {
  check(entry_floats > 0, "prefix state cache: empty entries");
}

std::string PrefixStateCache::key(const HeadBits& bits, int layer) const {
  check(bits.size() == static_cast<size_t>(L_) * H_, "prefix state cache: mask of {} bits, expected {}",
        bits.size(), static_cast<size_t>(L_) * H_);
  return std::string(bits.begin(), bits.begin() + static_cast<std::ptrdiff_t>(layer) * H_);
}

int PrefixStateCache::deepest(const HeadBits& bits, const float** states) {
  *states = nullptr;
  int found = 0;
  ++clock_;
  for (int j = L_ - 1; j >= 1; --j) {
    auto it = map_.find(key(bits, j));
    if (it == map_.end()) continue;
    it->second.last_use = clock_;  // the hit and its shallower ancestors stay warm together
    if (!found) {
      found = j;
      *states = it->second.states.data();
    }
  }
  return found;
}

int PrefixStateCache::make_room(int wanted, const HeadBits& bits, int keep_layer) {
  const std::string keep = keep_layer > 0 ? key(bits, keep_layer) : std::string();
  auto fitting = [&] {
    const int64_t free_bytes = budget_ - bytes();
    return free_bytes <= 0 ? 0 : static_cast<int>(std::min<int64_t>(wanted, free_bytes / entry_bytes_));
  };
  while (fitting() < wanted) {
    auto victim = map_.end();
    for (auto it = map_.begin(); it != map_.end(); ++it)
      if ((keep_layer == 0 || it->first != keep) && (victim == map_.end() || it->second.last_use < victim->second.last_use))
        victim = it;
    if (victim == map_.end()) break;
    map_.erase(victim);
  }
  return fitting();
}

void PrefixStateCache::store(int layer, const HeadBits& bits, std::vector<float> states) {
  check(layer >= 1 && layer < L_, "prefix state cache: layer {} outside [1, {})", layer, L_);
  check(static_cast<int64_t>(states.size()) == entry_floats_, "prefix state cache: entry of {} floats, expected {}",
        states.size(), entry_floats_);
  Entry& e = map_[key(bits, layer)];
  e.states = std::move(states);
  e.last_use = ++clock_;
}

}  // namespace bosch::search
