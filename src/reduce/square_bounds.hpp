// The rigorous error bounds of the kernels' sums of squares (kernels/
// reduce_table.hpp), turning a kernel's SquareSums into an Approximation the
// rounding can decide on. All terms are squares: non-negative, so the error is
// relative to the sum itself.
#pragma once

#include <cstdint>

#include "kernels/reduce_table.hpp"
#include "reduce/rounding.hpp"

namespace sqdiff::detail {

// Single precision (f64 FMA chains): each term's rounding error is at most
// kChain + kTree + 2 units of 2^-53 (the difference's rounding counts twice
// in its square), and the double-double holding the block sums adds at most
// 4 (additions)^2 units squared.
Approximation bound_single(const SquareSums& sums);

// Double precision (exact-product terms in double-double lanes): each term
// within 2^-102 of exact, and the low parts' roundings over `chain` terms
// per lane (kChain for rows, the rows added for columns) and the additions.
Approximation bound_double(const SquareSums& sums, int64_t chain);

// Adds one kernel sum into another (a double-double addition).
void add_sums(SquareSums& into, const SquareSums& from);

}  // namespace sqdiff::detail
