// Dims or strides of one tensor, stored inline up to rank 8 so that a call on
// ordinary tensors validates and plans without touching the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace sqdiff::detail {

// Element-wise equality of two dim lists, without a call to memcmp (what
// std::vector's == compiles to): for the few dims of a small call that call
// cost ~4 of its ~21 ns (perf).
inline bool same_dims(std::span<const int64_t> x, std::span<const int64_t> y) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

class DimVector {
 public:
  static constexpr std::size_t kInlineCapacity = 8;

  // User-provided, and inline_ left uninitialised: only the first size_
  // entries are ever read, and zeroing every DimVector of a CheckedCall and a
  // Plan (~1 KB each) was a measurable part of a small call (rep stos, perf).
  DimVector() {}  // NOLINT(modernize-use-equals-default): "= default" would value-initialise
  explicit DimVector(std::size_t size, int64_t value = 0) { resize(size, value); }
  DimVector(std::span<const int64_t> values) { assign(values); }  // NOLINT: implicit from spans and Shapes
  DimVector(const std::vector<int64_t>& values) : DimVector(std::span<const int64_t>(values)) {}  // NOLINT
  DimVector(std::initializer_list<int64_t> values) : DimVector(std::span<const int64_t>(values.begin(), values.size())) {}

  DimVector(const DimVector& other) { assign(other.span()); }
  DimVector& operator=(const DimVector& other) {
    if (this != &other) assign(other.span());
    return *this;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return size_ <= kInlineCapacity ? inline_ : heap_.data(); }
  const int64_t* data() const { return size_ <= kInlineCapacity ? inline_ : heap_.data(); }
  int64_t& operator[](std::size_t i) { return data()[i]; }
  int64_t operator[](std::size_t i) const { return data()[i]; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  std::span<const int64_t> span() const { return {data(), size_}; }
  operator std::span<const int64_t>() const { return span(); }  // NOLINT: reads like a Shape
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  void resize(std::size_t size, int64_t value = 0) {
    if (size > kInlineCapacity) {
      heap_.assign(begin(), end());
      heap_.resize(size, value);
    } else {
      std::fill(inline_ + std::min(size_, size), inline_ + size, value);
      heap_.clear();
    }
    size_ = size;
  }

  friend bool operator==(const DimVector& x, std::span<const int64_t> y) { return same_dims(x, y); }

 private:
  void assign(std::span<const int64_t> values) {
    size_ = values.size();
    if (size_ > kInlineCapacity) {
      heap_.assign(values.begin(), values.end());
    } else {
      std::copy(values.begin(), values.end(), inline_);
      heap_.clear();
    }
  }

  std::size_t size_ = 0;
  int64_t inline_[kInlineCapacity];
  std::vector<int64_t> heap_;  // only for ranks above kInlineCapacity
};

}  // namespace sqdiff::detail
