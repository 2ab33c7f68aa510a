#include "store/file/commit_log.hpp"

#include <fcntl.h>
#include <lz4.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "core/error.hpp"

namespace slurmtune::store {
namespace {

// 16 bytes that say what the file is and which framing it uses: "slurmtune wal N\n".
constexpr std::size_t kMagicBytes = 16;
constexpr std::string_view kMagicPrefix = "slurmtune wal ";
// Format 1 stores records as made; 2 (written since) compressed: a record's stored bytes
// are its length (u64) and then chunks, each its length (u32), its compressed length
// (u32) and an LZ4 block.
constexpr char kPlainFormat = '1', kCompressedFormat = '2';
std::array<char, kMagicBytes> magic(char format) {
  std::array<char, kMagicBytes> bytes{};
  std::memcpy(bytes.data(), kMagicPrefix.data(), kMagicPrefix.size());
  bytes[kMagicPrefix.size()] = format;
  bytes[kMagicPrefix.size() + 1] = '\n';
  return bytes;
}
const std::array<char, kMagicBytes> kMagic = magic(kCompressedFormat);
// A chunk's bytes before compression, at most: well under LZ4's largest input (about
// 2 GB), for records of any size.
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
// LZ4 cannot expand a block's bytes more than 255-fold: a record that claims more is not
// one LZ4 made, and nothing that size is allocated for it.
constexpr std::uint64_t kMostExpansion = 255;
// A record's frame: its length (u64) and the CRC-32 of its bytes (u64, the upper half 0).
constexpr std::size_t kFrameBytes = 16;
// Numbers a record may add: a batch has about 30; add_u64 checks the bound.
constexpr std::size_t kMaxNumbers = 64;

std::uint32_t crc_of(std::span<const std::byte> bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// iovec's base is not const; writev only reads it.
iovec part_of(const void* data, std::size_t bytes) {
  return {const_cast<void*>(data), bytes};
}

std::string error_text(const std::string& what, const std::string& path) {
  return "the results file's write-ahead log " + path + ": " + what + ": " + std::strerror(errno);
}

// Writes every byte of `parts` (writev may write less than asked: a file system that is
// full, a signal).
void write_all(int fd, std::vector<iovec> parts, const std::string& path) {
  std::size_t first = 0;
  while (first < parts.size()) {
    const int count = static_cast<int>(std::min<std::size_t>(parts.size() - first, IOV_MAX));
    const ssize_t written = ::writev(fd, parts.data() + first, count);
    if (written < 0) {
      if (errno == EINTR) continue;
      throw Error(error_text("cannot write", path));
    }
    auto left = static_cast<std::size_t>(written);
    while (first < parts.size() && left >= parts[first].iov_len)
      left -= parts[first++].iov_len;
    if (left > 0) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
}

std::uint64_t read_u64(std::span<const std::byte> bytes) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

// The header: the magic, the base's length and CRC, the base.
std::vector<iovec> header_parts(std::span<const std::byte> base,
                                std::array<std::uint64_t, 2>& frame) {
  frame = {base.size(), crc_of(base)};
  return {part_of(kMagic.data(), kMagic.size()), part_of(frame.data(), sizeof frame),
          part_of(base.data(), base.size())};
}

void put_u32(std::vector<std::byte>& out, std::size_t at, std::uint32_t value) {
  std::memcpy(out.data() + at, &value, sizeof value);
}

// `record`'s parts in one buffer, then compressed into `stored` (format 2): its length,
// then its chunks. Returns how many bytes of `stored` that took. Both buffers only grow:
// a vector resized down and up again zeroes what it grows by, a record's size each time.
std::size_t compress_record(const LogRecord& record, std::vector<std::byte>& gathered,
                            std::vector<std::byte>& stored) {
  const std::size_t length = record.size();
  if (gathered.size() < length) gathered.resize(length);
  std::size_t at = 0;
  for (const iovec& part : record.parts()) {
    std::memcpy(gathered.data() + at, part.iov_base, part.iov_len);
    at += part.iov_len;
  }
  const std::size_t chunks = (length + kChunkBytes - 1) / kChunkBytes;
  const std::size_t most =
      8 + chunks * 8 +
      static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(std::min(kChunkBytes, length)))) *
          chunks;
  if (stored.size() < most) stored.resize(most);
  const std::uint64_t whole = length;
  std::memcpy(stored.data(), &whole, sizeof whole);
  std::size_t used = sizeof whole;
  for (std::size_t first = 0; first < length; first += kChunkBytes) {
    const std::size_t bytes = std::min(kChunkBytes, length - first);
    const int packed =
        LZ4_compress_default(reinterpret_cast<const char*>(gathered.data() + first),
                             reinterpret_cast<char*>(stored.data() + used + 8),
                             static_cast<int>(bytes), static_cast<int>(stored.size() - used - 8));
    if (packed <= 0)
      throw Error("the results file's write-ahead log: LZ4 could not compress a record");
    put_u32(stored, used, static_cast<std::uint32_t>(bytes));
    put_u32(stored, used + 4, static_cast<std::uint32_t>(packed));
    used += 8 + static_cast<std::size_t>(packed);
  }
  return used;
}

std::uint32_t read_u32(std::span<const std::byte> bytes) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

// A format 2 record's stored bytes back as the writer made them; nullopt (and why) when
// they are not what compress_record writes. Its CRC matched: a writer's death cannot
// leave such a record, so the caller refuses the log.
std::optional<std::vector<std::byte>> decompress_record(std::span<const std::byte> stored,
                                                        std::string& why) {
  if (stored.size() < 8) {
    why = "a compressed record of " + std::to_string(stored.size()) + " bytes";
    return std::nullopt;
  }
  const std::uint64_t length = read_u64(stored);
  if (length > kMostExpansion * stored.size()) {
    why = "a compressed record of " + std::to_string(stored.size()) + " bytes that claims " +
          std::to_string(length);
    return std::nullopt;
  }
  std::vector<std::byte> record(length);
  std::size_t filled = 0;
  std::span<const std::byte> rest = stored.subspan(8);
  while (!rest.empty()) {
    if (rest.size() < 8) {
      why = "a chunk's header cut short";
      return std::nullopt;
    }
    const std::uint32_t bytes = read_u32(rest), packed = read_u32(rest.subspan(4));
    rest = rest.subspan(8);
    if (bytes > kChunkBytes || bytes > length - filled || packed > rest.size()) {
      why = "a chunk of " + std::to_string(bytes) + " bytes (" + std::to_string(packed) +
            " compressed) past the record's end";
      return std::nullopt;
    }
    const int made = LZ4_decompress_safe(reinterpret_cast<const char*>(rest.data()),
                                         reinterpret_cast<char*>(record.data() + filled),
                                         static_cast<int>(packed), static_cast<int>(bytes));
    if (made < 0 || static_cast<std::uint32_t>(made) != bytes) {
      why = "a chunk LZ4 cannot decompress";
      return std::nullopt;
    }
    filled += bytes;
    rest = rest.subspan(packed);
  }
  if (filled != length) {
    why = "a record of " + std::to_string(filled) + " bytes where " + std::to_string(length) +
          " were written";
    return std::nullopt;
  }
  return record;
}

int open_segment(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(error_text("cannot create it", path));
  return fd;
}

void write_header(int fd, std::span<const std::byte> base, const std::string& path) {
  std::array<std::uint64_t, 2> frame{};
  write_all(fd, header_parts(base, frame), path);
}

}  // namespace

std::array<std::string, 2> commit_log_paths(const std::string& results_file) {
  const std::string log = std::filesystem::absolute(results_file).string() + "-wal";
  return {log, log + ".1"};
}

void LogRecord::add(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  parts_.push_back(part_of(data, bytes));
  size_ += bytes;
}

void LogRecord::add_u64(std::uint64_t value) {
  if (numbers_.capacity() == 0) numbers_.reserve(kMaxNumbers);
  if (numbers_.size() == kMaxNumbers) throw UsageError("LogRecord: more than 64 numbers");
  numbers_.push_back(value);
  add(&numbers_.back(), sizeof value);
}

void LogRecord::add_bytes(std::span<const std::byte> bytes) {
  add_u64(bytes.size());
  add(bytes.data(), bytes.size());
}

void LogRecord::add_append(const AppendBatch& batch) {
  add_u64(batch.first);
  add_bytes(batch.bytes);
}

void LogRecord::add_update(const UpdateBatch& batch) {
  // A run is two hsize_t (first row, rows) with no padding: read back as two u64.
  static_assert(sizeof batch.runs.front() == 16 && sizeof(hsize_t) == 8);
  add_u64(batch.extent);
  add_u64(batch.runs.size());
  add(batch.runs.data(), batch.runs.size() * sizeof batch.runs.front());
  add_bytes(batch.bytes);
}

void LogRecord::add_curves(const CurveBatch& batch) {
  add_u64(batch.extent);
  add_u64(batch.points.size());
  add(batch.coordinates.data(), batch.coordinates.size() * sizeof(hsize_t));
  add(batch.points.data(), batch.points.size() * sizeof(CurvePoint));
}

LogRecordReader::LogRecordReader(std::span<const std::byte> record, std::string where)
    : rest_(record), where_(std::move(where)) {}

void LogRecordReader::fail(const std::string& why) const {
  throw InputError(where_ + ": " + why);
}

std::span<const std::byte> LogRecordReader::take(std::size_t n, const char* what) {
  if (n > rest_.size())
    fail(std::string(what) + " needs " + std::to_string(n) + " bytes, " +
         std::to_string(rest_.size()) + " are left");
  const auto taken = rest_.first(n);
  rest_ = rest_.subspan(n);
  return taken;
}

std::uint64_t LogRecordReader::u64() {
  return read_u64(take(sizeof(std::uint64_t), "a number"));
}

std::vector<std::byte> LogRecordReader::bytes(std::size_t expected) {
  const std::uint64_t n = u64();
  if (n != expected)
    fail("a row of " + std::to_string(n) + " bytes where " + std::to_string(expected) + " belong");
  const auto data = take(n, "a row");
  return {data.begin(), data.end()};
}

AppendBatch LogRecordReader::append(std::size_t row_size) {
  AppendBatch batch;
  batch.first = u64();
  const std::uint64_t n = u64();
  if (n % row_size != 0)
    fail("appended rows of " + std::to_string(n) + " bytes, not a multiple of the row's " +
         std::to_string(row_size));
  const auto data = take(n, "appended rows");
  batch.bytes.assign(data.begin(), data.end());
  return batch;
}

UpdateBatch LogRecordReader::update(std::size_t row_size) {
  UpdateBatch batch;
  batch.extent = u64();
  const std::uint64_t runs = u64();
  if (runs > rest_.size() / sizeof batch.runs.front()) fail(std::to_string(runs) + " runs of rows");
  const auto run_bytes = take(runs * sizeof batch.runs.front(), "runs of rows");
  batch.runs.reserve(runs);
  for (std::size_t i = 0; i < runs; ++i)
    batch.runs.emplace_back(read_u64(run_bytes.subspan(16 * i)),
                            read_u64(run_bytes.subspan(16 * i + 8)));
  std::uint64_t rows = 0;
  for (const auto& [first, count] : batch.runs) {
    if (batch.extent > 0 && first + count > batch.extent)
      fail("rows " + std::to_string(first) + "+" + std::to_string(count) + " past the extent " +
           std::to_string(batch.extent));
    rows += count;
  }
  const std::uint64_t n = u64();
  if (n != rows * row_size)
    fail("rewritten rows of " + std::to_string(n) + " bytes for " + std::to_string(rows) + " rows");
  const auto data = take(n, "rewritten rows");
  batch.bytes.assign(data.begin(), data.end());
  return batch;
}

CurveBatch LogRecordReader::curves() {
  CurveBatch batch;
  batch.extent = u64();
  const std::uint64_t points = u64();
  const std::size_t point_bytes = sizeof(hsize_t) * 2 + sizeof(CurvePoint);
  if (points > rest_.size() / point_bytes) fail(std::to_string(points) + " curve points");
  const auto coordinates = take(points * 2 * sizeof(hsize_t), "curve coordinates");
  const auto values = take(points * sizeof(CurvePoint), "curve points");
  if (points == 0) return batch;  // memcpy of nothing from an empty vector's null is UB
  batch.coordinates.resize(points * 2);
  std::memcpy(batch.coordinates.data(), coordinates.data(), coordinates.size());
  batch.points.resize(points);
  std::memcpy(batch.points.data(), values.data(), values.size());
  for (std::size_t i = 0; i < points; ++i)
    if (batch.coordinates[2 * i + 1] >= kCurveSlots ||
        (batch.extent > 0 && batch.coordinates[2 * i] >= batch.extent))
      fail("a curve point outside the curves' table");
  return batch;
}

void LogRecordReader::finish() const {
  if (!rest_.empty()) fail(std::to_string(rest_.size()) + " bytes left over");
}

namespace {

// Up to `n` bytes of `in` at `offset`: fewer where the file ends first (a segment the
// writer empties meanwhile, or a record not yet whole).
std::vector<std::byte> read_at(std::ifstream& in, std::uint64_t offset, std::size_t n) {
  std::vector<std::byte> bytes(n);
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return bytes;
}

InputError not_a_log(const std::string& path, const std::string& why) {
  return InputError("the results file's write-ahead log " + path + ": " + why +
                    "; it is not one slurmtune wrote, or was cut short: move it away to "
                    "resume without it (the rows it holds are then lost)");
}

// A segment open for reading, its header checked: its size when opened (records appended
// after that are not looked at), its base, and where its records begin.
struct OpenSegment {
  std::string path;
  std::ifstream in;
  char format = kCompressedFormat;
  std::uint64_t size = 0;
  std::vector<std::byte> base;
  std::uint64_t records_at = 0;

