#include "fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace strata::fuzz {
namespace {

// The harness cannot run without its file; this is the harness failing, not the parser.
[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::abort();
}

}  // namespace

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

FuzzInputFile::FuzzInputFile() : fd_(::memfd_create("strata-fuzz-input", MFD_CLOEXEC)) {
  if (fd_ < 0) Die("memfd_create");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

FuzzInputFile::~FuzzInputFile() { ::close(fd_); }

const std::string& FuzzInputFile::Write(const uint8_t* data, size_t size) {
  if (::ftruncate(fd_, 0) != 0) Die("ftruncate");
  for (size_t done = 0; done < size;) {
    ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) Die("pwrite");
    done += static_cast<size_t>(n);
  }
  return path_;
}

}  // namespace strata::fuzz
