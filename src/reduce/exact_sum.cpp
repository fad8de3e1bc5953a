#include "reduce/exact_sum.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>

namespace sqdiff::detail {
namespace {

// A finite double as mantissa * 2^exponent, the mantissa a whole number below
// 2^53 (subnormals included).
struct Decomposed {
  uint64_t mantissa;
  int exponent;
  bool negative;
};

Decomposed decompose(double x) {
  const auto bits = std::bit_cast<uint64_t>(x);
  const auto field = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (field == 0) return {fraction, -1074, (bits >> 63) != 0};
  return {fraction | (uint64_t{1} << 52), field - 1075, (bits >> 63) != 0};
}

// The range of an input type: the exponent of its smallest subnormal, and
// the exponent just above its largest finite value.
struct TypeRange {
  int min_exponent;
  int max_exponent;
};

TypeRange range_of(DType dtype) {
  switch (dtype) {
    case DType::f16: return {-24, 16};
    case DType::bf16: return {-133, 128};
    case DType::f32: return {-149, 128};
    case DType::f64: return {-1074, 1024};
    default: return {0, 64};  // integers (exact_format sizes them apart)
  }
}

// a - b = s + e exactly (Knuth's TwoSum), for finite a, b whose difference
// does not overflow.
struct ExactDifference {
  double s;
  double e;
};

ExactDifference two_difference(double a, double b) {
  const double s = a - b;
  const double bv = s - a;
  const double e = (a - (s - bv)) + (-b - bv);
  return {s, e};
}

}  // namespace

ExactFormat exact_format(DType input) {
  const TypeRange range = range_of(input);
  const bool integer = input != DType::f16 && input != DType::bf16 && input != DType::f32 && input != DType::f64;
  // Products of two values (lowest bit 2^(2 min)) up to 4 max^2 * 2 (a^2 - 2ab
  // + b^2, and gradients' factor 2), then 2^63 terms and a sign bit.
  if (integer) return {0, 3};  // squares below 2^128, 2^63 of them, and a sign: 192 bits
  const int lsb = 2 * range.min_exponent;
  const int top = 2 * range.max_exponent + 3 + 64;
  return {lsb, (top - lsb + 63) / 64};
}

ExactSum::ExactSum(ExactFormat format) : format_(format) {
  if (format.limbs <= 0 || format.limbs > kMaxLimbs) throw std::logic_error("ExactSum: bad format");
}

void ExactSum::add_at(uint128_t magnitude, int exponent, bool negate) {
  if (magnitude == 0) return;
  // Drop trailing zero bits: a double's 53-bit mantissa puts a value's lowest
  // bit far below the input type's (an f32 subnormal as a double).
  const auto low_word = static_cast<uint64_t>(magnitude);
  const int zeros = low_word != 0 ? std::countr_zero(low_word) : 64 + std::countr_zero(static_cast<uint64_t>(magnitude >> 64));
  magnitude >>= zeros;
  exponent += zeros;
  const int position = exponent - format_.lsb_exponent;
  if (position < 0) throw std::logic_error("ExactSum: a term below the format's lowest bit");
  const auto limb = static_cast<std::size_t>(position / 64);
  const int shift = position % 64;
  const auto low = static_cast<uint64_t>(magnitude);
  const auto high = static_cast<uint64_t>(magnitude >> 64);
  const uint64_t words[3] = {
      low << shift,
      shift == 0 ? high : (low >> (64 - shift)) | (high << shift),
      shift == 0 ? 0 : high >> (64 - shift),
  };
  const auto count = static_cast<std::size_t>(format_.limbs);
  for (std::size_t j = 0; j < 3; ++j) {
    if (limb + j >= count && words[j] != 0) throw std::logic_error("ExactSum: a term above the format's top");
  }
  // A carry (adding) or borrow (subtracting) runs up until it is absorbed; one
  // out of the top limb wraps (two's complement), which the format's headroom
  // makes right.
  uint64_t carry = 0;
  for (std::size_t i = limb; i < count; ++i) {
    const uint64_t word = i - limb < 3 ? words[i - limb] : 0;
    if (word == 0 && carry == 0 && i - limb >= 2) return;
    const uint128_t change = static_cast<uint128_t>(word) + carry;
    const uint64_t before = limbs_[i];
    if (negate) {
      limbs_[i] = before - static_cast<uint64_t>(change);
      carry = before < change ? 1 : 0;
    } else {
      const uint128_t sum = before + change;
      limbs_[i] = static_cast<uint64_t>(sum);
      carry = static_cast<uint64_t>(sum >> 64);
    }
  }
}

void ExactSum::add_integer(uint128_t magnitude, int exponent, bool negate) {
  note_term(false);
  add_at(magnitude, exponent, negate);
}

void ExactSum::add_value(double x, bool negate) {
  if (std::isnan(x)) {
    nan_ = true;
    return;
  }
  if (std::isinf(x)) {
    mark_infinity(negate != std::signbit(x));
    return;
  }
  const Decomposed d = decompose(x);
  note_term(x == 0 && negate != d.negative);
  add_at(d.mantissa, d.exponent, negate != d.negative);
}

void ExactSum::add_product(double x, double y, int scale_exponent, bool negate) {
  const Decomposed dx = decompose(x);
  const Decomposed dy = decompose(y);
  const uint128_t product = static_cast<uint128_t>(dx.mantissa) * dy.mantissa;
  add_at(product, dx.exponent + dy.exponent + scale_exponent, negate != (dx.negative != dy.negative));
}

void ExactSum::add_square_of_difference(double a, double b, bool f64_overflow) {
  if (std::isnan(a) || std::isnan(b)) {
    nan_ = true;
    return;
  }
  if (std::isinf(a) || std::isinf(b)) {
    if (std::isinf(a) && std::isinf(b) && std::signbit(a) == std::signbit(b)) {
      nan_ = true;  // inf - inf
    } else {
      positive_infinity_ = true;
    }
    return;
  }
  if (f64_overflow && square_of_difference_overflows_f64(a, b)) {
    positive_infinity_ = true;
    return;
  }
  note_term(false);  // a square is never -0
  const ExactDifference d = two_difference(a, b);
  if (d.e == 0 && std::isfinite(d.s)) {
    add_product(d.s, d.s, 0, false);
    return;
  }
  add_product(a, a, 0, false);  // (a - b)^2 = a^2 - 2ab + b^2, each product exact
  add_product(a, b, 1, true);
  add_product(b, b, 0, false);
}

void ExactSum::add_difference_product(double a, double b, double g, bool negate) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(g)) {
    nan_ = true;
    return;
  }
  const bool difference_infinite = std::isinf(a) || std::isinf(b);
  if (difference_infinite && std::isinf(a) && std::isinf(b) && std::signbit(a) == std::signbit(b)) {
    nan_ = true;  // inf - inf
    return;
  }
  if (difference_infinite || std::isinf(g)) {
    // The sign of a - b: an infinite input decides it; otherwise a vs b.
    const bool difference_zero = !difference_infinite && a == b;
    const bool difference_negative = std::isinf(a) ? std::signbit(a) : std::isinf(b) ? !std::signbit(b) : a < b;
    if (difference_zero || g == 0) {
      nan_ = true;  // inf * 0
      return;
    }
    mark_infinity(negate != (difference_negative != std::signbit(g)));
    return;
  }
  const ExactDifference d = two_difference(a, b);
  // IEEE's sign of a zero product: a - b is -0 only for -0 - +0.
  note_term((d.s == 0 || g == 0) && (std::signbit(d.s) != std::signbit(g)) != negate);
  if (d.e == 0 && std::isfinite(d.s)) {
    add_product(d.s, g, 1, negate);
    return;
  }
  add_product(a, g, 1, negate);  // 2(a - b)g = 2ag - 2bg, each product exact
  add_product(b, g, 1, !negate);
}

