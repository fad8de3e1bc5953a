// An independent scalar reference for subtract / squared_difference.
//
// Nothing here calls the library's code (no sqdiff::broadcast_shape, no
// sqdiff::float16 / bfloat16): the broadcast rule of SPEC section 3, the index
// arithmetic and the f16/bf16 conversions are written again from the SPEC text,
// in the plainest way (double arithmetic with frexp/ldexp), so that a bug in the
// library cannot hide behind the same bug in the test. Only the enum types of
// the public headers are shared.
//
// Also holds the random value generators the differential and SIMD tests share
// (values biased to the special cases of each type).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff_test::oracle {

using DType = sqdiff::DType;
using Shape = std::vector<int64_t>;

enum class Op : uint8_t { subtract, squared_difference };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64,
                                       DType::i8,  DType::i16,  DType::i32, DType::i64,
                                       DType::u8,  DType::u16,  DType::u32, DType::u64};
inline constexpr Op kAllOps[] = {Op::subtract, Op::squared_difference};

inline const char* name_of(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i8: return "i8";
    case DType::i16: return "i16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::u16: return "u16";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
  }
  return "?";
}
inline const char* name_of(Op op) {
  return op == Op::subtract ? "subtract" : "squared_difference";
}
inline const char* name_of(sqdiff::BroadcastKind k) {
  switch (k) {
    case sqdiff::BroadcastKind::none: return "none";
    case sqdiff::BroadcastKind::numpy: return "numpy";
    case sqdiff::BroadcastKind::pdpd: return "pdpd";
  }
  return "?";
}

inline std::size_t elem_size(DType t) {
  switch (t) {
    case DType::i8:
    case DType::u8: return 1;
    case DType::f16:
    case DType::bf16:
    case DType::i16:
    case DType::u16: return 2;
    case DType::f32:
    case DType::i32:
    case DType::u32: return 4;
    case DType::f64:
    case DType::i64:
    case DType::u64: return 8;
  }
  return 0;
}

inline bool is_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}

inline std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) r += ",";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

// ---------------------------------------------------------------------------
// Broadcast shape, SPEC section 3. nullopt = the shapes do not broadcast.
// `b_offset` (out) receives, for pdpd, the output dim aligned with b[0]; for
// numpy and none it is rank(out) - rank(b).
inline std::optional<Shape> broadcast(const Shape& a, const Shape& b, sqdiff::BroadcastKind kind,
                                      int64_t axis, int64_t* b_offset = nullptr) {
  for (int64_t d : a)
    if (d < 0) return std::nullopt;
  for (int64_t d : b)
    if (d < 0) return std::nullopt;
  const int64_t ra = static_cast<int64_t>(a.size());
  const int64_t rb = static_cast<int64_t>(b.size());
  if (kind == sqdiff::BroadcastKind::none) {
    if (a != b) return std::nullopt;
    if (b_offset) *b_offset = 0;
    return a;
  }
  if (kind == sqdiff::BroadcastKind::numpy) {
    const int64_t r = std::max(ra, rb);
    Shape out(static_cast<std::size_t>(r));
    for (int64_t i = 0; i < r; ++i) {
      // i counts output dims from the left; x, y are the aligned dims (1 if padded).
      const int64_t ia = i - (r - ra);
      const int64_t ib = i - (r - rb);
      const int64_t x = ia >= 0 ? a[static_cast<std::size_t>(ia)] : 1;
      const int64_t y = ib >= 0 ? b[static_cast<std::size_t>(ib)] : 1;
      int64_t o;
      if (x == y) o = x;
      else if (x == 1) o = y;
      else if (y == 1) o = x;
      else return std::nullopt;
      out[static_cast<std::size_t>(i)] = o;
    }
    if (b_offset) *b_offset = r - rb;
    return out;
  }
  // pdpd
  if (rb > ra) return std::nullopt;
  if (axis < -1) return std::nullopt;
  const int64_t start = axis == -1 ? ra - rb : axis;
  if (start + rb > ra) return std::nullopt;
  for (int64_t i = 0; i < rb; ++i) {
    const int64_t y = b[static_cast<std::size_t>(i)];
    const int64_t x = a[static_cast<std::size_t>(start + i)];
    if (y != x && y != 1) return std::nullopt;
  }
  if (b_offset) *b_offset = start;
  return a;
}

// ---------------------------------------------------------------------------
// Small IEEE formats (f16: 5 exponent bits, 10 mantissa bits; bf16: 8 and 7),
// decoded into and rounded from double with plain frexp/ldexp arithmetic.

