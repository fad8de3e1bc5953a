// An exact sum: a long fixed-point integer wide enough for every sum the
// library forms from one input type (squares of differences, gradient terms,
// plain values, up to 2^63 of them), plus the IEEE specials seen on the way.
// It is the exact recomputation behind the fast paths (which round directly
// only when their error bound allows), and the partial state that combines
// chunks exactly (Dask): adding two exact sums is exact.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "reduce/int128.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// Where an exact sum's lowest bit sits (value = integer * 2^lsb_exponent) and
// how many 64-bit limbs hold it, for the sums made from one input type.
struct ExactFormat {
  int lsb_exponent = 0;
  int limbs = 0;

  friend bool operator==(const ExactFormat&, const ExactFormat&) = default;
};
ExactFormat exact_format(DType input);

class ExactSum {
 public:
  // Enough for f64 inputs: products of two doubles from 2^-2148 up to 2^2051,
  // 2^63 of them, and a sign.
  static constexpr int kMaxLimbs = 68;

  ExactSum() = default;
  explicit ExactSum(ExactFormat format);

  const ExactFormat& format() const { return format_; }

  // Finite doubles only: exact. `scale_exponent` multiplies by a power of two
  // (gradients' factor 2 is 1).
  void add_value(double x, bool negate);
  void add_product(double x, double y, int scale_exponent, bool negate);
  // A whole integer times 2^exponent (integers' squares are exponent 0).
  void add_integer(uint128_t magnitude, int exponent, bool negate);
  // Terms of the ops, with their special values (SPEC sections 7 and 8):
  // (a - b)^2, exactly; NaN for a NaN input or inf - inf, +inf for an infinite
  // difference, and (`f64_overflow`, for f64 inputs) for a square beyond
  // f64's range.
  void add_square_of_difference(double a, double b, bool f64_overflow);
  // scale * (a - b) * g exactly (scale = +-2): IEEE's NaN and infinities of
  // the exact product.
  void add_difference_product(double a, double b, double g, bool negate);
  // The square of an integer difference; never special.
  void add_integer_square(int128_t difference);

  void add(const ExactSum& other);  // the same format

  void mark_nan() { nan_ = true; }
  void mark_infinity(bool negative) { (negative ? negative_infinity_ : positive_infinity_) = true; }

  bool is_nan() const { return nan_ || (positive_infinity_ && negative_infinity_); }
  bool is_positive_infinity() const { return positive_infinity_ && !negative_infinity_ && !nan_; }
  bool is_negative_infinity() const { return negative_infinity_ && !positive_infinity_ && !nan_; }
  bool is_finite() const { return !nan_ && !positive_infinity_ && !negative_infinity_; }
  bool is_negative() const;  // the finite part
  bool is_zero() const;      // the finite part
  // The sign IEEE arithmetic gives a zero sum: -0 only when there were terms
  // and every one of them was -0.
  bool only_negative_zeros() const { return any_term_ && !non_negative_zero_term_; }
  // Records terms added by other means (a BinnedSum): whether any was, and
  // whether any was not -0.
  void note_terms(bool any, bool non_negative_zero) {
    any_term_ = any_term_ || any;
    non_negative_zero_term_ = non_negative_zero_term_ || non_negative_zero;
  }

  // The finite part's limbs, least significant first, two's complement.
  std::span<const uint64_t> limbs() const { return {limbs_.data(), static_cast<std::size_t>(format_.limbs)}; }
  std::span<uint64_t> limbs() { return {limbs_.data(), static_cast<std::size_t>(format_.limbs)}; }

  // The flags as bits of one word.
  static constexpr uint64_t kNanFlag = 1;
  static constexpr uint64_t kPositiveInfinityFlag = 2;
  static constexpr uint64_t kNegativeInfinityFlag = 4;
  static constexpr uint64_t kAnyTermFlag = 8;
  static constexpr uint64_t kNonNegativeZeroTermFlag = 16;
  static constexpr uint64_t kKnownFlags = 31;
  uint64_t flags() const;
  void set_flags(uint64_t flags);

  // The stored state (the partial states of partial_sums.hpp): format.limbs
  // words of the finite part, then a tag word that says what the words are,
  // so that words from elsewhere (another version, another input type's
  // format, garbage) are refused rather than summed:
  //   bits 63-40  kStateMagic ("SQD")
  //   bits 39-32  kStateVersion, the layout's version
  //   bits 31-16  the format's lsb_exponent (int16, two's complement)
  //   bits 15-8   the format's limbs
  //   bits  7-0   the flags
  static constexpr uint64_t kStateMagic = 0x535144;
  static constexpr uint64_t kStateVersion = 1;
  struct StateTag {
    uint64_t magic;
    uint64_t version;
    ExactFormat format;
    uint64_t flags;
  };
  static StateTag read_tag(uint64_t tag);

  std::size_t words() const { return static_cast<std::size_t>(format_.limbs) + 1; }
  void store(uint64_t* to) const;
  // The sum stored at `from`, whose tag the caller has checked: it names
  // `format` and no unknown flag.
  static ExactSum load(ExactFormat format, const uint64_t* from);

 private:
  // Adds (or subtracts) a 128-bit magnitude whose lowest bit has weight 2^exponent.
  void add_at(uint128_t magnitude, int exponent, bool negate);
  // Records a term for the sign of a zero sum.
  void note_term(bool negative_zero) {
    any_term_ = true;
    non_negative_zero_term_ = non_negative_zero_term_ || !negative_zero;
  }

  ExactFormat format_;
  std::array<uint64_t, kMaxLimbs> limbs_ = {};
  bool nan_ = false;
  bool positive_infinity_ = false;
  bool negative_infinity_ = false;
  bool any_term_ = false;
  bool non_negative_zero_term_ = false;
};

// True when (a - b)^2 is beyond f64's range (at least 2^1024 - 2^970, the
// smallest value that rounds to infinity), for finite a, b: SPEC section 7's
// rule for f64 inputs.
bool square_of_difference_overflows_f64(double a, double b);

}  // namespace sqdiff::detail
