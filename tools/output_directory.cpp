#include "output_directory.hpp"

#include <stdio.h>  // renameat2
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <system_error>

#include "input_file.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& dir, const std::string& reason) {
  throw sqdiff::Error(dir + ": " + reason);
}

std::string errno_text() { return std::strerror(errno); }

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (end != 0) lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The first entry of an existing, non-empty `dir` that its manifest does not
// account for; "" when the whole directory is an earlier set (or is empty).
std::string first_foreign_entry(const std::string& dir) {
  std::set<std::string> allowed{StagedDirectory::kManifest};
  std::error_code ec;
  const fs::path manifest = fs::path(dir) / StagedDirectory::kManifest;
  if (fs::is_regular_file(manifest, ec)) {
    for (const std::string& line : split_lines(InputFile::open(manifest.string()).read_all(int64_t{16} << 20))) {
      for (fs::path p = line; !p.empty(); p = p.parent_path()) allowed.insert(p.lexically_normal().string());
    }
  }
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string relative = it->path().lexically_relative(dir).string();
    if (allowed.count(relative) == 0) return relative;
  }
  if (ec) fail(dir, "cannot list the existing output directory: " + ec.message());
  return "";
}

}  // namespace

StagedDirectory::StagedDirectory(const std::string& dir) : dir_(dir) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (dir_.empty() || dir_ == "/") fail(dir, "cannot be used as an output directory");
  const fs::path path(dir_);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) fail(dir_, "exists and is not a directory");
    if (fs::equivalent(path, fs::current_path(ec), ec)) {
      fail(dir_, "is the current directory, which a new result set would replace; choose another output directory");
    }
    const std::string foreign = first_foreign_entry(dir_);
    if (!foreign.empty()) {
      fail(dir_, "is not empty and holds \"" + foreign +
                     "\", which sqdiff did not write; choose a new or empty directory (an earlier result set, "
                     "named by its " + kManifest + " file, is replaced whole)");
    }
    replaces_existing_ = true;
  }
  // The staging directory goes into the nearest directory that exists, so
  // that missing parents of DIR are only created once the set is complete
  // (a failed run leaves not even an empty parent behind).
  fs::path anchor = path.has_parent_path() ? path.parent_path() : fs::path(".");
  while (!fs::exists(anchor, ec) && anchor.has_parent_path() && anchor.parent_path() != anchor) {
    anchor = anchor.parent_path();
  }
  if (!fs::exists(anchor, ec)) anchor = ".";
  if (!fs::is_directory(anchor, ec)) {
    fail(dir_, "cannot create the output directory: " + anchor.string() + " is not a directory");
  }
  const std::string parent = anchor.string();
  const std::string name = path.filename().string().substr(0, 160);
  static std::atomic<unsigned> counter{0};
  const auto seed = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  const FatalSignalsHeld held;
  for (int attempt = 0; attempt < 100 && staging_.empty(); ++attempt) {
    const unsigned long long suffix = (seed + static_cast<unsigned long long>(counter++) * 7919) % 1000000;
    const std::string candidate = (parent == "/" ? "" : parent) + "/." + name + ".tmp-" + std::to_string(::getpid()) +
                                  "-" + std::to_string(suffix);
    if (::mkdir(candidate.c_str(), 0777) == 0) {
      staging_ = candidate;
    } else if (errno != EEXIST) {
      fail(dir_, "cannot create the output directory: " + errno_text());
    }
  }
  if (staging_.empty()) fail(dir_, "cannot create a unique staging directory in " + parent);
  cleanup_.emplace_back(staging_, true);
}

std::string StagedDirectory::stage(const std::string& relative) {
  create_subdirectory(fs::path(relative).parent_path().string());
  files_.push_back(relative);
  const std::string staged = staging_ + "/" + relative;
  cleanup_.emplace_back(staged);
  return staged;
}

void StagedDirectory::create_subdirectory(const std::string& relative) {
  if (relative.empty() || std::find(subdirs_.begin(), subdirs_.end(), relative) != subdirs_.end()) return;
  create_subdirectory(fs::path(relative).parent_path().string());
  const std::string staged = staging_ + "/" + relative;
  const FatalSignalsHeld held;
  if (::mkdir(staged.c_str(), 0777) != 0) fail(final_path(relative), "cannot create: " + errno_text());
  subdirs_.push_back(relative);
  cleanup_.emplace_back(staged, true);
}

std::string StagedDirectory::final_path(const std::string& relative) const {
  return (fs::path(dir_) / relative).string();
}

void StagedDirectory::throw_naming_final_path(const sqdiff::Error& error, const std::string& staged,
                                              const std::string& relative) const {
  std::string message = error.what();
  for (std::size_t at = message.find(staged); at != std::string::npos; at = message.find(staged, at)) {
    message.replace(at, staged.size(), final_path(relative));
  }
  throw sqdiff::Error(message);
}

void StagedDirectory::commit() {
  std::string manifest;
  for (const std::string& file : files_) manifest += file + "\n";
  const std::string manifest_path = stage(kManifest);
  files_.pop_back();  // the manifest does not name itself
  {
    const int fd = ::open(manifest_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail(dir_, "cannot write " + std::string(kManifest) + ": " + errno_text());
    const ssize_t n = ::write(fd, manifest.data(), manifest.size());
    const bool written = n == static_cast<ssize_t>(manifest.size());
    const int write_error = errno;
    if (::close(fd) != 0 || !written) {
      fail(dir_, "cannot write " + std::string(kManifest) + ": " + std::strerror(written ? errno : write_error));
    }
  }
  if (!replaces_existing_) {
    std::error_code ec;
    const fs::path parent = fs::path(dir_).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) fail(dir_, "cannot create the output directory's parent " + parent.string() + ": " + ec.message());
    if (::rename(staging_.c_str(), dir_.c_str()) != 0) fail(dir_, "cannot move the results into place: " + errno_text());
  } else if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system without atomic exchange: move the old set aside first
    // (DIR is missing for an instant, but never holds a mix of two sets).
    const std::string aside = staging_ + ".old";
    if (::rename(dir_.c_str(), aside.c_str()) != 0) fail(dir_, "cannot replace the earlier results: " + errno_text());
    if (::rename(staging_.c_str(), dir_.c_str()) != 0) {
      const std::string reason = errno_text();
      (void)::rename(aside.c_str(), dir_.c_str());
      fail(dir_, "cannot move the results into place: " + reason);
    }
    std::error_code ec;
    fs::remove_all(aside, ec);
  } else {
    std::error_code ec;
    fs::remove_all(staging_, ec);  // the earlier set, swapped out
  }
  committed_ = true;
  cleanup_.clear();
}

void StagedDirectory::remove_staging() noexcept {
  std::error_code ec;
  fs::remove_all(staging_, ec);
  cleanup_.clear();
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) remove_staging();
}

}  // namespace sqdiff::tools
