#include "strata/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "common/float16.h"
#include "common/little_endian.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {

// The array bytes are little-endian in every file Strata accepts, and are used in place.
static_assert(std::endian::native == std::endian::little, "npy.cc assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// NumPy itself refuses headers over 10000 bytes by default; anything Strata accepts is well
// under 200. The cap keeps a corrupt length field from becoming a 4 GiB allocation.
constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 20;
// Data starts at a multiple of this, as NumPy writes it, so the array can be mapped aligned.
constexpr uint64_t kDataAlignment = 64;

struct DtypeInfo {
  NpyDtype dtype;
  std::string_view code;  // descr without the byte-order character
  size_t bytes;
  const char* name;
};

constexpr DtypeInfo kDtypes[] = {
    {NpyDtype::kBool, "b1", 1, "bool"},       {NpyDtype::kInt8, "i1", 1, "int8"},
    {NpyDtype::kInt16, "i2", 2, "int16"},     {NpyDtype::kInt32, "i4", 4, "int32"},
    {NpyDtype::kInt64, "i8", 8, "int64"},     {NpyDtype::kUInt8, "u1", 1, "uint8"},
    {NpyDtype::kUInt16, "u2", 2, "uint16"},   {NpyDtype::kUInt32, "u4", 4, "uint32"},
    {NpyDtype::kUInt64, "u8", 8, "uint64"},   {NpyDtype::kFloat16, "f2", 2, "float16"},
    {NpyDtype::kFloat32, "f4", 4, "float32"}, {NpyDtype::kFloat64, "f8", 8, "float64"},
};

const DtypeInfo& Info(NpyDtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  throw Error::Internal("unknown NpyDtype " + std::to_string(static_cast<int>(dtype)));
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Shortens a piece of header text for an error message.
std::string Excerpt(std::string_view text) {
  constexpr size_t kMaxChars = 80;
  if (text.size() <= kMaxChars) return std::string(text);
  return std::string(text.substr(0, kMaxChars)) + "...";
}

// A value of the Python literal subset a .npy header is written in.
struct PyLiteral {
  enum class Kind { kString, kInteger, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string_view source;  // the literal's text in the header, for messages
  std::string text;         // kString
  uint64_t integer = 0;     // kInteger: magnitude
  bool negative = false;    // kInteger
  bool flag = false;        // kBool
  // kTuple and kList: the items; kDict: keys and values alternating.
  std::vector<PyLiteral> items;
};

// HeaderParser reads the header dict the way Python's ast.literal_eval would for the forms
// NumPy writes (and hand-written variants: any key order, any whitespace, trailing commas,
// double quotes, Python 2 "3L" integers), without evaluating anything.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  PyLiteral ParseWhole() {
    PyLiteral value = ParseValue(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the dict");
    return value;
  }

 private:
  // Nesting deeper than any valid header: bounds the recursion on a corrupt file.
  static constexpr int kMaxDepth = 16;

  [[noreturn]] void Fail(std::string_view what) const {
    std::string message = "malformed .npy header: ";
    message += what;
    message += " at header byte " + std::to_string(pos_) + " in \"" + Excerpt(text_) + "\"";
    throw Error::Input(message, path_);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  PyLiteral ParseValue(int depth) {
    if (depth > kMaxDepth) Fail("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) Fail("unexpected end");
    size_t start = pos_;
    PyLiteral value;
    char c = text_[pos_];
    if (c == '\'' || c == '"') {
      value = ParseString();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      value = ParseInteger();
    } else if (c == '(') {
      ++pos_;
      value.kind = PyLiteral::Kind::kTuple;
      // "(x)" is x itself in Python; only a comma makes a one-element tuple.
      bool has_comma = ParseItems(')', depth, &value.items);
      if (value.items.size() == 1 && !has_comma) {
        PyLiteral inner = std::move(value.items[0]);
        value = std::move(inner);
      }
    } else if (c == '[') {
      ++pos_;
      value.kind = PyLiteral::Kind::kList;
      ParseItems(']', depth, &value.items);
    } else if (c == '{') {
      ++pos_;
      value.kind = PyLiteral::Kind::kDict;
      ParseDictItems(depth, &value.items);
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
        ++end;
      }
      std::string_view word = text_.substr(pos_, end - pos_);
      if (word == "True" || word == "False") {
        value.kind = PyLiteral::Kind::kBool;
        value.flag = word == "True";
      } else if (word == "None") {
        value.kind = PyLiteral::Kind::kNone;
      } else {
        Fail("unexpected name '" + std::string(word) + "'");
      }
      pos_ = end;
    } else {
      Fail(std::string("unexpected character '") + c + "'");
    }
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  PyLiteral ParseString() {
    char quote = text_[pos_++];
    PyLiteral value;
    value.kind = PyLiteral::Kind::kString;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') Fail("unterminated string");
      char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= text_.size()) Fail("unterminated string");
        c = text_[pos_++];
      }
      value.text += c;
    }
    return value;
  }

  PyLiteral ParseInteger() {
    PyLiteral value;
    value.kind = PyLiteral::Kind::kInteger;
    if (text_[pos_] == '-') {
      value.negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !(text_[pos_] >= '0' && text_[pos_] <= '9')) {
      Fail("expected a digit");
    }
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (value.integer > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        Fail("integer too large");
      }
      value.integer = value.integer * 10 + digit;
      ++pos_;
    }
    // Python 2 wrote long integers as "3L"; old .npy files still carry them.
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    return value;
  }

  // Parses "item, item, ...]" up to `close`; returns whether any comma was seen.
  bool ParseItems(char close, int depth, std::vector<PyLiteral>* items) {
    bool has_comma = false;
    while (!Consume(close)) {
      items->push_back(ParseValue(depth + 1));
      if (Consume(',')) {
        has_comma = true;
      } else if (!Consume(close)) {
        Fail(std::string("expected ',' or '") + close + "'");
      } else {
        break;
      }
    }
    return has_comma;
  }

  void ParseDictItems(int depth, std::vector<PyLiteral>* items) {
    while (!Consume('}')) {
      items->push_back(ParseValue(depth + 1));
      if (!Consume(':')) Fail("expected ':' after a dict key");
      items->push_back(ParseValue(depth + 1));
      if (!Consume(',')) {
        if (!Consume('}')) Fail("expected ',' or '}'");
        break;
      }
    }
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

NpyDtype ParseDescr(const std::string& descr, const std::string& path) {
  std::string_view code = descr;
  char order = '\0';
  if (!code.empty() && std::strchr("<>|=", code[0]) != nullptr) {
    order = code[0];
    code.remove_prefix(1);
  }
  const DtypeInfo* found = nullptr;
  for (const DtypeInfo& info : kDtypes) {
    if (info.code == code) found = &info;
  }
  if (found == nullptr) {
    throw Error::Input("dtype '" + descr +
                           "' is not supported (Strata reads bool, int8/16/32/64, "
                           "uint8/16/32/64 and float16/32/64 arrays)",
                       path);
  }
  // Byte order means nothing for one-byte types, whatever character the writer put there.
  if (found->bytes == 1 || order == '<') return found->dtype;
  if (order == '>') {
    throw Error::Input("big-endian dtype '" + descr + "' is not supported, save it little-endian",
                       path);
  }
  // '=' (or no character) is the writing machine's native order, which the file does not
  // record; '|' is not valid for multi-byte types at all.
  throw Error::Input("dtype '" + descr + "' does not say its byte order, save it as '<" +
                         std::string(found->code) + "'",
                     path);
}

// What a header declares before its dtype is interpreted: NpyReader accepts only numeric
// descrs, ReadNpyString only string ones.
struct RawHeader {
  std::string descr;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;
  int major_version = 1;
};

// Interprets the parsed header dict: exactly the keys 'descr', 'fortran_order' and 'shape'.
void InterpretHeader(const PyLiteral& dict, const std::string& path, RawHeader* header) {
  auto malformed = [&](const std::string& what) {
    return Error::Input("malformed .npy header: " + what, path);
  };
  if (dict.kind != PyLiteral::Kind::kDict)
    throw malformed("expected a dict, found " + Excerpt(dict.source));
  const PyLiteral* descr = nullptr;
  const PyLiteral* fortran_order = nullptr;
  const PyLiteral* shape = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyLiteral& key = dict.items[i];
    if (key.kind != PyLiteral::Kind::kString) {
      throw malformed("dict key " + Excerpt(key.source) + " is not a string");
    }
    const PyLiteral** slot = key.text == "descr"           ? &descr
                             : key.text == "fortran_order" ? &fortran_order
                             : key.text == "shape"         ? &shape
                                                           : nullptr;
    if (slot == nullptr) throw malformed("unexpected key '" + key.text + "'");
    if (*slot != nullptr) throw malformed("key '" + key.text + "' appears twice");
    *slot = &dict.items[i + 1];
  }
  if (descr == nullptr) throw malformed("no 'descr' key");
  if (fortran_order == nullptr) throw malformed("no 'fortran_order' key");
  if (shape == nullptr) throw malformed("no 'shape' key");

  if (descr->kind == PyLiteral::Kind::kList) {
    throw Error::Input("structured dtype " + Excerpt(descr->source) +
                           " is not supported, save each field as its own array",
                       path);
  }
  if (descr->kind != PyLiteral::Kind::kString) {
    throw malformed("'descr' is " + Excerpt(descr->source) + ", expected a string");
  }
  header->descr = descr->text;

  if (shape->kind != PyLiteral::Kind::kTuple) {
    throw malformed("'shape' is " + Excerpt(shape->source) + ", expected a tuple");
  }
  header->shape.clear();
  for (const PyLiteral& dim : shape->items) {
    if (dim.kind != PyLiteral::Kind::kInteger || dim.negative) {
      throw malformed("'shape' " + Excerpt(shape->source) +
                      " has a dimension that is not a non-negative integer");
    }
    header->shape.push_back(dim.integer);
  }

  if (fortran_order->kind != PyLiteral::Kind::kBool) {
    throw malformed("'fortran_order' is " + Excerpt(fortran_order->source) +
                    ", expected True or False");
  }
  // With at most one dimension, Fortran and C order are the same bytes.
  if (fortran_order->flag && header->shape.size() > 1) {
    throw Error::Input("Fortran-order array is not supported, save it with order='C'", path);
  }
}

// Reads and parses the magic, version, length and header dict of the .npy file `file`, which
// errors call `name`.
RawHeader ReadRawHeader(const FileReader& file, const std::string& name) {
  const uint64_t file_bytes = file.size();
  unsigned char preamble[12] = {};
  size_t got = file.ReadSome(0, preamble, std::min<uint64_t>(file_bytes, sizeof(preamble)));
  if (got == 0) throw Error::Input("not a .npy file: the file is empty", name);
  if (std::memcmp(preamble, kMagic, std::min(got, kMagicBytes)) != 0) {
    // A .npz is a zip of .npy files; saying so saves the user a puzzled look at the bytes.
    bool zip = got >= 2 && preamble[0] == 'P' && preamble[1] == 'K';
    throw Error::Input(zip ? "not a .npy file: bad magic (this looks like a .npz archive, extract "
                             "the array first)"
                           : "not a .npy file: bad magic",
                       name);
  }
  auto truncated_header = [&](uint64_t needed) {
    return Error::Input("truncated .npy header: it needs " + std::to_string(needed) +
                            " bytes, the file has " + std::to_string(file_bytes),
                        name);
  };
  if (got < 8) throw truncated_header(8);
  int major = preamble[6];
  int minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0) {
    throw Error::Input("unsupported .npy format version " + std::to_string(major) + "." +
                           std::to_string(minor) + ", expected 1.0, 2.0 or 3.0",
                       name);
  }
  size_t length_bytes = major == 1 ? 2 : 4;
  size_t preamble_bytes = 8 + length_bytes;
  if (got < preamble_bytes) throw truncated_header(preamble_bytes);
  uint64_t header_bytes = LoadLittleEndian(preamble + 8, length_bytes);
  if (header_bytes > kMaxHeaderBytes) {
    throw Error::Input("malformed .npy header: its length " + std::to_string(header_bytes) +
                           " is implausibly large",
                       name);
  }
  uint64_t data_offset = preamble_bytes + header_bytes;
  if (file_bytes < data_offset) throw truncated_header(data_offset);
  // Versions 1.0 and 2.0 are latin-1 and 3.0 is utf-8; the keys and values that matter are
  // ASCII either way, so the bytes are parsed as they are.
  std::string text(header_bytes, '\0');
  file.ReadExact(preamble_bytes, text.data(), text.size());
  PyLiteral dict = HeaderParser(text, name).ParseWhole();
  RawHeader header;
  InterpretHeader(dict, name, &header);
  header.data_offset = data_offset;
  header.major_version = major;
  return header;
}

