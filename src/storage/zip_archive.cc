#include "storage/zip_archive.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "common/interrupt.h"
#include "common/little_endian.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr size_t kLocalBytes = 30;
constexpr size_t kCentralBytes = 46;
constexpr size_t kEndBytes = 22;
constexpr size_t kZip64EndBytes = 56;
constexpr size_t kZip64LocatorBytes = 20;
constexpr uint64_t kMaxCommentBytes = 0xffff;
constexpr uint16_t kSaturated16 = 0xffff;
constexpr uint32_t kSaturated32 = 0xffffffff;
constexpr uint16_t kEncryptedFlag = 1;
// An .npz lists a handful of members; a directory larger than this is a corrupt size field,
// not an archive, and must not become an allocation of that size.
constexpr uint64_t kMaxDirectoryBytes = uint64_t{64} << 20;
// Bytes read and written per step of an extraction.
constexpr size_t kChunkBytes = size_t{1} << 20;

uint16_t Le16(const unsigned char* p) { return static_cast<uint16_t>(LoadLittleEndian(p, 2)); }
uint32_t Le32(const unsigned char* p) { return static_cast<uint32_t>(LoadLittleEndian(p, 4)); }
uint64_t Le64(const unsigned char* p) { return LoadLittleEndian(p, 8); }

const unsigned char* Bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string ReadAt(const FileReader& file, uint64_t offset, uint64_t bytes) {
  std::string data(bytes, '\0');
  file.ReadExact(offset, data.data(), data.size());
  return data;
}

// Where the central directory is, from the end records.
struct DirectoryLocation {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t end = 0;  // offset of the first end record after the directory
};

DirectoryLocation LocateDirectory(const FileReader& file) {
  const std::string& path = file.path();
  const uint64_t size = file.size();
  if (size < kEndBytes) {
    throw Error::Input(
        fmt::format("not a ZIP archive, or truncated: {} bytes is less than an end of central "
                    "directory record",
                    size),
        path);
  }
  // The end record closes the file, after a comment of up to 64 KiB.
  const uint64_t tail_bytes = std::min<uint64_t>(size, kEndBytes + kMaxCommentBytes);
  const uint64_t tail_offset = size - tail_bytes;
  const std::string tail = ReadAt(file, tail_offset, tail_bytes);
  const unsigned char* t = Bytes(tail);
  uint64_t found = tail_bytes;
  for (uint64_t pos = tail_bytes - kEndBytes + 1; pos-- > 0;) {
    if (Le32(t + pos) == kEndSignature && pos + kEndBytes + Le16(t + pos + 20) <= tail_bytes) {
      found = pos;
      break;
    }
  }
  if (found == tail_bytes) {
    throw Error::Input(fmt::format("not a ZIP archive, or truncated: no end of central directory "
                                   "record in its last {} bytes",
                                   tail_bytes),
                       path);
  }
  const unsigned char* e = t + found;
  DirectoryLocation dir;
  dir.end = tail_offset + found;
  uint64_t disk = Le16(e + 4), directory_disk = Le16(e + 6), disk_entries = Le16(e + 8);
  dir.entries = Le16(e + 10);
  dir.bytes = Le32(e + 12);
  dir.offset = Le32(e + 16);

  // Zip64: a locator right before the end record points at a record with 64-bit fields.
  const bool saturated =
      dir.entries == kSaturated16 || dir.bytes == kSaturated32 || dir.offset == kSaturated32;
  std::string locator;
  if (dir.end >= kZip64LocatorBytes) {
    locator = ReadAt(file, dir.end - kZip64LocatorBytes, kZip64LocatorBytes);
  }
  if (!locator.empty() && Le32(Bytes(locator)) == kZip64LocatorSignature) {
    const unsigned char* l = Bytes(locator);
    const uint64_t record_offset = Le64(l + 8);
    if (Le32(l + 16) > 1) throw Error::Input("multi-disk ZIP archives are not supported", path);
    if (record_offset > dir.end - kZip64LocatorBytes ||
        dir.end - kZip64LocatorBytes - record_offset < kZip64EndBytes) {
      throw Error::Input(fmt::format("corrupt ZIP archive: the zip64 end of central directory "
                                     "record at byte {} does not fit before its locator",
                                     record_offset),
                         path);
    }
    const std::string record = ReadAt(file, record_offset, kZip64EndBytes);
    const unsigned char* r = Bytes(record);
    if (Le32(r) != kZip64EndSignature) {
      throw Error::Input(fmt::format("corrupt ZIP archive: no zip64 end of central directory "
                                     "record at byte {}, where its locator points",
                                     record_offset),
                         path);
    }
    disk = Le32(r + 16);
    directory_disk = Le32(r + 20);
    disk_entries = Le64(r + 24);
    dir.entries = Le64(r + 32);
    dir.bytes = Le64(r + 40);
    dir.offset = Le64(r + 48);
    dir.end = record_offset;
  } else if (saturated) {
    throw Error::Input(
        "corrupt ZIP archive: the end of central directory record needs a zip64 record, and "
        "there is none",
        path);
  }
  if (disk != 0 || directory_disk != 0 || disk_entries != dir.entries) {
    throw Error::Input("multi-disk ZIP archives are not supported", path);
  }
  if (dir.offset > dir.end || dir.bytes > dir.end - dir.offset) {
    throw Error::Input(fmt::format("corrupt ZIP archive: the central directory ({} bytes at byte "
                                   "{}) overlaps its end record at byte {}",
                                   dir.bytes, dir.offset, dir.end),
                       path);
  }
  if (dir.bytes > kMaxDirectoryBytes) {
    throw Error::Input(
        fmt::format("the ZIP central directory of {} bytes is implausibly large", dir.bytes), path);
  }
  return dir;
}

