// Runs the kernels on every SIMD target compiled into the library that this
// CPU supports (hwy::SetSupportedTargetsForTest forces each one in turn), and
// compares them bit-exactly with the scalar oracle of tests/oracle.hpp:
//  - through the public API: every dtype x op x row kind (vv, vs, sv, and the
//    row / column broadcasts of a 2-D call) x lengths 0..67 and some larger
//    ones, with misaligned data pointers, values including specials, in-place
//    on a and on b; guard elements after (and before) the output must stay
//    untouched; inputs are allocated with no slack after their last element
//    so that an over-read is caught by AddressSanitizer;
//  - directly through sqdiff::detail::kernel_table()'s row kernels for n =
//    0..67 (and larger), again with guards and in-place variants.
#include <gtest/gtest.h>

#include <hwy/cache_control.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "oracle.hpp"
#include "simd_target_guard.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

namespace oracle = sqdiff_test::oracle;
namespace values = sqdiff_test::values;
using sqdiff::DType;
using Shape = std::vector<int64_t>;

using sqdiff_test::TargetGuard;
using sqdiff_test::targets_to_run;

// Makes kernel_table() use, or not use, the AVX512-BF16 bf16 kernels for the
// lifetime of the guard.
class BF16InstructionsGuard {
 public:
  explicit BF16InstructionsGuard(bool allowed) { sqdiff::detail::allow_bf16_instructions(allowed); }
  ~BF16InstructionsGuard() { sqdiff::detail::allow_bf16_instructions(true); }
  BF16InstructionsGuard(const BF16InstructionsGuard&) = delete;
  BF16InstructionsGuard& operator=(const BF16InstructionsGuard&) = delete;
};

// The bf16 kernels a target has: the integer rounding always, and the
// AVX512-BF16 instructions on AVX-512 targets of CPUs that have them.
std::vector<bool> bf16_variants(int64_t target) {
  const bool avx512 = target == HWY_AVX3 || target == HWY_AVX3_DL;
  if (avx512 && sqdiff::detail::cpu_has_bf16_instructions()) return {false, true};
  return {false};
}

std::string target_description() {
  return sqdiff::active_simd_target() +
         (sqdiff::detail::kernel_table().bf16_instructions ? " (bf16 via AVX512-BF16)" : "");
}

std::vector<std::size_t> lengths() {
  std::vector<std::size_t> n;
  for (std::size_t i = 0; i <= 67; ++i) n.push_back(i);
  for (std::size_t i : {127, 128, 129, 255, 256, 1000, 4099}) n.push_back(i);
  return n;
}

// An element buffer: `front` guard elements, then the payload (starting
// `misalign` elements after a 64-byte boundary), then `back` guard elements.
// With front = back = 0 the allocation ends exactly at the payload's end.
class Buffer {
 public:
  Buffer(DType t, std::size_t n, std::size_t misalign, std::size_t guard)
      : t_(t), es_(oracle::elem_size(t)), n_(n), guard_(guard) {
    const std::size_t lead = guard + misalign;  // elements before the payload
    // 64-byte aligned start + lead elements; over-allocate 64 bytes to align.
    bytes_.reset(new unsigned char[64 + (lead + n + guard) * es_]);
    unsigned char* p = bytes_.get();
    p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
    start_ = p;
    data_ = p + lead * es_;
    for (std::size_t i = 0; i < lead * es_; ++i) start_[i] = kGuardByte;
    for (std::size_t i = 0; i < guard * es_; ++i) data_[n * es_ + i] = kGuardByte;
  }
  void* data() { return data_; }
  uint64_t get(std::size_t i) const { return oracle::load_bits(data_ + i * es_, t_); }
  void set(std::size_t i, uint64_t v) { oracle::store_bits(data_ + i * es_, t_, v); }
  // Empty string when all guard bytes are intact.
  std::string check_guards() const {
    for (unsigned char* p = start_; p < data_; ++p)
      if (*p != kGuardByte) return "byte " + std::to_string(data_ - p) + " before the output was written";
    for (std::size_t i = 0; i < guard_ * es_; ++i)
      if (data_[n_ * es_ + i] != kGuardByte)
        return "byte " + std::to_string(i) + " after the end of the output (element " + std::to_string(n_ + i / es_) +
               ") was written";
    return {};
  }