void ExactSum::add_integer_square(int128_t difference) {
  note_term(false);
  const auto magnitude =
      difference < 0 ? static_cast<uint128_t>(0) - static_cast<uint128_t>(difference)
                     : static_cast<uint128_t>(difference);
  add_at(magnitude * magnitude, 0, false);  // |a - b| < 2^64, so the square fits
}

void ExactSum::add(const ExactSum& other) {
  if (!(other.format_ == format_)) throw std::logic_error("ExactSum: adding sums of two formats");
  uint64_t carry = 0;
  for (int i = 0; i < format_.limbs; ++i) {
    const uint128_t sum = static_cast<uint128_t>(limbs_[i]) + other.limbs_[i] + carry;
    limbs_[i] = static_cast<uint64_t>(sum);
    carry = static_cast<uint64_t>(sum >> 64);
  }
  nan_ = nan_ || other.nan_;
  positive_infinity_ = positive_infinity_ || other.positive_infinity_;
  negative_infinity_ = negative_infinity_ || other.negative_infinity_;
  any_term_ = any_term_ || other.any_term_;
  non_negative_zero_term_ = non_negative_zero_term_ || other.non_negative_zero_term_;
}

bool ExactSum::is_negative() const { return (limbs_[static_cast<std::size_t>(format_.limbs - 1)] >> 63) != 0; }

