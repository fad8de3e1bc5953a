#include "case_support.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "pair_runner.hpp"

namespace sqdiff_bench {

int64_t element_count(const sqdiff::Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::string size_name(int64_t n) {
  if (n % kMi == 0) return std::to_string(n / kMi) + "M";
  if (n % kKi == 0) return std::to_string(n / kKi) + "K";
  return std::to_string(n);
}

std::string shape_name(const sqdiff::Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s.append("x");
    s.append(std::to_string(shape[i]));
  }
  return s;
}

Contender library_contender(std::string name, Role role, std::function<void()> call, int threads) {
  Contender contender;
  contender.name = std::move(name);
  contender.role = role;
  contender.call = std::move(call);
  contender.quiesce = contender.prime = threads != 1;
  return contender;
}

void pool_like(Contender& contender, int threads) {
  if (threads <= 1) return;
  contender.before = [] { pair_runner().wake(); };
  contender.after = [] { pair_runner().park(); };
  contender.quiesce = contender.prime = true;
}

Contender bound_loop(LoopKind kind, const std::byte* a, const std::byte* b, std::byte* c, std::size_t stream_bytes,
                     int threads, double case_bytes) {
  Contender contender;
  contender.name = std::string(loop_name(kind));
  contender.role = Role::bound;
  contender.call = [=] { run_loop(kind, a, b, c, stream_bytes, threads, pair_runner()); };
  pool_like(contender, threads);
  contender.scale = case_bytes / (static_cast<double>(loop_streams(kind)) * static_cast<double>(stream_bytes));
  return contender;
}

void run_and_report(benchmark::State& state, const std::vector<Contender>& contenders, const CaseInfo& info) {
  const std::vector<Contender> timed = with_self(contenders);
  for (auto _ : state) {
    const Measurement m = measure(timed);
    report(state, timed, m, info);
  }
}

std::vector<Contender> with_self(const std::vector<Contender>& contenders) {
  std::vector<Contender> timed = contenders;
  const auto subject =
      std::find_if(contenders.begin(), contenders.end(), [](const Contender& c) { return c.role == Role::subject; });
  if (subject == contenders.end()) return timed;
  Contender self = *subject;
  self.name = "self";
  self.role = Role::reference;
  timed.push_back(std::move(self));
  return timed;
}

benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* bm, benchmark::TimeUnit unit) {
  return bm->Iterations(1)->UseManualTime()->Unit(unit);
}

}  // namespace sqdiff_bench
