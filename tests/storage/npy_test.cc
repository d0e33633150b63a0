#include "strata/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/float16.h"
#include "storage/file.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;
using testing::WriteTextFile;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename T>
std::string Raw(std::initializer_list<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

// A hand-made .npy file: magic, version, length, `dict` + '\n' unpadded (unless the caller
// pads it), then `data`.
std::string NpyBytes(const std::string& dict, const std::string& data, int major = 1,
                     int minor = 0) {
  std::string header = dict + "\n";
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += static_cast<char>(minor);
  size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) {
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return bytes + header + data;
}

std::vector<int64_t> ReadAllInt64(const NpyReader& reader) {
  std::vector<int64_t> values(reader.num_elements());
  reader.ReadInt64(0, values);
  return values;
}

std::vector<float> ReadAllFloat32(const NpyReader& reader) {
  std::vector<float> values(reader.num_elements());
  reader.ReadFloat32(0, values);
  return values;
}

// Runs `action`, which must throw an Error of `kind`; returns its message.
template <typename Action>
std::string ErrorOf(Action action, Error::Kind kind = Error::Kind::kInput) {
  try {
    action();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Writes `bytes` as a file and expects NpyReader to refuse it with a message that contains
// `expected` and names the file.
void ExpectRefused(const std::string& bytes, const std::string& expected) {
  ScratchDir dir;
  std::string path = dir / "bad.npy";
  WriteTextFile(path, bytes);
  std::string message = ErrorOf([&] { NpyReader reader(path); });
  EXPECT_TRUE(Contains(message, expected)) << "message: " << message << "\nexpected: " << expected;
  EXPECT_TRUE(Contains(message, "(" + path + ")")) << message;
}

TEST(NpyDtype, SizesNamesAndKinds) {
  EXPECT_EQ(NpyItemBytes(NpyDtype::kBool), 1u);
  EXPECT_EQ(NpyItemBytes(NpyDtype::kInt16), 2u);
  EXPECT_EQ(NpyItemBytes(NpyDtype::kUInt32), 4u);
  EXPECT_EQ(NpyItemBytes(NpyDtype::kInt64), 8u);
  EXPECT_EQ(NpyItemBytes(NpyDtype::kFloat16), 2u);
  EXPECT_EQ(NpyItemBytes(NpyDtype::kFloat64), 8u);
  EXPECT_EQ(NpyDtypeName(NpyDtype::kBool), "bool");
  EXPECT_EQ(NpyDtypeName(NpyDtype::kInt64), "int64");
  EXPECT_EQ(NpyDtypeName(NpyDtype::kUInt8), "uint8");
  EXPECT_EQ(NpyDtypeName(NpyDtype::kFloat16), "float16");
  EXPECT_EQ(NpyDtypeName(NpyDtype::kFloat32), "float32");
  EXPECT_TRUE(NpyIsInteger(NpyDtype::kBool));
  EXPECT_TRUE(NpyIsInteger(NpyDtype::kUInt64));
  EXPECT_FALSE(NpyIsInteger(NpyDtype::kFloat16));
  EXPECT_TRUE(NpyIsFloat(NpyDtype::kFloat64));
  EXPECT_FALSE(NpyIsFloat(NpyDtype::kInt8));
  EXPECT_EQ(NpyShapeString(std::vector<uint64_t>{}), "()");
  EXPECT_EQ(NpyShapeString(std::vector<uint64_t>{5}), "(5,)");
  EXPECT_EQ(NpyShapeString(std::vector<uint64_t>{2, 10858}), "(2, 10858)");
}

struct RoundTripCase {
  NpyDtype dtype;
  std::string raw;  // six elements, as stored
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

std::vector<RoundTripCase> RoundTripCases() {
  constexpr auto kU64Max = std::numeric_limits<uint64_t>::max();
  constexpr auto kI64MaxU = static_cast<uint64_t>(kInt64Max);
  const float kTiniestHalf = std::ldexp(1.0f, -24);
  return {
      {NpyDtype::kBool, Raw<uint8_t>({0, 1, 1, 0, 0, 1}), {0, 1, 1, 0, 0, 1}, {}},
      {NpyDtype::kInt8, Raw<int8_t>({-128, -1, 0, 1, 100, 127}), {-128, -1, 0, 1, 100, 127}, {}},
      {NpyDtype::kInt16,
       Raw<int16_t>({-32768, -1, 0, 1, 300, 32767}),
       {-32768, -1, 0, 1, 300, 32767},
       {}},
      {NpyDtype::kInt32,
       Raw<int32_t>({INT32_MIN, -1, 0, 1, 70000, INT32_MAX}),
       {INT32_MIN, -1, 0, 1, 70000, INT32_MAX},
       {}},
      {NpyDtype::kInt64,
       Raw<int64_t>({kInt64Min, -1, 0, 1, int64_t{1} << 40, kInt64Max}),
       {kInt64Min, -1, 0, 1, int64_t{1} << 40, kInt64Max},
       {}},
      {NpyDtype::kUInt8, Raw<uint8_t>({0, 1, 2, 128, 200, 255}), {0, 1, 2, 128, 200, 255}, {}},
      {NpyDtype::kUInt16,
       Raw<uint16_t>({0, 1, 2, 32768, 40000, 65535}),
       {0, 1, 2, 32768, 40000, 65535},
       {}},
      {NpyDtype::kUInt32,
       Raw<uint32_t>({0, 1, 2, 1u << 31, 3000000000u, UINT32_MAX}),
       {0, 1, 2, int64_t{1} << 31, 3000000000, UINT32_MAX},
       {}},
      {NpyDtype::kUInt64,
       Raw<uint64_t>({0, 1, 2, kI64MaxU, kI64MaxU + 1, kU64Max}),
       {0, 1, 2, kInt64Max, kInt64Max, kInt64Max},
       {}},
      {NpyDtype::kFloat16,
       Raw<uint16_t>({0x0000, 0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00}),
       {},
       {0.0f, 1.0f, -2.0f, 65504.0f, kTiniestHalf, kInf}},
      {NpyDtype::kFloat32,
       Raw<float>({0.0f, 1.5f, -2.25f, std::numeric_limits<float>::max(),
                   std::numeric_limits<float>::denorm_min(), -kInf}),
       {},
       {0.0f, 1.5f, -2.25f, std::numeric_limits<float>::max(),
        std::numeric_limits<float>::denorm_min(), -kInf}},
      {NpyDtype::kFloat64,
       Raw<double>({0.0, 0.1, -1e300, 1e-50, 3.5, 1e300}),
       {},
       {0.0f, 0.1f, -kInf, 0.0f, 3.5f, kInf}},
  };
}

TEST(NpyWriter, EveryDtypeRoundTripsInEveryVersion) {
  ScratchDir dir;
  const std::vector<uint64_t> shape = {2, 3};
  for (const RoundTripCase& c : RoundTripCases()) {
    for (int version = 1; version <= 3; ++version) {
      SCOPED_TRACE(std::string(NpyDtypeName(c.dtype)) + " version " + std::to_string(version));
      std::string path = dir / (std::string(NpyDtypeName(c.dtype)) + std::to_string(version));
      WriteNpy(path, c.dtype, shape, c.raw.data(), version);

      std::string bytes = ReadWholeFile(path);
      ASSERT_GE(bytes.size(), 12u);
      EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
      EXPECT_EQ(bytes[6], static_cast<char>(version));
      EXPECT_EQ(bytes[7], '\0');

      NpyReader reader(path);
      EXPECT_EQ(reader.path(), path);
      EXPECT_EQ(reader.dtype(), c.dtype);
      EXPECT_EQ(reader.shape(), shape);
      EXPECT_EQ(reader.header().major_version, version);
      EXPECT_EQ(reader.header().data_offset % 64, 0u);
      EXPECT_EQ(bytes[reader.header().data_offset - 1], '\n');
      EXPECT_EQ(bytes.size(), reader.header().data_offset + c.raw.size());
      EXPECT_EQ(reader.num_elements(), 6u);
      EXPECT_EQ(reader.rows(), 2u);
      EXPECT_EQ(reader.row_elements(), 3u);

      std::string raw(c.raw.size(), '\0');
      reader.ReadRaw(0, 6, raw.data());
      EXPECT_EQ(raw, c.raw);
      if (NpyIsInteger(c.dtype)) {
        EXPECT_EQ(ReadAllInt64(reader), c.ints);
        std::string message = ErrorOf([&] { ReadAllFloat32(reader); });
        EXPECT_TRUE(Contains(message, "expected a floating-point array, found " +
                                          std::string(NpyDtypeName(c.dtype))))
            << message;
      } else {
        EXPECT_EQ(ReadAllFloat32(reader), c.floats);
        std::string message = ErrorOf([&] { ReadAllInt64(reader); });
        EXPECT_TRUE(Contains(
            message, "expected an integer array, found " + std::string(NpyDtypeName(c.dtype))))
            << message;
      }
    }
  }
}

TEST(NpyWriter, WritesTheSameBytesAsNumpy) {
  // np.save(f, np.arange(3)) with NumPy 1.x and 2.x.
  const std::string expected = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                               "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }" +
                               std::string(60, ' ') + "\n" + Raw<int64_t>({0, 1, 2});
  ScratchDir dir;
  std::vector<int64_t> values = {0, 1, 2};
  std::vector<uint64_t> shape = {3};
  WriteNpy(dir / "a.npy", NpyDtype::kInt64, shape, values.data());
  EXPECT_EQ(ReadWholeFile(dir / "a.npy"), expected);
}

TEST(NpyWriter, ScalarAndEmptyArrays) {
  ScratchDir dir;
  float scalar = 2.5f;
  WriteNpy(dir / "scalar.npy", NpyDtype::kFloat32, {}, &scalar);
  NpyReader scalar_reader(dir / "scalar.npy");
  EXPECT_TRUE(scalar_reader.shape().empty());
  EXPECT_EQ(scalar_reader.num_elements(), 1u);
  EXPECT_EQ(scalar_reader.rows(), 1u);
  EXPECT_EQ(ReadAllFloat32(scalar_reader), std::vector<float>{2.5f});

  std::vector<uint64_t> shape = {0, 5};
  WriteNpy(dir / "empty.npy", NpyDtype::kInt32, shape, nullptr, 2);
  NpyReader empty_reader(dir / "empty.npy");
  EXPECT_EQ(empty_reader.shape(), shape);
  EXPECT_EQ(empty_reader.num_elements(), 0u);
  EXPECT_EQ(empty_reader.rows(), 0u);
  EXPECT_EQ(empty_reader.row_elements(), 5u);
  EXPECT_TRUE(ReadAllInt64(empty_reader).empty());
}

TEST(NpyWriter, LongHeaderNeedsVersion2) {
  // 25000 dimensions make a header longer than version 1.0's uint16 length can say.
  ScratchDir dir;
  std::vector<uint64_t> shape(25000, 1);
  uint8_t value = 7;
  std::string message =
      ErrorOf([&] { WriteNpy(dir / "v1.npy", NpyDtype::kUInt8, shape, &value, 1); },
              Error::Kind::kInternal);
  EXPECT_TRUE(Contains(message, "does not fit format version 1.0")) << message;
  WriteNpy(dir / "v2.npy", NpyDtype::kUInt8, shape, &value, 2);
  NpyReader reader(dir / "v2.npy");
  EXPECT_EQ(reader.ndim(), 25000u);
  EXPECT_EQ(ReadAllInt64(reader), std::vector<int64_t>{7});
}

TEST(NpyReader, ReadsInChunksAtAnyOffset) {
  // Larger than the 1 MiB scratch so that conversion takes several steps.
  ScratchDir dir;
  const uint64_t kCount = 700001;
  std::vector<int32_t> ints(kCount);
  std::vector<int64_t> wide(kCount);
  std::vector<uint16_t> halves(kCount);
  for (uint64_t i = 0; i < kCount; ++i) {
    ints[i] = static_cast<int32_t>(i * 7) - 1000;
    wide[i] = static_cast<int64_t>(i) * -3;
    halves[i] = static_cast<uint16_t>(i % 0x7c00);
  }
  std::vector<uint64_t> shape = {kCount};
  WriteNpy(dir / "i4.npy", NpyDtype::kInt32, shape, ints.data());
  WriteNpy(dir / "i8.npy", NpyDtype::kInt64, shape, wide.data(), 2);
  WriteNpy(dir / "f2.npy", NpyDtype::kFloat16, shape, halves.data(), 3);
  NpyReader i4(dir / "i4.npy");
  NpyReader i8(dir / "i8.npy");
  NpyReader f2(dir / "f2.npy");

  std::vector<int64_t> all = ReadAllInt64(i4);
  for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(all[i], ints[i]) << i;
  std::vector<float> all_floats = ReadAllFloat32(f2);
  for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(all_floats[i], HalfToFloat(halves[i])) << i;

  for (uint64_t chunk : {uint64_t{1}, uint64_t{999}, uint64_t{262145}}) {
    for (uint64_t first : {uint64_t{0}, uint64_t{7}, uint64_t{262143}, kCount - chunk}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " at " + std::to_string(first));
      std::vector<int64_t> out(chunk);
      i4.ReadInt64(first, out);
      for (uint64_t i = 0; i < chunk; ++i) ASSERT_EQ(out[i], ints[first + i]) << i;
      i8.ReadInt64(first, out);
      for (uint64_t i = 0; i < chunk; ++i) ASSERT_EQ(out[i], wide[first + i]) << i;
      std::vector<float> floats(chunk);
      f2.ReadFloat32(first, floats);
      for (uint64_t i = 0; i < chunk; ++i) {
        ASSERT_EQ(floats[i], HalfToFloat(halves[first + i])) << i;
      }
    }
  }
  std::vector<int64_t> none;
  i4.ReadInt64(kCount, none);  // an empty read at the very end is fine
}

TEST(NpyReader, ReadsRowsOfA2DArray) {
  ScratchDir dir;
  std::vector<uint16_t> values(1000 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i);
  std::vector<uint64_t> shape = {1000, 3};
  WriteNpy(dir / "edges.npy", NpyDtype::kUInt16, shape, values.data());
  NpyReader reader(dir / "edges.npy");
  std::vector<int64_t> row(3);
  reader.ReadInt64(417 * reader.row_elements(), row);
  EXPECT_EQ(row, (std::vector<int64_t>{1251, 1252, 1253}));
}

TEST(NpyReader, ReadPastTheEndIsAnInternalError) {
  ScratchDir dir;
  std::vector<int64_t> values = {1, 2, 3};
  std::vector<uint64_t> shape = {3};
  WriteNpy(dir / "a.npy", NpyDtype::kInt64, shape, values.data());
  NpyReader reader(dir / "a.npy");
  std::vector<int64_t> out(2);
  ErrorOf([&] { reader.ReadInt64(2, out); }, Error::Kind::kInternal);
  ErrorOf([&] { reader.ReadInt64(4, std::span<int64_t>()); }, Error::Kind::kInternal);
  ErrorOf([&] { reader.ReadInt64(std::numeric_limits<uint64_t>::max(), out); },
          Error::Kind::kInternal);
}

TEST(NpyReader, WidensEveryIntegerTypeToInt64) {
  ScratchDir dir;
  struct Case {
    std::string descr;
    std::string raw;
    std::vector<int64_t> expected;
  };
  const std::vector<Case> cases = {
      {"|i1", Raw<int8_t>({-128, -5, 0, 127}), {-128, -5, 0, 127}},
      {"<i2", Raw<int16_t>({-32768, -300, 7, 32767}), {-32768, -300, 7, 32767}},
      {"<i4", Raw<int32_t>({INT32_MIN, -70000, 0, INT32_MAX}), {INT32_MIN, -70000, 0, INT32_MAX}},
      {"|u1", Raw<uint8_t>({0, 1, 128, 255}), {0, 1, 128, 255}},
      {"<u2", Raw<uint16_t>({0, 1, 40000, 65535}), {0, 1, 40000, 65535}},
      {"<u4", Raw<uint32_t>({0, 5, 2147483648u, 4294967295u}), {0, 5, 2147483648, 4294967295}},
      {"<u8",
       Raw<uint64_t>({9, uint64_t{1} << 63, (uint64_t{1} << 63) - 1, ~uint64_t{0}}),
       {9, kInt64Max, kInt64Max, kInt64Max}},
      // NumPy bools are 0 or 1; any other byte still reads as true.
      {"|b1", Raw<uint8_t>({0, 1, 2, 255}), {0, 1, 1, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.descr);
    std::string path = dir / "a.npy";
    WriteTextFile(
        path,
        NpyBytes("{'descr': '" + c.descr + "', 'fortran_order': False, 'shape': (4,), }", c.raw));
    NpyReader reader(path);
    EXPECT_EQ(ReadAllInt64(reader), c.expected);
  }
}

TEST(NpyReader, ConvertsFloat16AndFloat64ToFloat32) {
  ScratchDir dir;
  WriteTextFile(dir / "f2.npy",
                NpyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (6,), }",
                         Raw<uint16_t>({0x3c00, 0xc000, 0x3555, 0x8001, 0xfc00, 0x7e00})));
  std::vector<float> halves = ReadAllFloat32(NpyReader(dir / "f2.npy"));
  EXPECT_EQ(halves[0], 1.0f);
  EXPECT_EQ(halves[1], -2.0f);
  EXPECT_EQ(halves[2], 0.333251953125f);
  EXPECT_EQ(halves[3], -std::ldexp(1.0f, -24));
  EXPECT_EQ(halves[4], -kInf);
  EXPECT_TRUE(std::isnan(halves[5]));

  WriteTextFile(dir / "f8.npy",
                NpyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }",
                         Raw<double>({1.0 / 3, -0.1, 1e40, -1e-50, 16777217.0,
                                      std::numeric_limits<double>::quiet_NaN()})));
  std::vector<float> doubles = ReadAllFloat32(NpyReader(dir / "f8.npy"));
  EXPECT_EQ(doubles[0], 1.0f / 3);
  EXPECT_EQ(doubles[1], -0.1f);
  EXPECT_EQ(doubles[2], kInf);
  EXPECT_EQ(doubles[3], 0.0f);
  EXPECT_TRUE(std::signbit(doubles[3]));
  EXPECT_EQ(doubles[4], 16777216.0f);  // the tie rounds to even
  EXPECT_TRUE(std::isnan(doubles[5]));
}