 private:
  static constexpr unsigned char kGuardByte = 0xA5;
  DType t_;
  std::size_t es_, n_, guard_;
  std::unique_ptr<unsigned char[]> bytes_;
  unsigned char* start_ = nullptr;
  unsigned char* data_ = nullptr;
};

// An input with no slack after its last element (ASan catches over-reads).
class ExactInput {
 public:
  ExactInput(DType t, std::size_t n, std::size_t misalign) : t_(t), es_(oracle::elem_size(t)) {
    bytes_.reset(new unsigned char[(misalign + n) * es_ + (n + misalign == 0 ? 1 : 0)]);
    data_ = bytes_.get() + misalign * es_;
  }
  void* data() { return data_; }
  uint64_t get(std::size_t i) const { return oracle::load_bits(data_ + i * es_, t_); }
  void set(std::size_t i, uint64_t v) { oracle::store_bits(data_ + i * es_, t_, v); }

 private:
  DType t_;
  std::size_t es_;
  std::unique_ptr<unsigned char[]> bytes_;
  unsigned char* data_ = nullptr;
};

constexpr std::size_t kGuard = 128;  // > one AVX-512 vector of u8 (64 lanes)

enum class Kind { vv, vs, sv, rows, cols, both_sided, both_sided_b_fixed, both_moving };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::vv: return "vv [n]-[n]";
    case Kind::vs: return "vs [n]-[1]";
    case Kind::sv: return "sv [1]-[n]";
    case Kind::rows: return "row broadcast [3,n]-[n]";
    case Kind::cols: return "column broadcast [3,n]-[3,1]";
    case Kind::both_sided: return "both-sided [2,1,1+n%7,1]-[3,1,1+n/7%9] (block rows or copies)";
    case Kind::both_sided_b_fixed: return "both-sided [1,3,1+n%7,1]-[2,1,1,1+n/7%9] (b's row fixed along a batch)";
    case Kind::both_moving: return "both-sided [3,1+n%7,1]-[3,1,1+n/7%9] (both rows move along a batch)";
  }
  return "?";
}

enum class Where { fresh, on_a, on_b };
const char* where_name(Where w) {
  switch (w) {
    case Where::fresh: return "fresh output";
    case Where::on_a: return "in-place on a";
    case Where::on_b: return "in-place on b";
  }
  return "?";
}

struct Shapes {
  Shape a, b, out;
};
Shapes shapes_of(Kind k, int64_t n) {
  switch (k) {
    case Kind::vv: return {{n}, {n}, {n}};
    case Kind::vs: return {{n}, {1}, {n}};
    case Kind::sv: return {{1}, {n}, {n}};
    case Kind::rows: return {{3, n}, {n}, {3, n}};
    case Kind::cols: return {{3, n}, {3, 1}, {3, n}};
    case Kind::both_sided: {
      // The specs' pattern with blocks from 1x1 to 7x9: spans that fit a
      // vector of every target and spans that do not.
      const int64_t m = 1 + n % 7;
      const int64_t cols = 1 + n / 7 % 9;
      return {{2, 1, m, 1}, {3, 1, cols}, {2, 3, m, cols}};
    }
    case Kind::both_sided_b_fixed: {
      const int64_t m = 1 + n % 7;
      const int64_t cols = 1 + n / 7 % 9;
      return {{1, 3, m, 1}, {2, 1, 1, cols}, {2, 3, m, cols}};
    }
    case Kind::both_moving: {
      const int64_t m = 1 + n % 7;
      const int64_t cols = 1 + n / 7 % 9;
      return {{3, m, 1}, {3, 1, cols}, {3, m, cols}};
    }
  }
  return {};
}

std::string target_name(int64_t t) { return hwy::TargetName(t); }