inline double decode_small_float(uint32_t bits, int exp_bits, int mant_bits) {
  const uint32_t sign = (bits >> (exp_bits + mant_bits)) & 1u;
  const uint32_t e = (bits >> mant_bits) & ((1u << exp_bits) - 1u);
  const uint32_t m = bits & ((1u << mant_bits) - 1u);
  const int bias = (1 << (exp_bits - 1)) - 1;
  double mag;
  if (e == (1u << exp_bits) - 1u) {
    mag = m != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    mag = std::ldexp(static_cast<double>(m), 1 - bias - mant_bits);
  } else {
    mag = std::ldexp(static_cast<double>(m + (1u << mant_bits)), static_cast<int>(e) - bias - mant_bits);
  }
  return sign ? -mag : mag;
}

// Rounds x to the nearest representable value, ties to even; too large -> inf.
inline uint32_t encode_small_float(double x, int exp_bits, int mant_bits) {
  const uint32_t sign_bit = 1u << (exp_bits + mant_bits);
  const uint32_t inf_bits = ((1u << exp_bits) - 1u) << mant_bits;
  if (std::isnan(x)) return inf_bits | (1u << (mant_bits - 1));  // a quiet NaN
  const uint32_t sign = std::signbit(x) ? sign_bit : 0u;
  const double ax = std::fabs(x);
  if (std::isinf(ax)) return sign | inf_bits;
  if (ax == 0.0) return sign;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;  // exponent of the smallest normal
  int e = 0;
  (void)std::frexp(ax, &e);  // ax in [2^(e-1), 2^e)
  const int binade = std::max(e - 1, emin);
  const double quantum = std::ldexp(1.0, binade - mant_bits);
  const double q = ax / quantum;  // exact: division by a power of two
  double units = std::floor(q);
  const double frac = q - units;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(units, 2.0) != 0.0)) units += 1.0;
  const double r = units * quantum;
  const double max_finite = std::ldexp(static_cast<double>((1u << (mant_bits + 1)) - 1u),
                                       ((1 << exp_bits) - 2) - bias - mant_bits);
  if (r > max_finite) return sign | inf_bits;
  if (r == 0.0) return sign;
  (void)std::frexp(r, &e);
  const int re = e - 1;
  if (re < emin) {  // subnormal: count units of the smallest subnormal
    return sign | static_cast<uint32_t>(r / std::ldexp(1.0, emin - mant_bits));
  }
  const uint32_t mant = static_cast<uint32_t>(r / std::ldexp(1.0, re - mant_bits)) - (1u << mant_bits);
  return sign | (static_cast<uint32_t>(re + bias) << mant_bits) | mant;
}

inline float f16_to_float(uint16_t h) { return static_cast<float>(decode_small_float(h, 5, 10)); }
inline float bf16_to_float(uint16_t h) { return static_cast<float>(decode_small_float(h, 8, 7)); }
inline uint16_t float_to_f16(float f) { return static_cast<uint16_t>(encode_small_float(f, 5, 10)); }
inline uint16_t float_to_bf16(float f) { return static_cast<uint16_t>(encode_small_float(f, 8, 7)); }

// ---------------------------------------------------------------------------
// The element function on raw bits (low elem_size bytes of a uint64_t).

template <typename U, typename W>
inline uint64_t int_op(Op op, uint64_t a, uint64_t b) {
  const U d = static_cast<U>(static_cast<U>(a) - static_cast<U>(b));
  if (op == Op::subtract) return d;
  return static_cast<U>(static_cast<W>(d) * static_cast<W>(d));
}

inline float f32_op(Op op, float a, float b) {
  const float d = a - b;
  if (op == Op::subtract) return d;
  const float s = d * d;
  return s;
}

inline uint64_t compute_bits(DType t, Op op, uint64_t a, uint64_t b) {
  switch (t) {
    case DType::i8:
    case DType::u8: return int_op<uint8_t, uint32_t>(op, a, b);
    case DType::i16:
    case DType::u16: return int_op<uint16_t, uint32_t>(op, a, b);
    case DType::i32:
    case DType::u32: return int_op<uint32_t, uint32_t>(op, a, b);
    case DType::i64:
    case DType::u64: return int_op<uint64_t, uint64_t>(op, a, b);
    case DType::f32: {
      float x, y;
      const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
      std::memcpy(&x, &ua, 4);
      std::memcpy(&y, &ub, 4);
      const float r = f32_op(op, x, y);
      uint32_t ur;
      std::memcpy(&ur, &r, 4);
      return ur;
    }
    case DType::f64: {
      double x, y;
      std::memcpy(&x, &a, 8);
      std::memcpy(&y, &b, 8);
      const double d = x - y;
      const double r = op == Op::subtract ? d : d * d;
      uint64_t ur;
      std::memcpy(&ur, &r, 8);
      return ur;
    }
    case DType::f16:
      return float_to_f16(f32_op(op, f16_to_float(static_cast<uint16_t>(a)),
                                 f16_to_float(static_cast<uint16_t>(b))));
    case DType::bf16:
      return float_to_bf16(f32_op(op, bf16_to_float(static_cast<uint16_t>(a)),
                                  bf16_to_float(static_cast<uint16_t>(b))));
  }
  return 0;
}

