// Builds ZIP archives, .npy members and scipy.sparse.save_npz-like .npz files in memory, for the
// tests of ZipArchive, NpzFeatures and `strata import --features x.npz`, so that no test needs
// Python. Members are stored or deflated (zlib, raw DEFLATE as ZIP wants it) and can carry what
// real writers emit: zip64 extra fields, a zip64 end record, data descriptors.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::testing {

struct ZipEntry {
  std::string name{};
  std::string data{};
  bool deflate = true;
  bool zip64 = false;       // saturated 32-bit fields, values in zip64 extra fields
  bool descriptor = false;  // flag bit 3: local sizes and CRC zero, a descriptor after the data
  uint16_t flags = 0;       // extra general purpose bits (1: encrypted)
  int method = -1;          // overrides the method field when >= 0
  int32_t crc_delta = 0;    // added to the CRC-32 the directory declares
  std::string body{};       // when not empty, stored as the member's bytes instead of `data`'s
};

inline void PutLe(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

inline std::string RawDeflate(const std::string& data) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The archive's bytes; `zip64_end` adds a zip64 end record and locator and saturates the
// classic end record's fields, as writers do for very large archives.
inline std::string BuildZip(const std::vector<ZipEntry>& entries, bool zip64_end = false) {
  std::string zip, directory;
  for (const ZipEntry& e : entries) {
    const std::string body = !e.body.empty() ? e.body : e.deflate ? RawDeflate(e.data) : e.data;
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())) +
        e.crc_delta);
    const uint16_t method = e.method >= 0 ? e.method : e.deflate ? 8 : 0;
    const uint16_t flags = e.flags | (e.descriptor ? 8 : 0);
    const uint64_t offset = zip.size();
    const uint32_t small = 0xffffffff;
    std::string local_extra;
    if (e.zip64) {
      PutLe(local_extra, 1, 2);
      PutLe(local_extra, 16, 2);
      PutLe(local_extra, e.descriptor ? 0 : e.data.size(), 8);
      PutLe(local_extra, e.descriptor ? 0 : body.size(), 8);
    }
    PutLe(zip, 0x04034b50, 4);
    PutLe(zip, 45, 2);
    PutLe(zip, flags, 2);
    PutLe(zip, method, 2);
    PutLe(zip, 0, 4);  // time, date
    PutLe(zip, e.descriptor ? 0 : crc, 4);
    PutLe(zip, e.descriptor ? 0 : e.zip64 ? small : body.size(), 4);
    PutLe(zip, e.descriptor ? 0 : e.zip64 ? small : e.data.size(), 4);
    PutLe(zip, e.name.size(), 2);
    PutLe(zip, local_extra.size(), 2);
    zip += e.name + local_extra + body;
    if (e.descriptor) {
      PutLe(zip, 0x08074b50, 4);
      PutLe(zip, crc, 4);
      PutLe(zip, body.size(), 4);
      PutLe(zip, e.data.size(), 4);
    }
    std::string extra;
    if (e.zip64) {
      PutLe(extra, 1, 2);
      PutLe(extra, 24, 2);
      PutLe(extra, e.data.size(), 8);
      PutLe(extra, body.size(), 8);
      PutLe(extra, offset, 8);
    }
    PutLe(directory, 0x02014b50, 4);
    PutLe(directory, 45, 2);
    PutLe(directory, 45, 2);
    PutLe(directory, flags, 2);
    PutLe(directory, method, 2);
    PutLe(directory, 0, 4);
    PutLe(directory, crc, 4);
    PutLe(directory, e.zip64 ? small : body.size(), 4);
    PutLe(directory, e.zip64 ? small : e.data.size(), 4);
    PutLe(directory, e.name.size(), 2);
    PutLe(directory, extra.size(), 2);
    PutLe(directory, 0, 2);  // comment
    PutLe(directory, 0, 2);  // disk
    PutLe(directory, 0, 2);  // internal attributes
    PutLe(directory, 0, 4);  // external attributes
    PutLe(directory, e.zip64 ? small : offset, 4);
    directory += e.name + extra;
  }
  const uint64_t directory_offset = zip.size();
  zip += directory;
  if (zip64_end) {
    const uint64_t record_offset = zip.size();
    PutLe(zip, 0x06064b50, 4);
    PutLe(zip, 44, 8);
    PutLe(zip, 45, 2);
    PutLe(zip, 45, 2);
    PutLe(zip, 0, 4);
    PutLe(zip, 0, 4);
    PutLe(zip, entries.size(), 8);
    PutLe(zip, entries.size(), 8);
    PutLe(zip, directory.size(), 8);
    PutLe(zip, directory_offset, 8);
    PutLe(zip, 0x07064b50, 4);
    PutLe(zip, 0, 4);
    PutLe(zip, record_offset, 8);
    PutLe(zip, 1, 4);
  }
  PutLe(zip, 0x06054b50, 4);
  PutLe(zip, 0, 4);  // disks
  PutLe(zip, zip64_end ? 0xffff : entries.size(), 2);
  PutLe(zip, zip64_end ? 0xffff : entries.size(), 2);
  PutLe(zip, zip64_end ? 0xffffffff : directory.size(), 4);
  PutLe(zip, zip64_end ? 0xffffffff : directory_offset, 4);
  PutLe(zip, 0, 2);
  return zip;
}

// A version 1.0 .npy file: `descr` such as "<f4" or "|S3", `shape` as Python writes it.
inline std::string NpyBytes(const std::string& descr, const std::string& shape,
                            const std::string& data) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  PutLe(bytes, header.size(), 2);
  return bytes + header + data;
}

template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::string Npy1d(const std::string& descr, const std::vector<T>& values) {
  return NpyBytes(descr, "(" + std::to_string(values.size()) + ",)", RawBytes(values));
}

// The members scipy.sparse.save_npz writes for a CSR or CSC matrix: int32 indices and indptr,
// float32 data, format as bytes ('|S3'), int64 shape.
struct SparseArrays {
  std::string format = "csr";
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> indptr{}, indices{};
  std::vector<float> data{};
};

inline std::vector<ZipEntry> SparseNpzEntries(const SparseArrays& m) {
  return {
      {.name = "indices.npy", .data = Npy1d("<i4", m.indices)},
      {.name = "indptr.npy", .data = Npy1d("<i4", m.indptr)},
      {.name = "format.npy",
       .data = NpyBytes("|S" + std::to_string(m.format.size()), "()", m.format)},
      {.name = "shape.npy", .data = Npy1d("<i8", std::vector<int64_t>{m.rows, m.cols})},
      {.name = "data.npy", .data = Npy1d("<f4", m.data)},
  };
}

}  // namespace strata::testing