// One public-API call on the current target; returns "" or a failure report.
// The inputs' values are va / vb (va[i] for a's element i); the output's
// elements, as written, are returned in *result.
std::string run_api_case(std::mt19937_64& rng, DType t, oracle::Op op, Kind kind, Where where, std::size_t n,
                         std::size_t mis_a, std::size_t mis_b, std::size_t mis_out, const std::vector<uint64_t>& va,
                         const std::vector<uint64_t>& vb, std::vector<uint64_t>* result) {
  const Shapes s = shapes_of(kind, static_cast<int64_t>(n));
  const std::size_t na = static_cast<std::size_t>(oracle::element_count(s.a));
  const std::size_t nb = static_cast<std::size_t>(oracle::element_count(s.b));
  const std::size_t no = static_cast<std::size_t>(oracle::element_count(s.out));
  if (where == Where::on_a && s.a != s.out) return {};
  if (where == Where::on_b && s.b != s.out) return {};
  // The in-place operand lives in a guarded buffer (it is the output).
  std::unique_ptr<ExactInput> ea, eb;
  std::unique_ptr<Buffer> bo;
  void* pa = nullptr;
  void* pb = nullptr;
  void* po = nullptr;
  if (where == Where::on_a) {
    bo = std::make_unique<Buffer>(t, no, mis_a, kGuard);
    pa = po = bo->data();
  } else {
    ea = std::make_unique<ExactInput>(t, na, mis_a);
    pa = ea->data();
  }
  if (where == Where::on_b) {
    bo = std::make_unique<Buffer>(t, no, mis_b, kGuard);
    pb = po = bo->data();
  } else {
    eb = std::make_unique<ExactInput>(t, nb, mis_b);
    pb = eb->data();
  }
  if (where == Where::fresh) {
    bo = std::make_unique<Buffer>(t, no, mis_out, kGuard);
    po = bo->data();
  }
  const std::size_t es = oracle::elem_size(t);
  for (std::size_t i = 0; i < na; ++i) oracle::store_bits(static_cast<unsigned char*>(pa) + i * es, t, va.at(i));
  for (std::size_t i = 0; i < nb; ++i) oracle::store_bits(static_cast<unsigned char*>(pb) + i * es, t, vb.at(i));
  if (where == Where::fresh)
    for (std::size_t i = 0; i < no; ++i) bo->set(i, values::random_value(rng, t));

  const auto expected = oracle::compute(op, {pa, t, s.a, {}}, {pb, t, s.b, {}}, sqdiff::BroadcastKind::numpy, -1);
  auto describe = [&] {
    std::ostringstream d;
    d << oracle::name_of(op) << " " << oracle::name_of(t) << " " << kind_name(kind) << " n=" << n << " "
      << where_name(where) << ", misalignment (elements) a=" << mis_a << " b=" << mis_b << " out=" << mis_out
      << ", target " << target_description();
    return d.str();
  };
  if (!expected || expected->shape != s.out) return "oracle does not broadcast: " + describe();
  try {
    const sqdiff::ConstTensorView view_a{pa, t, s.a};
    const sqdiff::ConstTensorView view_b{pb, t, s.b};
    const sqdiff::TensorView view_out{po, t, s.out};
    if (op == oracle::Op::subtract) sqdiff::subtract(view_a, view_b, view_out);
    else sqdiff::squared_difference(view_a, view_b, view_out);
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what() + " in " + describe();
  }
  result->assign(no, 0);
  for (std::size_t i = 0; i < no; ++i) (*result)[i] = bo->get(i);
  for (std::size_t i = 0; i < no; ++i) {
    const uint64_t got = bo->get(i);
    const uint64_t want = expected->bits[i];
    if (!oracle::bits_match(t, want, got)) {
      std::ostringstream d;
      d << "element " << i << ": expected " << oracle::hex_bits(t, want) << ", actual " << oracle::hex_bits(t, got)
        << " in " << describe();
      return d.str();
    }
  }
  const std::string g = bo->check_guards();
  if (!g.empty()) return g + " in " + describe();
  return {};
}

class SimdTargetDType : public ::testing::TestWithParam<std::tuple<int64_t, DType>> {};

