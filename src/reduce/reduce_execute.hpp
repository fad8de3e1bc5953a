// Runs a validated reduction or gradient: every output element's terms
// summed, rounded once and written. Nothing is written until every result is
// known when a result can fail (an integer sum that does not fit) or when the
// output shares bytes with an input.
#pragma once

#include <string_view>
#include <vector>

#include "reduce/bounded_sum.hpp"
#include "reduce/reduce_call.hpp"

namespace sqdiff::detail {

// Throws Error (messages start with `op`) for an integer sum that does not
// fit its output type; then nothing has been written.
void execute_reduction(std::string_view op, const ReduceCall& call);

// Writes each output element's exact state (ExactSum::store, `words` words)
// instead of its rounded value: call.out holds the states, densely.
void execute_partial_reduction(const ReduceCall& call);

// Each output element's sum with its error bound, by its offset in the dense
// output (the fast paths' sums; the exact ones where those do not run): for
// float inputs, at the precision of call.output.
std::vector<BoundedSum> execute_bounded_partial_reduction(const ReduceCall& call);

}  // namespace sqdiff::detail
