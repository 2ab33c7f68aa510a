// How the write-ahead log compresses its records (store/file/commit_log.hpp): the rows of
// a real study's tables, in batches the size the coordinator logs, through LZ4 (what the
// log uses), zlib's deflate at level 1 (a library slurmtune links already) and a squeeze
// of zero runs of our own (what the log would need without a library), with the CRC-32
// the log computes over what it writes.
//   build/tests/bench/bench_log_compression STUDY.h5 [ROWS_PER_BATCH]
//
// STUDY.h5: a results file with many rows (a fleet run's: tests/bench/scale/bench_fleet.py
// keeps its study folder); ROWS_PER_BATCH (default 160: a 20 ms batch of /trials rows at
// 16,384 trials reporting every second; /checkpoints take a tenth). Prints, per table and
// method, the speed over the rows as made and the share of their bytes written.
#include <hdf5.h>
#include <lz4.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/file/hdf5.hpp"

using namespace slurmtune;

namespace {

using Bytes = std::vector<unsigned char>;
using Clock = std::chrono::steady_clock;

// A dataset's rows as the file stores them (the writer's memory layout: packed).
Bytes table_bytes(hid_t file, const char* name, std::size_t& row_size) {
  const store::Hid dataset = store::check(H5Dopen2(file, name, H5P_DEFAULT), name);
  const store::Hid type = store::check(H5Dget_type(dataset), "H5Dget_type");
  const store::Hid space = store::check(H5Dget_space(dataset), "H5Dget_space");
  row_size = H5Tget_size(type);
  Bytes bytes(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)) * row_size);
  if (!bytes.empty() && H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
    throw std::runtime_error(std::string("cannot read ") + name);
  return bytes;
}

// Runs of at least 16 zero bytes, on 8-byte words, replaced by their length: pairs of
// (literal bytes, zero bytes) as u32, each followed by its literal bytes.
std::size_t squeeze_zero_runs(const unsigned char* in, std::size_t n, Bytes& out) {
  out.clear();
  std::size_t literal = 0, i = 0;
  const std::size_t words = n / 8 * 8;
  const auto emit = [&](std::size_t literal_end, std::size_t zeros) {
    const std::uint32_t head[2] = {static_cast<std::uint32_t>(literal_end - literal),
                                   static_cast<std::uint32_t>(zeros)};
    const std::size_t at = out.size();
    out.resize(at + sizeof head + (literal_end - literal));
    std::memcpy(out.data() + at, head, sizeof head);
    std::memcpy(out.data() + at + sizeof head, in + literal, literal_end - literal);
  };
  const auto word_at = [in](std::size_t at) {
    std::uint64_t word = 0;
    std::memcpy(&word, in + at, sizeof word);
    return word;
  };
  while (i < words) {
    if (word_at(i) != 0) {
      i += 8;
      continue;
    }
    std::size_t end = i + 8;
    while (end < words && word_at(end) == 0)
      end += 8;
    if (end - i >= 16) {
      emit(i, end - i);
      literal = end;
    }
    i = end;
  }
  emit(n, 0);
  return out.size();
}

struct Method {
  const char* name;
  double seconds = 0;
  std::size_t written = 0;
};

void compare(const char* table, const Bytes& rows, std::size_t row_size, std::size_t per_batch) {
  const std::size_t batch = row_size * per_batch;
  const std::size_t batches = rows.size() / batch;
  if (batches == 0) {
    std::printf("%s: fewer than %zu rows\n", table, per_batch);
    return;
  }
  Method lz4{"LZ4"}, deflate{"zlib deflate, level 1"}, squeeze{"zero runs (own)"},
      plain{"as made (format 1)"};
  std::vector<char> lz4_out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(batch))));
  Bytes deflate_out(compressBound(batch)), squeezed;
  volatile std::uint32_t crc_sink = 0;
  const auto timed = [](Method& m, const auto& body) {
    const auto start = Clock::now();
    m.written += body();
    m.seconds += std::chrono::duration<double>(Clock::now() - start).count();
  };
  const auto crc = [&crc_sink](const void* data, std::size_t bytes) {
    crc_sink = crc32_z(crc_sink, static_cast<const Bytef*>(data), bytes);
    return bytes;
  };
  for (std::size_t b = 0; b < batches; ++b) {
    const unsigned char* in = rows.data() + b * batch;
    timed(plain, [&] { return crc(in, batch); });
    timed(lz4, [&] {
      const int n = LZ4_compress_default(reinterpret_cast<const char*>(in), lz4_out.data(),
                                         static_cast<int>(batch), static_cast<int>(lz4_out.size()));
      return crc(lz4_out.data(), static_cast<std::size_t>(n));
    });
    timed(deflate, [&] {
      uLongf n = deflate_out.size();
      compress2(deflate_out.data(), &n, in, batch, 1);
      return crc(deflate_out.data(), n);
    });
    timed(squeeze, [&] { return crc(squeezed.data(), squeeze_zero_runs(in, batch, squeezed)); });
  }
  const double made = static_cast<double>(batches * batch);
  std::printf("%s: %zu batches of %zu rows of %zu bytes (%.1f MB)\n", table, batches, per_batch,
              row_size, made / 1e6);
  for (const Method* m : {&plain, &lz4, &deflate, &squeeze})
    std::printf("  %-22s %7.2f GB/s with the CRC, %5.1f %% of the bytes written\n", m->name,
                made / m->seconds / 1e9, 100.0 * static_cast<double>(m->written) / made);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_log_compression STUDY.h5 [ROWS_PER_BATCH]\n");
    return 2;
  }
  const std::size_t per_batch = argc > 2 ? std::stoul(argv[2]) : 160;
  store::quiet_hdf5_errors();  // the error says what failed, once
  try {
    const store::Hid file = store::check(H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT), argv[1]);
    for (const auto& [table, rows_per_batch] :
         {std::pair{"trials", per_batch},
          std::pair{"checkpoints", std::max<std::size_t>(per_batch / 10, 1)},
          std::pair{"metrics", per_batch}}) {
      std::size_t row_size = 0;
      const Bytes rows = table_bytes(file, table, row_size);
      compare(table, rows, row_size, rows_per_batch);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
