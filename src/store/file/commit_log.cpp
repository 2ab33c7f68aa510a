#include "store/file/commit_log.hpp"

#include <fcntl.h>
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

#include "core/error.hpp"

namespace slurmtune::store {
namespace {

// 16 bytes that say what the file is and which framing it uses.
constexpr std::array<char, 16> kMagic{'s', 'l', 'u', 'r', 'm', 't', 'u', 'n',
                                      'e', ' ', 'w', 'a', 'l', ' ', '1', '\n'};
// A record's frame: its length (u64) and the CRC-32 of its bytes (u64, the upper half 0).
constexpr std::size_t kFrameBytes = 16;
// Numbers a record may add: a batch has about 30; add_u64 checks the bound.
constexpr std::size_t kMaxNumbers = 64;

std::uint32_t crc_of(const std::vector<iovec>& parts) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const iovec& part : parts)
    crc = crc32_z(crc, static_cast<const Bytef*>(part.iov_base), part.iov_len);
  return static_cast<std::uint32_t>(crc);
}

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

// One record's frame and parts, for write_all.
std::vector<iovec> record_parts(const LogRecord& record, std::array<std::uint64_t, 2>& frame) {
  frame = {record.size(), crc_of(record.parts())};
  std::vector<iovec> parts{part_of(frame.data(), sizeof frame)};
  parts.insert(parts.end(), record.parts().begin(), record.parts().end());
  return parts;
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
  std::ifstream in;
  std::uint64_t size = 0;
  std::vector<std::byte> base;
  std::uint64_t records_at = 0;
};

// nullopt: an empty segment (emptied, its header not yet written). An InputError names a
// file that is not a slurmtune log, or whose header is cut short or damaged.
std::optional<OpenSegment> open_for_reading(const std::string& path) {
  OpenSegment segment;
  segment.in.open(path, std::ios::binary);
  if (!segment.in) throw InputError(error_text("cannot open it", path));
  segment.in.seekg(0, std::ios::end);
  segment.size = static_cast<std::uint64_t>(std::max<std::streamoff>(segment.in.tellg(), 0));
  const auto head = read_at(segment.in, 0, kMagic.size() + kFrameBytes);
  if (head.empty()) return std::nullopt;
  if (head.size() < kMagic.size() + kFrameBytes ||
      std::memcmp(head.data(), kMagic.data(), kMagic.size()) != 0)
    throw not_a_log(path, "no slurmtune log header");
  const std::uint64_t base_length = read_u64(std::span(head).subspan(kMagic.size()));
  // Bounded by the file before anything is allocated for it: a damaged length is no
  // reason to ask for exabytes.
  if (segment.size >= head.size() && base_length <= segment.size - head.size())
    segment.base = read_at(segment.in, head.size(), base_length);
  if (segment.base.size() != base_length ||
      crc_of(segment.base) != read_u64(std::span(head).subspan(kMagic.size() + 8)))
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
    auto record = read_at(segment->in, place->offset, place->length);
    if (record.size() == place->length && crc_of(record) == place->crc) return record;
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
    const auto record = rest.subspan(kFrameBytes);
    if (length > record.size() || crc_of(record.first(length)) != crc) break;
    contents.records.emplace_back(record.begin(),
                                  record.begin() + static_cast<std::ptrdiff_t>(length));
    rest = record.subspan(length);
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
  std::array<std::uint64_t, 2> frame{};
  write_all(fds_[current_], record_parts(record, frame), paths_[current_]);
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
