#include "train/metrics_log.h"

#include "storage/staged_file.h"

namespace strata {

MetricsLog::MetricsLog(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) CheckReplaceableOutput(path_);
}

void MetricsLog::Append(const nlohmann::ordered_json& record) {
  if (path_.empty()) return;
  text_ += record.dump() + "\n";
  StagedFile file(path_);
  file.writer().Append(text_.data(), text_.size());
  file.Publish();
}

}  // namespace strata
