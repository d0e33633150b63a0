#include "storage/zip_archive.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/file.h"
#include "storage/zip_builder.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::BuildZip;
using testing::ScratchDir;
using testing::WriteTextFile;
using testing::ZipEntry;

// Data that compresses but is not trivial, over more than one extraction chunk.
std::string LongText(size_t bytes) {
  std::string text;
  for (size_t i = 0; text.size() < bytes; ++i) text += std::to_string(i * 7919 % 10007) + ",";
  return text;
}

std::string ExtractToString(const ZipArchive& archive, const std::string& name,
                            const std::string& out) {
  const ZipMember* member = archive.Find(name);
  if (member == nullptr) throw std::runtime_error("no member " + name);
  archive.Extract(*member, out);
  return ReadWholeFile(out);
}

// Writes `zip` and expects opening it, or extracting every member, to fail with an input
// error that names the archive and contains `expected`.
void ExpectArchiveRefused(const std::string& zip, const std::string& expected) {
  ScratchDir dir;
  WriteTextFile(dir / "a.zip", zip);
  try {
    ZipArchive archive(dir / "a.zip");
    for (const ZipMember& member : archive.members()) archive.Extract(member, dir / "out");
    ADD_FAILURE() << "no error; expected " << expected;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find(dir / "a.zip"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ZipArchive, ExtractsStoredAndDeflatedMembers) {
  ScratchDir dir;
  const std::string long_text = LongText(3 << 20);
  WriteTextFile(dir / "a.zip", BuildZip({{.name = "stored.txt", .data = "plain", .deflate = false},
                                         {.name = "long.txt", .data = long_text},
                                         {.name = "empty", .data = "", .deflate = false},
                                         {.name = "empty.z", .data = ""}}));
  ZipArchive archive(dir / "a.zip");
  ASSERT_EQ(archive.members().size(), 4u);
  EXPECT_EQ(archive.members()[1].name, "long.txt");
  EXPECT_EQ(archive.members()[1].method, 8);
  EXPECT_LT(archive.members()[1].compressed_bytes, long_text.size());
  EXPECT_EQ(archive.Find("missing"), nullptr);
  EXPECT_EQ(ExtractToString(archive, "stored.txt", dir / "out"), "plain");
  EXPECT_EQ(ExtractToString(archive, "long.txt", dir / "out"), long_text);
  EXPECT_EQ(ExtractToString(archive, "empty", dir / "out"), "");
  EXPECT_EQ(ExtractToString(archive, "empty.z", dir / "out"), "");
}

TEST(ZipArchive, ReadsZip64ExtraFieldsEndRecordAndDataDescriptors) {
  ScratchDir dir;
  WriteTextFile(dir / "a.zip",
                BuildZip({{.name = "a", .data = "first member", .zip64 = true},
                          {.name = "b", .data = "second", .deflate = false, .zip64 = true},
                          {.name = "c", .data = LongText(5000), .descriptor = true},
                          {.name = "d", .data = "both", .zip64 = true, .descriptor = true}},
                         /*zip64_end=*/true));
  ZipArchive archive(dir / "a.zip");
  ASSERT_EQ(archive.members().size(), 4u);
  EXPECT_EQ(archive.members()[1].uncompressed_bytes, 6u);
  EXPECT_EQ(ExtractToString(archive, "a", dir / "out"), "first member");
  EXPECT_EQ(ExtractToString(archive, "b", dir / "out"), "second");
  EXPECT_EQ(ExtractToString(archive, "c", dir / "out"), LongText(5000));
  EXPECT_EQ(ExtractToString(archive, "d", dir / "out"), "both");
}

TEST(ZipArchive, FindsTheEndRecordBehindAComment) {
  ScratchDir dir;
  std::string zip = BuildZip({{.name = "a", .data = "x"}});
  const std::string comment(1000, 'c');
  zip[zip.size() - 2] = static_cast<char>(comment.size() & 0xff);
  zip[zip.size() - 1] = static_cast<char>(comment.size() >> 8);
  WriteTextFile(dir / "a.zip", zip + comment);
  ZipArchive archive(dir / "a.zip");
  EXPECT_EQ(ExtractToString(archive, "a", dir / "out"), "x");
}

TEST(ZipArchive, RefusesFilesWithoutAnEndRecord) {
  ExpectArchiveRefused("", "not a ZIP archive");
  ExpectArchiveRefused(std::string(5000, 'x'), "no end of central directory record");
  const std::string zip = BuildZip({{.name = "a", .data = LongText(2000)}});
  ExpectArchiveRefused(zip.substr(0, zip.size() - 10), "no end of central directory record");
}

TEST(ZipArchive, RefusesTruncatedMemberData) {
  // The directory survives but says the data reaches past a cut made before it: rebuild the
  // archive with the member's data cut short and the directory kept.
  std::string zip = BuildZip({{.name = "a", .data = std::string(4000, 'z'), .deflate = false}});
  const size_t data_start = 30 + 1;
  std::string cut = zip.substr(0, data_start + 100) + zip.substr(data_start + 4000);
  // The directory's offset now points past its real place; patch it.
  const uint32_t directory_offset = static_cast<uint32_t>(data_start + 100);
  for (int i = 0; i < 4; ++i) {
    cut[cut.size() - 6 + i] = static_cast<char>((directory_offset >> (8 * i)) & 0xff);
  }
  ExpectArchiveRefused(cut, "truncated");
}

TEST(ZipArchive, RefusesBadCrc) {
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = "hello", .crc_delta = 1}}), "bad CRC-32");
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = "hello", .deflate = false, .crc_delta = 1}}),
                       "bad CRC-32");
}

