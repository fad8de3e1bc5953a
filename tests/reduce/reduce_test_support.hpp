// Helpers shared by the reductions' and gradients' tests: arrays laid out in
// memory in many ways (dense, reversed, gapped, transposed, expanded with
// stride 0), random element values of every type (ordinary, exact small
// integers that make ties, subnormals, huge ones, specials), SPEC 7's output
// types, and the comparison of an output view with the GMP oracle's answer,
// including the bytes the view does not reach (which must stay untouched).
#pragma once

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "reduce/gmp_oracle.hpp"
#include "simd_target_guard.hpp"
#include "sqdiff/sqdiff.hpp"

namespace sqdiff_test::reduce {

using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::DType;
using sqdiff::Shape;

inline constexpr DType kAllTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8,  DType::i16,
                                      DType::i32, DType::i64,  DType::u8,  DType::u16, DType::u32, DType::u64};
inline constexpr DType kFloatTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64};

// SPEC section 7's table: the output types of a sum or mean of `input`.
inline std::vector<DType> output_types(DType input, bool mean) {
  switch (input) {
    case DType::f16:
    case DType::bf16: return {input, DType::f32, DType::f64};
    case DType::f32: return {DType::f32, DType::f64};
    case DType::f64: return {DType::f64, DType::f32};
    default:
      if (mean) return {DType::f64, DType::f32};
      return {gmp::is_signed_integer(input) ? DType::i64 : DType::u64, DType::f64};
  }
}

using sqdiff_test::TargetGuard;
using sqdiff_test::targets_to_run;

inline std::string target_text(int64_t target) { return target == 0 ? "best target" : hwy::TargetName(target); }

// Names parameterised tests by their dtype.
inline std::string type_param_name(const ::testing::TestParamInfo<DType>& param) {
  return std::string(sqdiff::dtype_name(param.param));
}

inline int64_t count_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A random broadcast: a shape of rank below `rank_limit`, each dim 0 one time in
// `zero_one_in` (else up to `dim_limit`, 6 beyond rank 2), halved until it holds
// at most `max_count` elements; then a mode (none, numpy, pdpd with an axis) and
// a and b shapes that broadcast to it, a dim becoming 1 one time in `one_in`.
struct RandomBroadcastSpec {
  std::size_t rank_limit;
  uint64_t zero_one_in;
  uint64_t dim_limit;
  int64_t max_count;
  uint64_t one_in;
};

struct RandomBroadcast {
  Broadcast mode;
  Shape a_shape, b_shape;
};

inline RandomBroadcast random_broadcast(const RandomBroadcastSpec& spec, std::mt19937_64& rng) {
  RandomBroadcast c;
  const auto rank = static_cast<std::size_t>(rng() % spec.rank_limit);
  Shape s(rank);
  for (auto& d : s) d = rng() % spec.zero_one_in == 0 ? 0 : 1 + static_cast<int64_t>(rng() % (rank <= 2 ? spec.dim_limit : 6));
  while (count_of(s) > spec.max_count) s[rng() % rank] /= 2;
  const auto maybe_one = [&](int64_t d) { return rng() % spec.one_in == 0 ? 1 : d; };
  switch (rng() % 3) {
    case 0:
      c.mode = {BroadcastKind::none, -1};
      c.a_shape = c.b_shape = s;
      break;
    case 1:
      c.mode = {BroadcastKind::numpy, -1};
      for (Shape* x : {&c.a_shape, &c.b_shape}) {
        const std::size_t len = rng() % 3 == 0 ? rng() % (rank + 1) : rank;
        for (std::size_t i = rank - len; i < rank; ++i) x->push_back(maybe_one(s[i]));
      }
      break;
    default: {
      const std::size_t k = rng() % (rank + 1);
      const std::size_t axis = rng() % (rank - k + 1);
      c.mode = {BroadcastKind::pdpd, (axis + k == rank && rng() % 2 == 0) ? -1 : static_cast<int64_t>(axis)};
      c.a_shape = s;
      for (std::size_t i = 0; i < k; ++i) c.b_shape.push_back(maybe_one(s[axis + i]));
    }
  }
  return c;
}