TEST(NpyReader, AcceptsHandWrittenHeaders) {
  ScratchDir dir;
  std::string path = dir / "a.npy";
  const std::string six_ints = Raw<int32_t>({1, -2, 3, -4, 5, -6});
  struct Case {
    std::string dict;
    std::vector<uint64_t> shape;
  };
  const std::vector<Case> cases = {
      {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}", {2, 3}},
      {"{ 'fortran_order' : False , 'descr' : '<i4' , 'shape' : ( 2 , 3 , ) , }", {2, 3}},
      {"{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (6,)}", {6}},
      {"{'descr':'<i4','fortran_order':False,'shape':(6 ,)}", {6}},
      {"{'descr': '<i4',\n 'fortran_order': False,\n 'shape': (3, 2)}   \t ", {3, 2}},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), }", {2, 3}},  // Python 2
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (1, 6, 1), }", {1, 6, 1}},
      // Fortran and C order are the same bytes with at most one dimension.
      {"{'descr': '<i4', 'fortran_order': True, 'shape': (6,), }", {6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    WriteTextFile(path, NpyBytes(c.dict, six_ints));
    NpyReader reader(path);
    EXPECT_EQ(reader.dtype(), NpyDtype::kInt32);
    EXPECT_EQ(reader.shape(), c.shape);
    EXPECT_EQ(ReadAllInt64(reader), (std::vector<int64_t>{1, -2, 3, -4, 5, -6}));
  }
}

