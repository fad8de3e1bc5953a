// An independent exact oracle for the reductions and gradients (SPEC sections
// 7 and 8), written with GMP and nothing of src/reduce/:
//  - every input element is decoded from its bits by hand (f16, bf16, f32 and
//    f64 fields; integers as themselves) into an exact integer scaled by the
//    input type's smallest step (2^-24 for f16, 2^-133 bf16, 2^-149 f32,
//    2^-1074 f64, 1 for integers);
//  - each term ((a - b)^2, 2 (a - b) g, g) is formed exactly in big integers,
//    the terms are summed exactly, a mean is that sum over the count;
//  - the exact rational is rounded once, to nearest with ties to even, into
//    f16, bf16, f32 or f64 by long division (subnormals, overflow to inf), or
//    checked against the range of i64 / u64.
// Broadcasting (none, numpy, pdpd) maps each index of the broadcast shape to
// the inputs' elements through their own shapes and strides.
#pragma once

#include <gmp.h>
#include <gmpxx.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff_test::gmp {

using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::DType;
using sqdiff::Shape;

static_assert(sizeof(long) == 8, "mpz_set_si / mpz_set_ui take the 64-bit integers whole");

// ---------------------------------------------------------------------------
// Types

inline bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }
inline bool is_signed_integer(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}

inline std::size_t size_of(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
    case DType::i16:
    case DType::u16: return 2;
    case DType::f32:
    case DType::i32:
    case DType::u32: return 4;
    case DType::i8:
    case DType::u8: return 1;
    default: return 8;
  }
}

// An IEEE binary format: `precision` significand bits (the hidden one
// included), the exponent bias and the total width.
struct FloatFormat {
  int precision;
  int bias;
  int width;
  int min_exponent() const { return 1 - bias; }        // of the smallest normal
  int max_field() const { return 2 * bias + 1; }       // the all-ones field (inf, NaN)
  int smallest_step() const { return min_exponent() - (precision - 1); }  // the smallest subnormal's exponent
};

inline FloatFormat format_of(DType t) {
  switch (t) {
    case DType::f16: return {11, 15, 16};
    case DType::bf16: return {8, 127, 16};
    case DType::f32: return {24, 127, 32};
    case DType::f64: return {53, 1023, 64};
    default: throw std::logic_error("format_of: not a float type");
  }
}

// Exact values of an input type are integers times 2^-scale(type).
inline int scale_of(DType t) { return is_float(t) ? -format_of(t).smallest_step() : 0; }

// ---------------------------------------------------------------------------
// Decoding

enum class Kind { finite, nan, positive_infinity, negative_infinity };

struct Element {
  Kind kind = Kind::finite;
  bool sign = false;  // the sign bit (so -0 has it); for integers, value < 0
  mpz_class value;    // finite: the exact value times 2^scale(type)
};

inline uint64_t load_bits(const void* p, std::size_t size) {
  uint64_t bits = 0;
  switch (size) {
    case 1: { uint8_t v; std::memcpy(&v, p, 1); bits = v; break; }
    case 2: { uint16_t v; std::memcpy(&v, p, 2); bits = v; break; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); bits = v; break; }
    default: std::memcpy(&bits, p, 8);
  }
  return bits;
}

inline void store_bits(void* p, std::size_t size, uint64_t bits) {
  switch (size) {
    case 1: { const auto v = static_cast<uint8_t>(bits); std::memcpy(p, &v, 1); break; }
    case 2: { const auto v = static_cast<uint16_t>(bits); std::memcpy(p, &v, 2); break; }
    case 4: { const auto v = static_cast<uint32_t>(bits); std::memcpy(p, &v, 4); break; }
    default: std::memcpy(p, &bits, 8);
  }
}