inline std::string text(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 0) r += ',';
    r += std::to_string(s[i]);
  }
  return r + "]";
}

inline std::string text(const std::optional<Shape>& s) { return s ? text(*s) : std::string("all"); }

inline std::string text(Broadcast m) {
  if (m.kind == BroadcastKind::none) return "none";
  if (m.kind == BroadcastKind::numpy) return "numpy";
  return "pdpd axis " + std::to_string(m.axis);
}

// ---------------------------------------------------------------------------
// Layouts

// How a logical array sits in memory: strides in elements, and the element
// offset of index 0 in a buffer of `extent` elements.
struct Layout {
  Shape strides;
  int64_t origin = 0;
  int64_t extent = 0;
  std::string name = "dense";
};

inline Layout dense_layout(const Shape& shape) {
  Layout l;
  l.strides.assign(shape.size(), 0);
  int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    l.strides[i] = acc;
    acc *= shape[i];
  }
  l.extent = std::max<int64_t>(acc, 1);
  return l;
}

// A layout from a memory order (outermost first), per-dim reversal, per-dim
// gaps and (inputs only) stride-0 dims.
inline Layout make_layout(const Shape& shape, const std::vector<std::size_t>& order, const std::vector<bool>& reversed,
                          const std::vector<int64_t>& gap, const std::vector<bool>& zero, std::string name) {
  Layout l;
  l.name = std::move(name);
  l.strides.assign(shape.size(), 0);
  int64_t acc = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    const std::size_t d = order[k];
    if (zero[d]) continue;
    l.strides[d] = acc * gap[d];
    acc = l.strides[d] * std::max<int64_t>(shape[d], 1);
  }
  int64_t low = 0, high = 0;
  bool empty = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) empty = true;
    if (reversed[d]) l.strides[d] = -l.strides[d];
    const int64_t reach = (std::max<int64_t>(shape[d], 1) - 1) * l.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  l.origin = -low;
  l.extent = empty ? 1 : high - low + 1;
  return l;
}

enum class LayoutKind { dense, reversed, gapped, transposed, expanded, mixed };
inline constexpr LayoutKind kLayoutKinds[] = {LayoutKind::dense, LayoutKind::reversed, LayoutKind::gapped,
                                              LayoutKind::transposed, LayoutKind::expanded, LayoutKind::mixed};

// A layout of `kind` for `shape`. `expanded` (stride 0 on a dim > 1) only
// where `allow_zero` (an input whose values are random per stored element, so
// the logical values are whatever the view reads).
inline Layout layout_of(LayoutKind kind, const Shape& shape, std::mt19937_64& rng, bool allow_zero) {
  const std::size_t r = shape.size();
  std::vector<std::size_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::vector<bool> reversed(r, false), zero(r, false);
  std::vector<int64_t> gap(r, 1);
  switch (kind) {
    case LayoutKind::dense: return dense_layout(shape);
    case LayoutKind::reversed:
      for (std::size_t d = 0; d < r; ++d) reversed[d] = (rng() % 2) == 0 || d + 1 == r;
      return make_layout(shape, order, reversed, gap, zero, "reversed");
    case LayoutKind::gapped:
      for (std::size_t d = 0; d < r; ++d) gap[d] = 1 + static_cast<int64_t>(rng() % 3);
      return make_layout(shape, order, reversed, gap, zero, "gapped");
    case LayoutKind::transposed:
      std::reverse(order.begin(), order.end());
      if (r > 2) std::shuffle(order.begin(), order.end(), rng);
      return make_layout(shape, order, reversed, gap, zero, "transposed");
    case LayoutKind::expanded:
      for (std::size_t d = 0; d < r; ++d) zero[d] = allow_zero && shape[d] > 1 && rng() % 2 == 0;
      return make_layout(shape, order, reversed, gap, zero, "expanded");
    case LayoutKind::mixed:
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t d = 0; d < r; ++d) {
        reversed[d] = rng() % 2 == 0;
        gap[d] = 1 + static_cast<int64_t>(rng() % 2);
        zero[d] = allow_zero && shape[d] > 1 && rng() % 4 == 0;
      }
      return make_layout(shape, order, reversed, gap, zero, "mixed");
  }
  return dense_layout(shape);
}

