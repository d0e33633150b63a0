// Fuzzes DatasetMeta::FromJson, which turns a dataset's meta.json into the DatasetMeta every
// reader trusts. What it accepts must survive ToJson and FromJson again unchanged, as a
// dataset rewritten by `strata partition` does.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "strata/dataset.h"

namespace strata {

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::AcceptInputErrors([&] {
    const std::string json = DatasetMeta::FromJson(text, "meta.json").ToJson();
    fuzz::Check(DatasetMeta::FromJson(json, "rewritten meta.json").ToJson() == json,
                "meta.json changes when written and read back");
  });
  return 0;
}

}  // namespace strata