// The element of type `t` at `p`, into `e` (whose integer is reused).
inline void decode(DType t, const void* p, Element& e) {
  const uint64_t bits = load_bits(p, size_of(t));
  if (is_float(t)) {
    const FloatFormat f = format_of(t);
    const int fraction_bits = f.precision - 1;
    const uint64_t fraction = bits & ((uint64_t{1} << fraction_bits) - 1);
    const auto field = static_cast<int>((bits >> fraction_bits) & ((uint64_t{1} << (f.width - 1 - fraction_bits)) - 1));
    e.sign = ((bits >> (f.width - 1)) & 1) != 0;
    if (field == f.max_field()) {
      e.kind = fraction != 0 ? Kind::nan : e.sign ? Kind::negative_infinity : Kind::positive_infinity;
      return;
    }
    e.kind = Kind::finite;
    // value = significand * 2^(max(field, 1) - bias - fraction_bits); relative
    // to the smallest step that is a shift by max(field, 1) - 1.
    const uint64_t significand = field == 0 ? fraction : fraction | (uint64_t{1} << fraction_bits);
    mpz_set_ui(e.value.get_mpz_t(), significand);
    mpz_mul_2exp(e.value.get_mpz_t(), e.value.get_mpz_t(), static_cast<mp_bitcnt_t>(std::max(field, 1) - 1));
    if (e.sign) mpz_neg(e.value.get_mpz_t(), e.value.get_mpz_t());
    return;
  }
  e.kind = Kind::finite;
  const int width = static_cast<int>(size_of(t)) * 8;
  if (is_signed_integer(t)) {
    // Sign-extend by hand from the stored width.
    int64_t v;
    if (width == 64) {
      std::memcpy(&v, &bits, 8);
    } else {
      const uint64_t sign_bit = uint64_t{1} << (width - 1);
      v = (bits & sign_bit) != 0 ? -static_cast<int64_t>((sign_bit << 1) - bits) : static_cast<int64_t>(bits);
    }
    mpz_set_si(e.value.get_mpz_t(), v);
    e.sign = v < 0;
  } else {
    mpz_set_ui(e.value.get_mpz_t(), bits);
    e.sign = false;
  }
}

// ---------------------------------------------------------------------------
// Rounding

// The canonical quiet NaN of a float output (NaN results compare by NaN-ness).
inline uint64_t nan_bits(DType t) {
  const FloatFormat f = format_of(t);
  return (static_cast<uint64_t>(f.max_field()) << (f.precision - 1)) | (uint64_t{1} << (f.precision - 2));
}
inline uint64_t infinity_bits(DType t, bool negative) {
  const FloatFormat f = format_of(t);
  return (static_cast<uint64_t>(f.max_field()) << (f.precision - 1)) |
         (negative ? uint64_t{1} << (f.width - 1) : 0);
}
inline uint64_t zero_bits(DType t, bool negative) {
  if (!is_float(t)) return 0;
  return negative ? uint64_t{1} << (format_of(t).width - 1) : 0;
}

// numerator / denominator (denominator > 0, numerator != 0) rounded once to
// nearest, ties to even, into float type `t`: the bits.
inline uint64_t round_to_float(const mpz_class& numerator, const mpz_class& denominator, DType t) {
  const FloatFormat f = format_of(t);
  const bool negative = sgn(numerator) < 0;
  const mpz_class n = abs(numerator);
  // e = floor(log2(n / d)).
  long e = static_cast<long>(mpz_sizeinbase(n.get_mpz_t(), 2)) - static_cast<long>(mpz_sizeinbase(denominator.get_mpz_t(), 2));
  {
    mpz_class lhs = n, rhs = denominator;
    if (e >= 0) rhs <<= static_cast<mp_bitcnt_t>(e);
    else lhs <<= static_cast<mp_bitcnt_t>(-e);
    if (lhs < rhs) --e;
  }
  // The quantum (weight of the last significand bit) of the result.
  long q = std::max(e, static_cast<long>(f.min_exponent())) - (f.precision - 1);
  mpz_class num = n, den = denominator;
  if (q >= 0) den <<= static_cast<mp_bitcnt_t>(q);
  else num <<= static_cast<mp_bitcnt_t>(-q);
  mpz_class m, r;
  mpz_fdiv_qr(m.get_mpz_t(), r.get_mpz_t(), num.get_mpz_t(), den.get_mpz_t());
  const int half = cmp(mpz_class(r << 1), den);
  if (half > 0 || (half == 0 && mpz_odd_p(m.get_mpz_t()))) ++m;
  if (m == (mpz_class(1) << static_cast<mp_bitcnt_t>(f.precision))) {
    m >>= 1;
    ++q;
  }
  const uint64_t significand = mpz_get_ui(m.get_mpz_t());
  const uint64_t hidden = uint64_t{1} << (f.precision - 1);
  uint64_t field = 0;
  uint64_t fraction = significand;
  if (significand >= hidden) {
    field = static_cast<uint64_t>(q + (f.precision - 1) + f.bias);
    fraction = significand - hidden;
  }
  if (field >= static_cast<uint64_t>(f.max_field())) return infinity_bits(t, negative);
  return (negative ? uint64_t{1} << (f.width - 1) : 0) | (field << (f.precision - 1)) | fraction;
}

