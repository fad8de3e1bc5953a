#include "tensor_set.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "npz_archive.hpp"

namespace sqdiff::tools {
namespace {

bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::vector<NamedArray> open_folder(const std::string& path, TwoByteVoid two_byte_void) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(path.c_str()), ::closedir);
  if (!dir) throw sqdiff::Error(path + ": cannot read the folder: " + std::strerror(errno));
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string file = entry->d_name;
    if (file.size() <= 4 || file.compare(file.size() - 4, 4, ".npy") != 0) continue;
    struct stat info {};
    const std::string full = path + "/" + file;
    if (::stat(full.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    names.push_back(file);
  }
  std::sort(names.begin(), names.end());
  std::vector<NamedArray> arrays;
  for (const std::string& file : names) {
    arrays.push_back({file.substr(0, file.size() - 4), NpyArray::open(path + "/" + file, two_byte_void)});
  }
  return arrays;
}

}  // namespace

bool is_tensor_set(const std::string& path) { return is_directory(path) || looks_like_zip(path); }

std::vector<NamedArray> open_tensor_set(const std::string& path, TwoByteVoid two_byte_void) {
  if (is_directory(path)) return open_folder(path, two_byte_void);
  std::vector<NamedArray> arrays;
  for (NpzMember& member : read_npz(path, two_byte_void)) {
    arrays.push_back({std::move(member.name), std::move(member.array)});
  }
  std::stable_sort(arrays.begin(), arrays.end(),
                   [](const NamedArray& x, const NamedArray& y) { return x.name < y.name; });
  for (std::size_t i = 1; i < arrays.size(); ++i) {
    if (arrays[i].name == arrays[i - 1].name) {
      throw sqdiff::Error(path + ": the archive holds " + arrays[i].name + ".npy twice");
    }
  }
  return arrays;
}

}  // namespace sqdiff::tools