TEST_P(SimdTargetDType, PublicApiMatchesOracle) {
  const int64_t target = std::get<0>(GetParam());
  const DType t = std::get<1>(GetParam());
  TargetGuard guard(target);
  ASSERT_EQ(sqdiff::active_simd_target(), target_name(target));
  std::mt19937_64 rng(0x51AD0000u + static_cast<uint64_t>(t));
  int failures = 0;
  for (const bool bf16_instructions : t == DType::bf16 ? bf16_variants(target) : std::vector<bool>{false}) {
    BF16InstructionsGuard bf16_guard(bf16_instructions);
    ASSERT_EQ(sqdiff::detail::kernel_table().bf16_instructions, bf16_instructions);
    for (oracle::Op op : oracle::kAllOps)
      for (Kind kind : {Kind::vv, Kind::vs, Kind::sv, Kind::rows, Kind::cols, Kind::both_sided,
                        Kind::both_sided_b_fixed, Kind::both_moving})
        for (Where where : {Where::fresh, Where::on_a, Where::on_b})
          for (std::size_t n : lengths()) {
            const Shapes s = shapes_of(kind, static_cast<int64_t>(n));
            std::vector<uint64_t> va(static_cast<std::size_t>(oracle::element_count(s.a)));
            std::vector<uint64_t> vb(static_cast<std::size_t>(oracle::element_count(s.b)));
            for (auto& v : va) v = values::random_value(rng, t);
            for (auto& v : vb) v = values::random_value(rng, t);
            std::vector<uint64_t> results[2];
            for (int variant = 0; variant < 2; ++variant) {
              // one aligned run and one with all three pointers misaligned by
              // 1..3 elements (rotating with n)
              const std::size_t ma = variant ? 1 + n % 3 : 0;
              const std::size_t mb = variant ? 1 + (n + 1) % 3 : 0;
              const std::size_t mo = variant ? 1 + (n + 2) % 3 : 0;
              const std::string err = run_api_case(rng, t, op, kind, where, n, ma, mb, mo, va, vb, &results[variant]);
              if (!err.empty()) {
                ADD_FAILURE() << err;
                if (++failures >= 10) return;
              }
            }
            // SPEC section 4: bit-identical whatever the alignment, NaN
            // payloads included.
            if (results[0] != results[1]) {
              ADD_FAILURE() << "aligned and misaligned runs differ (NaN payloads?): " << oracle::name_of(op) << " "
                            << oracle::name_of(t) << " " << kind_name(kind) << " n=" << n << " " << where_name(where);
              if (++failures >= 10) return;
            }
          }
  }
  EXPECT_EQ(sqdiff::active_simd_target(), target_name(target));
}

// The row kernels of the table, called directly.
std::string run_kernel_case(std::mt19937_64& rng, const sqdiff::detail::RowKinds& k, const char* flavor, DType t,
                            oracle::Op op, char kind, Where where, std::size_t n, std::size_t mis) {
  // kind: 'v' = vv, 's' = vs (b scalar), 'S' = sv (a scalar)
  const bool a_scalar = kind == 'S', b_scalar = kind == 's';
  const std::size_t na = a_scalar ? 1 : n, nb = b_scalar ? 1 : n;
  if ((where == Where::on_a && a_scalar) || (where == Where::on_b && b_scalar)) return {};
  Buffer a(t, na, mis, kGuard), b(t, nb, (mis + 1) % 4, kGuard), o(t, n, (mis + 2) % 4, kGuard);
  for (std::size_t i = 0; i < na; ++i) a.set(i, values::random_value(rng, t));
  for (std::size_t i = 0; i < nb; ++i) b.set(i, values::random_value(rng, t));
  for (std::size_t i = 0; i < n; ++i) o.set(i, values::random_value(rng, t));
  std::vector<uint64_t> want(n);
  for (std::size_t i = 0; i < n; ++i)
    want[i] = oracle::compute_bits(t, op, a.get(a_scalar ? 0 : i), b.get(b_scalar ? 0 : i));
  Buffer& out = where == Where::on_a ? a : where == Where::on_b ? b : o;
  const sqdiff::detail::RowKernel fn = kind == 'v' ? k.vv : kind == 's' ? k.vs : k.sv;
  const char* kname = kind == 'v' ? "vv" : kind == 's' ? "vs" : "sv";
  auto describe = [&] {
    std::ostringstream d;
    d << "kernel_table " << flavor << " " << kname << " " << oracle::name_of(op) << " " << oracle::name_of(t) << " n=" << n << " "
      << where_name(where) << ", misalignment " << mis << ", target " << target_description();
    return d.str();
  };
  if (fn == nullptr) return "null kernel: " + describe();
  fn(a.data(), b.data(), out.data(), n, {});
  hwy::FlushStream();  // the streaming kernels leave the fence to their caller
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t got = out.get(i);
    if (!oracle::bits_match(t, want[i], got)) {
      std::ostringstream d;
      d << "element " << i << ": expected " << oracle::hex_bits(t, want[i]) << ", actual "
        << oracle::hex_bits(t, got) << " in " << describe();
      return d.str();
    }
  }
  for (Buffer* buf : {&a, &b, &o}) {
    const std::string g = buf->check_guards();
    if (!g.empty()) return g + " in " + describe();
  }
  return {};
}

