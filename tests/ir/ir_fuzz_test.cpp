// A small fuzzer: truncations and byte changes of the example models must give
// an error (sqdiff::Error) or a result, never a crash or another exception.
// Run under ASan+UBSan in build-ir-asan too.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "ir/ir_outputs.hpp"
#include "ir/ir_run.hpp"
#include "ir_test_support.hpp"

namespace sqdiff::tools::ir {
namespace {

using namespace test;

struct Rng {
  uint64_t state;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

// Characters that matter to XML and to the attribute grammars.
constexpr char kInteresting[] = "<>/=\"'?.,-0123456789 \n&;!x";

std::string mutate(const std::string& text, Rng& rng) {
  std::string s = text;
  switch (rng.below(4)) {
    case 0:  // truncate
      s.resize(rng.below(s.size()));
      break;
    case 1: {  // flip bytes to random values
      const std::size_t n = 1 + rng.below(4);
      for (std::size_t k = 0; k < n && !s.empty(); ++k) s[rng.below(s.size())] = static_cast<char>(rng.next() & 0xFF);
      break;
    }
    case 2: {  // replace bytes with characters XML cares about
      const std::size_t n = 1 + rng.below(3);
      for (std::size_t k = 0; k < n && !s.empty(); ++k) {
        s[rng.below(s.size())] = kInteresting[rng.below(sizeof kInteresting - 1)];
      }
      break;
    }
    default: {  // delete or duplicate a span
      const std::size_t at = rng.below(s.size());
      const std::size_t len = std::min(s.size() - at, 1 + rng.below(40));
      if (rng.below(2) == 0) {
        s.erase(at, len);
      } else {
        s.insert(at, s.substr(at, len));
      }
      break;
    }
  }
  return s;
}

// Parses, checks and (when the check passes) runs; returns how far it got.
int exercise(const std::string& text, const std::string& bin) {
  try {
    const Model model = parse_model(text, "fuzz.xml");
    const ShapeReport report = check_shapes(model);
    for (const OpCheck& op : report.ops) (void)format_op_check(model, op);
    if (!report.ok()) return 1;
    RunOptions options;
    options.seed = 1;
    options.bin_path = bin;
    options.max_tensor_bytes = int64_t{1} << 26;
    const RunOutput out = run_model(model, report, options);
    for (const ResultValue& r : out.results) (void)format_values(r.value, 8);
    (void)result_file_names(model, out);
    return 2;
  } catch (const sqdiff::Error&) {
    return 0;
  }
}

TEST(IrFuzz, MutatedExamplesNeverCrash) {
  const char* files[] = {"squared_difference_none.xml", "squared_difference_numpy.xml", "subtract_pdpd.xml",
                         "dynamic_dims.xml", "broken/declared_shape_mismatch.xml"};
  const std::string bin = example("subtract_pdpd.bin");
  Rng rng{12345};
  int outcomes[3] = {0, 0, 0};
  for (const char* file : files) {
    const std::string text = read_text(example(file));
    ASSERT_FALSE(text.empty()) << file;
    for (int i = 0; i < 1000; ++i) {
      const std::string mutated = mutate(text, rng);
      int outcome = -1;
      EXPECT_NO_THROW(outcome = exercise(mutated, bin)) << file << " mutation " << i;
      if (outcome >= 0) ++outcomes[outcome];
    }
  }
  // The mutations reach every stage: parse errors, shape problems, and runs.
  EXPECT_GT(outcomes[0], 0);
  EXPECT_GT(outcomes[1], 0);
  EXPECT_GT(outcomes[2], 0);
  std::printf("fuzz outcomes: %d errors, %d shape problems, %d runs\n", outcomes[0], outcomes[1], outcomes[2]);
}

TEST(IrFuzz, EveryTruncationOfOneModel) {
  const std::string text = read_text(example("subtract_pdpd.xml"));
  const std::string bin = example("subtract_pdpd.bin");
  for (std::size_t n = 0; n < text.size(); ++n) {
    EXPECT_NO_THROW(exercise(text.substr(0, n), bin)) << n;
  }
}

}  // namespace
}  // namespace sqdiff::tools::ir
