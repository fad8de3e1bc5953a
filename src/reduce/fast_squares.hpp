// Sums and means of squared differences of float inputs with the SIMD
// kernels: each output's sum comes with a rigorous error bound
// (square_bounds.hpp) and is rounded directly when the bound allows; the rare
// output whose bound straddles a rounding boundary is summed again exactly.
// The work is split into rows (the innermost dim reduced), columns (the
// innermost dim kept) or pairwise blocks ([M,1,K] with [1,N,K] over K).
#pragma once

#include <cstdint>

#include "reduce/bounded_sum.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_plan.hpp"

namespace sqdiff::detail {

// Computes every output of `call` (a sum or mean of squares of f16, bf16, f32
// or f64 inputs, with at least one term per output) and writes its bits to
// the output, or to `results[ordinal]` (row-major over the output) when not
// null. Never fails.
void fast_square_reduction(const ReduceCall& call, const ReducePlan& plan, int threads, uint64_t* results);

// The same sums, each with its error bound, into `sums[ordinal]` instead of
// rounded (the bounded partial states): the output type of `call` sets the
// precision (double-double for f64, as when rounding into it).
void fast_square_bounds(const ReduceCall& call, const ReducePlan& plan, int threads, BoundedSum* sums);

// Tests compare the fast paths against the exact one: false sends every
// output down the exact path, the gradients' too (reduce/gradient_run.cpp).
void set_fast_square_reductions(bool enabled);
bool fast_square_reductions_enabled();

// How many outputs the fast paths rounded directly and how many went down the
// exact path since the process started (tests check that the exact path is rare).
struct FastSquareCounts {
  int64_t rounded = 0;
  int64_t exact = 0;
  // Outputs the f64 pairwise expansion's bound left undecided, summed again
  // in double-double by the rows' kernel (and counted in rounded or exact too).
  int64_t redone = 0;
};
FastSquareCounts fast_square_counts();

}  // namespace sqdiff::detail
