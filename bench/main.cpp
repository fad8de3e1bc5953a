// sqdiff_bench: Google Benchmark main plus a few options of its own.
//
//   --sqdiff_budget=SECONDS   measuring time per benchmark (default 0.6)
//   --sqdiff_min_rounds=N     fewest interleaved rounds per benchmark (default 5)
//   --sqdiff_samples=N        samples per contender per round, best kept (default 3)
//   --sqdiff_note=KEY=VALUE   extra context for the JSON output (repeatable)
//
// Every other argument goes to Google Benchmark (--benchmark_filter,
// --benchmark_format=json, --benchmark_out=FILE, ...).
#include <benchmark/benchmark.h>
#include <sqdiff/sqdiff.hpp>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cases.hpp"
#include "eigen_peer.hpp"
#include "onednn_peer.hpp"
#include "xnnpack_peer.hpp"
#include "measure.hpp"
#include "quantized_cases.hpp"
#include "reduce_cases.hpp"

#ifndef SQDIFF_BENCH_CXX_FLAGS
#define SQDIFF_BENCH_CXX_FLAGS "unknown"
#endif
#ifndef SQDIFF_BENCH_GBENCH_VERSION
#define SQDIFF_BENCH_GBENCH_VERSION "unknown"
#endif
#ifndef SQDIFF_LIBRARY_BUILD_TYPE
#define SQDIFF_LIBRARY_BUILD_TYPE "unknown"
#endif

namespace {

// The first line of `path` that starts with `key`, without the key and the
// separator; empty if there is none.
std::string read_field(const char* path, std::string_view key, char separator) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto at = line.find(separator);
    if (at == std::string::npos) continue;
    std::string value = line.substr(at + 1);
    const auto first = value.find_first_not_of(" \t\"");
    const auto last = value.find_last_not_of(" \t\"");
    return first == std::string::npos ? std::string() : value.substr(first, last - first + 1);
  }
  return {};
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The CPU features that matter for this op, as the kernel reports them.
std::string cpu_features() {
  // (Strings are built with append: GCC 12 warns falsely (-Wrestrict) on
  // "literal" + std::string at -O3.)
  std::string flags(" ");
  flags.append(read_field("/proc/cpuinfo", "flags", ':')).append(" ");
  std::string found;
  for (const std::string_view f : {"sse4_2", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                                   "avx512_bf16", "avx512_fp16"}) {
    std::string word(" ");
    word.append(f).append(" ");
    if (flags.find(word) == std::string::npos) continue;
    if (!found.empty()) found.append(" ");
    found.append(f);
  }
  return found;
}

void add_context() {
  benchmark::AddCustomContext("sqdiff_version", sqdiff::kVersion);
  benchmark::AddCustomContext("sqdiff_simd_target", sqdiff::active_simd_target());
  benchmark::AddCustomContext("sqdiff_build_type", SQDIFF_LIBRARY_BUILD_TYPE);
  benchmark::AddCustomContext("eigen_version", sqdiff_bench::eigen_peer::version());
  benchmark::AddCustomContext("xnnpack_version", sqdiff_bench::xnnpack_peer::version());
  benchmark::AddCustomContext("onednn_version", sqdiff_bench::onednn_peer::version());
  benchmark::AddCustomContext("compiler", "GCC-compatible " __VERSION__);
  benchmark::AddCustomContext("bench_cxx_flags", SQDIFF_BENCH_CXX_FLAGS);
  benchmark::AddCustomContext("google_benchmark_version", SQDIFF_BENCH_GBENCH_VERSION);
  benchmark::AddCustomContext("cpu_model", read_field("/proc/cpuinfo", "model name", ':'));
  benchmark::AddCustomContext("cpu_features", cpu_features());
  benchmark::AddCustomContext("mem_total", read_field("/proc/meminfo", "MemTotal", ':'));
  benchmark::AddCustomContext("os", read_field("/etc/os-release", "PRETTY_NAME", '='));
  benchmark::AddCustomContext("thp", read_first_line("/sys/kernel/mm/transparent_hugepage/enabled"));
  utsname u{};
  if (uname(&u) == 0) benchmark::AddCustomContext("kernel", std::string(u.sysname).append(" ").append(u.release));
  const auto& s = sqdiff_bench::settings();
  benchmark::AddCustomContext("sqdiff_budget_seconds", std::to_string(s.budget_seconds));
  benchmark::AddCustomContext("sqdiff_min_rounds", std::to_string(s.min_rounds));
  benchmark::AddCustomContext("sqdiff_samples_per_round", std::to_string(s.samples_per_round));
}

bool take_value(const char* arg, std::string_view flag, std::string& value) {
  const std::string_view a(arg);
  if (a.size() <= flag.size() + 1 || a.substr(0, flag.size()) != flag || a[flag.size()] != '=') return false;
  value = std::string(a.substr(flag.size() + 1));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  std::vector<std::pair<std::string, std::string>> notes;
  auto& s = sqdiff_bench::settings();
  for (int i = 0; i < argc; ++i) {
    std::string value;
    if (i > 0 && take_value(argv[i], "--sqdiff_budget", value)) {
      s.budget_seconds = std::strtod(value.c_str(), nullptr);
    } else if (i > 0 && take_value(argv[i], "--sqdiff_min_rounds", value)) {
      s.min_rounds = std::max(1, std::atoi(value.c_str()));
    } else if (i > 0 && take_value(argv[i], "--sqdiff_samples", value)) {
      s.samples_per_round = std::max(1, std::atoi(value.c_str()));
    } else if (i > 0 && take_value(argv[i], "--sqdiff_note", value)) {
      const auto eq = value.find('=');
      notes.emplace_back(value.substr(0, eq), eq == std::string::npos ? "" : value.substr(eq + 1));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  rest.push_back(nullptr);

  add_context();
  for (const auto& [key, value] : notes) benchmark::AddCustomContext(key, value);
  sqdiff_bench::register_cases();
  sqdiff_bench::register_reduce_cases();
  sqdiff_bench::register_quantized_cases();
  benchmark::Initialize(&rest_count, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
