// ZipArchive reads the members of a ZIP file (PKWARE APPNOTE 6.3), the container of NumPy's
// .npz: it lists the members from the central directory and extracts one at a time to a file,
// inflating DEFLATE members with zlib, in fixed-size buffers whatever the member's size.
//
// Sizes, CRC-32 and offsets come from the central directory only, following the zip64
// end-of-central-directory record and extra fields where the 32-bit fields are saturated:
// writers that stream (Python's zipfile among them) leave the local headers' sizes zero and
// put them in a data descriptor after the data. The local header is read only to find where
// the member's data starts.
//
// Accepted: stored (method 0) and deflated (method 8) members of a single-disk archive.
// Encrypted members, other methods and split archives are refused with an input error naming
// the archive (and the member).
//
// Invariant: after construction, members() holds every entry of the central directory, each
// with a local header offset inside the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/file.h"
#include "strata/npy.h"

namespace strata {

struct ZipMember {
  std::string name;
  uint16_t flags = 0;   // general purpose bits; bit 0: encrypted
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressed_bytes = 0;
  uint64_t uncompressed_bytes = 0;
  uint64_t local_header_offset = 0;
};

class ZipArchive {
 public:
  // Reads the central directory of `path`; throws Error::Input naming the file if it is not a
  // ZIP archive this class can read.
  explicit ZipArchive(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const std::vector<ZipMember>& members() const { return members_; }
  // The member called `name`, or null.
  const ZipMember* Find(std::string_view name) const;

  // Writes the member's uncompressed bytes to `out_path` (created or truncated), checking its
  // size and CRC-32 against the central directory.
  void Extract(const ZipMember& member, const std::string& out_path) const;

 private:
  FileReader file_;
  std::vector<ZipMember> members_;
};

// Extracts `member`, an .npy file (as in NumPy's .npz), to `out_path` and opens it, named
// "ARCHIVE:member" in errors rather than after the scratch file.
NpyReader ExtractNpyMember(const ZipArchive& archive, const ZipMember& member,
                           const std::string& out_path);

// Whether `path` starts with a ZIP local file header ("PK\3\4"); false for a file that is
// shorter or cannot be read, whose readers will say why.
bool HasZipMagic(const std::string& path);

}  // namespace strata