// ---------------------------------------------------------------------------
// Exact sums with their specials

struct ExactSum {
  mpz_class sum;  // times 2^scale (the term kind's)
  bool nan = false;
  bool positive_infinity = false;
  bool negative_infinity = false;
  bool any_term = false;
  bool only_negative_zeros = true;  // every term so far was -0 (as IEEE gives it)

  void note_term(bool negative_zero) {
    any_term = true;
    only_negative_zeros = only_negative_zeros && negative_zero;
  }
  void add(const ExactSum& o) {
    sum += o.sum;
    nan = nan || o.nan;
    positive_infinity = positive_infinity || o.positive_infinity;
    negative_infinity = negative_infinity || o.negative_infinity;
    if (o.any_term) {
      any_term = true;
      only_negative_zeros = only_negative_zeros && o.only_negative_zeros;
    }
  }
};

// What the output element should hold: its bits, or an Error (an integer sum
// that does not fit), or any NaN.
struct Expected {
  bool error = false;
  bool nan = false;
  uint64_t bits = 0;
};

// Rounds `s` (exact value s.sum * 2^-scale), or its mean over `count`, into `t`.
inline Expected round_sum(const ExactSum& s, int scale, bool mean, int64_t count, DType t) {
  Expected r;
  if (mean && count == 0) {
    r.nan = true;
    r.bits = nan_bits(t);
    return r;
  }
  if (s.nan || (s.positive_infinity && s.negative_infinity)) {
    r.nan = true;
    r.bits = nan_bits(t);
    return r;
  }
  if (s.positive_infinity || s.negative_infinity) {
    r.bits = infinity_bits(t, s.negative_infinity);
    return r;
  }
  if (sgn(s.sum) == 0) {
    r.bits = zero_bits(t, s.any_term && s.only_negative_zeros);
    return r;
  }
  if (!is_float(t)) {
    // Integer outputs: sums of integer squares, whole numbers.
    const mpz_class limit = t == DType::i64 ? (mpz_class(1) << 63) - 1 : (mpz_class(1) << 64) - 1;
    if (s.sum > limit || s.sum < 0 || scale != 0) {
      r.error = true;
      return r;
    }
    r.bits = mpz_get_ui(s.sum.get_mpz_t());
    return r;
  }
  mpz_class den = mpz_class(1) << static_cast<mp_bitcnt_t>(scale);
  if (mean) den *= mpz_class(static_cast<unsigned long>(count));
  r.bits = round_to_float(s.sum, den, t);
  return r;
}

// ---------------------------------------------------------------------------
// Terms

// f64 inputs: a single square of at least 2^1024 - 2^970 (the smallest value
// that rounds to infinity in f64) is +inf (SPEC 7, SPEC_DECISIONS 7); at the
// squares' scale 2^-2148.
inline const mpz_class& f64_square_limit() {
  static const mpz_class limit = ((mpz_class(1) << 1024) - (mpz_class(1) << 970)) << 2148;
  return limit;
}

