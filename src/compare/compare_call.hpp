// Validation of a comparison (sqdiff/compare.hpp): every check that can fail
// runs here, before any input is read, and turns the caller's views and
// options into an aligned pair and the settings of a pass.
#pragma once

#include <optional>
#include <string_view>

#include "compare/compare_pass.hpp"
#include "compare/difference_stats.hpp"
#include "sqdiff/compare.hpp"

namespace sqdiff::detail {

// The tolerance rule the options ask for, the missing one of atol/rtol set to
// NumPy's default; nullopt when neither is set. The options must have passed
// check_compare_options.
std::optional<Tolerance> requested_tolerance(const CompareOptions& options);

// a and b aligned to their broadcast shape under options.broadcast. Throws
// Error (messages start with `op`) for mixed or invalid dtypes, shapes that do
// not broadcast, strides whose count is not the rank, a null pointer to data
// that will be read, an extent that does not fit.
AlignedPair align_compared_views(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                                 const CompareOptions& options);

// A pass over an aligned pair as the options ask: threads, chunk size, the
// tolerance rule, progress.
PassSettings pass_settings(const CompareOptions& options, bool exact);

}  // namespace sqdiff::detail