class SimdTarget : public ::testing::TestWithParam<int64_t> {};

TEST_P(SimdTarget, ReportsItsName) {
  const int64_t target = GetParam();
  {
    TargetGuard guard(target);
    EXPECT_EQ(sqdiff::active_simd_target(), target_name(target));
  }
  // After the guard, the library is back to the best target of the CPU.
  const int64_t best = sqdiff::detail::compiled_targets() & hwy::SupportedTargets();
  EXPECT_EQ(sqdiff::active_simd_target(), target_name(best & -best));
}

TEST_P(SimdTarget, RowKernelsMatchOracle) {
  const int64_t target = GetParam();
  TargetGuard guard(target);
  ASSERT_EQ(sqdiff::active_simd_target(), target_name(target));
  std::mt19937_64 rng(0x7AB1E000u + static_cast<uint64_t>(target % 997));
  std::vector<std::size_t> ns;
  for (std::size_t i = 0; i <= 67; ++i) ns.push_back(i);
  for (std::size_t i : {255, 256, 1000}) ns.push_back(i);
  int failures = 0;
  for (const bool bf16_instructions : bf16_variants(target)) {
    BF16InstructionsGuard bf16_guard(bf16_instructions);
    const sqdiff::detail::KernelTable& table = sqdiff::detail::kernel_table();
    ASSERT_EQ(table.bf16_instructions, bf16_instructions);
    for (oracle::Op op : oracle::kAllOps)
      for (DType t : oracle::kAllDTypes) {
        if (bf16_instructions && t != DType::bf16) continue;  // the same kernels as without
        const sqdiff::detail::RowKernels& kernels = table.at(static_cast<sqdiff::detail::Op>(op), t);
        // Either side of where rows count as long, the longer with a partial vector.
        const std::size_t long_row = sqdiff::detail::kLongRowBytes / oracle::elem_size(t);
        std::vector<std::size_t> row_lengths = ns;
        row_lengths.insert(row_lengths.end(), {long_row - 1, long_row + 13});
        for (const auto& [k, flavor] :
             {std::pair{&kernels.plain, "plain"}, std::pair{&kernels.streaming, "streaming"},
              std::pair{&kernels.narrow_long_rows, "narrow_long_rows"}})
          for (char kind : {'v', 's', 'S'})
            for (Where where : {Where::fresh, Where::on_a, Where::on_b})
              for (std::size_t n : row_lengths) {
                const std::string err = run_kernel_case(rng, *k, flavor, t, op, kind, where, n, n % 4);
                if (!err.empty()) {
                  ADD_FAILURE() << err;
                  if (++failures >= 10) return;
                }
              }
      }
  }
}