inline std::string text(const Layout& l) { return l.name + " strides " + text(l.strides); }

// ---------------------------------------------------------------------------
// Values

// What kinds of values to draw.
struct ValueMix {
  double specials = 0;        // NaN and infinities (floats)
  double extremes = 0.05;     // huge, tiny and subnormal floats; full-range integers
  bool full_range_integers = false;
};

inline double pick(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(0, 1)(rng); }

// Random bits of one element of type t.
inline uint64_t random_bits(DType t, std::mt19937_64& rng, const ValueMix& mix) {
  if (gmp::is_float(t)) {
    const gmp::FloatFormat f = gmp::format_of(t);
    const int fraction_bits = f.precision - 1;
    const uint64_t sign = rng() % 2;
    const double u = pick(rng);
    uint64_t field;
    uint64_t fraction = rng() & ((uint64_t{1} << fraction_bits) - 1);
    if (u < mix.specials) {
      field = static_cast<uint64_t>(f.max_field());
      if (rng() % 2 == 0) fraction = 0;                                  // inf
      else fraction |= uint64_t{1} << (fraction_bits - 1);               // quiet NaN
    } else if (u < mix.specials + mix.extremes) {
      switch (rng() % 4) {
        case 0: field = 0; break;                                        // subnormal or 0
        case 1: field = 1 + rng() % 3; break;                            // tiny normal
        case 2: field = static_cast<uint64_t>(f.max_field()) - 1 - rng() % 3; break;  // huge
        default: field = rng() % static_cast<uint64_t>(f.max_field()); break;         // anywhere
      }
    } else if (u < 0.3) {
      // A small integer: exact, and sums of squares of them sit on ties.
      const auto v = static_cast<int64_t>(rng() % 9) - 4;
      if (v == 0) return sign << (f.width - 1);  // +-0
      const uint64_t m = static_cast<uint64_t>(v < 0 ? -v : v);
      const int top = 63 - std::countl_zero(m);
      field = static_cast<uint64_t>(f.bias + top);
      fraction = (m << (fraction_bits - top)) & ((uint64_t{1} << fraction_bits) - 1);
      return (v < 0 ? uint64_t{1} << (f.width - 1) : 0) | (field << fraction_bits) | fraction;
    } else {
      // Ordinary magnitudes: 2^-6 .. 2^6.
      field = static_cast<uint64_t>(f.bias - 6 + static_cast<int>(rng() % 13));
      if (t == DType::f16 || t == DType::bf16) fraction &= ~uint64_t{0} << (rng() % 4);  // some short mantissas
    }
    return (sign << (f.width - 1)) | (field << fraction_bits) | fraction;
  }
  const int width = static_cast<int>(gmp::size_of(t)) * 8;
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  if (mix.full_range_integers || pick(rng) < mix.extremes) {
    switch (rng() % 4) {
      case 0: return mask;                                                  // -1 or the unsigned maximum
      case 1: return gmp::is_signed_integer(t) ? uint64_t{1} << (width - 1) : 0;  // the minimum
      case 2: return gmp::is_signed_integer(t) ? (uint64_t{1} << (width - 1)) - 1 : mask;  // the maximum
      default: return rng() & mask;
    }
  }
  const int64_t v = gmp::is_signed_integer(t) ? static_cast<int64_t>(rng() % 41) - 20 : static_cast<int64_t>(rng() % 41);
  return static_cast<uint64_t>(v) & mask;
}

// ---------------------------------------------------------------------------
// Arrays

// A logical array of `shape` in a buffer laid out by `layout`.
struct Array {
  DType dtype = DType::f32;
  Shape shape;
  Layout layout;
  std::vector<unsigned char> bytes;