TEST(ZipArchive, RefusesCorruptDeflateData) {
  const std::string text = LongText(4000);
  std::string reserved_block_type = "\xff\xff";
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = text, .body = reserved_block_type}}),
                       "corrupt DEFLATE data");
  const std::string deflated = testing::RawDeflate(text);
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = text, .body = deflated.substr(0, 200)}}),
                       "truncated: the DEFLATE data ends before its final block");
  // More output than the directory declares: stop at once rather than fill the disk.
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = text.substr(0, 100), .body = deflated}}),
                       "holds more than the 100 bytes");
}

TEST(ZipArchive, RefusesEncryptedMembersAndOtherMethods) {
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = "x", .flags = 1}}), "encrypted");
  ExpectArchiveRefused(BuildZip({{.name = "a", .data = "x", .deflate = false, .method = 12}}),
                       "compression method 12 is not supported");
}

TEST(ZipArchive, RefusesMultiDiskArchives) {
  std::string zip = BuildZip({{.name = "a", .data = "x"}});
  zip[zip.size() - 18] = 1;  // number of this disk
  ExpectArchiveRefused(zip, "multi-disk");
}

TEST(ZipArchive, RefusesSaturatedFieldsWithoutZip64Extra) {
  std::string zip = BuildZip({{.name = "a", .data = "x", .deflate = false}});
  // The central entry's uncompressed size (46-byte header at the directory's start + 24).
  const size_t directory = 30 + 1 + 1;
  for (int i = 0; i < 4; ++i) zip[directory + 24 + i] = static_cast<char>(0xff);
  ExpectArchiveRefused(zip, "needs a zip64 extra field");
}

TEST(ZipArchive, HasZipMagic) {
  ScratchDir dir;
  WriteTextFile(dir / "a.zip", BuildZip({{.name = "a", .data = "x"}}));
  WriteTextFile(dir / "b.npy", "\x93NUMPY");
  EXPECT_TRUE(HasZipMagic(dir / "a.zip"));
  EXPECT_FALSE(HasZipMagic(dir / "b.npy"));
  EXPECT_FALSE(HasZipMagic(dir / "missing"));
}

}  // namespace
}  // namespace strata