// Every bf16 bit pattern as a, against b values chosen so that a - b and
// (a - b)² cover the f32 subnormals, which AVX512-BF16's vcvtneps2bf16 would
// flush to zero, in vectors alone and mixed with normal lanes.
TEST_P(SimdTarget, BF16SubnormalResultsAreRoundedNotFlushed) {
  const int64_t target = GetParam();
  TargetGuard guard(target);
  constexpr std::size_t kPatterns = 65536;
  Buffer a(DType::bf16, kPatterns, 0, 0), b(DType::bf16, kPatterns, 0, 0), out(DType::bf16, kPatterns, 0, 0);
  for (std::size_t i = 0; i < kPatterns; ++i) a.set(i, i);
  auto as_float = [](uint64_t bits) {
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &wide, sizeof(f));
    return f;
  };
  std::map<oracle::Op, std::size_t> subnormal_results;
  // 0, -0, the smallest subnormals, the smallest normal, 1.0
  for (const uint64_t b_bits : {0x0000u, 0x8000u, 0x0001u, 0x807Fu, 0x0080u, 0x3F80u}) {
    for (std::size_t i = 0; i < kPatterns; ++i) b.set(i, b_bits);
    for (const bool bf16_instructions : bf16_variants(target)) {
      BF16InstructionsGuard bf16_guard(bf16_instructions);
      const sqdiff::detail::KernelTable& table = sqdiff::detail::kernel_table();
      ASSERT_EQ(table.bf16_instructions, bf16_instructions);
      for (oracle::Op op : oracle::kAllOps) {
        for (std::size_t i = 0; i < kPatterns; ++i) {
          const float d = as_float(a.get(i)) - as_float(b_bits);
          subnormal_results[op] += std::fpclassify(op == oracle::Op::subtract ? d : d * d) == FP_SUBNORMAL;
        }
        const sqdiff::detail::RowKernels& kernels = table.at(static_cast<sqdiff::detail::Op>(op), DType::bf16);
        for (const auto& [kinds, flavor] :
             {std::pair{&kernels.plain, "plain"}, std::pair{&kernels.streaming, "streaming"},
              std::pair{&kernels.narrow_long_rows, "narrow_long_rows"}}) {
          kinds->vv(a.data(), b.data(), out.data(), kPatterns, {});
          hwy::FlushStream();
          for (std::size_t i = 0; i < kPatterns; ++i) {
            const uint64_t want = oracle::compute_bits(DType::bf16, op, a.get(i), b_bits);
            ASSERT_TRUE(oracle::bits_match(DType::bf16, want, out.get(i)))
                << "a=" << oracle::hex_bits(DType::bf16, a.get(i)) << " b=" << oracle::hex_bits(DType::bf16, b_bits)
                << ": expected " << oracle::hex_bits(DType::bf16, want) << ", actual "
                << oracle::hex_bits(DType::bf16, out.get(i)) << ", " << oracle::name_of(op) << " " << flavor
                << ", target " << target_description();
          }
        }
      }
    }
  }
  for (oracle::Op op : oracle::kAllOps) EXPECT_GT(subnormal_results[op], 0u) << oracle::name_of(op);
}

