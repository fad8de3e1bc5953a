// fuzz_api's checks of the bounded partial states (sqdiff/bounded_partial_sums.hpp)
// of a reduction call's terms: an API of its own, which the call itself does
// not go through, so the fuzzer drives it from the call's views.
#pragma once

#include <vector>

#include "api/call.hpp"
#include "api/expectations.hpp"

namespace sqdiff_fuzz::api {

// The bounded partial states of a reduction call (sum or mean), on its views
// into the snapshot: refused, with nothing written, exactly when the call is
// invalid for reasons other than its output view (or its inputs are integers);
// otherwise finished and checked against the reference, whole and cut into
// pieces. The reference is the main check's (the library's exact path on
// dense copies, itself checked against GMP), or the same computed for the
// reduced shape when the output view was refused.
void check_bounded_states(const Call& c, const std::vector<unsigned char>& snapshot, const Expectation& expected);

}  // namespace sqdiff_fuzz::api
