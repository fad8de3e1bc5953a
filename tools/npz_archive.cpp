#include "npz_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <unistd.h>

#include "crc32.hpp"
#include "input_file.hpp"

namespace sqdiff::tools {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kZip64EndLocator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw sqdiff::Error(path + ": " + reason);
}

// The archive's bytes, bounds-checked reads of little-endian fields.
class Bytes {
 public:
  Bytes(const std::byte* data, std::size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}
  uint64_t read(std::size_t offset, std::size_t width) const {
    if (offset > size_ || width > size_ - offset) fail(path_, "not a valid .npz file (a zip record runs past its end)");
    uint64_t value = 0;
    for (std::size_t i = width; i-- > 0;) value = value << 8 | std::to_integer<uint64_t>(data_[offset + i]);
    return value;
  }
  const std::byte* at(std::size_t offset, std::size_t length) const {
    if (offset > size_ || length > size_ - offset) fail(path_, "not a valid .npz file (a member runs past its end)");
    return data_ + offset;
  }
  std::size_t size() const { return size_; }

 private:
  const std::byte* data_;
  std::size_t size_;
  const std::string& path_;
};

struct Entry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0;
  uint64_t uncompressed = 0;
  uint64_t local_offset = 0;
};

// Where the central directory starts and how many entries it holds, from the
// end record (or the zip64 one it points to).
std::pair<uint64_t, uint64_t> central_directory(const Bytes& bytes, const std::string& path) {
  const std::size_t size = bytes.size();
  if (size < 22) fail(path, "not a .npz file (too short for a zip archive)");
  // The end record is the last 22 bytes plus a comment of up to 65535.
  const std::size_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (std::size_t at = size - 22 + 1; at-- > lowest;) {
    if (bytes.read(at, 4) != kEndOfCentralDirectory) continue;
    uint64_t entries = bytes.read(at + 10, 2);
    uint64_t offset = bytes.read(at + 16, 4);
    if (at >= 20 && bytes.read(at - 20, 4) == kZip64EndLocator) {
      const uint64_t record = bytes.read(at - 20 + 8, 8);
      if (bytes.read(record, 4) != kZip64End) fail(path, "not a valid .npz file (bad zip64 end record)");
      entries = bytes.read(record + 32, 8);
      offset = bytes.read(record + 48, 8);
    }
    return {offset, entries};
  }
  fail(path, "not a .npz file (no zip end-of-central-directory record)");
}

std::vector<Entry> entries_of(const Bytes& bytes, const std::string& path) {
  auto [offset, count] = central_directory(bytes, path);
  std::vector<Entry> entries;
  for (uint64_t i = 0; i < count; ++i) {
    if (bytes.read(offset, 4) != kCentralHeader) fail(path, "not a valid .npz file (bad central directory entry)");
    Entry e;
    e.flags = static_cast<uint16_t>(bytes.read(offset + 8, 2));
    e.method = static_cast<uint16_t>(bytes.read(offset + 10, 2));
    e.crc = static_cast<uint32_t>(bytes.read(offset + 16, 4));
    e.compressed = bytes.read(offset + 20, 4);
    e.uncompressed = bytes.read(offset + 24, 4);
    const std::size_t name_length = bytes.read(offset + 28, 2);
    const std::size_t extra_length = bytes.read(offset + 30, 2);
    const std::size_t comment_length = bytes.read(offset + 32, 2);
    e.local_offset = bytes.read(offset + 42, 4);
    const std::byte* name = bytes.at(offset + 46, name_length);
    e.name.assign(reinterpret_cast<const char*>(name), name_length);
    // zip64: the fields saturated at 0xFFFFFFFF are in the extra field 0x0001, in this order.
    for (std::size_t x = offset + 46 + name_length; x + 4 <= offset + 46 + name_length + extra_length;) {
      const uint64_t id = bytes.read(x, 2), length = bytes.read(x + 2, 2);
      if (id == 1) {
        std::size_t field = x + 4;
        for (uint64_t* value : {&e.uncompressed, &e.compressed, &e.local_offset}) {
          if (*value == 0xFFFFFFFFu && field + 8 <= x + 4 + length) {
            *value = bytes.read(field, 8);
            field += 8;
          }
        }
      }
      x += 4 + length;
    }
    entries.push_back(std::move(e));
    offset += 46 + name_length + extra_length + comment_length;
  }
  return entries;
}

// Deflate's largest expansion: a 258-byte match coded in 2 bits (1 bit of
// length code, 1 of distance code) gives 1032 bytes per input byte. A member
// claiming more than that is forged, and refusing it before allocating keeps
// the buffer below 1032 times the member's bytes in the file.
constexpr uint64_t kDeflateMaxRatio = 1032;

// A member's bytes against its CRC-32, as zipfile (and so numpy.load) checks
// it: a damaged archive is refused, never compared on corrupted bytes. The
// fuzzer's build computes the CRC but lets a mismatch pass (libFuzzer's
// convention), or nearly every mutated member would stop here.
void check_crc(const std::byte* bytes, const Entry& e, const std::string& where) {
  const uint32_t crc = tools::crc32(0, bytes, static_cast<std::size_t>(e.uncompressed));
#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  if (crc != e.crc) return;
#endif
  if (crc != e.crc) {
    char text[64];
    std::snprintf(text, sizeof text, " (the archive says %08x, the bytes give %08x)", e.crc, crc);
    fail(where, std::string("corrupt member: CRC-32 mismatch") + text);
  }
}