TEST(NpyReader, AcceptsZeroDimensionalArray) {
  ScratchDir dir;
  WriteTextFile(dir / "a.npy", NpyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': ()}",
                                        Raw<int64_t>({-42})));
  NpyReader reader(dir / "a.npy");
  EXPECT_EQ(reader.ndim(), 0u);
  EXPECT_EQ(reader.num_elements(), 1u);
  EXPECT_EQ(reader.rows(), 1u);
  EXPECT_EQ(reader.row_elements(), 1u);
  EXPECT_EQ(ReadAllInt64(reader), std::vector<int64_t>{-42});
}

TEST(NpyReader, AcceptsAnyByteOrderCharacterForOneByteTypes) {
  ScratchDir dir;
  for (std::string descr : {"|i1", "=i1", "<i1", ">i1", "|u1", "=u1", "|b1", "=b1"}) {
    SCOPED_TRACE(descr);
    WriteTextFile(dir / "a.npy",
                  NpyBytes("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,)}",
                           std::string("\x01\x00", 2)));
    EXPECT_EQ(ReadAllInt64(NpyReader(dir / "a.npy")), (std::vector<int64_t>{1, 0}));
  }
}

TEST(NpyReader, AcceptsDataAfterTheArray) {
  ScratchDir dir;
  WriteTextFile(dir / "a.npy", NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (2,)}",
                                        Raw<uint16_t>({7, 8, 9, 10})));
  EXPECT_EQ(ReadAllInt64(NpyReader(dir / "a.npy")), (std::vector<int64_t>{7, 8}));
}

