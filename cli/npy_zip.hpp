#pragma once
// The bytes of the array files `ropesim table rotations` writes: .npy headers (NumPy format
// 1.0), little-endian doubles, UTF-32LE text, and a streamed zip of stored members (.npz).
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"

namespace ropesim::cli {

/// CRC-32 (ISO-HDLC, the zip checksum), updated over `bytes`.
inline std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (unsigned char b : bytes) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

inline void put16(std::string& s, std::uint32_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
inline void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}

/// A .npy header (format version 1.0, numpy.lib.format): magic, header length, the header
/// dict padded with spaces to a multiple of 64 bytes, ending in '\n'.
inline std::string npy_header(const std::string& descr, const std::vector<std::uint64_t>& shape) {
  std::string dims;  // "N, B" as "N,B"; a 1-tuple needs its comma: "N,"
  for (std::size_t k = 0; k < shape.size(); ++k)
    dims += std::to_string(shape[k]) + (shape.size() == 1 || k + 1 < shape.size() ? "," : "");
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  std::string h = std::string("\x93NUMPY\x01\x00", 8);
  const std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  put16(h, static_cast<std::uint32_t>(dict.size()));
  return h + dict;
}

inline std::string little_endian_double(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  std::string s(8, '\0');
  for (int k = 0; k < 8; ++k) s[k] = static_cast<char>((bits >> (8 * k)) & 0xFF);
  return s;
}

/// UTF-32LE code units of UTF-8 `text` (invalid bytes become U+FFFD), for a numpy '<U' array.
inline std::string utf32le(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::uint32_t cp = 0xFFFD;
    std::size_t len = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c >> 5) == 0x6 || (c >> 4) == 0xE || (c >> 3) == 0x1E) {
      len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
      cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
      bool ok = i + len <= text.size();
      for (std::size_t k = 1; ok && k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        ok = (cc >> 6) == 0x2;
        cp = (cp << 6) | (cc & 0x3F);
      }
      if (!ok) {
        cp = 0xFFFD;
        len = 1;
      }
    }
    put32(out, cp);
    i += len;
  }
  return out;
}

/// Number of code points of utf32le(text).
inline std::size_t utf32_length(std::string_view text) { return utf32le(text).size() / 4; }

/// A zip archive of stored (uncompressed) members written as a stream: each member's local
/// header carries general purpose bit 3 and its CRC and sizes follow the data in a data
/// descriptor (APPNOTE 4.3.9), so nothing is seeked back. No zip64: every offset and size
/// must stay below 2^32 (checked by the caller before writing).
class ZipStream {
 public:
  explicit ZipStream(io::OutputStream& out) : out_(out) {}
  void begin(const std::string& name) {
    Entry e{name, static_cast<std::uint32_t>(out_.size()), 0, 0};
    std::string h;
    put32(h, 0x04034b50);
    put16(h, 20);      // version needed: 2.0
    put16(h, 0x0008);  // bit 3: sizes and CRC in the data descriptor
    put16(h, 0);       // stored
    put16(h, 0);       // time 00:00
    put16(h, 0x21);    // date 1980-01-01
    put32(h, 0);
    put32(h, 0);
    put32(h, 0);
    put16(h, static_cast<std::uint32_t>(name.size()));
    put16(h, 0);
    h += name;
    out_.write(h);
    entries_.push_back(e);
  }
  void write(std::string_view bytes) {
    Entry& e = entries_.back();
    e.crc = crc32_update(e.crc, bytes);
    e.size += static_cast<std::uint32_t>(bytes.size());
    out_.write(bytes);
  }
  void end() {
    const Entry& e = entries_.back();
    std::string d;
    put32(d, 0x08074b50);
    put32(d, e.crc);
    put32(d, e.size);
    put32(d, e.size);
    out_.write(d);
  }
  void finish() {
    const auto cd_offset = static_cast<std::uint32_t>(out_.size());
    std::string cd;
    for (const Entry& e : entries_) {
      put32(cd, 0x02014b50);
      put16(cd, 20);
      put16(cd, 20);
      put16(cd, 0x0008);
      put16(cd, 0);
      put16(cd, 0);
      put16(cd, 0x21);
      put32(cd, e.crc);
      put32(cd, e.size);
      put32(cd, e.size);
      put16(cd, static_cast<std::uint32_t>(e.name.size()));
      put16(cd, 0);
      put16(cd, 0);
      put16(cd, 0);
      put16(cd, 0);
      put32(cd, 0);
      put32(cd, e.offset);
      cd += e.name;
    }
    std::string eocd;
    put32(eocd, 0x06054b50);
    put16(eocd, 0);
    put16(eocd, 0);
    put16(eocd, static_cast<std::uint32_t>(entries_.size()));
    put16(eocd, static_cast<std::uint32_t>(entries_.size()));
    put32(eocd, static_cast<std::uint32_t>(cd.size()));
    put32(eocd, cd_offset);
    put16(eocd, 0);
    out_.write(cd + eocd);
  }

 private:
  struct Entry {
    std::string name;
    std::uint32_t offset, crc, size;
  };
  io::OutputStream& out_;
  std::vector<Entry> entries_;
};

}  // namespace ropesim::cli
