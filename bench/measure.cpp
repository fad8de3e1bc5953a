#include "measure.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <ctime>
#include <string>
#include <map>
#include <numeric>
#include <random>
#include <thread>

namespace sqdiff_bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPrimeTime = std::chrono::milliseconds(10);

// How many threads of this process other than the caller are running or
// runnable (state R in /proc/self/task/*/stat). A thread that spins but has
// been preempted is runnable, so this sees it where CPU-time accounting would
// not.
int other_runnable_threads() {
  const std::string self = std::to_string(static_cast<long>(gettid()));
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (const dirent* entry = readdir(dir)) {
    const std::string tid = entry->d_name;
    if (tid == "." || tid == ".." || tid == self) continue;
    std::ifstream stat("/proc/self/task/" + tid + "/stat");
    std::string line;
    std::getline(stat, line);
    // The state follows the parenthesised command name.
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') ++count;
  }
  closedir(dir);
  return count;
}

// Waits until no other thread of this process is running or runnable, at
// most about half a second; returns the wall milliseconds that took. (Not the
// CPU time the other threads used meanwhile: Linux adds a running thread's
// time to the process clock at ticks and context switches, so a worker that
// ran through the whole sample showed up to a tick of its earlier work as
// "after" the call, about 2 ms whatever its spin.)
double quiesce() {
  const auto start = Clock::now();
  for (int i = 0; i < 25000 && other_runnable_threads() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The 1-minute load average: how busy the shared machine was.
double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = std::nan("");
  in >> load;
  return load;
}

// Side results of one sample.
struct SampleExtras {
  double spin_ms = 0;  // wall ms until the other threads stopped running after the sample
  double cold_ns = 0;  // the first priming call, made with the threads asleep
};

double sample_ns(const Contender& contender, int batch, SampleExtras* extras = nullptr) {
  if (contender.before) contender.before();
  if (contender.prime) {
    // Untimed calls for a few milliseconds: the pool wakes up, and the
    // scheduler has a tick or two to spread its threads over the CPUs (woken
    // threads are often put on the waker's CPU when the other one is busy).
    const auto prime_start = Clock::now();
    contender.call();
    const auto first_done = Clock::now();
    if (extras != nullptr) extras->cold_ns = std::chrono::duration<double, std::nano>(first_done - prime_start).count();
    while (Clock::now() - prime_start < kPrimeTime) contender.call();
  }
  const auto start = Clock::now();
  for (int k = 0; k < batch; ++k) contender.call();
  const auto stop = Clock::now();
  if (contender.after) contender.after();
  if (contender.quiesce) {
    const double running = quiesce();
    if (extras != nullptr) extras->spin_ms = running;
  }
  return std::chrono::duration<double, std::nano>(stop - start).count() / batch;
}

}  // namespace