// Replaces the saturated 32-bit fields of `member` by the 64-bit values of its zip64 extra
// field, which holds exactly those, in this order.
void ApplyZip64Extra(std::string_view extra, bool disk_saturated, const std::string& path,
                     ZipMember* member) {
  auto corrupt = [&](std::string_view what) {
    return Error::Input(fmt::format("corrupt ZIP central directory: {}", what), path, member->name);
  };
  for (size_t pos = 0; pos + 4 <= extra.size();) {
    const auto* x = reinterpret_cast<const unsigned char*>(extra.data()) + pos;
    const uint16_t id = Le16(x), length = Le16(x + 2);
    if (pos + 4 + length > extra.size()) throw corrupt("an extra field runs past its entry");
    if (id == kZip64ExtraId) {
      size_t field = 4;
      for (uint64_t* value :
           {&member->uncompressed_bytes, &member->compressed_bytes, &member->local_header_offset}) {
        if (*value != kSaturated32) continue;
        if (field + 8 > 4u + length) throw corrupt("the zip64 extra field is too short");
        *value = Le64(x + field);
        field += 8;
      }
      if (disk_saturated && field + 4 > 4u + length) {
        throw corrupt("the zip64 extra field is too short");
      }
      return;
    }
    pos += 4 + length;
  }
  if (member->uncompressed_bytes == kSaturated32 || member->compressed_bytes == kSaturated32 ||
      member->local_header_offset == kSaturated32) {
    throw corrupt("the entry needs a zip64 extra field, and has none");
  }
}

// Checks the CRC-32 and the size of extracted bytes as they are written.
class CheckedOutput {
 public:
  CheckedOutput(const std::string& out_path, const std::string& archive, const ZipMember& member)
      : out_(out_path), archive_(archive), member_(member) {}

  void Append(const unsigned char* data, size_t bytes) {
    written_ += bytes;
    if (written_ > member_.uncompressed_bytes) {
      throw Error::Input(fmt::format("the member holds more than the {} bytes its directory "
                                     "entry declares",
                                     member_.uncompressed_bytes),
                         archive_, member_.name);
    }
    crc_ = crc32(crc_, data, static_cast<uInt>(bytes));
    out_.Append(data, bytes);
  }