TEST(NpyReader, AcceptsVersion2And3HandWritten) {
  ScratchDir dir;
  for (int version : {2, 3}) {
    WriteTextFile(dir / "a.npy", NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                                          Raw<float>({0.5f, -1.0f}), version));
    NpyReader reader(dir / "a.npy");
    EXPECT_EQ(reader.header().major_version, version);
    EXPECT_EQ(ReadAllFloat32(reader), (std::vector<float>{0.5f, -1.0f}));
  }
}

std::string Dict(const std::string& descr, const std::string& shape = "(2,)",
                 const std::string& fortran_order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran_order + ", 'shape': " + shape +
         ", }";
}

TEST(NpyReader, RefusesBigEndian) {
  ExpectRefused(NpyBytes(Dict(">f4"), std::string(8, '\0')),
                "big-endian dtype '>f4' is not supported, save it little-endian");
  ExpectRefused(NpyBytes(Dict(">i8"), std::string(16, '\0')),
                "big-endian dtype '>i8' is not supported, save it little-endian");
  ExpectRefused(NpyBytes(Dict(">u2"), std::string(4, '\0')), "big-endian dtype '>u2'");
}

TEST(NpyReader, RefusesMultiByteTypesWithoutByteOrder) {
  ExpectRefused(NpyBytes(Dict("=i4"), std::string(8, '\0')),
                "dtype '=i4' does not say its byte order, save it as '<i4'");
  ExpectRefused(NpyBytes(Dict("|f8"), std::string(16, '\0')), "dtype '|f8' does not say");
  ExpectRefused(NpyBytes(Dict("f4"), std::string(8, '\0')), "dtype 'f4' does not say");
}

