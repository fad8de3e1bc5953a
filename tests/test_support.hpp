// Shared helpers for the sqdiff unit tests: independent oracles for the half
// types, element-wise reference arithmetic, a strided scalar reference loop,
// and small utilities (shape formatting, error capture, dtype mapping).
//
// Nothing here reuses the library's own bit tricks: half/bfloat16 values are
// decoded with std::ldexp in double and rounded by searching a sorted table of
// every finite value and comparing against the exact midpoint.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff_test {

using sqdiff::DType;
using sqdiff::Shape;

// ---------------------------------------------------------------------------
// Small utilities

inline std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 0) r += ",";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline Shape dense_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

// Runs f, which must throw sqdiff::Error; returns its message ("" and a test
// failure otherwise).
template <class F>
std::string error_message(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const sqdiff::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a std::exception that is not sqdiff::Error: " << e.what();
    return "";
  } catch (...) {
    ADD_FAILURE() << "threw something that is not sqdiff::Error";
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

// Calls fn(index, linear) for every multi-index of `shape` in row-major order.
inline void for_each_index(const Shape& shape,
                           const std::function<void(const std::vector<int64_t>&, int64_t)>& fn) {
  const int64_t n = numel(shape);
  if (n == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(idx, linear);
    for (std::size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
}

// ---------------------------------------------------------------------------
// DType mapping

template <class T>
struct DTypeOf;
template <> struct DTypeOf<sqdiff::float16> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<sqdiff::bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::i8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::i16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::i32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::i64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::u16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::u32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::u64; };
template <class T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

template <class T>
inline constexpr bool is_half_type =
    std::is_same_v<T, sqdiff::float16> || std::is_same_v<T, sqdiff::bfloat16>;

// ---------------------------------------------------------------------------
// Independent oracle for binary16 and bfloat16.

struct HalfFormat {
  int mantissa_bits;   // 10 for binary16, 7 for bfloat16
  int exponent_bits;   // 5 / 8
  int bias;            // 15 / 127

  uint16_t sign_mask() const { return 0x8000u; }
  uint16_t inf_bits() const {
    return static_cast<uint16_t>(((1u << exponent_bits) - 1u) << mantissa_bits);
  }
  uint16_t quiet_bit() const { return static_cast<uint16_t>(1u << (mantissa_bits - 1)); }
  uint16_t mantissa_mask() const { return static_cast<uint16_t>((1u << mantissa_bits) - 1u); }
};

inline constexpr HalfFormat kF16Format{10, 5, 15};
inline constexpr HalfFormat kBF16Format{7, 8, 127};

inline bool half_is_nan(const HalfFormat& f, uint16_t bits) {
  return (bits & f.inf_bits()) == f.inf_bits() && (bits & f.mantissa_mask()) != 0;
}

// Value of a half bit pattern as a double (exact), by the textbook formula.
// NaN patterns give a NaN.
inline double half_bits_to_double(const HalfFormat& f, uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const unsigned exponent = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1u);
  const unsigned mantissa = bits & f.mantissa_mask();
  double magnitude;
  if (exponent == (1u << f.exponent_bits) - 1u) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    // Subnormal: mantissa * 2^(1 - bias - mantissa_bits).
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>((1u << f.mantissa_bits) + mantissa),
                           static_cast<int>(exponent) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Sorted magnitudes of every finite non-negative half, indexed by bit pattern,
// followed by one "virtual" entry: the value the next pattern (the inf
// pattern) would have if the exponent range went on, 2^(emax+1). Rounding to
// that entry means overflow to inf; its pattern is even, as IEEE requires for
// ties at the top of the range.
inline const std::vector<double>& half_magnitude_table(const HalfFormat& f) {
  static const std::vector<double> f16 = [] {
    std::vector<double> t;
    for (uint32_t b = 0; b < kF16Format.inf_bits(); ++b)
      t.push_back(half_bits_to_double(kF16Format, static_cast<uint16_t>(b)));
    t.push_back(std::ldexp(1.0, 16));
    return t;
  }();
  static const std::vector<double> bf16 = [] {
    std::vector<double> t;
    for (uint32_t b = 0; b < kBF16Format.inf_bits(); ++b)
      t.push_back(half_bits_to_double(kBF16Format, static_cast<uint16_t>(b)));
    t.push_back(std::ldexp(1.0, 128));
    return t;
  }();
  return f.mantissa_bits == kF16Format.mantissa_bits ? f16 : bf16;
}

// Round a non-NaN float to the half format, nearest, ties to even. Overflow
// gives inf, the sign of zero and of every result is the input's.
inline uint16_t round_float_to_half_oracle(const HalfFormat& f, float value) {
  const double x = std::fabs(static_cast<double>(value));
  const uint16_t sign = std::signbit(value) ? f.sign_mask() : 0;
  const std::vector<double>& t = half_magnitude_table(f);
  if (x >= t.back()) return static_cast<uint16_t>(sign | f.inf_bits());
  // lo = the largest pattern whose value is <= x.
  const auto it = std::upper_bound(t.begin(), t.end(), x);
  const std::size_t lo = static_cast<std::size_t>(it - t.begin()) - 1;
  std::size_t pick;
  if (t[lo] == x) {
    pick = lo;
  } else {
    const std::size_t hi = lo + 1;
    // The midpoint of two adjacent halves has one bit more than a half: exact.
    const double mid = (t[lo] + t[hi]) / 2;
    if (x < mid) pick = lo;
    else if (x > mid) pick = hi;
    else pick = (lo % 2 == 0) ? lo : hi;
  }
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(pick));
}

inline float f16_oracle_to_float(uint16_t bits) {
  return static_cast<float>(half_bits_to_double(kF16Format, bits));
}
inline float bf16_oracle_to_float(uint16_t bits) {
  return static_cast<float>(half_bits_to_double(kBF16Format, bits));
}

// ---------------------------------------------------------------------------
// Element-wise reference arithmetic (SPEC section 2).

enum class Op { subtract, squared_difference };

inline const char* op_name(Op op) {
  return op == Op::subtract ? "subtract" : "squared_difference";
}

inline void run_op(Op op, const sqdiff::ConstTensorView& a, const sqdiff::ConstTensorView& b,
                   const sqdiff::TensorView& out, const sqdiff::Options& options = {}) {
  if (op == Op::subtract) sqdiff::subtract(a, b, out, options);
  else sqdiff::squared_difference(a, b, out, options);
}

template <class H>
const HalfFormat& half_format() {
  if constexpr (std::is_same_v<H, sqdiff::float16>) return kF16Format;
  else return kBF16Format;
}

template <class T>
T ref_apply(Op op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Wrap-around in the unsigned type of the same width; widen to unsigned
    // int first so that u8/u16 products are not promoted to signed int.
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    const W d = static_cast<U>(static_cast<U>(a) - static_cast<U>(b));
    const W r = op == Op::subtract ? d : static_cast<W>(d * d);
    return static_cast<T>(static_cast<U>(r));
  } else if constexpr (std::is_floating_point_v<T>) {
    const T d = a - b;
    return op == Op::subtract ? d : d * d;
  } else {
    const HalfFormat& f = half_format<T>();
    const float fa = static_cast<float>(half_bits_to_double(f, a.bits()));
    const float fb = static_cast<float>(half_bits_to_double(f, b.bits()));
    const float d = fa - fb;
    const float r = op == Op::subtract ? d : d * d;
    if (std::isnan(r)) return T::from_bits(static_cast<uint16_t>(f.inf_bits() | f.quiet_bit()));
    return T::from_bits(round_float_to_half_oracle(f, r));
  }
}

