// Fuzzes CsvReader (and GzipStream under it) over a whole file, plain or gzip: the OGB
// importer's reader of edge, feature, label and split files. The file is read through a
// 64-byte buffer, so that most lines straddle reads; what that accepts must read the same
// through a 4 KiB buffer, every line with at least one field, and each field's Id and Float
// either a value or an input error.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/csv_reader.h"
#include "fuzz_support.h"
#include "strata/error.h"

namespace strata {
namespace {

// Every line's fields, with each field's parse as an id and as a float ("-" where refused).
std::vector<std::string> ReadLines(const std::string& path, size_t buffer_bytes) {
  CsvReader csv(path, buffer_bytes);
  std::vector<std::string> lines;
  while (csv.Next()) {
    fuzz::Check(csv.fields() >= 1, "a line without fields");
    fuzz::Check(csv.line() == lines.size() + 1, "line numbers skip");
    std::string line;
    for (size_t k = 0; k < csv.fields(); ++k) {
      line += '|';
      try {
        const uint64_t id = csv.Id(k);
        fuzz::Check(id <= uint64_t{INT64_MAX}, "an id above 2^63 - 1 was accepted");
        line += std::to_string(id);
      } catch (const Error& e) {
        fuzz::Check(e.kind() == Error::Kind::kInput, "a bad id is not an input error");
        line += '-';
      }
      line += ',';
      try {
        const float value = csv.Float(k);
        uint32_t bits = 0;
        std::memcpy(&bits, &value, sizeof(bits));
        line += std::isnan(value) ? std::string("nan") : std::to_string(bits);
      } catch (const Error& e) {
        fuzz::Check(e.kind() == Error::Kind::kInput, "a bad number is not an input error");
        line += '-';
      }
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzInputFile file;
  const std::string& path = file.Write(data, size);
  fuzz::AcceptInputErrors([&] {
    const std::vector<std::string> lines = ReadLines(path, 64);
    fuzz::Check(ReadLines(path, 4096) == lines, "the lines depend on the reader's buffer size");
  });
  return 0;
}

}  // namespace strata
