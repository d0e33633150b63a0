// What the dataset commands print: the summary line after writing a dataset and the
// human-readable and JSON forms of `strata info`.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "strata/dataset.h"

namespace strata::cli {

// "wrote OUT: N nodes, E edges, D x dtype features, C classes in T s (peak RSS R)".
void PrintWritten(const std::string& out, const DatasetMeta& meta,
                  std::chrono::steady_clock::time_point start);

nlohmann::ordered_json DatasetInfoJson(const Dataset& dataset);
std::string DatasetInfoText(const Dataset& dataset);

}  // namespace strata::cli