template <class T>
std::string value_str(T v) {
  std::ostringstream os;
  if constexpr (is_half_type<T>) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04X", static_cast<unsigned>(v.bits()));
    os << buf << " (" << half_bits_to_double(half_format<T>(), v.bits()) << ")";
  } else if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    os.precision(std::numeric_limits<T>::max_digits10);
    os << v << " (bits 0x" << std::hex << std::bit_cast<Bits>(v) << ")";
  } else if constexpr (sizeof(T) == 1) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}

// Bit-exact comparison, except that a NaN result may carry any payload (SPEC
// section 4); it must still be a quiet NaN.
template <class T>
::testing::AssertionResult same_value(T expected, T actual) {
  bool ok;
  if constexpr (is_half_type<T>) {
    const HalfFormat& f = half_format<T>();
    if (half_is_nan(f, expected.bits()))
      ok = half_is_nan(f, actual.bits()) && (actual.bits() & f.quiet_bit()) != 0;
    else
      ok = expected.bits() == actual.bits();
  } else if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const Bits quiet = Bits{1} << (std::numeric_limits<T>::digits - 2);
    if (std::isnan(expected))
      ok = std::isnan(actual) && (std::bit_cast<Bits>(actual) & quiet) != 0;
    else
      ok = std::bit_cast<Bits>(expected) == std::bit_cast<Bits>(actual);
  } else {
    ok = expected == actual;
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << value_str(expected) << ", got "
                                       << value_str(actual);
}

// ---------------------------------------------------------------------------
// Strided scalar reference (numpy broadcasting of both inputs onto out_shape).

template <class T>
struct StridedInput {
  const T* data;
  Shape shape;
  Shape strides;  // empty = dense
};

// Offset of the element that output multi-index `idx` reads from `in`.
template <class T>
int64_t input_offset(const StridedInput<T>& in, const std::vector<int64_t>& idx) {
  const Shape st = in.strides.empty() ? dense_strides(in.shape) : in.strides;
  const std::size_t pad = idx.size() - in.shape.size();
  int64_t off = 0;
  for (std::size_t j = 0; j < in.shape.size(); ++j) {
    const int64_t i = in.shape[j] == 1 ? 0 : idx[pad + j];
    off += i * st[j];
  }
  return off;
}

// Dense row-major expected output.
template <class T>
std::vector<T> reference_op(Op op, const StridedInput<T>& a, const StridedInput<T>& b,
                            const Shape& out_shape) {
  std::vector<T> out(static_cast<std::size_t>(numel(out_shape)));
  for_each_index(out_shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    out[static_cast<std::size_t>(linear)] =
        ref_apply(op, a.data[input_offset(a, idx)], b.data[input_offset(b, idx)]);
  });
  return out;
}

// Reads a (possibly strided) output view back into dense row-major order.
template <class T>
std::vector<T> gather(const T* data, const Shape& shape, const Shape& strides) {
  const Shape st = strides.empty() ? dense_strides(shape) : strides;
  std::vector<T> out(static_cast<std::size_t>(numel(shape)));
  for_each_index(shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t off = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * st[k];
    out[static_cast<std::size_t>(linear)] = data[off];
  });
  return out;
}

// Compares two dense arrays element by element; reports the first few misses.
template <class T>
::testing::AssertionResult same_values(const std::vector<T>& expected, const std::vector<T>& actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << " != " << expected.size();
  int misses = 0;
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ::testing::AssertionResult r = same_value(expected[i], actual[i]);
    if (!r) {
      if (misses < 8) failure << "\n  element " << i << ": " << r.message();
      ++misses;
    }
  }
  if (misses == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << misses << " of " << expected.size() << " elements differ";
}

}  // namespace sqdiff_test
