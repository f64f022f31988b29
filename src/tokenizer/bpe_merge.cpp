#include "tokenizer/bpe_merge.h"

#include <climits>
#include <queue>

namespace bosch {

void MergeTable::reserve(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  if (cap <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  size_ = 0;
  for (const Slot& s : old)
    if (s.key != kEmpty) insert(static_cast<int32_t>(s.key >> 32), static_cast<int32_t>(s.key & 0xffffffffu), s.m.rank, s.m.id);
}

void MergeTable::grow() { reserve(slots_.empty() ? 16 : slots_.size()); }

void MergeTable::insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  if (2 * (size_ + 1) > slots_.size()) grow();
  uint64_t key = pack(left, right);
  for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) return;
    if (s.key == kEmpty) {
      s.key = key;
      s.m = {rank, merged};
      ++size_;
      return;
    }
  }
}

namespace {

// O(n^2) but allocation-free: best for the short words that make up most text.
void merge_scan(const MergeTable& t, std::vector<int32_t>& ids) {
  while (ids.size() > 1) {
    int32_t best_rank = INT32_MAX, best_id = -1;
    size_t best_pos = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      MergeTable::Merge m = t.find(ids[i], ids[i + 1]);
      if (m.rank >= 0 && m.rank < best_rank) { best_rank = m.rank; best_id = m.id; best_pos = i; }
    }
    if (best_id < 0) return;
    ids[best_pos] = best_id;
    ids.erase(ids.begin() + static_cast<long>(best_pos) + 1);
  }
}

void merge_heap(const MergeTable& t, std::vector<int32_t>& ids) {
  const int n = static_cast<int>(ids.size());
  std::vector<int> prev(n), next(n);
  for (int i = 0; i < n; ++i) { prev[i] = i - 1; next[i] = i + 1 < n ? i + 1 : -1; }
  struct Cand {
    int32_t rank, pos, id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto consider = [&](int left) {
    if (left < 0 || next[left] < 0) return;
    MergeTable::Merge m = t.find(ids[left], ids[next[left]]);
    if (m.rank >= 0) heap.push({m.rank, left, m.id});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    int l = c.pos;
    if (ids[l] < 0 || next[l] < 0) continue;  // left symbol was absorbed, or is now last
    MergeTable::Merge m = t.find(ids[l], ids[next[l]]);
    if (m.rank != c.rank || m.id != c.id) continue;  // stale: the pair changed since it was queued
    int r = next[l];
    ids[l] = c.id;
    ids[r] = -2;  // absorbed
    next[l] = next[r];
    if (next[r] >= 0) prev[next[r]] = l;
    consider(prev[l]);
    consider(l);
  }
  size_t w = 0;
  for (int i = 0; i >= 0; i = next[i]) ids[w++] = ids[i];
  ids.resize(w);
}

}  // namespace

void bpe_merge(const MergeTable& table, std::vector<int32_t>& ids) {
  if (ids.size() <= 24) merge_scan(table, ids);
  else merge_heap(table, ids);
}

}  // namespace bosch
