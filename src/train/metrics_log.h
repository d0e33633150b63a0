// MetricsLog writes --metrics-out: one JSON object per line. The file is republished whole
// (temporary file, then rename) after every record, so a reader — or a crash — never sees a
// half-written line, and a user can follow it while the job runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata {

class MetricsLog {
 public:
  // An empty path disables the log. A path that cannot be replaced is refused here, before
  // the run, not at its first record.
  explicit MetricsLog(std::string path);

  void Append(const nlohmann::ordered_json& record);

 private:
  std::string path_;
  std::string text_;
};

}  // namespace strata
