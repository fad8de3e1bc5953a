// Interleaved measurement: the case, its bound loops and its peer run in turn,
// round after round, in one benchmark body, and every figure is a ratio of
// times taken in the same round.
//
// The machine is shared and its speed drifts by up to 2x over minutes, but
// hardly within one round (milliseconds). So per round we take
// bound_time / case_time, and report the median of those ratios; absolute
// times are medians too, but only the ratios are comparable between runs.
//
// Within a round each contender is sampled a few times, interleaved, and
// keeps its best sample: other processes on the two cores only ever add time
// (a preempted thread, or a 2-thread join waiting for a descheduled partner,
// costs milliseconds), so the best of a few filters those out, and the median
// over rounds filters the drift.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sqdiff_bench {

// Knobs shared by every benchmark (set from the command line in main.cpp).
struct Settings {
  double budget_seconds = 0.6;  // measuring time per benchmark, roughly
  int min_rounds = 5;
  int max_rounds = 201;
  double sample_seconds = 200e-6;  // calls are batched so that one sample lasts about this long
  int samples_per_round = 3;       // each contender's round time is its best of this many samples
};
Settings& settings();

// subject: sqdiff. bound: a loop that moves the case's bytes (the fastest of a
// round is the bound). peer: Eigen, XNNPACK, oneDNN (each reported under its
// name: vs_<name>, <name>_ns, <name>_r_bound). reference: a loop that does the case's
// least arithmetic (conversion_floor.hpp), reported as r_<name> on its own.
enum class Role { subject, bound, peer, reference };

struct Contender {
  std::string name;            // "sqdiff", "add_nt", "eigen", ...
  Role role = Role::subject;
  std::function<void()> call;  // one call of the code measured
  // Untimed, around each sample (wakes and parks the bound loops' worker).
  std::function<void()> before = {};
  std::function<void()> after = {};
  // Multi-threaded code leaves threads behind that may keep spinning after
  // the call returns (sqdiff's workers spin for an adaptive time up to 200 us
  // before they sleep; so do Eigen's). On two cores such a thread would steal
  // the core the next contender needs. With quiesce set, the harness waits
  // after each sample until no other thread of the process is running or
  // runnable, and records how long that took (spin_after_ms).
  bool quiesce = false;
  // With prime set, each sample starts with about 10 ms of untimed calls, so
  // that a thread pool put to sleep by the quiesce is awake, and its threads
  // spread over the CPUs, when the clock starts, as the bound loops' worker is
  // (PairRunner::wake): every contender is timed in the steady state of
  // back-to-back calls. The first of those calls, made with the pool asleep,
  // is reported apart (cold_call_ns).
  bool prime = false;
  // A bound loop's time is multiplied by this to give the bound for the
  // case's bytes: case bytes / bytes the loop moves.
  double scale = 1.0;
  // A peer's "how", for the label (empty: CaseInfo::peer_note).
  std::string note = {};
};

struct Measurement {
  std::vector<std::vector<double>> ns;  // [contender][round], ns per call
  std::vector<std::vector<double>> spin_ms;  // [contender][sample], wall ms until the other threads stopped running
  std::vector<std::vector<double>> cold_ns;  // [contender][sample], the first priming call
  int batch = 1;
  int rounds = 0;
};

// Warms every contender up, sizes the batch from the slowest one, then runs
// rounds until the budget is spent (see Settings).
Measurement measure(const std::vector<Contender>& contenders);

struct CaseInfo {
  double bytes = 0;                  // bytes moved per call by the model (see docs/PERFORMANCE.md)
  std::optional<double> target;      // the target ratio to the bound, if any
  std::optional<double> target_ns;   // the target time per call, if any
  std::string peer_note;             // how the peer computed it, for the label
};

// Sets the benchmark's time (median ns per call of the subject), its counters
// (GBps, r_bound, r_<loop>, vs_eigen, eigen_r_bound, vs_xnnpack, ...) and its label.
void report(benchmark::State& state, const std::vector<Contender>& contenders, const Measurement& m,
            const CaseInfo& info);

double median(std::vector<double> values);

}  // namespace sqdiff_bench
