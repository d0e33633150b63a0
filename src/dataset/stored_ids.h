// Checks on the offsets, node ids and labels read back from a dataset's files. Those files are
// input like any other (a flipped byte, a hand-edited meta.json with a fresh checksum), so every
// offset and id is checked where it is read, before it indexes memory; a bad one is an input
// error naming the file and the first bad position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace strata {

// Throws an input error naming `path` unless `offsets`, those of rows [first, first +
// offsets.size() - 1] of a file of rows + 1 offsets, never decrease and stay within [0, end],
// the file's first being 0 and its last `end`.
void CheckRowOffsets(std::span<const uint64_t> offsets, uint64_t first, uint64_t rows, uint64_t end,
                     const std::string& path);

// The input error for the stored id `id` at element `element` of `path`, not below
// `num_nodes`.
[[noreturn]] void ThrowStoredIdOutOfRange(uint64_t id, uint64_t element, uint64_t num_nodes,
                                          const std::string& path);

// `id`, element `element` of `path`, unless it is >= num_nodes (ThrowStoredIdOutOfRange).
inline uint64_t CheckedStoredId(uint64_t id, uint64_t element, uint64_t num_nodes,
                                const std::string& path) {
  if (id >= num_nodes) ThrowStoredIdOutOfRange(id, element, num_nodes, path);
  return id;
}

// Throws ThrowStoredIdOutOfRange's error for the first of the `count` ids stored `width` (4 or
// 8) bytes wide at `ids`, elements [first_element, first_element + count) of `path`, that is >=
// num_nodes. The scan is a max over the ids, which vectorises and runs at memory bandwidth.
void CheckStoredIds(const std::byte* ids, uint64_t count, uint32_t width, uint64_t first_element,
                    uint64_t num_nodes, const std::string& path);

// Throws an input error naming `path` and the element for the first of `count` labels,
// elements [first_element, first_element + count) of `path`, outside [-1, num_classes).
void CheckStoredLabels(const int32_t* labels, uint64_t count, uint64_t first_element,
                       uint32_t num_classes, const std::string& path);

}  // namespace strata
