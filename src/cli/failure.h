// Failure is how a command's exception ends `strata`: the one line after "strata: error: " and
// the exit status (an input error's 2, 1 for running out of memory or an internal failure).
// main() prints it; a data-parallel rank prints it naming itself and ends every rank.
#pragma once

#include <exception>
#include <string>

namespace strata::cli {

struct Failure {
  int status = 1;
  std::string message;
};

// The failure `error` describes; an exception that is not a std::exception is rethrown.
Failure DescribeFailure(std::exception_ptr error);

}  // namespace strata::cli
