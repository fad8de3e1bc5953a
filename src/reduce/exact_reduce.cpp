#include "reduce/exact_reduce.hpp"

#include <cmath>

#include "reduce/binned_sum.hpp"
#include "reduce/element_access.hpp"
#include "reduce/square_buckets.hpp"

namespace sqdiff::detail {

namespace {

// a - b = s + e exactly (Knuth's TwoSum), for finite a, b.
void two_difference(double a, double b, double& s, double& e) {
  s = a - b;
  const double bv = s - a;
  e = (a - (s - bv)) + (-b - bv);
}

// One float term into the bins when its pieces are exact products there;
// false leaves it to ExactSum's own (slower, always exact) term methods.
bool bin_square(BinnedSum& bins, double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  double s, e;
  two_difference(a, b, s, e);
  if (!std::isfinite(s) || !BinnedSum::product_is_exact(s, s)) return false;
  if (e == 0) {
    bins.add_product(s, s);
    return true;
  }
  // (s + e)^2 = s^2 + 2se + e^2.
  if (!BinnedSum::product_is_exact(s + s, e) || !BinnedSum::product_is_exact(e, e)) return false;
  bins.add_product(s, s);
  bins.add_product(s + s, e);
  bins.add_product(e, e);
  return true;
}

bool bin_difference_product(BinnedSum& bins, double a, double b, double g, bool negate) {
  double s, e;
  two_difference(a, b, s, e);
  const double two_s = negate ? -(s + s) : s + s;
  const double two_e = negate ? -(e + e) : e + e;
  if (!std::isfinite(two_s) || !std::isfinite(g) || !BinnedSum::product_is_exact(two_s, g) ||
      !BinnedSum::product_is_exact(two_e, g)) {
    return false;
  }
  bins.add_product(two_s, g);
  if (e != 0) bins.add_product(two_e, g);
  return true;
}

}  // namespace

namespace {

// Adds terms one at a time: float terms through the bins, noting each term's
// IEEE sign of zero (the bins see only values); specials and out-of-range
// values through ExactSum's own term methods.
class TermAdder {
 public:
  TermAdder(const ReduceCall& call, ExactSum& sum) : call_(call), sum_(sum), bins_(sum.format()) {}

  void add(const std::byte* pa, const std::byte* pb, const std::byte* pg) {
    const DType t = call_.input;
    switch (call_.term) {
      case Term::square_of_difference:
        if (!is_float_type(t)) {
          sum_.add_integer_square(load_integer(pa, t) - load_integer(pb, t));
        } else if (const double a = load_float(pa, t), b = load_float(pb, t); bin_square(bins_, a, b)) {
          any_ = true;
          non_negative_zero_ = true;  // a square is never -0
        } else {
          // Specials, and f64 squares near its range (whose rule needs the
          // exact check).
          sum_.add_square_of_difference(a, b, t == DType::f64);
        }
        break;
      case Term::difference_product: {
        const double a = load_float(pa, t);
        const double b = load_float(pb, t);
        const double g = load_float(pg, t);
        if (std::isfinite(a) && std::isfinite(b) && bin_difference_product(bins_, a, b, g, call_.negate)) {
          // IEEE's sign of a zero product: a - b is -0 only for -0 - +0.
          const double d = a - b;
          any_ = true;
          non_negative_zero_ =
              non_negative_zero_ || !((d == 0 || g == 0) && (std::signbit(d) != std::signbit(g)) != call_.negate);
        } else {
          sum_.add_difference_product(a, b, g, call_.negate);
        }
        break;
      }
      case Term::value: {
        const double g = load_float(pa, t);
        if (std::isfinite(g)) {
          bins_.add(call_.negate ? -g : g);
          any_ = true;
          non_negative_zero_ = non_negative_zero_ || !(g == 0 && std::signbit(g) != call_.negate);
        } else {
          sum_.add_value(g, call_.negate);
        }
        break;
      }
    }
  }

  // A square the caller summed itself (SquareBuckets): finite, never -0.
  void note_square() {
    any_ = true;
    non_negative_zero_ = true;
  }