// (a - b)^2 into `s` (scale 2 scale(type)); `d` and `sq` are scratch.
inline void add_square(DType t, const Element& a, const Element& b, ExactSum& s, mpz_class& d, mpz_class& sq) {
  if (a.kind == Kind::nan || b.kind == Kind::nan) {
    s.nan = true;
    return;
  }
  if (a.kind != Kind::finite || b.kind != Kind::finite) {
    if (a.kind != Kind::finite && a.kind == b.kind) s.nan = true;  // inf - inf
    else s.positive_infinity = true;
    return;
  }
  mpz_sub(d.get_mpz_t(), a.value.get_mpz_t(), b.value.get_mpz_t());
  if (t == DType::f64) {
    mpz_mul(sq.get_mpz_t(), d.get_mpz_t(), d.get_mpz_t());
    if (sq >= f64_square_limit()) {
      s.positive_infinity = true;
      return;
    }
    s.note_term(false);
    s.sum += sq;
    return;
  }
  s.note_term(false);  // a square is never -0
  mpz_addmul(s.sum.get_mpz_t(), d.get_mpz_t(), d.get_mpz_t());
}

// IEEE's sign of a - b when the exact difference is zero: -0 only for -0 - +0.
inline bool zero_difference_is_negative(const Element& a, const Element& b) { return a.sign && !b.sign; }

// (negate ? -2 : 2) (a - b) g into `s` (scale 2 scale(type)).
inline void add_difference_product(const Element& a, const Element& b, const Element& g, bool negate, ExactSum& s,
                                   mpz_class& d) {
  if (a.kind == Kind::nan || b.kind == Kind::nan || g.kind == Kind::nan) {
    s.nan = true;
    return;
  }
  const bool a_inf = a.kind != Kind::finite, b_inf = b.kind != Kind::finite, g_inf = g.kind != Kind::finite;
  if (a_inf && b_inf && a.kind == b.kind) {
    s.nan = true;  // inf - inf
    return;
  }
  if (a_inf || b_inf || g_inf) {
    bool difference_zero = false;
    bool difference_negative;
    if (a_inf) {
      difference_negative = a.kind == Kind::negative_infinity;
    } else if (b_inf) {
      difference_negative = b.kind == Kind::positive_infinity;
    } else {
      difference_zero = a.value == b.value;
      difference_negative = a.value < b.value;
    }
    const bool g_zero = !g_inf && sgn(g.value) == 0;
    if (difference_zero || g_zero) {
      s.nan = true;  // inf * 0
      return;
    }
    const bool negative = negate != (difference_negative != g.sign);
    (negative ? s.negative_infinity : s.positive_infinity) = true;
    return;
  }
  mpz_sub(d.get_mpz_t(), a.value.get_mpz_t(), b.value.get_mpz_t());
  const bool d_zero = sgn(d) == 0, g_zero = sgn(g.value) == 0;
  if (d_zero || g_zero) {
    const bool d_sign = d_zero ? zero_difference_is_negative(a, b) : sgn(d) < 0;
    s.note_term(((d_sign != g.sign) != negate));
    return;
  }
  s.note_term(false);
  d *= g.value;
  d <<= 1;
  if (negate) s.sum -= d;
  else s.sum += d;
}

// (negate ? -g : g) into `s` (scale scale(type)).
inline void add_value(const Element& g, bool negate, ExactSum& s) {
  if (g.kind == Kind::nan) {
    s.nan = true;
    return;
  }
  if (g.kind != Kind::finite) {
    const bool negative = (g.kind == Kind::negative_infinity) != negate;
    (negative ? s.negative_infinity : s.positive_infinity) = true;
    return;
  }
  if (sgn(g.value) == 0) {
    s.note_term(g.sign != negate);
    return;
  }
  s.note_term(false);
  if (negate) s.sum -= g.value;
  else s.sum += g.value;
}

// ---------------------------------------------------------------------------
// Broadcasting and indexing

// An input as the oracle reads it: the element with all indices 0 at `data`,
// strides in elements (empty: dense row-major).
struct Input {
  DType dtype;
  const void* data;
  Shape shape;
  Shape strides;

