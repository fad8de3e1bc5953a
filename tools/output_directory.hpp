// A directory of output files that appears complete or not at all: the files
// are written into a staging directory beside it, which then takes its place
// in one rename. A run that fails (a full disk half-way, a signal) leaves the
// directory as it was, and a new set never mixes with an old one.
#pragma once

#include <string>
#include <vector>

#include "fatal_signals.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools {

class StagedDirectory {
 public:
  // The manifest a committed set carries: the relative path of each file,
  // one per line. A directory holding only what its manifest names is an
  // earlier set, which a new one may replace.
  static constexpr const char* kManifest = ".sqdiff-output";

  // `dir` may be missing (it is created at commit, parents too), empty, or an earlier set;
  // anything else (a file, a directory holding files this program did not
  // write, the current directory) is refused here, before any work, naming
  // `dir`. Creates the staging directory.
  explicit StagedDirectory(const std::string& dir);
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;
  ~StagedDirectory();  // unless committed: removes the staging directory and its files

  // Where to write the file that will be DIR/relative ("r.npy",
  // "inputs/x.npy"): a path inside the staging directory, whose missing
  // subdirectories are created.
  std::string stage(const std::string& relative);
  // DIR/relative, the file's path once committed.
  std::string final_path(const std::string& relative) const;
  // write(stage(relative)); an error names the file by its final path, not
  // by the staging directory the user never sees.
  template <typename Write>
  void write(const std::string& relative, Write write) {
    const std::string staged = stage(relative);
    try {
      write(staged);
    } catch (const sqdiff::Error& e) {
      throw_naming_final_path(e, staged, relative);
    }
  }
  // Writes the manifest and puts the staged set in DIR's place (an earlier
  // set is removed). Throws sqdiff::Error naming DIR.
  void commit();

 private:
  [[noreturn]] void throw_naming_final_path(const sqdiff::Error& error, const std::string& staged,
                                            const std::string& relative) const;
  void create_subdirectory(const std::string& relative);
  void remove_staging() noexcept;

  std::string dir_;
  std::string staging_;
  bool replaces_existing_ = false;
  std::vector<std::string> files_;       // relative paths, in staging order
  std::vector<std::string> subdirs_;     // relative, created in the staging directory
  std::vector<TemporaryPath> cleanup_;   // what a signal must remove
  bool committed_ = false;
};

}  // namespace sqdiff::tools
