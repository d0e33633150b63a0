#include "dataset/csc_reference.h"

#include <cstring>

#include "storage/file.h"

namespace strata::testing {

Csc ReadCscFiles(const std::string& indptr_path, const std::string& indices_path,
                 uint32_t node_id_bytes) {
  Csc csc;
  std::string indptr = ReadWholeFile(indptr_path);
  csc.indptr.resize(indptr.size() / 8);
  std::memcpy(csc.indptr.data(), indptr.data(), csc.indptr.size() * 8);
  std::string indices = ReadWholeFile(indices_path);
  for (size_t i = 0; i + node_id_bytes <= indices.size(); i += node_id_bytes) {
    uint64_t id = 0;
    std::memcpy(&id, indices.data() + i, node_id_bytes);
    csc.indices.push_back(id);
  }
  return csc;
}

}  // namespace strata::testing