  Input(const sqdiff::ConstTensorView& v) : dtype(v.dtype), data(v.data), shape(v.shape), strides(v.strides) {}
  Input(DType t, const void* p, Shape s, Shape st = {}) : dtype(t), data(p), shape(std::move(s)), strides(std::move(st)) {}

  Shape effective_strides() const {
    if (!strides.empty()) return strides;
    Shape st(shape.size());
    int64_t acc = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
      st[i] = acc;
      acc *= shape[i];
    }
    return st;
  }
};

// Where each dim of an input sits in the broadcast shape.
struct Alignment {
  Shape shape;                   // the broadcast shape
  std::vector<int> a_dim, b_dim;  // per broadcast dim: the input's dim, or -1
};

// SPEC section 3, written out again; throws std::logic_error for shapes that
// do not broadcast (the tests only give the oracle valid ones).
inline Alignment align(const Shape& a, const Shape& b, Broadcast mode) {
  Alignment al;
  const auto ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
  if (mode.kind == BroadcastKind::none) {
    if (a != b) throw std::logic_error("oracle: none needs equal shapes");
    al.shape = a;
    for (int i = 0; i < ra; ++i) {
      al.a_dim.push_back(i);
      al.b_dim.push_back(i);
    }
    return al;
  }
  if (mode.kind == BroadcastKind::numpy) {
    const int r = std::max(ra, rb);
    for (int i = 0; i < r; ++i) {
      const int ia = i - (r - ra), ib = i - (r - rb);
      const int64_t da = ia >= 0 ? a[static_cast<std::size_t>(ia)] : 1;
      const int64_t db = ib >= 0 ? b[static_cast<std::size_t>(ib)] : 1;
      if (da != db && da != 1 && db != 1) throw std::logic_error("oracle: numpy shapes do not broadcast");
      al.shape.push_back(da == 1 ? db : da);
      al.a_dim.push_back(ia);
      al.b_dim.push_back(ib);
    }
    return al;
  }
  const int64_t axis = mode.axis == -1 ? ra - rb : mode.axis;
  if (rb > ra || axis < 0 || axis + rb > ra) throw std::logic_error("oracle: pdpd shapes do not broadcast");
  al.shape = a;
  for (int i = 0; i < ra; ++i) {
    al.a_dim.push_back(i);
    const int64_t j = i - axis;
    if (j >= 0 && j < rb) {
      const int64_t db = b[static_cast<std::size_t>(j)];
      if (db != 1 && db != a[static_cast<std::size_t>(i)]) throw std::logic_error("oracle: pdpd dims differ");
      al.b_dim.push_back(static_cast<int>(j));
    } else {
      al.b_dim.push_back(-1);
    }
  }
  return al;
}

// The element of `in` that broadcast index `idx` reads: its byte address.
inline const unsigned char* element_at(const Input& in, const Shape& in_strides, const std::vector<int>& dims,
                                       const std::vector<int64_t>& idx) {
  int64_t offset = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const int d = dims[i];
    if (d < 0 || in.shape[static_cast<std::size_t>(d)] == 1) continue;
    offset += idx[i] * in_strides[static_cast<std::size_t>(d)];
  }
  return static_cast<const unsigned char*>(in.data) + offset * static_cast<int64_t>(size_of(in.dtype));
}

// The row-major linear index, over `in`'s own shape, of the element broadcast
// index `idx` maps to (its 1s and missing dims at 0).
inline int64_t own_linear_index(const Shape& shape, const std::vector<int>& dims, const std::vector<int64_t>& idx) {
  std::vector<int64_t> own(shape.size(), 0);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (dims[i] >= 0 && shape[static_cast<std::size_t>(dims[i])] != 1) own[static_cast<std::size_t>(dims[i])] = idx[i];
  }
  int64_t linear = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) linear = linear * shape[i] + own[i];
  return linear;
}