inline bool is_nan_bits(DType t, uint64_t bits) {
  switch (t) {
    case DType::f16: return (bits & 0x7C00u) == 0x7C00u && (bits & 0x03FFu) != 0;
    case DType::bf16: return (bits & 0x7F80u) == 0x7F80u && (bits & 0x007Fu) != 0;
    case DType::f32: return (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
    case DType::f64:
      return (bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (bits & 0x000FFFFFFFFFFFFFull) != 0;
    default: return false;
  }
}

// Bit-exact comparison of an output element with the oracle's. One deliberate
// leniency: when the expected result of a float type is a NaN, any NaN is
// accepted, because SPEC section 4 allows NaN payload bits (and sign) to
// differ across SIMD targets. Everything else, including the sign of zero and
// the exact rounding, must match bit for bit.
inline bool bits_match(DType t, uint64_t expected, uint64_t actual) {
  if (is_nan_bits(t, expected)) return is_nan_bits(t, actual);
  return expected == actual;
}

inline uint64_t load_bits(const void* p, DType t) {
  uint64_t v = 0;
  std::memcpy(&v, p, elem_size(t));  // little-endian: the low bytes
  return v;
}
inline void store_bits(void* p, DType t, uint64_t v) { std::memcpy(p, &v, elem_size(t)); }

inline std::string hex_bits(DType t, uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string r = "0x";
  for (int i = static_cast<int>(elem_size(t)) * 2 - 1; i >= 0; --i) r += digits[(v >> (4 * i)) & 15];
  return r;
}

// ---------------------------------------------------------------------------
// The whole operation on strided views.

struct InputView {
  const void* data;
  DType dtype;
  Shape shape;
  Shape strides;  // in elements; empty = dense row-major
};

inline Shape dense_strides(const Shape& shape) {
  Shape s(shape.size());
  int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

inline int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

struct Result {
  Shape shape;
  DType dtype;
  std::vector<uint64_t> bits;  // dense row-major, one element per entry
};

// nullopt when the shapes do not broadcast (or the dtypes differ).
inline std::optional<Result> compute(Op op, const InputView& a, const InputView& b,
                                     sqdiff::BroadcastKind kind, int64_t axis) {
  if (a.dtype != b.dtype) return std::nullopt;
  int64_t b_off = 0;
  std::optional<Shape> out_shape = broadcast(a.shape, b.shape, kind, axis, &b_off);
  if (!out_shape) return std::nullopt;
  const Shape& os = *out_shape;
  const int64_t r = static_cast<int64_t>(os.size());
  const Shape a_str = a.strides.empty() ? dense_strides(a.shape) : a.strides;
  const Shape b_str = b.strides.empty() ? dense_strides(b.shape) : b.strides;
  // a's dim j aligns with output dim (r - rank a) + j in every mode (pdpd: a's
  // shape is the output's); b's dim j with output dim b_off + j.
  const int64_t a_off = r - static_cast<int64_t>(a.shape.size());
  Result res{os, a.dtype, {}};
  const int64_t n = element_count(os);
  res.bits.resize(static_cast<std::size_t>(n));
  const std::size_t es = elem_size(a.dtype);
  Shape idx(os.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t ea = 0, eb = 0;
    for (std::size_t j = 0; j < a.shape.size(); ++j) {
      const int64_t i = a.shape[j] == 1 ? 0 : idx[static_cast<std::size_t>(a_off) + j];
      ea += i * a_str[j];
    }
    for (std::size_t j = 0; j < b.shape.size(); ++j) {
      const int64_t i = b.shape[j] == 1 ? 0 : idx[static_cast<std::size_t>(b_off) + j];
      eb += i * b_str[j];
    }
    const uint64_t va = load_bits(static_cast<const unsigned char*>(a.data) + ea * static_cast<int64_t>(es), a.dtype);
    const uint64_t vb = load_bits(static_cast<const unsigned char*>(b.data) + eb * static_cast<int64_t>(es), b.dtype);
    res.bits[static_cast<std::size_t>(flat)] = compute_bits(a.dtype, op, va, vb);
    // odometer, last dim fastest
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < os[static_cast<std::size_t>(d)]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return res;
}

}  // namespace sqdiff_test::oracle

// ---------------------------------------------------------------------------
// Random values biased to the special cases of each type (shared by the
// differential and SIMD target tests).
namespace sqdiff_test::values {

using sqdiff::DType;

inline uint64_t rnd(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

inline uint64_t mask_of(DType t) {
  const std::size_t es = oracle::elem_size(t);
  return es == 8 ? ~0ull : ((1ull << (8 * es)) - 1);
}

inline const std::vector<uint64_t>& specials(DType t) {
  static const std::vector<uint64_t> f16 = {
      0x7E00, 0xFE00, 0x7C01, 0x7D55, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x8001, 0x03FF,
      0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x5C00 /*256*/, 0x5BFF, 0x1C00 /*2^-8*/,
      0x0200, 0x3C01, 0x4000, 0x2400 /*2^-6: square = 2^-12 */, 0x0C00};
  static const std::vector<uint64_t> bf16 = {
      0x7FC0, 0xFFC0, 0x7F81, 0x7FA5, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001,
      0x007F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x5F80 /*2^64*/, 0x1F80 /*2^-64*/,
      0x3F81, 0x4000, 0x2000, 0x0040};
  static const std::vector<uint64_t> f32 = {
      0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC12345, 0x7F800000, 0xFF800000, 0x00000000,
      0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
      0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x5F800000 /*2^64*/, 0x1F800000 /*2^-64*/,
      0x3F800001, 0x40000000, 0x20000000 /*2^-63: square subnormal*/, 0x1A000000, 0x4B800000};
  static const std::vector<uint64_t> f64 = {
      0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF8123456789ABC,
      0x7FF0000000000000, 0xFFF0000000000000, 0x0000000000000000, 0x8000000000000000,
      0x0000000000000001, 0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
      0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000,
      0x5FF0000000000000 /*2^512*/, 0x1FF0000000000000, 0x3FF0000000000001, 0x2000000000000000};
  static const std::array<std::vector<uint64_t>, 4> ints = [] {
    std::array<std::vector<uint64_t>, 4> r;
    for (int w = 0; w < 4; ++w) {
      const int bits = 8 << w;
      const uint64_t m = bits == 64 ? ~0ull : ((1ull << bits) - 1);
      const uint64_t smin = 1ull << (bits - 1);
      r[static_cast<std::size_t>(w)] = {0, 1, m /*-1*/, smin, smin - 1, smin + 1, m - 1, 2,
                                        16 & m, 255 & m, 256 & m, smin >> 1, (smin >> 1) + 1};
    }
    return r;
  }();
  switch (t) {
    case DType::f16: return f16;
    case DType::bf16: return bf16;
    case DType::f32: return f32;
    case DType::f64: return f64;
    case DType::i8: case DType::u8: return ints[0];
    case DType::i16: case DType::u16: return ints[1];
    case DType::i32: case DType::u32: return ints[2];
    case DType::i64: case DType::u64: return ints[3];
  }
  return ints[0];
}

// A "friendly" value: a small integer or short binary fraction, so that
// differences are ordinary numbers (cancellation, exact zero, ties).
inline uint64_t friendly(std::mt19937_64& rng, DType t) {
  const int64_t k = static_cast<int64_t>(rnd(rng, 41)) - 20;
  if (!oracle::is_float(t)) return static_cast<uint64_t>(k) & mask_of(t);
  const double v = std::ldexp(static_cast<double>(k), -static_cast<int>(rnd(rng, 4)));
  switch (t) {
    case DType::f16: return oracle::encode_small_float(v, 5, 10);
    case DType::bf16: return oracle::encode_small_float(v, 8, 7);
    case DType::f32: {
      const float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    }
    default: {
      uint64_t u;
      std::memcpy(&u, &v, 8);
      return u;
    }
  }
}

// A random element: specials ~30%, friendly ~30%, random bits ~40% (for
// floats, random bits with the exponent often near 1.0 so that rounding is
// exercised on ordinary magnitudes too).
inline uint64_t random_value(std::mt19937_64& rng, DType t) {
  const uint64_t pick = rnd(rng, 10);
  if (pick < 3) {
    const auto& s = specials(t);
    return s[rnd(rng, s.size())];
  }
  if (pick < 6) return friendly(rng, t);
  uint64_t v = rng() & mask_of(t);
  if (pick < 8 && oracle::is_float(t)) {
    // keep the sign and mantissa, put the exponent near the middle
    switch (t) {
      case DType::f16: v = (v & 0x83FF) | ((0x0C + rnd(rng, 8)) << 10); break;
      case DType::bf16: v = (v & 0x807F) | ((0x78 + rnd(rng, 16)) << 7); break;
      case DType::f32: v = (v & 0x807FFFFFull) | ((0x78 + rnd(rng, 16)) << 23); break;
      default: v = (v & 0x800FFFFFFFFFFFFFull) | ((0x3F8 + rnd(rng, 16)) << 52); break;
    }
  }
  return v;
}

}  // namespace sqdiff_test::values