// The block kernels, called directly on batches of rows whose output starts
// anywhere (streaming stores begin at each row's first aligned vector), with
// the fixed operand of a batch on either side or neither, batch after batch.
TEST_P(SimdTarget, BlockKernelsMatchOracle) {
  const int64_t target = GetParam();
  TargetGuard guard(target);
  std::mt19937_64 rng(0xB10C0000u + static_cast<uint64_t>(target % 997));
  int failures = 0;
  for (const bool bf16_instructions : bf16_variants(target)) {
    BF16InstructionsGuard bf16_guard(bf16_instructions);
    const sqdiff::detail::KernelTable& table = sqdiff::detail::kernel_table();
    for (oracle::Op op : oracle::kAllOps)
      for (DType t : oracle::kAllDTypes) {
        const std::size_t lanes = table.lookup_lanes[static_cast<int>(t)];
        if (lanes == 0 || (bf16_instructions && t != DType::bf16)) continue;
        const sqdiff::detail::RowKernels& kernels = table.at(static_cast<sqdiff::detail::Op>(op), t);
        for (const auto& [kinds, flavor] :
             {std::pair{&kernels.plain, "plain"}, std::pair{&kernels.streaming, "streaming"},
              std::pair{&kernels.narrow_long_rows, "narrow_long_rows"}})
          for (const std::size_t n : {1, 2, 5, 15, 16, 17, 30, 32, 33, 47, 100, 256})
            for (const auto& [a_moves, b_moves] :
                 {std::pair{false, true}, std::pair{true, false}, std::pair{true, true}}) {
              // Two batches of three rows, each batch from its own part of a,
              // b and out (RowBatch::outer_rows).
              const std::size_t rows = 3, batches = 2;
              const std::size_t span = 1 + rng() % lanes;
              std::vector<int32_t> a_index(n + sqdiff::detail::kLookupPadding, 0);
              std::vector<int32_t> b_index(n + sqdiff::detail::kLookupPadding, 0);
              for (std::size_t i = 0; i < n; ++i) {
                a_index[i] = static_cast<int32_t>(rng() % span);
                b_index[i] = static_cast<int32_t>(rng() % span);
              }
              const std::size_t a_stride = a_moves ? span : 0;
              const std::size_t b_stride = b_moves ? span : 0;
              const std::size_t input_batch = rows * span;
              Buffer a(t, batches * input_batch, 0, kGuard), b(t, batches * input_batch, 1, kGuard);
              // Rows of n one after another, from a start misaligned by 0..3.
              Buffer out(t, batches * rows * n, n % 4, kGuard);
              for (std::size_t i = 0; i < batches * input_batch; ++i) a.set(i, values::random_value(rng, t));
              for (std::size_t i = 0; i < batches * input_batch; ++i) b.set(i, values::random_value(rng, t));
              sqdiff::detail::RowBatch batch;
              batch.rows = rows;
              batch.a_stride = static_cast<int64_t>(a_stride);
              batch.b_stride = static_cast<int64_t>(b_stride);
              batch.out_stride = static_cast<int64_t>(n);
              batch.a_index = a_index.data();
              batch.b_index = b_index.data();
              batch.a_span = span;
              batch.b_span = span;
              batch.outer_rows = batches;
              batch.outer_a_stride = static_cast<int64_t>(input_batch);
              batch.outer_b_stride = static_cast<int64_t>(input_batch);
              batch.outer_out_stride = static_cast<int64_t>(rows * n);
              kinds->block(a.data(), b.data(), out.data(), n, batch);
              hwy::FlushStream();
              const auto first_mismatch = [&]() -> std::string {
                for (std::size_t r = 0; r < batches * rows; ++r) {
                  const std::size_t first = r / rows * input_batch;
                  for (std::size_t i = 0; i < n; ++i) {
                    const uint64_t x = a.get(first + r % rows * a_stride + static_cast<std::size_t>(a_index[i]));
                    const uint64_t y = b.get(first + r % rows * b_stride + static_cast<std::size_t>(b_index[i]));
                    const uint64_t want = oracle::compute_bits(t, op, x, y);
                    const uint64_t got = out.get(r * n + i);
                    if (!oracle::bits_match(t, want, got)) {
                      return "row " + std::to_string(r) + ", element " + std::to_string(i) + ": expected " +
                             oracle::hex_bits(t, want) + ", actual " + oracle::hex_bits(t, got);
                    }
                  }
                }
                return {};
              };
              if (const std::string mismatch = first_mismatch(); !mismatch.empty()) {
                ADD_FAILURE() << flavor << " block, " << oracle::name_of(op) << " " << oracle::name_of(t)
                              << ", n=" << n << ", " << mismatch << ", target " << target_description();
                if (++failures >= 10) return;
              }
              const std::string guards = out.check_guards();
              if (!guards.empty()) {
                ADD_FAILURE() << guards << " by the " << flavor << " block kernel, n=" << n;
                if (++failures >= 10) return;
              }
            }
      }
  }
}

