#include "reduce/exact_reduce.hpp"

#include "reduce/element_access.hpp"

namespace sqdiff::detail {

void add_exact_terms(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                     const std::array<int64_t, kMaxOperands>& base, ExactSum& sum) {
  if (call.count == 0) return;
  const std::size_t size = dtype_size(call.input);
  const auto at = [&](int operand, const DimWalker& walk) {
    const auto k = static_cast<std::size_t>(operand);
    return call.data[k] + (base[k] + walk.offset(operand)) * static_cast<int64_t>(size);
  };
  const bool floats = is_float_type(call.input);
  const bool f64 = call.input == DType::f64;
  DimWalker walk(summed);
  do {
    switch (call.term) {
      case Term::square_of_difference:
        if (floats) {
          sum.add_square_of_difference(load_float(at(0, walk), call.input), load_float(at(1, walk), call.input), f64);
        } else {
          sum.add_integer_square(load_integer(at(0, walk), call.input) - load_integer(at(1, walk), call.input));
        }
        break;
      case Term::difference_product:
        sum.add_difference_product(load_float(at(0, walk), call.input), load_float(at(1, walk), call.input),
                                   load_float(at(2, walk), call.input), call.negate);
        break;
      case Term::value:
        sum.add_value(load_float(at(0, walk), call.input), call.negate);
        break;
    }
  } while (walk.next());
}

ExactSum exact_output_sum(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                          const std::array<int64_t, kMaxOperands>& base) {
  ExactSum sum(exact_format(call.input));
  add_exact_terms(call, summed, base, sum);
  return sum;
}

}  // namespace sqdiff::detail
