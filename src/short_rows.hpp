// Short rows made long: when the plan's rows are shorter than a vector (the
// specs' [8,1,6,1] with [7,1,5] has 336 rows of 5), the two innermost dims
// become one row, and an input that does not run contiguously over them is
// copied once per distinct position into a small buffer in that layout. The
// 336 rows of 5 become 56 rows of 30 over buffers of 8 and 7 rows.
#pragma once

#include <cstddef>
#include <vector>

#include "plan.hpp"

namespace sqdiff::detail {

struct ShortRowInputs {
  const std::byte* a;
  const std::byte* b;
};

// Rewrites `plan` and the input pointers when that pays, filling `scratch`
// (which must outlive the run); returns false and changes nothing otherwise.
bool widen_short_rows(Plan& plan, std::size_t element_size, ShortRowInputs& inputs,
                      std::vector<std::byte>& scratch);

}  // namespace sqdiff::detail
