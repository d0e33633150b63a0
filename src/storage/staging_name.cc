#include "storage/staging_name.h"

#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>

#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr std::string_view kMarker = ".strata-tmp-";

// The pid in a sibling's name "<base>.strata-tmp-<pid>-XXXXXX", or 0 when it has none.
pid_t WriterOf(std::string_view name, std::string_view base) {
  const size_t prefix = base.size() + kMarker.size();
  if (name.size() <= prefix || name.substr(0, base.size()) != base ||
      name.substr(base.size(), kMarker.size()) != kMarker) {
    return 0;
  }
  pid_t pid = 0;
  const char* end = name.data() + name.size();
  const auto [next, error] = std::from_chars(name.data() + prefix, end, pid);
  if (error != std::errc() || pid <= 0 || next == end || *next != '-') return 0;
  return pid;
}

}  // namespace

std::string StagingTemplate(const std::string& final_path) {
  const std::string suffix = std::string(kMarker) + std::to_string(::getpid()) + "-XXXXXX";
  const size_t name_bytes = std::filesystem::path(final_path).filename().string().size();
  if (name_bytes + suffix.size() > NAME_MAX) {
    throw Error::Input(
        fmt::format("the output's name is {} bytes; it is written under a temporary name {} "
                    "bytes longer, and a name holds at most {}: use a name of at most {} bytes",
                    name_bytes, suffix.size(), NAME_MAX, NAME_MAX - suffix.size()),
        final_path);
  }
  return final_path + suffix;
}

void RemoveAbandonedStaging(const std::string& final_path) {
  namespace fs = std::filesystem;
  const std::string base = fs::path(final_path).filename().string();
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(ParentDirectory(final_path), ec)) {
    const pid_t pid = WriterOf(entry.path().filename().string(), base);
    // kill(pid, 0) fails with ESRCH only when no such process exists; EPERM means it runs.
    if (pid != 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
}

}  // namespace strata
