// Exact vector conversions between f32 lanes and f16/bf16 storage, identical on
// every target. Highway 1.0.3's own DemoteTo truncates to bf16 everywhere and
// emulates f16 without rounding, inf or NaN below AVX2, so only the F16C
// instructions (AVX2 and up) are used as they are; the rest is integer code
// that mirrors include/sqdiff/float16.hpp and bfloat16.hpp.

// Per-target include guard, as Highway's multiple-inclusion scheme requires.
#if defined(SQDIFF_KERNELS_HALF_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_HALF_CONVERT_INL_H_
#undef SQDIFF_KERNELS_HALF_CONVERT_INL_H_
#else
#define SQDIFF_KERNELS_HALF_CONVERT_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef SQDIFF_HAVE_F16C
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
#define SQDIFF_HAVE_F16C 1
#else
#define SQDIFF_HAVE_F16C 0
#endif

template <class DF>
HWY_INLINE hn::Vec<DF> WidenF16(DF df, hn::Vec<hn::Rebind<hwy::float16_t, DF>> half) {
#if SQDIFF_HAVE_F16C
  return hn::PromoteTo(df, half);
#else
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
  const auto bits = hn::PromoteTo(du, hn::BitCast(du16, half));
  const auto sign = hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u)));
  const auto exponent = hn::And(bits, hn::Set(du, 0x7C00u));
  const auto mantissa = hn::And(bits, hn::Set(du, 0x3FFu));
  const auto normal = hn::Add(hn::ShiftLeft<13>(hn::And(bits, hn::Set(du, 0x7FFFu))),
                              hn::Set(du, 112u << 23));
  // Subnormal (and zero): mantissa * 2^-24, which is exact in f32.
  const auto subnormal = hn::BitCast(
      du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, mantissa)), hn::Set(df, 1.0f / 16777216.0f)));
  // Inf stays inf; NaN keeps its payload and becomes quiet, as F16C does.
  const auto is_nan = hn::Ne(mantissa, hn::Zero(du));
  const auto special = hn::Or(hn::Or(hn::Set(du, 0x7F800000u), hn::ShiftLeft<13>(mantissa)),
                              hn::IfThenElseZero(is_nan, hn::Set(du, 0x00400000u)));
  auto magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Zero(du)), subnormal, normal);
  magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 0x7C00u)), special, magnitude);
  return hn::BitCast(df, hn::Or(sign, magnitude));
#endif
}

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<hwy::float16_t, DF>> NarrowF16(DF df, hn::Vec<DF> v) {
  const hn::Rebind<hwy::float16_t, DF> dh;
#if SQDIFF_HAVE_F16C
  (void)df;
  return hn::DemoteTo(dh, v);  // vcvtps2ph with round-to-nearest-even
#else
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
  const auto bits = hn::BitCast(du, v);
  const auto sign = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u));
  const auto magnitude = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
  const auto signed_magnitude = hn::BitCast(di, magnitude);
  // Normal halves: rebias the exponent, round to nearest even on bit 13.
  const auto rebiased = hn::Sub(magnitude, hn::Set(du, 0x38000000u));
  const auto lsb = hn::And(hn::ShiftRight<13>(rebiased), hn::Set(du, 1u));
  const auto normal = hn::ShiftRight<13>(hn::Add(hn::Add(rebiased, hn::Set(du, 0xFFFu)), lsb));
  // Subnormal halves: adding 0.5 leaves units of 2^-24 in the low bits, rounded
  // to nearest even by the FP adder.
  const auto subnormal =
      hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, magnitude), hn::Set(df, 0.5f))),
              hn::Set(du, 0x3F000000u));
  const auto nan = hn::Or(hn::Set(du, 0x7E00u), hn::And(hn::ShiftRight<13>(magnitude), hn::Set(du, 0x3FFu)));
  auto half = hn::IfThenElse(hn::RebindMask(du, hn::Lt(signed_magnitude, hn::Set(di, 0x38800000))),
                             subnormal, normal);
  half = hn::IfThenElse(hn::RebindMask(du, hn::Gt(signed_magnitude, hn::Set(di, 0x477FEFFF))),
                        hn::Set(du, 0x7C00u), half);  // >= 65520 rounds to inf
  half = hn::IfThenElse(hn::RebindMask(du, hn::Gt(signed_magnitude, hn::Set(di, 0x7F800000))), nan, half);
  // Every lane is <= 0xFFFF, so the saturating demotion is exact.
  return hn::BitCast(dh, hn::DemoteTo(du16, hn::BitCast(di, hn::Or(half, sign))));
