// What the program leaves behind when a signal ends it: nothing. Temporary
// outputs are removed before the process dies of any signal that would kill
// it, and an input file that shrinks while it is memory-mapped (SIGBUS) ends
// the run with a clear error instead of a crash.
#pragma once

#include <signal.h>

#include <cstddef>
#include <string>

namespace sqdiff::tools {

// Installs the handlers (once, at program start): every signal whose default
// action ends the process removes the registered temporaries, then the
// process dies of that same signal. Signals the caller ignores (nohup's
// SIGHUP) stay ignored. SIGXFSZ is ignored, so that a file-size limit
// (`ulimit -f`) makes the write fail with EFBIG, which the writer reports.
void install_fatal_signal_handlers();

// A temporary file (or, with `is_directory`, an empty-by-then directory) to
// remove if a signal ends the process. Files are removed before directories.
// Holds no slot when the table is full (the path is then only removed by
// normal unwinding).
class TemporaryPath {
 public:
  TemporaryPath() = default;
  explicit TemporaryPath(const std::string& path, bool is_directory = false);
  TemporaryPath(TemporaryPath&& other) noexcept;
  TemporaryPath& operator=(TemporaryPath&& other) noexcept;
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;
  ~TemporaryPath();  // forgets the path (does not remove it)

 private:
  int slot_ = -1;
};

// A memory-mapped input: a SIGBUS at an address inside it means the file
// shrank under the program (another process truncated it). The handler then
// prints "sqdiff: error: PATH: the file shrank while it was being read",
// removes the temporaries and exits with status 1.
class MappedInput {
 public:
  MappedInput() = default;
  MappedInput(const void* begin, std::size_t size, const std::string& path);
  MappedInput(MappedInput&& other) noexcept;
  MappedInput& operator=(MappedInput&& other) noexcept;
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;
  ~MappedInput();

 private:
  int slot_ = -1;
};

// Holds the fatal signals back while a temporary is created and entered in
// the table: a signal arriving as open() returns would otherwise find a file
// the table does not name yet, and leave it behind.
class FatalSignalsHeld {
 public:
  FatalSignalsHeld();
  FatalSignalsHeld(const FatalSignalsHeld&) = delete;
  FatalSignalsHeld& operator=(const FatalSignalsHeld&) = delete;
  ~FatalSignalsHeld();

 private:
  sigset_t previous_;
};

}  // namespace sqdiff::tools
