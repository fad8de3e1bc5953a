// The quantized ops against the independent integer oracle
// (quantized_oracle.hpp) on thousands of random configurations per op and
// type: random scales, zero points, roundings, activations, int16 paths,
// broadcasts up to 6-D in every mode, strided and in-place views, threads;
// then on every SIMD target with 1 and 2 threads, large enough to split.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "quantized_case.hpp"
#include "simd_target_guard.hpp"

namespace {

namespace qo = sqdiff_test::quantized_oracle;
namespace qt = sqdiff_test::quantized;
using sqdiff::DType;

constexpr int kConfigurationsPerOpAndType = 2000;

struct OpAndType {
  qo::Op op;
  DType dtype;
};

std::string text_of(const OpAndType& p) {
  return std::string(p.op == qo::Op::subtract ? "subtract_" : "squared_difference_") +
         std::string(sqdiff::dtype_name(p.dtype));
}

std::string name_of(const testing::TestParamInfo<OpAndType>& info) { return text_of(info.param); }

// GoogleTest prints the parameter with this (its bytes, padding included, otherwise).
[[maybe_unused]] void PrintTo(const OpAndType& p, std::ostream* os) { *os << text_of(p); }

class QuantizedRandom : public testing::TestWithParam<OpAndType> {};

TEST_P(QuantizedRandom, MatchesTheOracle) {
  const auto [op, dtype] = GetParam();
  std::mt19937_64 rng(0x5eed0000u + static_cast<unsigned>(op) * 16 + static_cast<unsigned>(dtype));
  int64_t elements = 0;
  int refused = 0;
  int power_of_two = 0;
  for (int i = 0; i < kConfigurationsPerOpAndType && !HasFailure(); ++i) {
    const qo::Config config = qt::random_config(rng, op, dtype);
    const qo::Prepared prepared = qo::prepare(config);
    refused += prepared.refused ? 1 : 0;
    power_of_two += prepared.power_of_two ? 1 : 0;
    const qt::Shapes shapes = qt::random_shapes(rng, 3000);
    const int threads = static_cast<int>(rng() % 3);
    elements += qt::run_random_case(rng, config, shapes, threads, i % 2 == 0);
  }
  // The generator reaches what it is for: most calls run, some are refused,
  // int16 subtract takes the power-of-two path often.
  EXPECT_GT(elements, 100000);
  EXPECT_GT(refused, 0);
  EXPECT_LT(refused, kConfigurationsPerOpAndType / 4);
  if (op == qo::Op::subtract && dtype == DType::i16) {
    EXPECT_GT(power_of_two, kConfigurationsPerOpAndType / 5);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOpsAndTypes, QuantizedRandom,
                         testing::Values(OpAndType{qo::Op::subtract, DType::i8}, OpAndType{qo::Op::subtract, DType::u8},
                                         OpAndType{qo::Op::subtract, DType::i16},
                                         OpAndType{qo::Op::squared_difference, DType::i8},
                                         OpAndType{qo::Op::squared_difference, DType::u8},
                                         OpAndType{qo::Op::squared_difference, DType::i16}),
                         name_of);

// Every SIMD target, 1 and 2 threads: calls of 264K elements (more than the
// 256 KiB a call needs to split across threads), dense, and strided with a
// broadcast input; and the small random ones. All must equal the oracle, so
// they equal each other.
TEST(QuantizedDeterminism, EveryTargetAndThreadCountMatchesTheOracle) {
  for (const auto [target, mask] : sqdiff_test::quantized_targets_to_run()) {
    const sqdiff_test::TargetGuard guard(mask);
    SCOPED_TRACE("target " + std::string(hwy::TargetName(target)));
    std::mt19937_64 rng(0xd37e);
    for (const qo::Op op : {qo::Op::subtract, qo::Op::squared_difference}) {
      for (const DType dtype : {DType::i8, DType::u8, DType::i16}) {
        for (int i = 0; i < 2; ++i) {
          qo::Config config = qt::random_config(rng, op, dtype);
          while (qo::prepare(config).refused) config = qt::random_config(rng, op, dtype);
          qt::Shapes shapes;
          shapes.mode = {sqdiff::BroadcastKind::numpy, -1};
          shapes.out = {264, 1000 + i};
          shapes.a = shapes.out;
          shapes.b = i == 0 ? shapes.out : sqdiff::Shape{1000 + i};
          for (const int threads : {1, 2}) qt::run_random_case(rng, config, shapes, threads, i == 0);
        }
        for (int i = 0; i < 40; ++i) {
          const qo::Config config = qt::random_config(rng, op, dtype);
          const qt::Shapes shapes = qt::random_shapes(rng, 3000);
          for (const int threads : {1, 2}) qt::run_random_case(rng, config, shapes, threads, i % 2 == 0);
        }
      }
    }
  }
}

}  // namespace