  void finish() {
    bins_.flush_into(sum_);
    sum_.note_terms(any_, non_negative_zero_);
  }

 private:
  const ReduceCall& call_;
  ExactSum& sum_;
  BinnedSum bins_;
  bool any_ = false;
  bool non_negative_zero_ = false;
};

}  // namespace

namespace {

// The squares of f16/bf16/f32 differences, through SquareBuckets (the ones it
// cannot take through the TermAdder), one loop per input type.
template <typename Load>
void add_squares_with(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                      const std::array<int64_t, kMaxOperands>& base, TermAdder& adder, ExactSum& sum, Load load) {
  const auto size = static_cast<int64_t>(dtype_size(call.input));
  SquareBuckets buckets(sum.format());
  bool any_bucketed = false;
  const ReduceDim& row = summed.back();
  const std::vector<ReduceDim> outer(summed.begin(), summed.end() - 1);
  DimWalker walk(outer);
  do {
    const std::byte* pa = call.data[0] + (base[0] + walk.offset(0)) * size;
    const std::byte* pb = call.data[1] + (base[1] + walk.offset(1)) * size;
    const int64_t step_a = row.stride[0] * size;
    const int64_t step_b = row.stride[1] * size;
    for (int64_t i = 0; i < row.size; ++i, pa += step_a, pb += step_b) {
      if (buckets.add(load(pa), load(pb))) {
        any_bucketed = true;
      } else {
        adder.add(pa, pb, nullptr);
      }
    }
  } while (walk.next());
  buckets.flush_into(sum);
  if (any_bucketed) adder.note_square();
  adder.finish();
}

void add_single_precision_squares(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                                  const std::array<int64_t, kMaxOperands>& base, TermAdder& adder, ExactSum& sum) {
  switch (call.input) {
    case DType::f32:
      add_squares_with(call, summed, base, adder, sum, [](const std::byte* p) { return double{load_as<float>(p)}; });
      break;
    case DType::f16:
      add_squares_with(call, summed, base, adder, sum, [](const std::byte* p) { return load_float(p, DType::f16); });
      break;
    default:
      add_squares_with(call, summed, base, adder, sum, [](const std::byte* p) { return load_float(p, DType::bf16); });
      break;
  }
}

}  // namespace

void add_exact_terms(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                     const std::array<int64_t, kMaxOperands>& base, ExactSum& sum) {
  if (call.count == 0) return;
  const auto size = static_cast<int64_t>(dtype_size(call.input));
  const auto at = [&](std::size_t k, int64_t offset) {
    return call.data[k] == nullptr ? nullptr : call.data[k] + (base[k] + offset) * size;
  };
  TermAdder adder(call, sum);
  if (!summed.empty() && call.term == Term::square_of_difference &&
      (call.input == DType::f32 || call.input == DType::f16 || call.input == DType::bf16)) {
    add_single_precision_squares(call, summed, base, adder, sum);
    return;
  }
  if (summed.empty()) {
    adder.add(at(0, 0), at(1, 0), at(2, 0));
  } else {
    // The innermost reduced dim as a tight loop, the others walked.
    const ReduceDim& row = summed.back();
    const std::vector<ReduceDim> outer(summed.begin(), summed.end() - 1);
    DimWalker walk(outer);
    do {
      const std::byte* p[3] = {at(0, walk.offset(0)), at(1, walk.offset(1)), at(2, walk.offset(2))};
      const int64_t step[3] = {row.stride[0] * size, row.stride[1] * size, row.stride[2] * size};
      for (int64_t i = 0; i < row.size; ++i) {
        adder.add(p[0], p[1], p[2]);
        for (int k = 0; k < 3; ++k) {
          if (p[k] != nullptr) p[k] += step[k];
        }
      }
    } while (walk.next());
  }
  adder.finish();
}

ExactSum exact_output_sum(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                          const std::array<int64_t, kMaxOperands>& base) {
  ExactSum sum(exact_format(call.input));
  add_exact_terms(call, summed, base, sum);
  return sum;
}

}  // namespace sqdiff::detail
