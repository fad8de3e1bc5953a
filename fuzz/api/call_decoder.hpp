// fuzz_api's decoding of a call from the fuzzer's bytes (FuzzedDataProvider):
// first the call, then the values of the arena it runs on.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <optional>

#include "api/call.hpp"

namespace sqdiff_fuzz::api {

// The call the next bytes choose: the op, types, broadcast mode, shapes,
// strides, each view's place in the arena (overlaps included), threads and,
// for the quantized ops, their parameters; nullopt for a call too large to
// run in milliseconds.
std::optional<Call> decode(FuzzedDataProvider& in);

// Fills the arena with values of `dtype` biased to its special cases (for
// float types now and then values whose products underflow, tiny_value),
// then lays the fuzzer's remaining bytes over its start.
void fill(FuzzedDataProvider& in, Arena& arena, DType dtype);

}  // namespace sqdiff_fuzz::api
