// How each storage type meets the lanes that compute, for every SIMD target:
// floats compute in their own type, integers in the unsigned type of the same
// width, f16 and bf16 widen to f32 (bf16 with AVX512-BF16 instructions where
// the CPU has them) and round back once.

#if defined(SQDIFF_KERNELS_ELEMENT_CODECS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SQDIFF_KERNELS_ELEMENT_CODECS_INL_H_
#undef SQDIFF_KERNELS_ELEMENT_CODECS_INL_H_
#else
#define SQDIFF_KERNELS_ELEMENT_CODECS_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/half_convert-inl.h"
#include "kernels/stream_stores-inl.h"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"

HWY_BEFORE_NAMESPACE();
namespace sqdiff::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Floats compute in their own type; integers in the unsigned type of the same
// width, where wrap-around is defined (signed kernels reuse these).
template <typename T>
struct NativeCodec {
  using Storage = T;
  using Compute = T;
  static HWY_INLINE Compute Widen(Storage value) { return value; }
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return hn::LoadU(d, p);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> LoadFirst(D d, const Storage* p, hn::Mask<D> first) {
    return hn::MaskedLoad(first, d, p);
  }
  template <class D>
  static HWY_INLINE void StoreFirst(D d, hn::Vec<D> v, Storage* p, hn::Mask<D> first) {
    hn::BlendedStore(v, first, d, p);
  }
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    hn::StoreU(v, d, p);
  }
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    hn::Stream(v, d, aligned);
  }
};

// The exact conversions of half-precision storage (half_convert-inl.h) and the
// scalar type whose widening is bit-identical to them (NaN quieting included).
struct Float16Conversions {
  using Storage = hwy::float16_t;
  using Scalar = sqdiff::float16;
  template <class D>
  static HWY_INLINE hn::Vec<D> Widen(D d, hn::Vec<hn::Rebind<Storage, D>> half) {
    return WidenF16(d, half);
  }
  template <class D>
  static HWY_INLINE hn::Vec<hn::Rebind<Storage, D>> Narrow(D d, hn::Vec<D> v) {
    return NarrowF16(d, v);
  }
};

struct BFloat16Conversions {
  using Storage = hwy::bfloat16_t;
  using Scalar = sqdiff::bfloat16;
  template <class D>
  static HWY_INLINE hn::Vec<D> Widen(D d, hn::Vec<hn::Rebind<Storage, D>> half) {
    return WidenBF16(d, half);
  }
  template <class D>
  static HWY_INLINE hn::Vec<hn::Rebind<Storage, D>> Narrow(D d, hn::Vec<D> v) {
    return NarrowBF16(d, v);
  }
};

// f16 and bf16 compute in f32: widened exactly on load, rounded once on store.
template <class Conversions>
struct HalfCodec {
  using Storage = typename Conversions::Storage;
  using Compute = float;
  static HWY_INLINE Compute Widen(Storage value) {
    uint16_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return static_cast<float>(Conversions::Scalar::from_bits(bits));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return Conversions::Widen(d, hn::LoadU(hn::Rebind<Storage, D>(), p));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> LoadFirst(D d, const Storage* p, hn::Mask<hn::Rebind<Storage, D>> first) {
    return Conversions::Widen(d, hn::MaskedLoad(first, hn::Rebind<Storage, D>(), p));
  }
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    hn::StoreU(Conversions::Narrow(d, v), hn::Rebind<Storage, D>(), p);
  }
  template <class D>
  static HWY_INLINE void StoreFirst(D d, hn::Vec<D> v, Storage* p, hn::Mask<hn::Rebind<Storage, D>> first) {
    hn::BlendedStore(Conversions::Narrow(d, v), first, hn::Rebind<Storage, D>(), p);
  }
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    StreamHalves(hn::Rebind<Storage, D>(), Conversions::Narrow(d, v), aligned);
  }
};

using Float16Codec = HalfCodec<Float16Conversions>;

// Two vectors of compute lanes that a codec loaded in an order of its own
// (LoadPairInOwnOrder) and stores back from that order (StorePairFromOwnOrder):
// element-wise arithmetic does not care which lane holds which element as
// long as both operands and the output agree.
template <class D>
struct LanePair {
  hn::Vec<D> first;
  hn::Vec<D> second;
};

// Where a pair of vectors widens in an order of its own: each 32-bit lane of
// the storage holds two whole bf16 (not on the one-lane scalar target), and
// the lower one comes first in memory.
#undef SQDIFF_BF16_PAIRS
#if HWY_TARGET != HWY_SCALAR && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SQDIFF_BF16_PAIRS 1
#else
#define SQDIFF_BF16_PAIRS 0
#endif

struct BFloat16Codec : HalfCodec<BFloat16Conversions> {
#if SQDIFF_BF16_PAIRS
  // 2 x Lanes(d) elements: the even ones in `first`, the odd ones in
  // `second`. A bf16 is the upper half of the f32 it widens to, so each is one
  // shift or mask within 32-bit lanes, where widening in order takes a
  // lane-crossing zero-extension per vector and narrowing in order a
  // lane-crossing demotion. A 4K-element call in L1 (scratch loops,
  // alternating): AVX3 without AVX512-BF16 529-586 ns against 748, AVX2
  // 698-735 against 855, SSE4 1272-1348 against 1515-1643.
  template <class D>
  static HWY_INLINE LanePair<D> LoadPairInOwnOrder(D d, const Storage* p) {
    const hn::Repartition<Storage, D> dh;
    const hn::RebindToUnsigned<D> du;
    const auto two = hn::BitCast(du, hn::LoadU(dh, p));  // element 2k in the lower half of lane k
    return {hn::BitCast(d, hn::ShiftLeft<16>(two)), hn::BitCast(d, hn::And(two, hn::Set(du, 0xFFFF0000u)))};
  }
  template <class D>
  static HWY_INLINE void StorePairFromOwnOrder(D d, const LanePair<D>& pair, Storage* p) {
    const hn::Repartition<Storage, D> dh;
    const auto two = hn::Or(RoundToBF16Bits(d, pair.first), hn::ShiftLeft<16>(RoundToBF16Bits(d, pair.second)));
    hn::StoreU(hn::BitCast(dh, two), dh, p);
  }
#endif
};

