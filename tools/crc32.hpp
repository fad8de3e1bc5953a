// CRC-32 as zip and zlib define it (the reflected polynomial 0xEDB88320), at
// memory speed where the CPU has a carry-less multiply: `.npz` members' checks
// read every byte of a member that may be gigabytes (npz_archive.cpp), and
// Debian's zlib 1.2.13 computes about 1 GB/s.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sqdiff::tools {

// zlib's crc32(crc, data, size): `crc` is the CRC of the bytes before these
// (0 for none), and the result continues it.
uint32_t crc32(uint32_t crc, const void* data, std::size_t size);

}  // namespace sqdiff::tools
