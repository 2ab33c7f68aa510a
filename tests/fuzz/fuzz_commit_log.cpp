// libFuzzer target: the results file's write-ahead log as a resume (read_commit_log) and
// `slurmtune status` (read_last_record) read it. A log that is damaged, cut short or
// forged must throw InputError or be ignored in part, never crash, hang or allocate
// without bound. The CRC-32 of each frame would turn away almost every mutation before
// the records are decompressed, so the input is a segment's parts and the target frames
// them with their real CRCs: byte 0 chooses the format (even: 2, compressed; odd: 1),
// then parts, each its length (u32) and its bytes, the first the base, the others records.
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "store/file/commit_log.hpp"

namespace {

void framed(std::FILE* f, const std::uint8_t* data, std::size_t size) {
  const std::uint64_t frame[2] = {size, crc32_z(crc32(0L, Z_NULL, 0), data, size)};
  std::fwrite(frame, sizeof frame, 1, f);
  std::fwrite(data, 1, size, f);
}

// The input as a segment file at `path`.
void write_segment(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  if (size > 0) {
    std::fputs(data[0] % 2 == 0 ? "slurmtune wal 2\n" : "slurmtune wal 1\n", f);
    std::size_t at = 1;
    while (at + 4 <= size) {
      std::uint32_t length = 0;
      std::memcpy(&length, data + at, sizeof length);
      at += sizeof length;
      const std::size_t part = std::min<std::size_t>(length, size - at);
      framed(f, data + at, part);
      at += part;
    }
  }
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // In TMPDIR, which run_fuzzer.py points into the test's own work folder (fuzz_study_h5
  // says why).
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("slurmtune-fuzz-" + std::to_string(::getpid()) + ".h5-wal"))
                                      .string();
  write_segment(path, data, size);
  try {
    if (const auto contents = slurmtune::store::read_commit_log(path))
      for (const auto& record : contents->records) {
        slurmtune::store::LogRecordReader in(record, "record");
        static_cast<void>(in.u64());
        static_cast<void>(in.u64());
      }
  } catch (const slurmtune::InputError&) {
  }
  try {
    static_cast<void>(slurmtune::store::read_last_record(path));
  } catch (const slurmtune::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}
