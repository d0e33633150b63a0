#include "storage/staging_name.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <utility>

#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr std::string_view kMarker = ".strata-tmp-";
constexpr std::string_view kProvisionalMarker = ".strata-new-";
// Where the directory cannot be locked (one that may be written but not read), a provisional
// sibling this old, renamed within microseconds of its creation otherwise, was left by a writer
// killed in between.
constexpr time_t kProvisionalLifetimeS = 60;

bool IsSiblingOf(std::string_view name, std::string_view base, std::string_view marker) {
  return name.size() > base.size() + marker.size() && name.substr(0, base.size()) == base &&
         name.substr(base.size(), marker.size()) == marker;
}

// Opens `path` and takes its lock if no one holds it; -1 when someone does or it cannot be
// opened.
int TryLock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A flock on the directory siblings are made in: a writer holds it shared while its sibling is
// unlocked under its provisional name, the cleaner holds it exclusive while it looks, so that it
// never sees a live writer's provisional sibling unlocked. Best effort: held() is false where
// the directory cannot be opened or locked.
class DirectoryLock {
 public:
  DirectoryLock(const std::string& dir, int operation)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0 && ::flock(fd_, operation) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

StagingLock::StagingLock(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd_ < 0) throw Error::System("cannot open the staging output to lock it", path, errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error::System("cannot lock the staging output", path, error);
  }
}

StagingLock::~StagingLock() {
  if (fd_ >= 0) ::close(fd_);
}

StagingLock::StagingLock(StagingLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

StagingLock& StagingLock::operator=(StagingLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

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

StagingSibling CreateStagingSibling(const std::string& final_path, bool directory) {
  std::string name = StagingTemplate(final_path);
  std::string provisional = final_path + std::string(kProvisionalMarker) + "XXXXXX";
  const DirectoryLock unlocked_window(ParentDirectory(final_path), LOCK_SH);
  if (directory) {
    if (::mkdtemp(provisional.data()) == nullptr) {
      throw Error::System("cannot create a staging directory beside the output", final_path, errno);
    }
  } else {
    const int fd = ::mkstemp(provisional.data());
    if (fd < 0) throw Error::System("cannot create a file beside", final_path, errno);
    ::close(fd);
  }
  auto remove_provisional = [&] {
    std::error_code ec;
    std::filesystem::remove_all(provisional, ec);
  };
  StagingSibling sibling;
  try {
    sibling.lock = StagingLock(provisional);
  } catch (...) {
    remove_provisional();
    throw;
  }
  // The staging name's random part is the provisional one's: both are unique in the directory.
  name.replace(name.size() - 6, 6, provisional.substr(provisional.size() - 6));
  if (::rename(provisional.c_str(), name.c_str()) != 0) {
    const int error = errno;
    remove_provisional();
    throw Error::System("cannot name the staging output", name, error);
  }
  sibling.path = std::move(name);
  return sibling;
}

void RemoveAbandonedStaging(const std::string& final_path) {
  namespace fs = std::filesystem;
  const std::string base = fs::path(final_path).filename().string();
  std::error_code ec;
  const std::string parent = ParentDirectory(final_path);
  const DirectoryLock looking(parent, LOCK_EX);
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    const bool staging = IsSiblingOf(name, base, kMarker);
    if (!staging && !IsSiblingOf(name, base, kProvisionalMarker)) continue;
    const int fd = TryLock(entry.path().string());
    if (fd < 0) continue;  // a live writer holds it, or it is not ours to open
    struct stat st {};
    const bool old = ::fstat(fd, &st) == 0 && st.st_mtime + kProvisionalLifetimeS < ::time(nullptr);
    if (staging || looking.held() || old) fs::remove_all(entry.path(), ec);
    ::close(fd);
  }
}

}  // namespace strata
