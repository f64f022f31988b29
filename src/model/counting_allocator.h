// An allocator that adds every allocation to a shared byte counter, so a cache can report the
// bytes it actually holds ("measured from the allocator") rather than what a formula predicts.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace bosch {

template <class T>
struct CountingAllocator {
  using value_type = T;
  std::atomic<int64_t>* counter = nullptr;  // owned by the container's owner; must outlive it

  explicit CountingAllocator(std::atomic<int64_t>* c) : counter(c) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& o) : counter(o.counter) {}

  T* allocate(size_t n) {
    T* p = std::allocator<T>{}.allocate(n);
    counter->fetch_add(static_cast<int64_t>(n * sizeof(T)), std::memory_order_relaxed);
    return p;
  }
  void deallocate(T* p, size_t n) {
    counter->fetch_sub(static_cast<int64_t>(n * sizeof(T)), std::memory_order_relaxed);
    std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>& o) const { return counter == o.counter; }
  // Containers moved or swapped take their allocator (and so their counter) with them.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
};

using CountedBytes = std::vector<uint8_t, CountingAllocator<uint8_t>>;

}  // namespace bosch