TEST(NpyReader, RefusesUnsupportedDtypes) {
  for (std::string descr : {"|O", "<U5", "|S3", "<c8", "<c16", "<M8[ns]", "<m8[s]", "|V16", "<f16",
                            "<i16", "float32", "", "<"}) {
    SCOPED_TRACE(descr);
    ExpectRefused(NpyBytes(Dict(descr), std::string(64, '\0')),
                  "dtype '" + descr + "' is not supported");
  }
}

TEST(NpyReader, RefusesStructuredDtype) {
  ExpectRefused(NpyBytes("{'descr': [('src', '<i8'), ('dst', '<i8')], 'fortran_order': False, "
                         "'shape': (2,), }",
                         std::string(32, '\0')),
                "structured dtype [('src', '<i8'), ('dst', '<i8')] is not supported");
}

TEST(NpyReader, RefusesFortranOrder) {
  ExpectRefused(NpyBytes(Dict("<f4", "(2, 3)", "True"), std::string(24, '\0')),
                "Fortran-order array is not supported, save it with order='C'");
}

TEST(NpyReader, RefusesBadMagic) {
  ExpectRefused("hello, this is a text file\n", "not a .npy file: bad magic");
  ExpectRefused(std::string("\x93NUMPZ\x01\x00", 8) + std::string(100, ' '),
                "not a .npy file: bad magic");
  ExpectRefused(std::string("PK\x03\x04", 4) + std::string(100, '\0'), ".npz archive");
  ExpectRefused("", "not a .npy file: the file is empty");
}

