// The conversion floor of f16 and bf16: the least work a squared difference
// (or subtract) of half-precision data can do with this CPU's conversion
// instructions, as one plain AVX-512 loop: widen both inputs to f32
// (vcvtph2ps; for bf16 an in-block unpack, in an order of its own), subtract,
// multiply, and narrow once (vcvtps2ph; for bf16 AVX512-BF16's vcvtne2ps2bf16,
// two vectors at a time, and a permute back into order, without the check for
// f32 subnormals that sqdiff needs because that instruction flushes them).
//
// In L1 the byte add bound is out of reach for these types: the conversions,
// not the load and store ports, are the limit. This loop says how close
// sqdiff comes to that limit, in the same run.
#pragma once

#include <sqdiff/dtype.hpp>

#include <cstddef>

namespace sqdiff_bench {

// Whether the bench was compiled with the instructions the floor of `dtype`
// needs (AVX-512 with F16C for f16; with AVX512-BF16 for bf16).
bool has_conversion_floor(sqdiff::DType dtype);

// out[i] = a[i] - b[i], squared when `squared`, for n elements (a multiple of
// 32) of f16 or bf16. out may be a (in place).
void conversion_floor(sqdiff::DType dtype, bool squared, const std::byte* a, const std::byte* b, std::byte* out,
                      std::size_t n);

}  // namespace sqdiff_bench