bool ExactSum::is_zero() const {
  for (int i = 0; i < format_.limbs; ++i) {
    if (limbs_[i] != 0) return false;
  }
  return true;
}

uint64_t ExactSum::flags() const {
  return (nan_ ? kNanFlag : 0) | (positive_infinity_ ? kPositiveInfinityFlag : 0) |
         (negative_infinity_ ? kNegativeInfinityFlag : 0) | (any_term_ ? kAnyTermFlag : 0) |
         (non_negative_zero_term_ ? kNonNegativeZeroTermFlag : 0);
}

void ExactSum::set_flags(uint64_t flags) {
  nan_ = (flags & kNanFlag) != 0;
  positive_infinity_ = (flags & kPositiveInfinityFlag) != 0;
  negative_infinity_ = (flags & kNegativeInfinityFlag) != 0;
  any_term_ = (flags & kAnyTermFlag) != 0;
  non_negative_zero_term_ = (flags & kNonNegativeZeroTermFlag) != 0;
}

ExactSum::StateTag ExactSum::read_tag(uint64_t tag) {
  StateTag fields{};
  fields.magic = tag >> 40;
  fields.version = (tag >> 32) & 0xFF;
  fields.format.lsb_exponent = static_cast<int16_t>(static_cast<uint16_t>(tag >> 16));
  fields.format.limbs = static_cast<int>((tag >> 8) & 0xFF);
  fields.flags = tag & 0xFF;
  return fields;
}

void ExactSum::store(uint64_t* to) const {
  for (int i = 0; i < format_.limbs; ++i) to[i] = limbs_[static_cast<std::size_t>(i)];
  const auto lsb = static_cast<uint16_t>(static_cast<int16_t>(format_.lsb_exponent));
  to[format_.limbs] = kStateMagic << 40 | kStateVersion << 32 | uint64_t{lsb} << 16 |
                      static_cast<uint64_t>(format_.limbs) << 8 | flags();
}

ExactSum ExactSum::load(ExactFormat format, const uint64_t* from) {
  const StateTag tag = read_tag(from[format.limbs]);
  if (tag.magic != kStateMagic || tag.version != kStateVersion || !(tag.format == format) ||
      (tag.flags & ~kKnownFlags) != 0) {
    throw std::logic_error("ExactSum: loading a state whose tag was not checked");
  }
  ExactSum sum(format);
  for (int i = 0; i < format.limbs; ++i) sum.limbs_[static_cast<std::size_t>(i)] = from[i];
  sum.set_flags(tag.flags);
  return sum;
}

bool square_of_difference_overflows_f64(double a, double b) {
  const double s = a - b;
  if (std::isinf(s)) return true;
  const double magnitude = std::fabs(s);
  if (magnitude <= 0x1p511) return false;  // (2^511 + an ulp)^2 is far below 2^1024
  if (magnitude >= 0x1p513) return true;
  // Near the boundary: d^2 - (2^1024 - 2^970), exactly.
  ExactSum difference(exact_format(DType::f64));
  difference.add_product(a, a, 0, false);
  difference.add_product(a, b, 1, true);
  difference.add_product(b, b, 0, false);
  difference.add_integer((uint64_t{1} << 54) - 1, 970, true);
  return !difference.is_negative();
}

}  // namespace sqdiff::detail
