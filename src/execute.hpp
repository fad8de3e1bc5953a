// Runs a plan: walks the outer dims and calls one row kernel per row.
#pragma once

#include <cstddef>

#include "kernels/kernel_table.hpp"
#include "plan.hpp"

namespace sqdiff::detail {

// `a`, `b` and `out` are the callers' data pointers; the plan's offsets and
// strides (in elements of `dtype`) say where each row is.
void execute(const Plan& plan, Op op, DType dtype, const std::byte* a, const std::byte* b, std::byte* out);

}  // namespace sqdiff::detail