  void Finish() {
    if (written_ != member_.uncompressed_bytes) {
      throw Error::Input(fmt::format("the member holds {} bytes, its directory entry declares {}",
                                     written_, member_.uncompressed_bytes),
                         archive_, member_.name);
    }
    if (crc_ != member_.crc32) {
      throw Error::Input(fmt::format("bad CRC-32: the data has {:08x}, the directory entry "
                                     "declares {:08x}",
                                     crc_, member_.crc32),
                         archive_, member_.name);
    }
    out_.Finish(/*scratch=*/true);
  }

 private:
  FileWriter out_;
  const std::string& archive_;
  const ZipMember& member_;
  uint64_t written_ = 0;
  uLong crc_ = crc32(0, nullptr, 0);
};

// Owns a raw-DEFLATE inflate stream (no zlib or gzip wrapper: ZIP stores bare DEFLATE data)
// and its output buffer.
class RawInflater {
 public:
  RawInflater(const std::string& archive, const ZipMember& member)
      : archive_(archive), member_(member), buffer_(kChunkBytes) {
    if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) {
      throw Error::Internal("zlib: inflateInit2 failed");
    }
  }
  ~RawInflater() { inflateEnd(&stream_); }
  RawInflater(const RawInflater&) = delete;
  RawInflater& operator=(const RawInflater&) = delete;

  // Inflates the input given (none: only what zlib holds back), up to one buffer of output,
  // into `out`; returns whether the DEFLATE stream has ended.
  bool Step(unsigned char* in, size_t in_bytes, CheckedOutput& out) {
    stream_.next_in = in;
    stream_.avail_in = static_cast<uInt>(in_bytes);
    stream_.next_out = buffer_.data();
    stream_.avail_out = static_cast<uInt>(buffer_.size());
    const int status = inflate(&stream_, Z_NO_FLUSH);
    // With output room, no progress means the input ran out before the final block.
    if (status == Z_BUF_ERROR) {
      throw Error::Input("truncated: the DEFLATE data ends before its final block", archive_,
                         member_.name);
    }
    if (status != Z_OK && status != Z_STREAM_END) {
      throw Error::Input(fmt::format("corrupt DEFLATE data: {}",
                                     stream_.msg != nullptr ? stream_.msg : zError(status)),
                         archive_, member_.name);
    }
    out.Append(buffer_.data(), buffer_.size() - stream_.avail_out);
    return status == Z_STREAM_END;
  }
  size_t pending_input() const { return stream_.avail_in; }

 private:
  const std::string& archive_;
  const ZipMember& member_;
  std::vector<unsigned char> buffer_;
  z_stream stream_{};
};

}  // namespace

ZipArchive::ZipArchive(const std::string& path) : file_(path) {
  const DirectoryLocation dir = LocateDirectory(file_);
  const std::string directory = ReadAt(file_, dir.offset, dir.bytes);
  const unsigned char* d = Bytes(directory);
  size_t pos = 0;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    if (pos + kCentralBytes > directory.size() || Le32(d + pos) != kCentralSignature) {
      throw Error::Input(fmt::format("corrupt ZIP central directory: entry {} of {} is missing "
                                     "at directory byte {}",
                                     i, dir.entries, pos),
                         path);
    }
    const unsigned char* c = d + pos;
    const size_t name_bytes = Le16(c + 28), extra_bytes = Le16(c + 30),
                 comment_bytes = Le16(c + 32);
    if (pos + kCentralBytes + name_bytes + extra_bytes + comment_bytes > directory.size()) {
      throw Error::Input(
          fmt::format("corrupt ZIP central directory: entry {} runs past its end", i), path);
    }
    ZipMember member;
    member.name = directory.substr(pos + kCentralBytes, name_bytes);
    member.flags = Le16(c + 8);
    member.method = Le16(c + 10);
    member.crc32 = Le32(c + 16);
    member.compressed_bytes = Le32(c + 20);
    member.uncompressed_bytes = Le32(c + 24);
    member.local_header_offset = Le32(c + 42);
    const uint16_t start_disk = Le16(c + 34);
    ApplyZip64Extra(
        std::string_view(directory).substr(pos + kCentralBytes + name_bytes, extra_bytes),
        start_disk == kSaturated16, path, &member);
    if (start_disk != 0 && start_disk != kSaturated16) {
      throw Error::Input("multi-disk ZIP archives are not supported", path, member.name);
    }
    if (member.local_header_offset > dir.offset ||
        dir.offset - member.local_header_offset < kLocalBytes) {
      throw Error::Input(fmt::format("corrupt ZIP central directory: the local header offset {} "
                                     "is not before the central directory at byte {}",
                                     member.local_header_offset, dir.offset),
                         path, member.name);
    }
    members_.push_back(std::move(member));
    pos += kCentralBytes + name_bytes + extra_bytes + comment_bytes;
  }
}

