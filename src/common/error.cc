#include "strata/error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace strata {

std::string WithLocation(std::string_view what, std::string_view file, std::string_view position) {
  std::string message(what);
  if (file.empty()) return message;
  message += " (";
  message += file;
  if (!position.empty()) {
    message += ':';
    message += position;
  }
  message += ')';
  return message;
}

std::string EscapeControlBytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

Error Error::Input(std::string_view what, std::string_view file, std::string_view position) {
  return Error(Kind::kInput, WithLocation(what, file, position));
}

Error Error::System(std::string_view what, std::string_view file, int errnum) {
  std::string message(what);
  message += ": ";
  message += std::strerror(errnum);
  bool users_to_fix = errnum == ENOSPC || errnum == EACCES || errnum == ENOENT || errnum == EROFS ||
                      errnum == EDQUOT || errnum == ENOTDIR || errnum == EISDIR ||
                      errnum == EEXIST || errnum == EPERM || errnum == EBUSY || errnum == EFBIG ||
                      errnum == ENAMETOOLONG || errnum == ELOOP;
  return Error(users_to_fix ? Kind::kInput : Kind::kInternal, WithLocation(message, file, {}));
}

Error Error::Internal(std::string_view what) { return Error(Kind::kInternal, std::string(what)); }

int Error::exit_status() const {
  switch (kind_) {
    case Kind::kInput:
      return 2;
    case Kind::kInterrupted:
      return 130;
    case Kind::kInternal:
      break;
  }
  return 1;
}

}  // namespace strata