  unsigned char* origin() { return bytes.data() + layout.origin * static_cast<int64_t>(gmp::size_of(dtype)); }
  const unsigned char* origin() const {
    return bytes.data() + layout.origin * static_cast<int64_t>(gmp::size_of(dtype));
  }
  sqdiff::ConstTensorView view() const {
    // A dense layout is passed without strides (which means dense).
    return {origin(), dtype, shape, layout.name == "dense" ? Shape{} : layout.strides};
  }
  sqdiff::TensorView mutable_view() { return {origin(), dtype, shape, layout.name == "dense" ? Shape{} : layout.strides}; }
  gmp::Input input() const { return {dtype, origin(), shape, layout.strides}; }

  uint64_t bits_at(int64_t element) const {  // element offset from the origin
    return gmp::output_bits(dtype, origin(), element);
  }
  void set_bits_at(int64_t element, uint64_t bits) {
    gmp::store_bits(origin() + element * static_cast<int64_t>(gmp::size_of(dtype)), gmp::size_of(dtype), bits);
  }
};

// An array whose every stored element (reached or not) is random.
inline Array random_array(DType t, const Shape& shape, const Layout& layout, std::mt19937_64& rng, const ValueMix& mix) {
  Array a{t, shape, layout, std::vector<unsigned char>(static_cast<std::size_t>(layout.extent) * gmp::size_of(t))};
  for (int64_t i = 0; i < layout.extent; ++i) {
    gmp::store_bits(a.bytes.data() + i * static_cast<int64_t>(gmp::size_of(t)), gmp::size_of(t), random_bits(t, rng, mix));
  }
  return a;
}

// An output array filled with a sentinel byte.
inline constexpr unsigned char kSentinel = 0xA5;
inline Array sentinel_array(DType t, const Shape& shape, const Layout& layout) {
  return {t, shape, layout, std::vector<unsigned char>(static_cast<std::size_t>(layout.extent) * gmp::size_of(t), kSentinel)};
}

// The element offsets (from the origin) of each index of `shape`, row-major.
inline std::vector<int64_t> offsets(const Shape& shape, const Shape& strides) {
  std::vector<int64_t> r;
  gmp::for_each_broadcast_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * strides[i];
    r.push_back(o);
  });
  return r;
}

// The output's elements equal the oracle's and every other byte of its buffer
// is still the sentinel.
inline ::testing::AssertionResult output_matches(const Array& out, const std::vector<gmp::Expected>& expected) {
  const std::vector<int64_t> at = offsets(out.shape, out.layout.strides);
  if (at.size() != expected.size()) {
    return ::testing::AssertionFailure() << "the oracle has " << expected.size() << " elements, the output " << at.size();
  }
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  int misses = 0;
  std::vector<bool> reached(out.bytes.size(), false);
  const auto size = static_cast<int64_t>(gmp::size_of(out.dtype));
  for (std::size_t i = 0; i < at.size(); ++i) {
    for (int64_t k = 0; k < size; ++k) reached[static_cast<std::size_t>((out.layout.origin + at[i]) * size + k)] = true;
    const uint64_t actual = out.bits_at(at[i]);
    if (expected[i].error) {
      if (misses++ < 6) failure << "\n  element " << i << ": the oracle expects an Error";
    } else if (!gmp::matches(out.dtype, expected[i], actual)) {
      if (misses++ < 6) {
        failure << "\n  element " << i << ": expected " << gmp::describe(out.dtype, expected[i].bits) << ", got "
                << gmp::describe(out.dtype, actual);
      }
    }
  }
  for (std::size_t k = 0; k < out.bytes.size(); ++k) {
    if (!reached[k] && out.bytes[k] != kSentinel) {
      if (misses++ < 6) failure << "\n  byte " << k << " outside the output view was written";
    }
  }
  if (misses == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << misses << " mismatches";
}

// Every byte of the buffer is still the sentinel.
inline ::testing::AssertionResult untouched(const Array& out) {
  for (std::size_t k = 0; k < out.bytes.size(); ++k) {
    if (out.bytes[k] != kSentinel) return ::testing::AssertionFailure() << "byte " << k << " of the output was written";
  }
  return ::testing::AssertionSuccess();
}

inline bool any_error(const std::vector<gmp::Expected>& e) {
  return std::any_of(e.begin(), e.end(), [](const gmp::Expected& x) { return x.error; });
}

}  // namespace sqdiff_test::reduce