template <typename T>
T LoadAt(const std::byte* bytes, size_t index) {
  T value;
  std::memcpy(&value, bytes + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void WidenToInt64(const std::byte* in, size_t count, int64_t* out) {
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<int64_t>(LoadAt<T>(in, i));
}

void ConvertToInt64(NpyDtype dtype, const std::byte* in, size_t count, int64_t* out) {
  switch (dtype) {
    case NpyDtype::kBool:
      // NumPy's bool is 0 or 1, but any other byte is still true.
      for (size_t i = 0; i < count; ++i) out[i] = in[i] != std::byte{0} ? 1 : 0;
      return;
    case NpyDtype::kInt8:
      return WidenToInt64<int8_t>(in, count, out);
    case NpyDtype::kInt16:
      return WidenToInt64<int16_t>(in, count, out);
    case NpyDtype::kInt32:
      return WidenToInt64<int32_t>(in, count, out);
    case NpyDtype::kInt64:
      return WidenToInt64<int64_t>(in, count, out);
    case NpyDtype::kUInt8:
      return WidenToInt64<uint8_t>(in, count, out);
    case NpyDtype::kUInt16:
      return WidenToInt64<uint16_t>(in, count, out);
    case NpyDtype::kUInt32:
      return WidenToInt64<uint32_t>(in, count, out);
    case NpyDtype::kUInt64:
      for (size_t i = 0; i < count; ++i) {
        uint64_t value = LoadAt<uint64_t>(in, i);
        constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        out[i] = static_cast<int64_t>(std::min(value, kMax));
      }
      return;
    default:
      throw Error::Internal(fmt::format("ConvertToInt64 on {}", NpyDtypeName(dtype)));
  }
}

void ConvertToFloat32(NpyDtype dtype, const std::byte* in, size_t count, float* out) {
  switch (dtype) {
    case NpyDtype::kFloat16:
      for (size_t i = 0; i < count; ++i) out[i] = HalfToFloat(LoadAt<uint16_t>(in, i));
      return;
    case NpyDtype::kFloat32:
      std::memcpy(out, in, count * sizeof(float));
      return;
    case NpyDtype::kFloat64:
      // IEEE conversion: rounds to nearest, and values beyond the float range become inf.
      for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(LoadAt<double>(in, i));
      return;
    default:
      throw Error::Internal(fmt::format("ConvertToFloat32 on {}", NpyDtypeName(dtype)));
  }
}

// Reads [first, first + out.size()) through a bounded scratch buffer, converting each piece.
template <typename Out, typename Convert>
void ReadConverted(const NpyReader& reader, uint64_t first, std::span<Out> out, Convert convert) {
  size_t item_bytes = NpyItemBytes(reader.dtype());
  size_t per_step = NpyReader::kScratchBytes / item_bytes;
  std::vector<std::byte> scratch(std::min(out.size(), per_step) * item_bytes);
  for (size_t done = 0; done < out.size();) {
    size_t count = std::min(per_step, out.size() - done);
    reader.ReadRaw(first + done, count, scratch.data());
    convert(reader.dtype(), scratch.data(), count, out.data() + done);
    done += count;
  }
}

}  // namespace

size_t NpyItemBytes(NpyDtype dtype) { return Info(dtype).bytes; }

std::string_view NpyDtypeName(NpyDtype dtype) { return Info(dtype).name; }

bool NpyIsInteger(NpyDtype dtype) { return !NpyIsFloat(dtype); }

bool NpyIsFloat(NpyDtype dtype) {
  return dtype == NpyDtype::kFloat16 || dtype == NpyDtype::kFloat32 || dtype == NpyDtype::kFloat64;
}

std::string NpyShapeString(std::span<const uint64_t> shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ',';
  text += ')';
  return text;
}

uint64_t NpyHeader::num_elements() const {
  uint64_t count = 1;
  for (uint64_t dim : shape) count *= dim;
  return count;
}

uint64_t NpyHeader::data_bytes() const { return num_elements() * NpyItemBytes(dtype); }

NpyReader::NpyReader(const std::string& path) : NpyReader(path, path) {}

NpyReader::NpyReader(const std::string& path, const std::string& name)
    : path_(name), file_(std::make_unique<FileReader>(path)) {
  RawHeader raw = ReadRawHeader(*file_, path_);
  header_.dtype = ParseDescr(raw.descr, path_);
  header_.shape = std::move(raw.shape);
  header_.data_offset = raw.data_offset;
  header_.major_version = raw.major_version;

  // NpyHeader's invariant: the element and byte counts fit in 64 bits. An array with a zero
  // dimension is empty whatever the other dimensions are.
  const std::vector<uint64_t>& shape = header_.shape;
  if (std::find(shape.begin(), shape.end(), 0) == shape.end()) {
    uint64_t limit = std::numeric_limits<uint64_t>::max() / NpyItemBytes(header_.dtype);
    uint64_t count = 1;
    for (uint64_t dim : shape) {
      if (count > limit / dim) {
        throw Error::Input("malformed .npy header: shape " + NpyShapeString(shape) + " of " +
                               std::string(NpyDtypeName(header_.dtype)) + " is too large",
                           path_);
      }
      count *= dim;
    }
  }
  uint64_t data_bytes = header_.data_bytes();
  const uint64_t file_bytes = file_->size();
  if (file_bytes - header_.data_offset < data_bytes) {
    throw Error::Input("truncated: header declares shape " + NpyShapeString(header_.shape) +
                           " of " + std::string(NpyDtypeName(header_.dtype)) + " = " +
                           std::to_string(data_bytes) + " bytes of data, file has " +
                           std::to_string(file_bytes - header_.data_offset),
                       path_);
  }
}

NpyReader::~NpyReader() = default;
NpyReader::NpyReader(NpyReader&& other) noexcept = default;
NpyReader& NpyReader::operator=(NpyReader&& other) noexcept = default;

uint64_t NpyReader::rows() const { return header_.shape.empty() ? 1 : header_.shape[0]; }

uint64_t NpyReader::row_elements() const {
  uint64_t count = 1;
  for (size_t i = 1; i < header_.shape.size(); ++i) count *= header_.shape[i];
  return count;
}

void NpyReader::CheckRange(uint64_t first, uint64_t count) const {
  uint64_t total = num_elements();
  if (first > total || count > total - first) {
    throw Error::Internal("read of elements [" + std::to_string(first) + ", " +
                          std::to_string(first + count) + ") is past the end of " + path_ +
                          ", which has " + std::to_string(total));
  }
}

void NpyReader::ReadRaw(uint64_t first, uint64_t count, void* out) const {
  CheckRange(first, count);
  uint64_t item_bytes = NpyItemBytes(header_.dtype);
  file_->ReadExact(header_.data_offset + first * item_bytes, out,
                   static_cast<size_t>(count * item_bytes));
}

void NpyReader::ReadInt64(uint64_t first, std::span<int64_t> out) const {
  if (!NpyIsInteger(header_.dtype)) {
    throw Error::Input(
        fmt::format("expected an integer array, found {}", NpyDtypeName(header_.dtype)), path_);
  }
  CheckRange(first, out.size());
  if (header_.dtype == NpyDtype::kInt64) return ReadRaw(first, out.size(), out.data());
  ReadConverted(*this, first, out, ConvertToInt64);
}

void NpyReader::ReadFloat32(uint64_t first, std::span<float> out) const {
  if (!NpyIsFloat(header_.dtype)) {
    throw Error::Input(
        fmt::format("expected a floating-point array, found {}", NpyDtypeName(header_.dtype)),
        path_);
  }
  CheckRange(first, out.size());
  if (header_.dtype == NpyDtype::kFloat32) return ReadRaw(first, out.size(), out.data());
  ReadConverted(*this, first, out, ConvertToFloat32);
}

std::string ReadNpyString(const std::string& path, const std::string& name) {
  FileReader file(path);
  RawHeader raw = ReadRawHeader(file, name);
  std::string_view code = raw.descr;
  char order = '\0';
  if (!code.empty() && std::strchr("<>|=", code[0]) != nullptr) {
    order = code[0];
    code.remove_prefix(1);
  }
  const bool bytes_kind = !code.empty() && code[0] == 'S';
  const bool unicode_kind = !code.empty() && code[0] == 'U';
  std::string_view digits = code.empty() ? code : code.substr(1);
  // A string longer than this is not a name of anything; the cap keeps a corrupt header from
  // becoming a huge read.
  constexpr uint64_t kMaxChars = 4096;
  uint64_t chars = 0;
  bool valid = (bytes_kind || unicode_kind) && !digits.empty() && digits.size() <= 4;
  for (char c : digits) {
    valid = valid && c >= '0' && c <= '9';
    chars = chars * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!valid || chars > kMaxChars) {
    throw Error::Input(
        "expected a string array ('|S<n>' or '<U<n>'), found dtype '" + raw.descr + "'", name);
  }
  // UCS-4 code units need a byte order; '=' is the writer's, which the file does not record.
  if (unicode_kind && order != '<') {
    throw Error::Input("unicode dtype '" + raw.descr + "' is not little-endian ('<U')", name);
  }
  if (!(raw.shape.empty() || (raw.shape.size() == 1 && raw.shape[0] == 1))) {
    throw Error::Input("expected a single string, found shape " + NpyShapeString(raw.shape), name);
  }
  const uint64_t unit_bytes = unicode_kind ? 4 : 1;
  std::string data(chars * unit_bytes, '\0');
  if (file.size() - raw.data_offset < data.size()) {
    throw Error::Input("truncated: dtype '" + raw.descr + "' needs " + std::to_string(data.size()) +
                           " bytes of data, file has " +
                           std::to_string(file.size() - raw.data_offset),
                       name);
  }
  file.ReadExact(raw.data_offset, data.data(), data.size());
  std::string text;
  for (uint64_t i = 0; i < chars; ++i) {
    uint64_t code_point = LoadLittleEndian(
        reinterpret_cast<const unsigned char*>(data.data()) + i * unit_bytes, unit_bytes);
    text += code_point < 128 ? static_cast<char>(code_point) : '?';
  }
  // NumPy pads a shorter string to the dtype's length with NULs and strips them on reading.
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

void WriteNpy(const std::string& path, NpyDtype dtype, std::span<const uint64_t> shape,
              const void* data, int major_version) {
  if (major_version < 1 || major_version > 3) {
    throw Error::Internal("WriteNpy: unsupported .npy format version " +
                          std::to_string(major_version));
  }
  const DtypeInfo& info = Info(dtype);
  std::string descr = std::string(info.bytes == 1 ? "|" : "<") + std::string(info.code);
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + NpyShapeString(shape) + ", }";
  size_t preamble_bytes = major_version == 1 ? 10 : 12;
  size_t unpadded = preamble_bytes + header.size() + 1;  // + the final '\n'
  size_t padded = (unpadded + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
  header.append(padded - unpadded, ' ');
  header += '\n';
  uint64_t header_bytes = header.size();
  if (major_version == 1 && header_bytes > 0xffff) {
    throw Error::Internal("WriteNpy: header of " + std::to_string(header_bytes) +
                          " bytes does not fit format version 1.0");
  }
  uint64_t elements = 1;
  for (uint64_t dim : shape) elements *= dim;

  FileWriter writer(path);
  writer.Append(kMagic, kMagicBytes);
  const unsigned char version[2] = {static_cast<unsigned char>(major_version), 0};
  writer.Append(version, sizeof(version));
  unsigned char length[4];
  for (size_t i = 0; i < sizeof(length); ++i) {
    length[i] = static_cast<unsigned char>(header_bytes >> (8 * i));
  }
  writer.Append(length, preamble_bytes - 8);
  writer.Append(header.data(), header.size());
  // An empty array may come with a null `data`, which must not reach memcpy.
  if (elements > 0) writer.Append(data, static_cast<size_t>(elements * info.bytes));
  writer.Finish();
}

}  // namespace strata