  /// A whole record's stored bytes (its CRC checked) as the writer made them.
  std::vector<std::byte> record(std::vector<std::byte> stored, std::size_t index) const {
    if (format == kPlainFormat) return stored;
    std::string why;
    auto made = decompress_record(stored, why);
    if (!made) throw not_a_log(path, "its record " + std::to_string(index + 1) + " is " + why);
    return std::move(*made);
  }
};

// nullopt: an empty segment (emptied, its header not yet written). An InputError names a
// file that is not a slurmtune log, or whose header is cut short or damaged.
std::optional<OpenSegment> open_for_reading(const std::string& path) {
  OpenSegment segment;
  segment.path = path;
  segment.in.open(path, std::ios::binary);
  if (!segment.in) throw InputError(error_text("cannot open it", path));
  segment.in.seekg(0, std::ios::end);
  segment.size = static_cast<std::uint64_t>(std::max<std::streamoff>(segment.in.tellg(), 0));
  const auto head = read_at(segment.in, 0, kMagicBytes + kFrameBytes);
  if (head.empty()) return std::nullopt;
  if (head.size() < kMagicBytes + kFrameBytes ||
      std::memcmp(head.data(), kMagicPrefix.data(), kMagicPrefix.size()) != 0)
    throw not_a_log(path, "no slurmtune log header");
  segment.format = static_cast<char>(head[kMagicPrefix.size()]);
  if (std::memcmp(head.data(), magic(segment.format).data(), kMagicBytes) != 0 ||
      (segment.format != kPlainFormat && segment.format != kCompressedFormat))
    throw not_a_log(path, "its header names a format this slurmtune does not read (it reads " +
                              std::string(1, kPlainFormat) + " and " +
                              std::string(1, kCompressedFormat) + ")");
  const std::uint64_t base_length = read_u64(std::span(head).subspan(kMagicBytes));
  // Bounded by the file before anything is allocated for it: a damaged length is no
  // reason to ask for exabytes.
  if (segment.size >= head.size() && base_length <= segment.size - head.size())
    segment.base = read_at(segment.in, head.size(), base_length);
  if (segment.base.size() != base_length ||
      crc_of(segment.base) != read_u64(std::span(head).subspan(kMagicBytes + 8)))
    throw not_a_log(path, "its header's commit row is cut short or damaged");
  segment.records_at = head.size() + base_length;
  return segment;
}

}  // namespace

std::optional<std::vector<std::byte>> read_last_record(const std::string& path) {
  auto segment = open_for_reading(path);
  if (!segment) return std::nullopt;
  // The frames alone, record after record: where each whole one lies.
  struct Place {
    std::uint64_t offset, length, crc;
  };
  std::vector<Place> places;
  for (std::uint64_t at = segment->records_at;;) {
    const auto frame = read_at(segment->in, at, kFrameBytes);
    if (frame.size() < kFrameBytes) break;
    const Place place{at + kFrameBytes, read_u64(frame), read_u64(std::span(frame).subspan(8))};
    if (place.offset > segment->size || place.length > segment->size - place.offset) break;
    places.push_back(place);
    at = place.offset + place.length;
  }
  for (auto place = places.rbegin(); place != places.rend(); ++place) {
    auto stored = read_at(segment->in, place->offset, place->length);
    if (stored.size() == place->length && crc_of(stored) == place->crc)
      return segment->record(std::move(stored),
                             static_cast<std::size_t>(places.rend() - place - 1));
  }
  return std::nullopt;
}

std::optional<LogContents> read_commit_log(const std::string& path) {
  auto segment = open_for_reading(path);
  if (!segment) return std::nullopt;
  LogContents contents;
  contents.base = std::move(segment->base);
  const auto bytes = read_at(segment->in, segment->records_at, segment->size - segment->records_at);
  std::span<const std::byte> rest(bytes);
  while (rest.size() >= kFrameBytes) {
    const std::uint64_t length = read_u64(rest), crc = read_u64(rest.subspan(8));
    const auto stored = rest.subspan(kFrameBytes);
    if (length > stored.size() || crc_of(stored.first(length)) != crc) break;
    contents.records.push_back(
        segment->record({stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(length)},
                        contents.records.size()));
    rest = stored.subspan(length);
  }
  contents.ignored_bytes = rest.size();
  return contents;
}

CommitLog::CommitLog(const std::string& results_file, std::span<const std::byte> base)
    : paths_(commit_log_paths(results_file)) {
  try {
    for (int i = 0; i < 2; ++i)
      fds_[i] = open_segment(paths_[i]);
    write_header(fds_[0], base, paths_[0]);
  } catch (...) {
    for (const int fd : fds_)
      if (fd >= 0) ::close(fd);
    throw;
  }
}

CommitLog::~CommitLog() {
  for (const int fd : fds_)
    ::close(fd);
}

void CommitLog::append(const LogRecord& record) {
  const std::size_t used = compress_record(record, gathered_, stored_);
  const std::span<const std::byte> stored(stored_.data(), used);
  const std::array<std::uint64_t, 2> frame{used, crc_of(stored)};
  write_all(fds_[current_],
            {part_of(frame.data(), sizeof frame), part_of(stored.data(), stored.size())},
            paths_[current_]);
  ++volume_.records;
  volume_.record_bytes += record.size();
  volume_.stored_bytes += sizeof frame + used;
}

void CommitLog::switch_segments(std::span<const std::byte> base) {
  // Emptied first, then its header: a death between the two leaves an empty segment,
  // which a resume passes over (every record it held is in the file).
  const int next = 1 - current_;
  if (::ftruncate(fds_[next], 0) != 0) throw Error(error_text("cannot empty it", paths_[next]));
  write_header(fds_[next], base, paths_[next]);
  current_ = next;
}

void CommitLog::remove() {
  for (const std::string& path : paths_)
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw Error(error_text("cannot remove it", path));
}

}  // namespace slurmtune::store
