// Short rows made long: when the plan's rows are shorter than a vector (the
// specs' [8,1,6,1] with [7,1,5] has 336 rows of 5), the two innermost dims
// become one row. Where the kernels can look lanes up (32- and 64-bit compute
// lanes) and each input's part of the block fits in one vector, the row is a
// block row: each vector of it is a permutation of the inputs' few elements,
// through index tables built once per call. Otherwise an input that does not
// run contiguously over the block is copied once per distinct position into a
// small buffer in that layout. Either way the 336 rows of 5 become 56 of 30.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <vector>

#include "elementwise/plan.hpp"

namespace sqdiff::detail {

struct ShortRowInputs {
  const std::byte* a;
  const std::byte* b;
};

// What a widened plan points into; must outlive the run.
struct ShortRowScratch {
  std::vector<std::byte> copies;
  std::vector<int32_t> indices;  // a block row's tables, a's then b's
  // The block (m, n and the inputs' strides over it) the tables were built
  // for: a call repeating the last one's shapes reuses them.
  std::array<int64_t, 6> indices_block = {-1, -1, -1, -1, -1, -1};
};

// Rewrites `plan` and the input pointers when that pays, filling `scratch`;
// returns false and changes nothing otherwise. `lookup_lanes` is the kernel
// table's for the dtype (0: no block rows).
bool widen_short_rows(Plan& plan, std::size_t element_size, std::size_t lookup_lanes, ShortRowInputs& inputs,
                      ShortRowScratch& scratch);

}  // namespace sqdiff::detail
