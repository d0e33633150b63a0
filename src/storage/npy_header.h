// What the .npy code shares about the bytes before the array (strata/npy.h describes the
// format): the dtypes Strata reads and their descrs, and the preamble and header dict, read
// and checked. NpyReader, ReadNpyString and WriteNpy are built on it.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/npy.h"

namespace strata {

class FileReader;

// The array bytes are little-endian in every file Strata accepts, and are used in place.
static_assert(std::endian::native == std::endian::little,
              "the .npy code assumes a little-endian host");

// The first bytes of every .npy file.
inline constexpr std::string_view kNpyMagic = "\x93NUMPY";
// Data starts at a multiple of this, as NumPy writes it, so the array can be mapped aligned.
inline constexpr uint64_t kNpyDataAlignment = 64;

// A descr split into its byte-order character ('<', '>', '|' or '=', or '\0' where it has
// none) and the type code after it ("f4", "S10", ...).
struct NpyDescr {
  char order = '\0';
  std::string_view code;
};
NpyDescr SplitNpyDescr(std::string_view descr);

// The descr NumPy writes for `dtype`: "|b1", "<i8", "<f4", ...
std::string NpyDescrOf(NpyDtype dtype);
// The dtype a numeric descr names; Error::Input naming `path` for any descr Strata does not
// read (strings, objects, big-endian or unstated byte order, ...).
NpyDtype ParseNpyDescr(const std::string& descr, const std::string& path);

// What a header declares before its dtype is interpreted: NpyReader accepts only numeric
// descrs, ReadNpyString only string ones.
struct NpyRawHeader {
  std::string descr;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;
  int major_version = 1;
};

// Reads and parses the magic, version, length and header dict of the .npy file `file`, which
// errors call `name`; Error::Input for a file that is not one, or is truncated or malformed.
NpyRawHeader ReadNpyRawHeader(const FileReader& file, const std::string& name);

}  // namespace strata
