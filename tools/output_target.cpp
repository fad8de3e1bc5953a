#include "output_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "input_file.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw sqdiff::Error(path + ": " + reason);
}

std::string errno_text() { return std::strerror(errno); }

// The path a chain of symbolic links ends at, whether or not that exists
// (as the kernel follows them when it creates a file through a link).
std::string follow_links(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    std::vector<char> target(static_cast<std::size_t>(PATH_MAX) + 1);
    const ssize_t n = ::readlink(current.c_str(), target.data(), target.size() - 1);
    if (n < 0) fail(path, "cannot read the symbolic link " + current + ": " + errno_text());
    const std::string next(target.data(), static_cast<std::size_t>(n));
    current = next.front() == '/' ? next : directory_of(current) + "/" + next;
  }
  fail(path, "too many levels of symbolic links");
}

}  // namespace

OutputTarget resolve_output_target(const std::string& path) {
  OutputTarget target;
  target.path = path;
  if (path.empty()) fail("''", "the output path is empty");
  if (path == "-") {
    if (::isatty(STDOUT_FILENO) == 1) {
      fail("-", "standard output is a terminal; redirect it to a file or a pipe (.npy data is binary)");
    }
    target.kind = OutputTarget::Kind::write_through;
    target.fd = STDOUT_FILENO;
    return target;
  }
  if (path.back() == '/') fail(path, "the output path names a directory, not a file");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(path, "is a directory, not a file");
    if (!S_ISREG(st.st_mode)) {
      // A device, FIFO or socket: the user means that object, which a rename
      // would replace (as root, -o /dev/null would delete the device node).
      target.kind = OutputTarget::Kind::write_through;
      target.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (target.fd < 0) fail(path, "cannot open " + describe_file_type(st.st_mode) + " for writing: " + errno_text());
      target.owns_fd = true;
      return target;
    }
    target.file = follow_links(path);
    target.existing_mode = st.st_mode & 07777;
    target.existing_uid = st.st_uid;
    target.existing_gid = st.st_gid;
    return target;
  }
  if (errno != ENOENT) fail(path, "cannot write here: " + errno_text());
  target.file = follow_links(path);  // a dangling link: create its target
  return target;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace sqdiff::tools