#endif
}

template <class DF>
HWY_INLINE hn::Vec<DF> WidenBF16(DF df, hn::Vec<hn::Rebind<hwy::bfloat16_t, DF>> half) {
  return hn::PromoteTo(df, half);  // a shift: exact on every target
}

// Each f32 lane rounded to bf16 (nearest even, NaNs quieted), in the lower
// 16 bits of a 32-bit lane whose upper bits are zero.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> RoundToBF16Bits(DF /*df*/, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(bits, hn::Set(du, 0x7FFFu)), lsb));
  const auto quiet_nan = hn::Or(hn::ShiftRight<16>(bits), hn::Set(du, 0x40u));
  const auto is_nan = hn::Gt(hn::BitCast(di, hn::And(bits, hn::Set(du, 0x7FFFFFFFu))),
                             hn::Set(di, 0x7F800000));
  return hn::IfThenElse(hn::RebindMask(du, is_nan), quiet_nan, rounded);
}

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<hwy::bfloat16_t, DF>> NarrowBF16(DF df, hn::Vec<DF> v) {
  const hn::Rebind<hwy::bfloat16_t, DF> dh;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
  return hn::BitCast(dh, hn::DemoteTo(du16, hn::BitCast(di, RoundToBF16Bits(df, v))));
}

#undef SQDIFF_HAVE_BF16_INSTRUCTIONS
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 && (HWY_COMPILER_GCC || HWY_COMPILER_CLANG)
#define SQDIFF_HAVE_BF16_INSTRUCTIONS 1
#else
#define SQDIFF_HAVE_BF16_INSTRUCTIONS 0
#endif

#if SQDIFF_HAVE_BF16_INSTRUCTIONS
// vcvtneps2bf16 (AVX512-BF16; only for CPUs that have it) rounds exactly as
// NarrowBF16, NaN quieting included, except that it flushes f32 subnormals to
// zero: see HasSubnormalLane. Inline assembly, because Highway 1.0.3 has no
// target with AVX512-BF16 and the compiler emits the instruction only for one.
HWY_INLINE hn::Vec256<hwy::bfloat16_t> NarrowBF16Instruction(hn::Vec512<float> v) {
  __m256i narrowed;
  asm("vcvtneps2bf16 {%1, %0|%0, %1}" : "=v"(narrowed) : "v"(v.raw));
  return hn::Vec256<hwy::bfloat16_t>{narrowed};
}

// Two vectors narrowed by one vcvtne2ps2bf16: `low` to the lower 16 lanes of
// the result, `high` to the upper 16. Flushes f32 subnormals, as above.
HWY_INLINE hn::Vec512<hwy::bfloat16_t> NarrowBF16PairInstruction(hn::Vec512<float> low, hn::Vec512<float> high) {
  __m512i narrowed;
  asm("vcvtne2ps2bf16 {%1, %2, %0|%0, %2, %1}" : "=v"(narrowed) : "v"(low.raw), "v"(high.raw));
  return hn::Vec512<hwy::bfloat16_t>{narrowed};
}

constexpr int kSubnormalClass = 0x20;  // vfpclassps category bit

HWY_INLINE bool HasSubnormalLane(hn::Vec512<float> v) { return _mm512_fpclass_ps_mask(v.raw, kSubnormalClass) != 0; }

// Either vector: one branch for two.
HWY_INLINE bool HasSubnormalLane(hn::Vec512<float> v0, hn::Vec512<float> v1) {
  return (_mm512_fpclass_ps_mask(v0.raw, kSubnormalClass) | _mm512_fpclass_ps_mask(v1.raw, kSubnormalClass)) != 0;
}
#endif

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_HALF_CONVERT_INL_H_
