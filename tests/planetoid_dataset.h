// The Planetoid datasets of shared/datasets (Cora, Citeseer) imported once per test binary
// run, for the tests that train on real data.
#pragma once

#include <filesystem>
#include <string>

#include "strata/import.h"
#include "test_util.h"

namespace strata::testing {

// The imported dataset's directory, or "" when shared/datasets/<name> is missing.
inline std::string PlanetoidDataset(const std::string& name) {
  static ScratchDir* dir = new ScratchDir();  // lives for the whole run
  const std::string source = std::string(STRATA_SHARED_DATASETS) + "/" + name;
  const std::string out = *dir / name;
  if (!std::filesystem::exists(source)) return "";
  if (!std::filesystem::exists(out)) {
    ImportOptions o;
    o.out = out;
    o.memory_budget_bytes = uint64_t{256} << 20;
    ImportNpyDirectory(source, o);
  }
  return out;
}

}  // namespace strata::testing