template <class F>
void for_each_broadcast_index(const Shape& shape, F&& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    fn(idx);
    for (std::size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

// ---------------------------------------------------------------------------
// Reductions

struct ExactReduction {
  Shape out_shape;             // reduced_shape(broadcast shape, axes, keepdims)
  std::vector<ExactSum> sums;  // row-major over out_shape
  int64_t count = 0;           // terms per output element
  int scale = 0;               // the sums are exact integers times 2^-scale
};

// The reduced dims of `rank` dims for `axes` (nullopt: all); the tests give
// valid axes only.
inline std::vector<bool> reduced_dims(std::size_t rank, const std::optional<Shape>& axes) {
  std::vector<bool> reduced(rank, !axes.has_value());
  if (axes) {
    for (int64_t axis : *axes) {
      const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
      if (a < 0 || a >= static_cast<int64_t>(rank) || reduced[static_cast<std::size_t>(a)])
        throw std::logic_error("oracle: bad axes");
      reduced[static_cast<std::size_t>(a)] = true;
    }
  }
  return reduced;
}

// The exact sums of (a - b)^2 of a reduction (SPEC section 7).
inline ExactReduction exact_reduction(const Input& a, const Input& b, Broadcast mode, const std::optional<Shape>& axes,
                                      bool keepdims) {
  if (a.dtype != b.dtype) throw std::logic_error("oracle: input types differ");
  const Alignment al = align(a.shape, b.shape, mode);
  const std::vector<bool> reduced = reduced_dims(al.shape.size(), axes);
  ExactReduction r;
  r.scale = 2 * scale_of(a.dtype);
  r.count = 1;
  int64_t outputs = 1;
  for (std::size_t i = 0; i < al.shape.size(); ++i) {
    if (reduced[i]) {
      r.count *= al.shape[i];
      if (keepdims) r.out_shape.push_back(1);
    } else {
      outputs *= al.shape[i];
      r.out_shape.push_back(al.shape[i]);
    }
  }
  r.sums.resize(static_cast<std::size_t>(outputs));
  const Shape sa = a.effective_strides(), sb = b.effective_strides();
  Element ea, eb;
  mpz_class d, sq;
  for_each_broadcast_index(al.shape, [&](const std::vector<int64_t>& idx) {
    int64_t out = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      if (!reduced[i]) out = out * al.shape[i] + idx[i];
    }
    decode(a.dtype, element_at(a, sa, al.a_dim, idx), ea);
    decode(b.dtype, element_at(b, sb, al.b_dim, idx), eb);
    add_square(a.dtype, ea, eb, r.sums[static_cast<std::size_t>(out)], d, sq);
  });
  return r;
}

// Every output element of the reduction, rounded into `out`.
inline std::vector<Expected> round_reduction(const ExactReduction& r, bool mean, DType out) {
  std::vector<Expected> e;
  e.reserve(r.sums.size());
  for (const ExactSum& s : r.sums) e.push_back(round_sum(s, r.scale, mean, r.count, out));
  return e;
}

// ---------------------------------------------------------------------------
// Gradients (SPEC section 8)

// grad_a (which = 0) or grad_b (which = 1) of squared_difference_backward,
// row-major over that input's shape; with a `divisor`, each exact sum divided
// by it before the rounding (mean_squared_difference_backward, g all ones).
inline std::vector<Expected> squared_difference_gradient(const Input& a, const Input& b, const Input& g, Broadcast mode,
                                                         int which, int64_t divisor = 0) {
  const Alignment al = align(a.shape, b.shape, mode);
  if (g.shape != al.shape) throw std::logic_error("oracle: grad_out must have the broadcast shape");
  const Shape& own = which == 0 ? a.shape : b.shape;
  const std::vector<int>& dims = which == 0 ? al.a_dim : al.b_dim;
  int64_t outputs = 1;
  for (int64_t d : own) outputs *= d;
  std::vector<ExactSum> sums(static_cast<std::size_t>(outputs));
  const Shape sa = a.effective_strides(), sb = b.effective_strides(), sg = g.effective_strides();
  std::vector<int> g_dims(al.shape.size());
  for (std::size_t i = 0; i < g_dims.size(); ++i) g_dims[i] = static_cast<int>(i);
  Element ea, eb, eg;
  mpz_class d;
  for_each_broadcast_index(al.shape, [&](const std::vector<int64_t>& idx) {
    decode(a.dtype, element_at(a, sa, al.a_dim, idx), ea);
    decode(b.dtype, element_at(b, sb, al.b_dim, idx), eb);
    decode(g.dtype, element_at(g, sg, g_dims, idx), eg);
    add_difference_product(ea, eb, eg, which == 1, sums[static_cast<std::size_t>(own_linear_index(own, dims, idx))], d);
  });
  std::vector<Expected> e;
  for (const ExactSum& s : sums) e.push_back(round_sum(s, 2 * scale_of(a.dtype), divisor != 0, divisor, a.dtype));
  return e;
}

// grad_a (which = 0) or grad_b (which = 1) of subtract_backward for inputs of
// shapes a_shape and b_shape, row-major over that shape.
inline std::vector<Expected> subtract_gradient(const Input& g, const Shape& a_shape, const Shape& b_shape,
                                               Broadcast mode, int which) {
  const Alignment al = align(a_shape, b_shape, mode);
  if (g.shape != al.shape) throw std::logic_error("oracle: grad_out must have the broadcast shape");
  const Shape& own = which == 0 ? a_shape : b_shape;
  const std::vector<int>& dims = which == 0 ? al.a_dim : al.b_dim;
  int64_t outputs = 1;
  for (int64_t d : own) outputs *= d;
  std::vector<ExactSum> sums(static_cast<std::size_t>(outputs));
  const Shape sg = g.effective_strides();
  std::vector<int> g_dims(al.shape.size());
  for (std::size_t i = 0; i < g_dims.size(); ++i) g_dims[i] = static_cast<int>(i);
  Element eg;
  for_each_broadcast_index(al.shape, [&](const std::vector<int64_t>& idx) {
    decode(g.dtype, element_at(g, sg, g_dims, idx), eg);
    add_value(eg, which == 1, sums[static_cast<std::size_t>(own_linear_index(own, dims, idx))]);
  });
  std::vector<Expected> e;
  for (const ExactSum& s : sums) e.push_back(round_sum(s, scale_of(g.dtype), false, 0, g.dtype));
  return e;
}

// ---------------------------------------------------------------------------
// Comparing

// The bits of element `i` of a (strided) output of type t.
inline uint64_t output_bits(DType t, const void* data, int64_t offset_elements) {
  return load_bits(static_cast<const unsigned char*>(data) + offset_elements * static_cast<int64_t>(size_of(t)),
                   size_of(t));
}

inline bool is_nan_bits(DType t, uint64_t bits) {
  if (!is_float(t)) return false;
  const FloatFormat f = format_of(t);
  const uint64_t field = (bits >> (f.precision - 1)) & static_cast<uint64_t>(f.max_field());
  return field == static_cast<uint64_t>(f.max_field()) && (bits & ((uint64_t{1} << (f.precision - 1)) - 1)) != 0;
}

// Expected equals actual: the same bits, or both NaN (payloads may differ).
inline bool matches(DType t, const Expected& e, uint64_t actual) {
  if (e.nan) return is_nan_bits(t, actual);
  return e.bits == actual;
}

// A readable value for messages.
inline std::string describe(DType t, uint64_t bits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(bits));
  std::string s = std::string(sqdiff::dtype_name(t)) + " bits " + buf;
  if (is_float(t)) {
    Element e;
    const uint64_t stored = bits;
    decode(t, &stored, e);  // little-endian: the low bytes hold the value
    if (e.kind == Kind::nan) return s + " (nan)";
    if (e.kind != Kind::finite) return s + (e.kind == Kind::negative_infinity ? " (-inf)" : " (+inf)");
    mpf_class v(e.value, 2200);
    mpf_div_2exp(v.get_mpf_t(), v.get_mpf_t(), static_cast<mp_bitcnt_t>(scale_of(t)));
    std::snprintf(buf, sizeof buf, " (%.17g)", v.get_d());
    return s + buf;
  }
  return s;
}

}  // namespace sqdiff_test::gmp
