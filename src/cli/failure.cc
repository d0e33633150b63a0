#include "cli/failure.h"

#include <new>
#include <string>
#include <string_view>

#include "strata/error.h"

namespace strata::cli {

Failure DescribeFailure(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {e.exit_status(), e.what()};
  } catch (const std::bad_alloc&) {
    return {1, "out of memory; lower --memory-budget"};
  } catch (const std::exception& e) {
    return {1, "internal failure: " + EscapeControlBytes(e.what())};
  }
}

}  // namespace strata::cli
