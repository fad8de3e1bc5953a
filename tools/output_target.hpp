// Where an output file's bytes go. A regular file (new, or existing, also
// through symbolic links) is replaced atomically: written under a temporary
// name beside it, then renamed onto it. Anything else that can be written
// (standard output as "-", a pipe, a FIFO, a device such as /dev/null) is
// written through, in order, never replaced.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace sqdiff::tools {

struct OutputTarget {
  enum class Kind { replace_file, write_through };
  Kind kind = Kind::replace_file;
  std::string path;  // as the user gave it, for messages
  // replace_file: the file to create or replace, symbolic links followed
  // (the link's target gets the data; a dangling link's target is created).
  std::string file;
  // replace_file, when `file` exists: its mode and owner, kept by the new file.
  std::optional<mode_t> existing_mode;
  uid_t existing_uid = 0;
  gid_t existing_gid = 0;
  // write_through: the open descriptor, and whether it is ours to close.
  int fd = -1;
  bool owns_fd = false;
};

// Throws sqdiff::Error "PATH: ..." for a directory, a missing or unusable
// directory, standard output on a terminal (binary data would garble it),
// and any error opening a non-regular destination.
OutputTarget resolve_output_target(const std::string& path);

// The directory part of `path`: "." for a bare name, "/" for a file in the root.
std::string directory_of(const std::string& path);

}  // namespace sqdiff::tools