Settings& settings() {
  static Settings instance;
  return instance;
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  return (upper + *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
}

Measurement measure(const std::vector<Contender>& contenders) {
  const Settings& s = settings();
  Measurement m;
  m.ns.resize(contenders.size());

  // Warm-up: page faults, first-touch of the output, lazy initialisation.
  double fastest_warm_up = INFINITY;
  for (const Contender& c : contenders) fastest_warm_up = std::min(fastest_warm_up, sample_ns(c, 1));
  if (fastest_warm_up > 10 * s.sample_seconds * 1e9) {
    m.batch = 1;  // long calls: one call per sample, and the warm-up is done
  } else {
    // The time per call of the slowest contender, each taken as the best of
    // three single calls (so that one stall does not shrink the batch).
    double slowest = 0;
    for (const Contender& c : contenders) {
      double best = INFINITY;
      for (int k = 0; k < 3; ++k) best = std::min(best, sample_ns(c, 1));
      slowest = std::max(slowest, best);
    }
    m.batch = static_cast<int>(std::clamp(std::ceil(s.sample_seconds * 1e9 / std::max(slowest, 1.0)), 1.0, 1e6));
    // A warm-up round at the real batch size.
    for (const Contender& c : contenders) sample_ns(c, m.batch);
  }

  // Rounds until the budget is spent (at least min_rounds, at most
  // max_rounds, an odd count so that the median is one round's value). A
  // time budget rather than a count estimated in advance: one stall of the
  // shared machine during an estimate would otherwise cut the count.
  m.spin_ms.resize(contenders.size());
  m.cold_ns.resize(contenders.size());
  const auto start = Clock::now();
  const int passes = std::max(1, s.samples_per_round);
  std::vector<double> best(contenders.size());
  // Each pass takes the contenders in a new order: a contender's time depends
  // on what the one before it left in the caches (at 256K f32 out of place,
  // sqdiff timed twice ran 5% apart when one copy always followed the
  // streaming bound loop), and a fixed order would turn that into a bias
  // between contenders instead of scatter between rounds. The seed is fixed,
  // so runs take the same orders.
  std::vector<std::size_t> order(contenders.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffle_rng(0x5EEDu);
  for (;;) {
    std::fill(best.begin(), best.end(), INFINITY);
    for (int pass = 0; pass < passes; ++pass) {
      std::shuffle(order.begin(), order.end(), shuffle_rng);
      for (const std::size_t i : order) {
        SampleExtras extras;
        best[i] = std::min(best[i], sample_ns(contenders[i], m.batch, &extras));
        m.spin_ms[i].push_back(extras.spin_ms);
        m.cold_ns[i].push_back(extras.cold_ns);
      }
    }
    for (std::size_t i = 0; i < contenders.size(); ++i) m.ns[i].push_back(best[i]);
    ++m.rounds;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const bool enough = m.rounds >= s.min_rounds && elapsed >= s.budget_seconds;
    if ((enough || m.rounds >= s.max_rounds) && m.rounds % 2 == 1) break;
  }
  return m;
}

void report(benchmark::State& state, const std::vector<Contender>& contenders, const Measurement& m,
            const CaseInfo& info) {
  std::size_t subject = contenders.size();
  std::vector<std::size_t> peers;
  std::vector<std::size_t> bounds;
  std::vector<std::size_t> references;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    switch (contenders[i].role) {
      case Role::subject: subject = i; break;
      case Role::peer: peers.push_back(i); break;
      case Role::bound: bounds.push_back(i); break;
      case Role::reference: references.push_back(i); break;
    }
  }
  if (subject == contenders.size()) {
    state.SkipWithError("no subject");
    return;
  }
  const auto rounds = static_cast<std::size_t>(m.rounds);
  const std::vector<double>& subject_ns = m.ns[subject];
  const double subject_median = median(subject_ns);
  state.SetIterationTime(subject_median * 1e-9);

  auto& counters = state.counters;
  counters["rounds"] = m.rounds;
  counters["batch"] = m.batch;
  if (info.bytes > 0) {
    counters["bytes"] = info.bytes;
    // Google Benchmark's own bytes_per_second: with one iteration and the
    // manual time set to the median, it is bytes / median time.
    state.SetBytesProcessed(static_cast<int64_t>(info.bytes));
    counters["GBps"] = info.bytes / subject_median;  // bytes per ns = GB/s
  }
  if (contenders[subject].quiesce) counters["spin_after_ms"] = median(m.spin_ms[subject]);
  for (std::size_t p : peers) {
    if (contenders[p].quiesce) counters[contenders[p].name + "_spin_after_ms"] = median(m.spin_ms[p]);
  }
  if (contenders[subject].prime) counters["cold_call_ns"] = median(m.cold_ns[subject]);
  for (std::size_t p : peers) {
    if (contenders[p].prime) counters[contenders[p].name + "_cold_call_ns"] = median(m.cold_ns[p]);
  }
  counters["load1"] = load_average();
  if (info.target) counters["target"] = *info.target;
  if (info.target_ns) counters["target_ns"] = *info.target_ns;

  std::string label;
  if (!bounds.empty()) {
    // The bound of a round is the fastest bound loop of that round.
    std::vector<double> bound_ns(rounds);
    std::map<std::string, int> wins;
    for (std::size_t r = 0; r < rounds; ++r) {
      double best = INFINITY;
      std::size_t best_index = bounds.front();
      for (std::size_t b : bounds) {
        const double t = m.ns[b][r] * contenders[b].scale;
        if (t < best) {
          best = t;
          best_index = b;
        }
      }
      bound_ns[r] = best;
      ++wins[contenders[best_index].name];
    }
    std::vector<double> ratio(rounds);
    for (std::size_t r = 0; r < rounds; ++r) ratio[r] = bound_ns[r] / subject_ns[r];
    counters["r_bound"] = median(ratio);
    counters["bound_ns"] = median(bound_ns);
    if (info.bytes > 0) counters["bound_GBps"] = info.bytes / median(bound_ns);
    for (std::size_t b : bounds) {
      for (std::size_t r = 0; r < rounds; ++r) ratio[r] = m.ns[b][r] * contenders[b].scale / subject_ns[r];
      counters["r_" + contenders[b].name] = median(ratio);
    }
    const auto winner = std::max_element(wins.begin(), wins.end(),
                                         [](const auto& x, const auto& y) { return x.second < y.second; });
    label += "bound=" + winner->first;
    for (std::size_t p : peers) {
      for (std::size_t r = 0; r < rounds; ++r) ratio[r] = bound_ns[r] / m.ns[p][r];
      counters[contenders[p].name + "_r_bound"] = median(ratio);
    }
  }
  for (std::size_t i : references) {
    std::vector<double> ratio(rounds);
    for (std::size_t r = 0; r < rounds; ++r) ratio[r] = m.ns[i][r] / subject_ns[r];
    counters["r_" + contenders[i].name] = median(ratio);
  }
  for (std::size_t p : peers) {
    const std::string& name = contenders[p].name;
    std::vector<double> ratio(rounds);
    for (std::size_t r = 0; r < rounds; ++r) ratio[r] = m.ns[p][r] / subject_ns[r];
    counters["vs_" + name] = median(ratio);
    counters[name + "_ns"] = median(m.ns[p]);
    if (!label.empty()) label += ' ';
    label += name + "=" + (contenders[p].note.empty() ? info.peer_note : contenders[p].note);
  }
  state.SetLabel(label);
}

}  // namespace sqdiff_bench