// The table's gather kernels (packing strided rows) against a plain loop, for
// every element size and the strides with vector paths (0, -1, 2) or none.
TEST_P(SimdTarget, GatherKernelsMatchPlainLoop) {
  const int64_t target = GetParam();
  TargetGuard guard(target);
  const sqdiff::detail::GatherKernels& gather = sqdiff::detail::kernel_table().gather;
  std::mt19937_64 rng(0x6A7E0000u + static_cast<uint64_t>(target % 997));
  constexpr std::size_t kMaxN = 67;
  constexpr int64_t kMaxStride = 5;
  // The source is placed so that element 0 has room for kMaxN elements of
  // either sign of stride around it.
  std::vector<unsigned char> source(8 * (2 * kMaxN * kMaxStride + 1) + 1);
  for (auto& byte : source) byte = static_cast<unsigned char>(rng());
  for (const std::size_t size : {1, 2, 4, 8})
    for (const int64_t stride : {-5, -3, -1, 0, 2, 3, 5})
      for (std::size_t n = 0; n <= kMaxN; ++n) {
        // Misaligned by a byte: views need not be aligned to their element size.
        const unsigned char* from = source.data() + 1 + size * kMaxN * kMaxStride;
        std::vector<unsigned char> got(n * size + 1, 0xEE), want(n * size + 1, 0xEE);
        const int64_t step = stride * static_cast<int64_t>(size);
        for (std::size_t i = 0; i < n; ++i) std::memcpy(want.data() + i * size, from + static_cast<int64_t>(i) * step, size);
        gather.for_size(size)(from, stride, got.data(), n);
        ASSERT_EQ(got, want) << "element size " << size << ", stride " << stride << ", n " << n << ", target "
                             << sqdiff::active_simd_target();
        if (stride <= 0 || n == 0) continue;
        // Again from a copy that ends with the view's last element, so that
        // ASan reports a vector read past it (the gap after it is not the
        // caller's memory).
        const std::size_t span = size * ((n - 1) * static_cast<std::size_t>(stride) + 1);
        std::vector<unsigned char> tight(from, from + span);
        std::fill(got.begin(), got.end(), 0xEE);
        gather.for_size(size)(tight.data(), stride, got.data(), n);
        ASSERT_EQ(got, want) << "from a tight buffer: element size " << size << ", stride " << stride << ", n " << n
                             << ", target " << sqdiff::active_simd_target();
      }
}

std::string param_name(int64_t t) { return target_name(t); }

INSTANTIATE_TEST_SUITE_P(Targets, SimdTarget, ::testing::ValuesIn(targets_to_run()),
                         [](const ::testing::TestParamInfo<int64_t>& p) { return param_name(p.param); });

INSTANTIATE_TEST_SUITE_P(
    Targets, SimdTargetDType,
    ::testing::Combine(::testing::ValuesIn(targets_to_run()), ::testing::ValuesIn(oracle::kAllDTypes)),
    [](const ::testing::TestParamInfo<std::tuple<int64_t, DType>>& p) {
      return param_name(std::get<0>(p.param)) + "_" + oracle::name_of(std::get<1>(p.param));
    });

// Every x86 target the CPU has must be compiled in and run above, and so must
// the portable fallback (SCALAR or EMU128).
TEST(SimdTargets, CoversEveryTargetTheCpuHas) {
  const std::vector<int64_t> run = targets_to_run();
  std::string names;
  for (int64_t t : run) {
    if (!names.empty()) names += ',';
    names += target_name(t);
  }
  std::cout << "SIMD targets tested: " << names << " (compiled: ";
  for (const std::string& s : sqdiff::compiled_simd_targets()) std::cout << s << " ";
  std::cout << ")\n";
  RecordProperty("simd_targets", names);
  const int64_t cpu = hwy::SupportedTargets();
  auto ran = [&](int64_t bit) { return std::find(run.begin(), run.end(), bit) != run.end(); };
#if HWY_ARCH_X86
  for (int64_t bit : {int64_t{HWY_AVX3}, int64_t{HWY_AVX2}, int64_t{HWY_SSE4}, int64_t{HWY_SSSE3}})
    if (cpu & bit) {
      EXPECT_TRUE(ran(bit)) << target_name(bit) << " is supported by the CPU but was not tested";
    }
#endif
  EXPECT_TRUE(ran(HWY_SCALAR) || ran(HWY_EMU128)) << "the portable fallback was not tested";
  EXPECT_GE(run.size(), 2u);
}

}  // namespace