const ZipMember* ZipArchive::Find(std::string_view name) const {
  for (const ZipMember& member : members_) {
    if (member.name == name) return &member;
  }
  return nullptr;
}

void ZipArchive::Extract(const ZipMember& member, const std::string& out_path) const {
  const std::string& archive = path();
  if (member.flags & kEncryptedFlag) {
    throw Error::Input("the member is encrypted, which is not supported", archive, member.name);
  }
  if (member.method != 0 && member.method != Z_DEFLATED) {
    throw Error::Input(fmt::format("compression method {} is not supported (only 0, stored, and "
                                   "8, deflated)",
                                   member.method),
                       archive, member.name);
  }
  const std::string local = ReadAt(file_, member.local_header_offset, kLocalBytes);
  const unsigned char* l = Bytes(local);
  if (Le32(l) != kLocalSignature) {
    throw Error::Input(fmt::format("corrupt ZIP archive: no local file header at byte {}",
                                   member.local_header_offset),
                       archive, member.name);
  }
  const uint64_t data_offset =
      member.local_header_offset + kLocalBytes + Le16(l + 26) + Le16(l + 28);
  if (data_offset > file_.size() || file_.size() - data_offset < member.compressed_bytes) {
    throw Error::Input(fmt::format("truncated: the member's {} bytes at byte {} run past the end "
                                   "of the {}-byte file",
                                   member.compressed_bytes, data_offset, file_.size()),
                       archive, member.name);
  }
  if (member.method == 0 && member.compressed_bytes != member.uncompressed_bytes) {
    throw Error::Input(fmt::format("corrupt ZIP central directory: a stored member of {} bytes "
                                   "declares {} uncompressed",
                                   member.compressed_bytes, member.uncompressed_bytes),
                       archive, member.name);
  }

  CheckedOutput out(out_path, archive, member);
  std::vector<unsigned char> in(std::min<uint64_t>(kChunkBytes, member.compressed_bytes));
  std::optional<RawInflater> inflater;
  if (member.method == Z_DEFLATED) inflater.emplace(archive, member);
  bool stream_ended = member.method == 0;
  for (uint64_t done = 0; done < member.compressed_bytes && !(inflater && stream_ended);) {
    const size_t count =
        static_cast<size_t>(std::min<uint64_t>(in.size(), member.compressed_bytes - done));
    file_.ReadExact(data_offset + done, in.data(), count);
    done += count;
    if (!inflater) {
      out.Append(in.data(), count);
      continue;
    }
    stream_ended = inflater->Step(in.data(), count, out);
    // Data after the end of the DEFLATE stream is ignored.
    while (!stream_ended && inflater->pending_input() > 0) {
      stream_ended = inflater->Step(in.data() + count - inflater->pending_input(),
                                    inflater->pending_input(), out);
    }
    ThrowIfInterrupted();
  }
  // inflate may hold back output until it is called again with no new input.
  while (!stream_ended) stream_ended = inflater->Step(nullptr, 0, out);
  out.Finish();
}

bool HasZipMagic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, sizeof(magic)) && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 &&
         magic[3] == 4;
}

NpyReader ExtractNpyMember(const ZipArchive& archive, const ZipMember& member,
                           const std::string& out_path) {
  archive.Extract(member, out_path);
  return NpyReader(out_path, archive.path() + ":" + member.name);
}

}  // namespace strata
