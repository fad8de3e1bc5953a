#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace sqdiff::tools {
namespace {

constexpr int kBarWidth = 30;

std::string mebibytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled, int fd)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 1)), enabled_(enabled), fd_(fd),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && drawn_ && !finished_) write_text("\r\033[K");
}

bool ProgressBar::wanted(bool quiet, int64_t total_bytes, int fd) {
  return !quiet && total_bytes > kProgressThresholdBytes && ::isatty(fd) == 1;
}

void ProgressBar::update(int64_t done) {
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  draw(total_);
  write_text("\n");
  finished_ = true;
}

void ProgressBar::draw(int64_t done) {
  done = std::clamp<int64_t>(done, 0, total_);
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kBarWidth - filled), '.');
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char tail[96];
  std::snprintf(tail, sizeof tail, "] %3d%%  %s/%s MiB  %.1f s", static_cast<int>(fraction * 100.0),
                mebibytes(done).c_str(), mebibytes(total_).c_str(), seconds);
  write_text("\r" + label_ + " [" + bar + tail + "\033[K");
  drawn_ = true;
}

void ProgressBar::write_text(const std::string& text) const {
  std::size_t offset = 0;
  while (offset < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + offset, text.size() - offset);
    if (n <= 0) return;  // a progress bar is not worth failing the job for
    offset += static_cast<std::size_t>(n);
  }
}

}  // namespace sqdiff::tools
