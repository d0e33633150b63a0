// Error is the one exception type Strata's library code throws. Its message is a single line,
// "<what> (<file>[:<position>])" when a file is involved, ready to be printed after
// "strata: error: ". The kind decides the CLI's exit status: bad input or usage exits 2, an
// interrupt 130, anything else (a bug, an OS failure that is not the input's fault) 1.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace strata {

// `text` with its control bytes (NUL, ESC, newlines, ...) written as \xNN: a message quotes
// input, which must neither cut the line short, break it in two, nor drive a terminal.
std::string EscapeControlBytes(std::string_view text);

class Error : public std::runtime_error {
 public:
  enum class Kind { kInput, kInternal, kInterrupted };

  // The message's control bytes are escaped (EscapeControlBytes).
  Error(Kind kind, std::string_view message)
      : std::runtime_error(EscapeControlBytes(message)), kind_(kind) {}

  // Bad input named by a file: "what (file)" or "what (file:position)".
  static Error Input(std::string_view what, std::string_view file = {},
                     std::string_view position = {});
  // A failed system call on a file; the message carries strerror(errnum). ENOSPC, EACCES,
  // ENOENT and EROFS are the user's to fix and count as input errors, the rest as internal.
  static Error System(std::string_view what, std::string_view file, int errnum);
  static Error Internal(std::string_view what);

  Kind kind() const { return kind_; }
  int exit_status() const;

 private:
  Kind kind_;
};

// Formats "what (file[:position])", the shape of every message that names a file.
std::string WithLocation(std::string_view what, std::string_view file, std::string_view position);

}  // namespace strata
