#include "fatal_signals.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>

namespace sqdiff::tools {
namespace {

// Fixed tables, so that the handler only reads plain memory and makes
// async-signal-safe calls (unlink, rmdir, write, _exit). A slot is claimed
// with `used`; its text is valid while its first byte is not NUL.
constexpr std::size_t kMaxPath = 4096;
constexpr int kMaxTemporaries = 1024;  // an IR run stages one file per Result
constexpr int kMaxMappedInputs = 256;

struct TemporarySlot {
  std::atomic<bool> used;
  bool is_directory;
  char path[kMaxPath];
};

struct MappedInputSlot {
  std::atomic<bool> used;
  uintptr_t begin;
  uintptr_t end;
  char path[kMaxPath];
};

TemporarySlot g_temporaries[kMaxTemporaries];
MappedInputSlot g_mapped_inputs[kMaxMappedInputs];

// Claims a free slot and fills it through `fill`, which must leave the path's
// first byte for last: the slot counts only once its path is there.
template <typename Slot, std::size_t N, typename Fill>
int claim(Slot (&slots)[N], const std::string& path, Fill fill) {
  if (path.size() >= kMaxPath) return -1;
  for (std::size_t i = 0; i < N; ++i) {
    bool expected = false;
    if (!slots[i].used.compare_exchange_strong(expected, true)) continue;
    slots[i].path[0] = '\0';
    std::atomic_signal_fence(std::memory_order_seq_cst);
    fill(slots[i]);
    std::memcpy(slots[i].path + 1, path.c_str() + 1, path.size());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    slots[i].path[0] = path.empty() ? '\0' : path[0];
    return static_cast<int>(i);
  }
  return -1;
}

template <typename Slot, std::size_t N>
void release(Slot (&slots)[N], int slot) {
  if (slot < 0) return;
  slots[slot].path[0] = '\0';
  std::atomic_signal_fence(std::memory_order_seq_cst);
  slots[slot].used.store(false);
}

void remove_temporaries() {
  for (const bool directories : {false, true}) {
    for (TemporarySlot& slot : g_temporaries) {
      if (slot.used.load() && slot.path[0] != '\0' && slot.is_directory == directories) {
        if (directories) {
          ::rmdir(slot.path);
        } else {
          ::unlink(slot.path);
        }
      }
    }
  }
}

const char* mapped_input_at(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  for (const MappedInputSlot& slot : g_mapped_inputs) {
    if (slot.used.load() && slot.path[0] != '\0' && slot.begin <= at && at < slot.end) return slot.path;
  }
  return nullptr;
}

void write_text(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(2, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Signals whose default action ends the process, other than SIGKILL and
// SIGSTOP (which cannot be caught) and SIGXFSZ (ignored instead).
constexpr std::array kFatalSignals = {SIGHUP,  SIGINT,  SIGQUIT,   SIGILL,  SIGTRAP, SIGABRT, SIGBUS,
                                      SIGFPE,  SIGUSR1, SIGSEGV,   SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
                                      SIGSTKFLT, SIGXCPU, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGSYS};

template <typename Visit>
void for_each_fatal_signal(Visit visit) {
  for (const int s : kFatalSignals) visit(s);
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) visit(s);  // real-time signals end a process too
}

extern "C" void on_fatal_signal(int signal_number, siginfo_t* info, void*) {
  if (signal_number == SIGBUS && info != nullptr) {
    if (const char* path = mapped_input_at(info->si_addr)) {
      remove_temporaries();
      write_text("sqdiff: error: ");
      write_text(path);
      write_text(": the file shrank while it was being read (was it truncated or replaced?)\n");
      ::_exit(1);
    }
  }
  remove_temporaries();
  // Die of the same signal: with the default action restored, the signal
  // raised here is delivered when the handler returns (a fault such as
  // SIGSEGV simply happens again).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

}  // namespace

void install_fatal_signal_handlers() {
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  for_each_fatal_signal([&](int s) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) return;  // keep "ignored"
    ::sigaction(s, &action, nullptr);
  });
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGXFSZ, &ignore, nullptr);
}

TemporaryPath::TemporaryPath(const std::string& path, bool is_directory)
    : slot_(claim(g_temporaries, path, [&](TemporarySlot& slot) { slot.is_directory = is_directory; })) {}

TemporaryPath::TemporaryPath(TemporaryPath&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}

TemporaryPath& TemporaryPath::operator=(TemporaryPath&& other) noexcept {
  if (this != &other) {
    release(g_temporaries, slot_);
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

TemporaryPath::~TemporaryPath() { release(g_temporaries, slot_); }

MappedInput::MappedInput(const void* begin, std::size_t size, const std::string& path)
    : slot_(claim(g_mapped_inputs, path, [&](MappedInputSlot& slot) {
        slot.begin = reinterpret_cast<uintptr_t>(begin);
        slot.end = slot.begin + size;
      })) {}

MappedInput::MappedInput(MappedInput&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}

MappedInput& MappedInput::operator=(MappedInput&& other) noexcept {
  if (this != &other) {
    release(g_mapped_inputs, slot_);
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

MappedInput::~MappedInput() { release(g_mapped_inputs, slot_); }

FatalSignalsHeld::FatalSignalsHeld() {
  sigset_t held;
  sigemptyset(&held);
  // All of them, faults too: Linux delivers a fault's own signal even while
  // it is blocked (force_sig), so holding them back cannot hang the program,
  // and the same signal sent by kill() waits for the table to be right.
  for_each_fatal_signal([&](int s) { sigaddset(&held, s); });
  pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

FatalSignalsHeld::~FatalSignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace sqdiff::tools