std::shared_ptr<std::byte[]> inflate_member(const std::byte* data, const Entry& e, const std::string& where) {
  // e.compressed is at most the file's size here (read_npz checked it), so the product cannot overflow.
  if (e.uncompressed > e.compressed * kDeflateMaxRatio) {
    fail(where, "not a valid .npz file (its size, " + std::to_string(e.uncompressed) + " bytes, is more than " +
                    std::to_string(e.compressed) + " deflated bytes can hold)");
  }
  if (e.uncompressed > std::numeric_limits<std::size_t>::max() / 2 ||
      e.compressed > std::numeric_limits<uInt>::max() * uint64_t{1024}) {
    fail(where, "member too large to inflate in memory");
  }
  std::shared_ptr<std::byte[]> out(new (std::nothrow) std::byte[std::max<uint64_t>(1, e.uncompressed)]);
  if (!out) fail(where, "cannot allocate " + std::to_string(e.uncompressed) + " bytes to inflate the member");
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) fail(where, "cannot start zlib");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data));  // zlib's API is not const
  stream.next_out = reinterpret_cast<Bytef*>(out.get());
  uint64_t in_left = e.compressed, out_left = e.uncompressed;
  int status = Z_OK;
  while (status == Z_OK) {
    // zlib counts in uInt: feed at most 1 GiB at a time.
    const uInt in_step = static_cast<uInt>(std::min<uint64_t>(in_left, uInt{1} << 30));
    const uInt out_step = static_cast<uInt>(std::min<uint64_t>(out_left, uInt{1} << 30));
    stream.avail_in = in_step;
    stream.avail_out = out_step;
    status = inflate(&stream, Z_NO_FLUSH);
    in_left -= in_step - stream.avail_in;
    out_left -= out_step - stream.avail_out;
    if (status == Z_OK && in_step == stream.avail_in && out_step == stream.avail_out) status = Z_DATA_ERROR;
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END || out_left != 0) fail(where, "corrupt deflated member (zlib could not inflate it)");
  check_crc(out.get(), e, where);
  return out;
}

}  // namespace

bool looks_like_zip(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char head[4] = {};
  const ssize_t got = ::pread(fd, head, sizeof head, 0);
  ::close(fd);
  return got == 4 && head[0] == 'P' && head[1] == 'K' &&
         ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

std::vector<NpzMember> read_npz(const std::string& path, TwoByteVoid two_byte_void) {
  const InputFile file = InputFile::open(path);
  const auto size = static_cast<std::size_t>(file.size());
  if (size == 0) fail(path, "not a .npz file (the file is empty)");
  const std::shared_ptr<const std::byte> mapping = file.map();
  const Bytes bytes(mapping.get(), size, path);

  const std::vector<Entry> entries = entries_of(bytes, path);
  std::vector<uint64_t> data_offsets;
  for (const Entry& e : entries) {
    const std::string where = path + ": member " + e.name;
    if (e.name.size() < 4 || e.name.compare(e.name.size() - 4, 4, ".npy") != 0) {
      fail(where, "not a .npy member (a .npz holds NAME.npy files)");
    }
    if (e.flags & 1) fail(where, "encrypted members are not supported");
    if (bytes.read(e.local_offset, 4) != kLocalHeader) fail(where, "bad local header");
    data_offsets.push_back(e.local_offset + 30 + bytes.read(e.local_offset + 26, 2) +
                           bytes.read(e.local_offset + 28, 2));
    bytes.at(data_offsets.back(), e.compressed);  // the data lies inside the file
  }
  // Members must not share bytes (a zip writer never does that): central
  // entries pointing into one deflated stream would each inflate it to its own
  // buffer, so a small file could claim memory that grows with the square of
  // its size. Disjoint members hold at most 1032 times the file's size.
  std::vector<std::size_t> order(entries.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return entries[x].local_offset < entries[y].local_offset; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t before = order[k - 1], after = order[k];
    if (data_offsets[before] + entries[before].compressed > entries[after].local_offset) {
      fail(path, "not a valid .npz file (members " + entries[before].name + " and " + entries[after].name +
                     " share bytes)");
    }
  }

  std::vector<NpzMember> members;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const std::string where = path + ": member " + e.name;
    const std::byte* data = bytes.at(data_offsets[i], e.compressed);
    std::string name = e.name.substr(0, e.name.size() - 4);
    if (e.method == 0) {
      if (e.compressed != e.uncompressed) fail(where, "not a valid .npz file (a stored member's sizes differ)");
      check_crc(data, e, where);  // reads the member once, at memory speed (crc32.hpp)
      members.push_back({std::move(name), NpyArray::from_bytes(where, data, e.uncompressed, mapping, two_byte_void)});
    } else if (e.method == 8) {
      std::shared_ptr<std::byte[]> inflated = inflate_member(data, e, where);
      const std::byte* start = inflated.get();
      members.push_back(
          {std::move(name), NpyArray::from_bytes(where, start, e.uncompressed, std::move(inflated), two_byte_void)});
    } else {
      fail(where, "compression method " + std::to_string(e.method) +
                      " is not supported (numpy.savez stores members, savez_compressed deflates them)");
    }
  }
  return members;
}

}  // namespace sqdiff::tools
