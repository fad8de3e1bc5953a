#include "difference_stats.hpp"

#include <cmath>
#include <type_traits>

#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"

namespace sqdiff::tools {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <typename T>
double as_double(T value) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<double>(static_cast<float>(value));
  } else {
    return static_cast<double>(value);
  }
}

// One row of `n` pairs: the innermost dim of a chunk.
template <typename T>
void row_stats(const T* a, int64_t sa, const T* b, int64_t sb, int64_t n, int64_t first, DifferenceStats& stats) {
  if constexpr (kIsFloat<T>) {
    double max = stats.max_position < 0 ? -1.0 : stats.max_float;
    int64_t max_position = stats.max_position;
    int64_t a_nan = 0, b_nan = 0, a_inf = 0, b_inf = 0, differing = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double x = as_double(a[i * sa]);
      const double y = as_double(b[i * sb]);
      const bool x_nan = std::isnan(x), y_nan = std::isnan(y);
      a_nan += x_nan;
      b_nan += y_nan;
      a_inf += std::isinf(x);
      b_inf += std::isinf(y);
      if (x == y || (x_nan && y_nan)) {
        if (max < 0 && !x_nan) {  // an equal pair's difference is 0
          max = 0;
          max_position = first + i;
        }
        continue;
      }
      ++differing;
      const double d = std::fabs(x - y);  // NaN when one is NaN: never greater
      if (d > max) {
        max = d;
        max_position = first + i;
      }
    }
    stats.a_nan += a_nan;
    stats.b_nan += b_nan;
    stats.a_inf += a_inf;
    stats.b_inf += b_inf;
    stats.differing += differing;
    if (max_position >= 0) {
      stats.max_float = max;
      stats.max_position = max_position;
    }
  } else {
    bool have = stats.max_position >= 0;
    uint64_t max = stats.max_integer;
    int64_t max_position = stats.max_position;
    int64_t differing = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T x = a[i * sa];
      const T y = b[i * sb];
      // The exact |x - y| < 2^64: the difference of the larger and the
      // smaller modulo 2^64.
      const uint64_t d = x >= y ? static_cast<uint64_t>(x) - static_cast<uint64_t>(y)
                                : static_cast<uint64_t>(y) - static_cast<uint64_t>(x);
      differing += d != 0;
      if (d > max || !have) {
        have = true;
        max = d;
        max_position = first + i;
      }
    }
    stats.differing += differing;
    stats.max_integer = max;
    stats.max_position = max_position;
  }
}

template <typename T>
DifferenceStats typed_stats(const void* a, const Shape& a_strides, const void* b, const Shape& b_strides,
                            const Shape& shape, int64_t first) {
  DifferenceStats stats;
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  const std::size_t rank = shape.size();
  if (rank == 0) {
    row_stats(pa, 0, pb, 0, 1, first, stats);
    return stats;
  }
  for (int64_t dim : shape) {
    if (dim == 0) return stats;
  }
  const int64_t n = shape[rank - 1];
  Shape index(rank, 0);
  int64_t position = first;
  for (;;) {
    int64_t oa = 0, ob = 0;
    for (std::size_t k = 0; k + 1 < rank; ++k) {
      oa += index[k] * a_strides[k];
      ob += index[k] * b_strides[k];
    }
    row_stats(pa + oa, a_strides[rank - 1], pb + ob, b_strides[rank - 1], n, position, stats);
    position += n;
    std::size_t k = rank - 1;
    for (; k-- > 0;) {  // the next row, last outer dim fastest
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
    if (k == static_cast<std::size_t>(-1)) return stats;
  }
}

}  // namespace

void DifferenceStats::merge(const DifferenceStats& other) {
  a_nan += other.a_nan;
  b_nan += other.b_nan;
  a_inf += other.a_inf;
  b_inf += other.b_inf;
  differing += other.differing;
  if (other.max_position < 0) return;
  const bool greater = max_position < 0 || other.max_float > max_float || other.max_integer > max_integer;
  const bool tie = other.max_float == max_float && other.max_integer == max_integer;
  if (greater || (tie && other.max_position < max_position)) {
    max_position = other.max_position;
    max_float = other.max_float;
    max_integer = other.max_integer;
  }
}

DifferenceStats difference_stats(DType dtype, const void* a, const Shape& a_strides, const void* b,
                                 const Shape& b_strides, const Shape& shape, int64_t first) {
  switch (dtype) {
    case DType::f16: return typed_stats<float16>(a, a_strides, b, b_strides, shape, first);
    case DType::bf16: return typed_stats<bfloat16>(a, a_strides, b, b_strides, shape, first);
    case DType::f32: return typed_stats<float>(a, a_strides, b, b_strides, shape, first);
    case DType::f64: return typed_stats<double>(a, a_strides, b, b_strides, shape, first);
    case DType::i8: return typed_stats<int8_t>(a, a_strides, b, b_strides, shape, first);
    case DType::i16: return typed_stats<int16_t>(a, a_strides, b, b_strides, shape, first);
    case DType::i32: return typed_stats<int32_t>(a, a_strides, b, b_strides, shape, first);
    case DType::i64: return typed_stats<int64_t>(a, a_strides, b, b_strides, shape, first);
    case DType::u8: return typed_stats<uint8_t>(a, a_strides, b, b_strides, shape, first);
    case DType::u16: return typed_stats<uint16_t>(a, a_strides, b, b_strides, shape, first);
    case DType::u32: return typed_stats<uint32_t>(a, a_strides, b, b_strides, shape, first);
    case DType::u64: return typed_stats<uint64_t>(a, a_strides, b, b_strides, shape, first);
  }
  return {};
}

}  // namespace sqdiff::tools
