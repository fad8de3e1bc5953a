// The element-wise gradient kernels (kernels/gradient_table.hpp) on every SIMD
// target compiled in that this CPU supports: the streaming variant, which
// writes each output whose vectors can be aligned with non-temporal stores,
// must write what the plain one writes, bit for bit, and hand back the same
// unsure elements, for every input type, length, alignment of either output
// (the two misaligned differently too) and either output skipped. Guard
// elements around the outputs must stay untouched.
#include <gtest/gtest.h>

#include <hwy/cache_control.h>
#include <hwy/targets.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gradient_table.hpp"
#include "simd_target_guard.hpp"

namespace {

using sqdiff::DType;

using sqdiff_test::TargetGuard;
using sqdiff_test::targets_to_run;

constexpr DType kFloatTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64};
constexpr std::size_t kGuard = 16;  // elements before and after each output
constexpr uint8_t kGuardByte = 0xA5;

std::size_t size_of(DType t) { return t == DType::f64 ? 8 : t == DType::f32 ? 4 : 2; }

// Random bits of a float type: mostly values of moderate exponents (so that
// most elements are sure), some with exponents far apart and some specials
// (so that some are unsure).
std::vector<std::byte> random_values(std::mt19937_64& rng, DType t, std::size_t n) {
  const std::size_t size = size_of(t);
  std::vector<std::byte> out(n * size);
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t bits = rng();
    if (rng() % 8 != 0) {
      // Exponent near the middle of the type's range.
      switch (t) {
        case DType::f64: bits = (bits & 0x800FFFFFFFFFFFFFull) | (uint64_t{1023 + rng() % 16 - 8} << 52); break;
        case DType::f32: bits = (bits & 0x807FFFFFu) | (uint64_t{127 + rng() % 16 - 8} << 23); break;
        case DType::bf16: bits = (bits & 0x807Fu) | (uint64_t{127 + rng() % 16 - 8} << 7); break;
        default: bits = (bits & 0x83FFu) | (uint64_t{15 + rng() % 8 - 4} << 10); break;
      }
    }
    std::memcpy(out.data() + i * size, &bits, size);
  }
  return out;
}

struct Output {
  std::vector<std::byte> storage;
  std::byte* data = nullptr;  // `misalign` elements past a 64-byte boundary
};

Output guarded_output(std::size_t n, std::size_t size, std::size_t misalign) {
  Output out;
  out.storage.assign((2 * kGuard + n) * size + 128, std::byte{kGuardByte});
  auto address = reinterpret_cast<uintptr_t>(out.storage.data()) + kGuard * size;
  address = (address + 63) / 64 * 64 + misalign * size;
  out.data = reinterpret_cast<std::byte*>(address);
  return out;
}

bool guards_intact(const Output& out, std::size_t n, std::size_t size) {
  for (std::size_t k = 0; k < kGuard * size; ++k) {
    if (out.data[n * size + k] != std::byte{kGuardByte}) return false;
    if (*(out.data - 1 - k) != std::byte{kGuardByte}) return false;
  }
  return true;
}

class GradientKernels : public ::testing::TestWithParam<int64_t> {};

TEST_P(GradientKernels, StreamingWritesWhatPlainWrites) {
  TargetGuard guard(GetParam());
  const auto& table = sqdiff::detail::gradient_kernel_table();
  ASSERT_EQ(table.target, GetParam());
  std::mt19937_64 rng(0x6AD0u + static_cast<uint64_t>(GetParam() % 1009));
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 40; ++n) lengths.push_back(n);
  for (std::size_t n : {63, 64, 65, 1000, 4096}) lengths.push_back(n);
  int failures = 0;
  for (const DType t : kFloatTypes) {
    const std::size_t size = size_of(t);
    for (const std::size_t n : lengths) {
      const auto a = random_values(rng, t, n), b = random_values(rng, t, n), g = random_values(rng, t, n);
      // Misalignments of grad_a and grad_b in elements (8: a vector of f64 on
      // AVX-512 away); 99 skips that output.
      for (const auto& [mis_a, mis_b] : {std::pair<std::size_t, std::size_t>{0, 0}, {0, 3}, {5, 5}, {1, 0},
                                         {7, 2}, {99, 0}, {0, 99}, {3, 99}}) {
        Output plain_a = guarded_output(n, size, mis_a % 99), plain_b = guarded_output(n, size, mis_b % 99);
        Output stream_a = guarded_output(n, size, mis_a % 99), stream_b = guarded_output(n, size, mis_b % 99);
        std::vector<uint32_t> unsure_plain(n + 1), unsure_stream(n + 1);
        const std::size_t count_plain = table.for_input(t, false)(
            a.data(), b.data(), g.data(), mis_a == 99 ? nullptr : plain_a.data, mis_b == 99 ? nullptr : plain_b.data, n,
            unsure_plain.data());
        const std::size_t count_stream = table.for_input(t, true)(
            a.data(), b.data(), g.data(), mis_a == 99 ? nullptr : stream_a.data, mis_b == 99 ? nullptr : stream_b.data,
            n, unsure_stream.data());
        hwy::FlushStream();
        const std::string where = std::string(hwy::TargetName(GetParam())) + " dtype " +
                                  std::to_string(static_cast<int>(t)) + " n " + std::to_string(n) + " misalign " +
                                  std::to_string(mis_a) + "/" + std::to_string(mis_b);
        std::vector<bool> unsure(n, false);
        bool same_unsure = count_plain == count_stream;
        for (std::size_t u = 0; same_unsure && u < count_plain; ++u) {
          same_unsure = unsure_plain[u] == unsure_stream[u];
          unsure[unsure_plain[u]] = true;
        }
        bool same_values = true, guards = true;
        for (const auto& [p, s, skipped] : {std::tuple{&plain_a, &stream_a, mis_a == 99},
                                            std::tuple{&plain_b, &stream_b, mis_b == 99}}) {
          if (skipped) {
            guards = guards && guards_intact(*s, 0, size) && s->data[0] == std::byte{kGuardByte};
            continue;
          }
          guards = guards && guards_intact(*p, n, size) && guards_intact(*s, n, size);
          for (std::size_t i = 0; i < n; ++i) {  // an unsure element's output is the caller's to rewrite
            if (!unsure[i] && std::memcmp(p->data + i * size, s->data + i * size, size) != 0) same_values = false;
          }
        }
        if (!same_unsure || !same_values || !guards) {
          ADD_FAILURE() << where << (same_unsure ? "" : ": other unsure elements")
                        << (same_values ? "" : ": other values") << (guards ? "" : ": a guard changed");
          if (++failures >= 10) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, GradientKernels, ::testing::ValuesIn(targets_to_run()),
                         [](const ::testing::TestParamInfo<int64_t>& p) { return std::string(hwy::TargetName(p.param)); });

}  // namespace