TEST(NpyReader, RefusesUnsupportedVersion) {
  ExpectRefused(NpyBytes(Dict("<f4"), std::string(8, '\0'), 4),
                "unsupported .npy format version 4.0, expected 1.0, 2.0 or 3.0");
  ExpectRefused(NpyBytes(Dict("<f4"), std::string(8, '\0'), 1, 1),
                "unsupported .npy format version 1.1");
  ExpectRefused(NpyBytes(Dict("<f4"), std::string(8, '\0'), 0),
                "unsupported .npy format version 0.0");
}

TEST(NpyReader, RefusesTruncatedHeader) {
  std::string whole = NpyBytes(Dict("<f4"), std::string(8, '\0'));
  ExpectRefused(whole.substr(0, 4), "truncated .npy header: it needs 8 bytes, the file has 4");
  ExpectRefused(whole.substr(0, 9), "truncated .npy header: it needs 10 bytes, the file has 9");
  ExpectRefused(whole.substr(0, 30), "truncated .npy header");
  std::string v2 = NpyBytes(Dict("<f4"), std::string(8, '\0'), 2);
  ExpectRefused(v2.substr(0, 11), "truncated .npy header: it needs 12 bytes, the file has 11");
  ExpectRefused(v2.substr(0, 40), "truncated .npy header");
  // A corrupt length field must not turn into a huge allocation.
  ExpectRefused(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + std::string(100, ' '),
                "malformed .npy header: its length 4294967295 is implausibly large");
}

