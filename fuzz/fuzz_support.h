// What the fuzz targets share: the rule that bad input may only end in an input error, and a
// path for parsers that read from a file rather than from bytes in memory.
//
// Every target feeds libFuzzer's bytes to one parser of untrusted input. A strata::Error of
// kind input is the parser saying "bad input" and is the expected outcome; anything else — an
// internal error, another exception, a failed consistency check, a crash, a sanitizer report,
// a hang — escapes to libFuzzer, which records the input as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/error.h"

namespace strata::fuzz {

// Runs `parse`, swallowing input errors only.
template <typename Parse>
void AcceptInputErrors(Parse&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.kind() != Error::Kind::kInput) throw;
  }
}

// A consistency check on what a parser accepted: prints `what` and aborts when `ok` is false,
// so that libFuzzer keeps the input.
void Check(bool ok, const char* what);

// FuzzInputFile gives each input a path, for NpyReader, EdgeListReader and the checkpoint
// reader, which open files. It is one memfd reached through /proc/self/fd, so that the
// millions of inputs of a run never touch the disk and no file is left behind.
class FuzzInputFile {
 public:
  FuzzInputFile();
  ~FuzzInputFile();
  FuzzInputFile(const FuzzInputFile&) = delete;
  FuzzInputFile& operator=(const FuzzInputFile&) = delete;

  // Replaces the file's content by the `size` bytes at `data`; returns its path.
  const std::string& Write(const uint8_t* data, size_t size);

 private:
  int fd_;
  std::string path_;
};

}  // namespace strata::fuzz
