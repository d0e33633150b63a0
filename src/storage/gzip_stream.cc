#include "storage/gzip_stream.h"

#include <fmt/format.h>

#include "strata/error.h"

namespace strata {

GzipStream::GzipStream(const std::string& path) : file_(path), input_(kInputBytes) {
  unsigned char magic[2] = {0, 0};
  gzip_ = file_.ReadSome(0, magic, 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  // 16 + MAX_WBITS: a gzip wrapper, its header and CRC-32 trailer checked by zlib.
  if (gzip_ && inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
    throw Error::Internal("zlib: inflateInit2 failed");
  }
}

GzipStream::~GzipStream() {
  if (gzip_) inflateEnd(&stream_);
}

bool GzipStream::Refill() {
  if (stream_.avail_in > 0) return true;
  const size_t got = file_.ReadSome(offset_, input_.data(), input_.size());
  offset_ += got;
  stream_.next_in = input_.data();
  stream_.avail_in = static_cast<uInt>(got);
  return got > 0;
}

size_t GzipStream::Read(char* out, size_t bytes) {
  if (!gzip_) {
    const size_t got = file_.ReadSome(offset_, out, bytes);
    offset_ += got;
    return got;
  }
  stream_.next_out = reinterpret_cast<unsigned char*>(out);
  stream_.avail_out = static_cast<uInt>(bytes);
  while (stream_.avail_out == bytes) {
    if (!Refill()) {
      if (member_ended_) break;
      throw Error::Input("truncated: the gzip data ends before its trailer", path());
    }
    if (member_ended_) {  // another member follows the one that ended
      inflateReset(&stream_);
      member_ended_ = false;
    }
    const int status = inflate(&stream_, Z_NO_FLUSH);
    if (status == Z_STREAM_END) {
      member_ended_ = true;
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      throw Error::Input(fmt::format("corrupt gzip data: {}",
                                     stream_.msg != nullptr ? stream_.msg : zError(status)),
                         path());
    }
  }
  return bytes - stream_.avail_out;
}

}  // namespace strata