TEST(NpyReader, RefusesTruncatedData) {
  ExpectRefused(NpyBytes(Dict("<i8", "(2, 10858)"), std::string(1000, '\0')),
                "truncated: header declares shape (2, 10858) of int64 = 173728 bytes of data, "
                "file has 1000");
  ExpectRefused(NpyBytes(Dict("<f2", "(3,)"), std::string(5, '\0')),
                "truncated: header declares shape (3,) of float16 = 6 bytes of data, file has 5");
  ExpectRefused(NpyBytes(Dict("<f4", "()"), ""),
                "truncated: header declares shape () of float32 = 4 bytes of data, file has 0");
}

TEST(NpyReader, RefusesShapeTooLarge) {
  ExpectRefused(NpyBytes(Dict("<i8", "(4294967296, 4294967296)"), ""),
                "shape (4294967296, 4294967296) of int64 is too large");
  ExpectRefused(NpyBytes(Dict("<i8", "(18446744073709551615,)"), ""), "is too large");
  ExpectRefused(NpyBytes(Dict("<i8", "(18446744073709551616,)"), ""), "integer too large");
}

TEST(NpyReader, RefusesMalformedHeaders) {
  struct Case {
    std::string dict;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<i4', 'fortran_order': False}", "no 'shape' key"},
      {"{'fortran_order': False, 'shape': (2,)}", "no 'descr' key"},
      {"{'descr': '<i4', 'shape': (2,)}", "no 'fortran_order' key"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
       "unexpected key 'extra'"},
      {"{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}",
       "key 'descr' appears twice"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}'"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,)} junk",
       "unexpected text after the dict"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (-2,)}",
       "has a dimension that is not a non-negative integer"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': ('2',)}",
       "has a dimension that is not a non-negative integer"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2)}",
       "'shape' is (2), expected a tuple"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': [2]}",
       "'shape' is [2], expected a tuple"},
      {"{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}",
       "'fortran_order' is 0, expected True or False"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (2,)}", "'descr' is 4, expected a string"},
      {"{'descr': '<i4, 'fortran_order': False, 'shape': (2,)}", "malformed .npy header"},
      {"{'descr': '<i4', 'fortran_order': false, 'shape': (2,)}", "unexpected name 'false'"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,,)}", "unexpected character ','"},
      {"{descr: '<i4', 'fortran_order': False, 'shape': (2,)}", "unexpected name 'descr'"},
      {"{1: '<i4', 'fortran_order': False, 'shape': (2,)}", "dict key 1 is not a string"},
      {"['descr', '<i4']", "expected a dict, found ['descr', '<i4']"},
      {"", "unexpected end"},
      {std::string(100, '(') + std::string(100, ')'), "nesting too deep"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    ExpectRefused(NpyBytes(c.dict, std::string(8, '\0')), c.expected);
  }
}

