// A one-line progress bar on a terminal (stderr by default).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sqdiff::tools {

// Jobs whose output is larger than this show a progress bar (when on a terminal).
inline constexpr int64_t kProgressThresholdBytes = int64_t{64} << 20;

class ProgressBar {
 public:
  // `total` is in bytes; a disabled bar prints nothing at all.
  ProgressBar(std::string label, int64_t total, bool enabled, int fd = 2);
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();  // clears an unfinished bar's line (e.g. when an error unwinds)

  // True when a bar should be shown: not quiet, `fd` is a terminal and the job is large.
  static bool wanted(bool quiet, int64_t total_bytes, int fd = 2);

  bool enabled() const { return enabled_; }
  void update(int64_t done);  // redraws at most ~10 times a second
  void finish();              // draws 100% and ends the line

 private:
  void draw(int64_t done);
  void write_text(const std::string& text) const;

  std::string label_;
  int64_t total_;
  bool enabled_;
  int fd_;
  bool drawn_ = false;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace sqdiff::tools