#if SQDIFF_HAVE_BF16_INSTRUCTIONS
// bf16 stored through vcvtneps2bf16, for CPUs with AVX512-BF16 (kernel_table()
// picks this table at run time). A vector with a subnormal lane, which the
// instruction would flush, is stored again from the integer rounding: a branch
// that is rarely taken, where the integer rounding of every vector took 1.6x
// the time of 4K elements in L1.
struct BFloat16InstructionCodec : BFloat16Codec {
  template <class D>
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) {
    const hn::Rebind<Storage, D> dh;
    hn::StoreU(NarrowBF16Instruction(v), dh, p);
    if (HWY_UNLIKELY(HasSubnormalLane(v))) hn::StoreU(NarrowBF16(d, v), dh, p);
  }
  // Two vectors to consecutive places with one subnormal test: a test and
  // branch per vector cost ~9% of a 4K-element call in L1 (416 against 455
  // ns, scratch loops side by side).
  template <class D>
  static HWY_INLINE void StorePair(D d, hn::Vec<D> v0, hn::Vec<D> v1, Storage* p) {
    const hn::Rebind<Storage, D> dh;
    hn::StoreU(NarrowBF16Instruction(v0), dh, p);
    hn::StoreU(NarrowBF16Instruction(v1), dh, p + hn::Lanes(d));
    if (HWY_UNLIKELY(HasSubnormalLane(v0, v1))) {
      hn::StoreU(NarrowBF16(d, v0), dh, p);
      hn::StoreU(NarrowBF16(d, v1), dh, p + hn::Lanes(d));
    }
  }
  template <class D>
  static HWY_INLINE void StoreFirst(D d, hn::Vec<D> v, Storage* p, hn::Mask<hn::Rebind<Storage, D>> first) {
    const auto narrowed = HWY_UNLIKELY(HasSubnormalLane(v)) ? NarrowBF16(d, v) : NarrowBF16Instruction(v);
    hn::BlendedStore(narrowed, first, hn::Rebind<Storage, D>(), p);
  }
  // Chosen before the store: a streamed line is not overwritten.
  template <class D>
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    const auto narrowed = HWY_UNLIKELY(HasSubnormalLane(v)) ? NarrowBF16(d, v) : NarrowBF16Instruction(v);
    StreamHalves(hn::Rebind<Storage, D>(), narrowed, aligned);
  }

  // 32 elements widened in the order that costs least: each 128-bit block's
  // lower four elements into `first`, its upper four into `second` (an
  // in-block unpack, where widening in order takes a lane-crossing one per
  // vector; it suits vcvtne2ps2bf16 better than the even/odd order above).
  // StorePairFromOwnOrder narrows both with one vcvtne2ps2bf16 and puts the
  // 64-bit groups back in order. 4K elements in L1: 0.32 of the byte add loop
  // against 0.21 in order (scripts/bench.sh, 278 ns a call against 415).
  template <class D>
  static HWY_INLINE LanePair<D> LoadPairInOwnOrder(D d, const Storage* p) {
    const hn::Repartition<Storage, D> dh;
    const hn::RebindToUnsigned<decltype(dh)> du16;
    const hn::RebindToUnsigned<D> du32;
    const auto bits = hn::BitCast(du16, hn::LoadU(dh, p));
    const auto zero = hn::Zero(du16);
    // A bf16 is the upper half of the f32 it widens to: exact.
    return {hn::BitCast(d, hn::ZipLower(du32, zero, bits)), hn::BitCast(d, hn::ZipUpper(du32, zero, bits))};
  }
  template <class D>
  static HWY_INLINE void StorePairFromOwnOrder(D d, const LanePair<D>& pair, Storage* p) {
    const hn::Repartition<Storage, D> dh;
    const hn::Repartition<uint64_t, D> d64;
    // Group g of four elements (64 bits) was narrowed to position kFrom[g].
    alignas(64) static constexpr int64_t kFrom[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    const auto narrowed = HWY_UNLIKELY(HasSubnormalLane(pair.first, pair.second))
                              ? hn::Combine(dh, NarrowBF16(d, pair.second), NarrowBF16(d, pair.first))
                              : NarrowBF16PairInstruction(pair.first, pair.second);
    const auto in_order = hn::TableLookupLanes(hn::BitCast(d64, narrowed), hn::SetTableIndices(d64, kFrom));
    hn::StoreU(hn::BitCast(dh, in_order), dh, p);
  }
};
#endif

// Codecs with an order of their own for a pair of vectors (LanePair).
template <class Codec, class D>
constexpr bool kHasOwnPairOrder = requires(D d, const typename Codec::Storage* p) {
  Codec::LoadPairInOwnOrder(d, p);
};

}  // namespace sqdiff::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SQDIFF_KERNELS_ELEMENT_CODECS_INL_H_