TEST(NpyString, ReadsBytesAndUnicodeScalars) {
  ScratchDir dir;
  auto read = [&](const std::string& bytes) {
    WriteTextFile(dir / "s.npy", bytes);
    return ReadNpyString(dir / "s.npy", "named.npy");
  };
  EXPECT_EQ(read(NpyBytes(Dict("|S3", "()"), "csr")), "csr");
  EXPECT_EQ(read(NpyBytes(Dict("|S5", "(1,)"), std::string("csc\0\0", 5))), "csc");
  EXPECT_EQ(read(NpyBytes(Dict("<U3", "()"), std::string("c\0\0\0o\0\0\0o\0\0\0", 12))), "coo");
  EXPECT_EQ(read(NpyBytes(Dict("<U1", "()"), std::string("\xe9\0\0\0", 4))), "?");
}

TEST(NpyString, RefusesOtherArraysNamingTheGivenName) {
  ScratchDir dir;
  auto error = [&](const std::string& bytes) {
    WriteTextFile(dir / "s.npy", bytes);
    return ErrorOf([&] { ReadNpyString(dir / "s.npy", "x.npz:format.npy"); });
  };
  for (const std::string& message :
       {error(NpyBytes(Dict("<i8", "()"), std::string(8, '\0'))),
        error(NpyBytes(Dict("|S3", "(2,)"), "csrcsc")), error(NpyBytes(Dict(">U3", "()"), "")),
        error(NpyBytes(Dict("|S3", "()"), "cs"))}) {
    EXPECT_TRUE(Contains(message, "(x.npz:format.npy)")) << message;
  }
  EXPECT_TRUE(Contains(error(NpyBytes(Dict("|S3", "()"), "cs")), "truncated"));
  EXPECT_TRUE(Contains(error(NpyBytes(Dict("<f4", "()"), "1234")), "expected a string array"));
}

TEST(NpyReader, NamesTheGivenNameInErrors) {
  ScratchDir dir;
  WriteTextFile(dir / "a.npy", "garbage");
  std::string message = ErrorOf([&] { NpyReader reader(dir / "a.npy", "x.npz:data.npy"); });
  EXPECT_TRUE(Contains(message, "(x.npz:data.npy)")) << message;
}

}  // namespace
}  // namespace strata
