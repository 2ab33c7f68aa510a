#define BOOST_TEST_MODULE store_commit_log
// The results file's write-ahead log (store/file/commit_log.hpp): a commit asked for is
// durable once logged, a writer killed with rows only in the log loses none of them at
// the resume, and a log that is damaged, cut short or not the file's is named, never
// applied in part.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "store/file/commit_log.hpp"
#include "store/file/hdf5.hpp"
#include "store/resume.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
namespace fs = std::filesystem;

namespace {

const char* kStudy = R"(
[study]
name = "log-test"
metric = "loss"
seed = 3
max_trials = 400
[search]
lr = { loguniform = [1e-4, 1e-1] }
[scheduler]
type = "asha"
grace_period = 1
max_t = 27
reduction_factor = 3
)";

core::StudySpec spec() {
  return config::parse_study(kStudy, "study.toml");
}

store::WriterOptions logged_options() {
  store::WriterOptions options;
  options.flush_interval_s = 1e9;  // HDF5 only when flushed: every commit asked for is logged
  options.background_flush = true;
  options.write_ahead_log = true;
  return options;
}

// Trial `trial` started and reporting steps 1..`steps` (loss 1/step).
void run_trial(store::StudyWriter& writer, core::TrialId trial, int steps) {
  writer.trial_started(trial, core::Configuration{{core::ParamValue{0.01}}}, 0, 0);
  for (int step = 1; step <= steps; ++step) {
    const std::vector<double> values{1.0 / step};
    writer.report(trial, step, step, values, {});
  }
}

// Runs `body` in a forked child that then dies with its status (_exit: no destructor, no
// last flush), as a killed coordinator does; the test requires status 0.
void in_a_child_that_dies(const std::function<int()>& body) {
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    int code = 4;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_REQUIRE(WEXITSTATUS(status) == 0);
}

// A writer that logs two commits and then dies: the file's HDF5 holds only the rows of
// its create, the log the rest.
void logged_and_killed(const std::string& path) {
  in_a_child_that_dies([&path] {
    auto* writer = store::StudyWriter::create(path, spec(), logged_options()).release();
    run_trial(*writer, 0, 3);
    writer->commit_soon();
    writer->flush_if_due();
    run_trial(*writer, 1, 2);
    writer->trial_ended(0, core::TrialEnd::Completed, 4);
    writer->commit_soon();
    writer->flush_if_due();
    return writer->durable_ticket() + 1 == writer->commit_ticket() ? 0 : 3;
  });
}

std::uint64_t committed_reports(const std::string& path) {
  return store::StudyReader(path).committed().metrics;
}

// apply_log takes in both commits logged_and_killed left in `path`'s log: 5 reports, trial
// 0 completed at its best, trial 1 running; the log is gone.
void check_both_commits_applied(const std::string& path) {
  const auto applied = store::StudyWriter::apply_log(path);
  BOOST_REQUIRE(applied.has_value());
  BOOST_TEST(
      applied->find("held 2 commit(s) after the file's last (5 report(s))") != std::string::npos,
      *applied);
  BOOST_TEST(!fs::exists(path + "-wal"));
  const store::StudyReader reader(path);
  BOOST_TEST(reader.committed().metrics == 5U);
  const auto trials = reader.trials();
  BOOST_REQUIRE(trials.size() == 2U);
  BOOST_TEST((trials[0].status == store::TrialStatus::Completed));
  BOOST_TEST(trials[0].best_value == 1.0 / 3);
  BOOST_TEST((trials[1].status == store::TrialStatus::Running));
}

// apply_log refuses `path`'s log with an InputError that names the log, says `expected`
// and what to do; the results file stays as it was.
void check_refused(const std::string& path, const std::string& expected) {
  const auto before = fs::file_size(path);
  try {
    store::StudyWriter::apply_log(path);
    BOOST_ERROR("applied a log it should refuse");
  } catch (const InputError& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find(path + "-wal") != std::string::npos, what);
    BOOST_TEST(what.find(expected) != std::string::npos, what);
    BOOST_TEST(what.find("move it away") != std::string::npos, what);
  }
  BOOST_TEST(fs::file_size(path) == before);
  BOOST_TEST(committed_reports(path) == 0U);
}

}  // namespace

// A commit asked for is durable when flush_if_due returns: logged, before HDF5 has it.
BOOST_AUTO_TEST_CASE(a_commit_asked_for_is_durable_once_logged) {
  testing::TempFolder dir;
  const std::string path = dir.file("logged.h5");
  {
    auto writer = store::StudyWriter::create(path, spec(), logged_options());
    BOOST_TEST(fs::exists(path + "-wal"));
    run_trial(*writer, 0, 3);
    const std::uint64_t ticket = writer->commit_ticket();
    BOOST_TEST(writer->durable_ticket() < ticket);
    writer->commit_soon();
    BOOST_TEST(!writer->commit_due_in_s().has_value());  // no gap: nothing to wait for
    writer->flush_if_due();
    BOOST_TEST(writer->durable_ticket() >= ticket);
    BOOST_TEST(writer->flushed_metric_rows() == 3U);
    BOOST_TEST(committed_reports(path) == 0U);  // HDF5 gets them at the interval
  }
  // Closed cleanly: the file has every row and the log is gone.
  BOOST_TEST(!fs::exists(path + "-wal"));
  BOOST_TEST(!fs::exists(path + "-wal.1"));
  BOOST_TEST(committed_reports(path) == 3U);
}

// The rows only the log held are in the file after apply_log, which a resume calls
// first; the resumed state counts them, and the log is gone.
BOOST_AUTO_TEST_CASE(a_killed_writers_logged_rows_survive_its_death) {
  testing::TempFolder dir;
  const std::string path = dir.file("killed.h5");
  logged_and_killed(path);
  BOOST_TEST(fs::exists(path + "-wal"));
  BOOST_TEST(committed_reports(path) == 0U);
  check_both_commits_applied(path);
  const store::StudyReader reader(path);
  const auto state = store::resume_study(reader, spec(), {});
  BOOST_TEST(state.reports_replayed == 5U);
  BOOST_TEST(!store::StudyWriter::apply_log(path).has_value());  // nothing left
}

// A commit handed to HDF5 moves the log to its other segment: a writer killed then has
// records in both, and the resume takes them in order across the two.
BOOST_AUTO_TEST_CASE(records_chain_across_the_two_segments) {
  testing::TempFolder dir;
  const std::string path = dir.file("two.h5");
  in_a_child_that_dies([&path] {
    store::WriterOptions options = logged_options();
    options.flush_interval_s = 0;  // a commit at every call the flush thread is free for
    auto* writer = store::StudyWriter::create(path, spec(), options).release();
    std::atomic<int> durable{0};
    writer->on_durable([&](const store::StudyWriter::DurableCommit&) { ++durable; });
    run_trial(*writer, 0, 2);
    writer->commit_soon();
    writer->flush_if_due();  // logged, and handed over: the log goes on in the other segment
    // Bounded: a commit of two rows that never ends fails the child.
    for (int i = 0; i < 6000 && durable == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    run_trial(*writer, 1, 3);
    writer->commit_soon();
    writer->flush_if_due();  // and again (rows handed over meanwhile, too: interval 0)
    run_trial(*writer, 2, 4);
    writer->commit_soon();
    writer->flush_if_due();  // the flush thread may still be busy: logged alone
    return durable > 0 ? 0 : 3;
  });
  const auto first = store::read_commit_log(path + "-wal");
  const auto second = store::read_commit_log(path + "-wal.1");
  BOOST_REQUIRE(first.has_value());
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(!first->records.empty());
  BOOST_TEST(!second->records.empty());
  const auto applied = store::StudyWriter::apply_log(path);
  BOOST_REQUIRE(applied.has_value());
  BOOST_TEST_MESSAGE(*applied);
  BOOST_TEST(!fs::exists(path + "-wal"));
  BOOST_TEST(!fs::exists(path + "-wal.1"));
  const store::StudyReader reader(path);
  BOOST_TEST(reader.committed().metrics == 9U);
  BOOST_TEST(reader.trials().size() == 3U);
}

// A record cut short by the writer's death (or damaged) ends the log: the whole records
// before it are applied, its bytes ignored and counted.
BOOST_AUTO_TEST_CASE(a_record_cut_short_is_ignored_and_counted) {
  testing::TempFolder dir;
  const std::string path = dir.file("torn.h5");
  logged_and_killed(path);
  const std::string log = path + "-wal";
  const auto whole = fs::file_size(log);
  const auto contents = store::read_commit_log(log);
  BOOST_REQUIRE(contents.has_value());
  BOOST_REQUIRE(contents->records.size() == 2U);
  // Cut into the second record.
  fs::resize_file(log, whole - 10);
  const auto applied = store::StudyWriter::apply_log(path);
  BOOST_REQUIRE(applied.has_value());
  BOOST_TEST(applied->find("held 1 commit(s)") != std::string::npos, *applied);
  BOOST_TEST(applied->find("byte(s) after its last whole record") != std::string::npos, *applied);
  BOOST_TEST(committed_reports(path) == 3U);

  const std::string damaged = dir.file("damaged.h5");
  logged_and_killed(damaged);
  {
    std::fstream f(damaged + "-wal", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(damaged + "-wal") / 2));
    f.put('\x5a');
  }
  const auto after_damage = store::StudyWriter::apply_log(damaged);
  BOOST_REQUIRE(after_damage.has_value());
  BOOST_TEST(after_damage->find("byte(s) after its last whole record") != std::string::npos,
             *after_damage);
}

// `status` reads only a segment's newest whole record, found by the frames: the same
// record the whole read ends with, the one before where the last is cut short or
// damaged, and the same errors for what is not a log.
BOOST_AUTO_TEST_CASE(the_newest_record_is_read_without_the_ones_before) {
  testing::TempFolder dir;
  const std::string path = dir.file("newest.h5");
  logged_and_killed(path);
  const std::string log = path + "-wal";
  auto magic = std::string(16, '\0');
  std::ifstream(log, std::ios::binary).read(magic.data(), 16);
  const auto whole = store::read_commit_log(log);
  BOOST_REQUIRE(whole.has_value());
  BOOST_REQUIRE(whole->records.size() == 2U);
  const auto last = store::read_last_record(log);
  BOOST_REQUIRE(last.has_value());
  BOOST_TEST((*last == whole->records[1]));
  BOOST_TEST(store::logged_metric_rows(path).value_or(0) == 5U);  // trial 0's 3, trial 1's 2

  const auto size = fs::file_size(log);
  {  // the last record's last byte changed: its CRC fails, the one before is the newest
    std::fstream f(log, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 1));
    f.put(static_cast<char>(~static_cast<unsigned char>(whole->records[1].back())));
  }
  const auto before_damage = store::read_last_record(log);
  BOOST_REQUIRE(before_damage.has_value());
  BOOST_TEST((*before_damage == whole->records[0]));
  fs::resize_file(log, size - 10);  // cut short
  const auto before_cut = store::read_last_record(log);
  BOOST_REQUIRE(before_cut.has_value());
  BOOST_TEST((*before_cut == whole->records[0]));
  BOOST_TEST(store::logged_metric_rows(path).value_or(0) == 3U);

  std::ofstream(log, std::ios::trunc).flush();  // emptied by the writer's segment switch
  BOOST_TEST(!store::read_last_record(log).has_value());
  const auto refused = [&log](const std::string& expected) {
    try {
      store::read_last_record(log);
      BOOST_ERROR("read a record of a file that is not a log");
    } catch (const InputError& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find(log) != std::string::npos, what);
      BOOST_TEST(what.find(expected) != std::string::npos, what);
    }
  };
  std::ofstream(log, std::ios::trunc) << "hello";
  refused("no slurmtune log header");
  // The magic, then a base of 0x7f7f... bytes: refused, nothing that size allocated.
  std::ofstream(log, std::ios::trunc | std::ios::binary)
      << magic << std::string(16, '\x7f') << "short";
  refused("its header's commit row is cut short or damaged");
}

// Not a log, a damaged header, or another file's log: an InputError that names the log
// and says what to do, and the results file as it was.
BOOST_AUTO_TEST_CASE(a_log_that_is_not_this_files_is_refused_and_named) {
  testing::TempFolder dir;
  const std::string path = dir.file("mine.h5");
  const std::string other = dir.file("other.h5");
  logged_and_killed(path);
  logged_and_killed(other);
  const auto refused = [&path](const std::string& expected) { check_refused(path, expected); };
  fs::copy_file(other + "-wal", path + "-wal", fs::copy_options::overwrite_existing);
  refused("does not continue");
  std::ofstream(path + "-wal", std::ios::trunc) << "hello";
  refused("no slurmtune log header");
  {
    auto bytes = std::string(16, '\0');
    std::ifstream(other + "-wal", std::ios::binary).read(bytes.data(), 16);
    std::ofstream out(path + "-wal", std::ios::trunc | std::ios::binary);
    out << bytes << std::string(16, '\x7f') << "short";
  }
  refused("its header's commit row is cut short or damaged");
}

// Records are read back only as they were written: lengths that run past the record,
// rows that are not whole, curve points outside the table are each named.
BOOST_AUTO_TEST_CASE(a_malformed_record_is_named_field_by_field) {
  const auto refused = [](const std::vector<std::uint64_t>& words, const auto& read,
                          const std::string& expected) {
    std::vector<std::byte> bytes(words.size() * 8);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    store::LogRecordReader in(bytes, "log, record 1");
    try {
      read(in);
      BOOST_ERROR("read a malformed record: " << expected);
    } catch (const InputError& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find("log, record 1: " + expected) != std::string::npos, what);
    }
  };
  refused(
      {0, 24}, [](auto& in) { in.append(16); }, "appended rows of 24 bytes, not a multiple");
  refused(
      {0, 32}, [](auto& in) { in.append(16); }, "appended rows needs 32 bytes, 0 are left");
  refused(
      {4, 1, 3, 2, 0}, [](auto& in) { in.update(8); }, "rows 3+2 past the extent 4");
  refused(
      {0, 1, 0, 2, 8}, [](auto& in) { in.update(8); }, "rewritten rows of 8 bytes for 2 rows");
  refused(
      {0, 1000}, [](auto& in) { in.update(8); }, "1000 runs of rows");
  refused(
      {0, 1, 0, 200, 0}, [](auto& in) { in.curves(); }, "a curve point outside");
  refused(
      {8}, [](auto& in) { in.bytes(16); }, "a row of 8 bytes where 16 belong");
  std::vector<std::byte> extra(16);
  store::LogRecordReader in(extra, "log, record 2");
  in.u64();
  BOOST_CHECK_THROW(in.finish(), InputError);
}

namespace {
// A dataset's bytes as the file stores them.
std::vector<char> dataset_bytes(const std::string& path, const char* name) {
  const store::Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const store::Hid dataset(H5Dopen2(file, name, H5P_DEFAULT));
  const store::Hid type(H5Dget_type(dataset));
  const store::Hid space(H5Dget_space(dataset));
  std::vector<char> bytes(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)) *
                          H5Tget_size(type));
  if (!bytes.empty())
    BOOST_REQUIRE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);
  return bytes;
}
}  // namespace

// Many logged batches written as one commit (each table once, a row rewritten in several
// batches by its last version, a curve point likewise) leave the tables exactly as a
// writer that flushed each batch on its own.
BOOST_AUTO_TEST_CASE(logged_batches_joined_write_what_batch_by_batch_writes) {
  testing::TempFolder dir;
  const std::string plain = dir.file("plain.h5"), logged = dir.file("logged.h5");
  store::WriterOptions direct;
  direct.background_flush = false;
  direct.flush_interval_s = 1e9;
  auto a = store::StudyWriter::create(plain, spec(), direct);
  auto b = store::StudyWriter::create(logged, spec(), logged_options());
  std::mt19937 rng(7);
  for (core::TrialId t = 0; t < 40; ++t)
    for (auto* w : {a.get(), b.get()})
      w->trial_started(t,
                       core::Configuration{{core::ParamValue{0.01 * static_cast<double>(t + 1)}}},
                       0, static_cast<double>(t));
  std::vector<int> steps(40, 0);
  for (int round = 0; round < 2000; ++round) {
    const core::TrialId t = std::uniform_int_distribution<core::TrialId>(0, 39)(rng);
    const double step = ++steps[t];
    const std::vector<double> values{std::uniform_real_distribution<double>(0, 1)(rng)};
    for (auto* w : {a.get(), b.get()}) {
      w->report(t, step, 40 + round, values, {});
      if (round % 7 == 0) w->commit_soon();  // a: flushed now; b: logged below
      if (round % 3 == 0) w->flush_if_due();
    }
    if (round % 500 == 499) {  // now and then a commit of all logged so far
      a->flush();
      b->flush();
    }
  }
  for (core::TrialId t = 0; t < 40; t += 3)
    for (auto* w : {a.get(), b.get()})
      w->trial_ended(t, core::TrialEnd::Completed, 3000);
  a.reset();
  b.reset();
  for (const char* table : {"trials", "metrics", "events", "curves", "checkpoints"})
    BOOST_TEST((dataset_bytes(plain, table) == dataset_bytes(logged, table)), table);
}

namespace {
// `log` rewritten as format 1 (records stored as made), which a slurmtune before the
// compressed format left: the same base and records.
void as_format_1(const std::string& log) {
  const auto contents = store::read_commit_log(log);
  BOOST_REQUIRE(contents.has_value());
  std::ofstream out(log, std::ios::trunc | std::ios::binary);
  const auto framed = [&out](const std::vector<std::byte>& bytes) {
    const std::uint64_t frame[2] = {
        bytes.size(),
        crc32_z(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size())};
    out.write(reinterpret_cast<const char*>(frame), sizeof frame);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  };
  out << "slurmtune wal 1\n";
  framed(contents->base);
  for (const auto& record : contents->records)
    framed(record);
}

// Overwrites `path` at `offset` with `bytes`.
void overwrite(const std::string& path, std::uint64_t offset, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
}  // namespace

// A log an older slurmtune left (format 1: records not compressed) is applied as before:
// a study killed under it resumes under this one with every logged row.
BOOST_AUTO_TEST_CASE(a_format_1_log_is_still_applied) {
  testing::TempFolder dir;
  const std::string path = dir.file("old.h5");
  logged_and_killed(path);
  as_format_1(path + "-wal");
  auto magic = std::string(16, '\0');
  std::ifstream(path + "-wal", std::ios::binary).read(magic.data(), 16);
  BOOST_TEST(magic == "slurmtune wal 1\n");
  BOOST_TEST(store::logged_metric_rows(path).value_or(0) == 5U);
  check_both_commits_applied(path);
}

// Records are stored compressed: a record of mostly zeros (the fixed-width rows are) takes
// a small part of its size on disk, the log says how much, and reads back byte for byte.
BOOST_AUTO_TEST_CASE(records_are_stored_compressed) {
  testing::TempFolder dir;
  const std::string path = dir.file("packed.h5");
  const std::vector<std::byte> base(138, std::byte{1});
  store::AppendBatch rows{0, std::vector<std::byte>(std::size_t{702} * 1000)};
  for (std::size_t i = 0; i < rows.bytes.size(); i += 702)  // an id, and a few short texts
    rows.bytes[i] = rows.bytes[i + 100] = static_cast<std::byte>(i / 702 + 1);
  std::uintmax_t header = 0;
  {
    store::CommitLog log(path, base);
    header = fs::file_size(path + "-wal");
    store::LogRecord record;
    record.add_u64(42);
    record.add_append(rows);
    log.append(record);
    BOOST_TEST(log.volume().records == 1U);
    BOOST_TEST(log.volume().record_bytes == record.size());
    BOOST_TEST(log.volume().stored_bytes == fs::file_size(path + "-wal") - header);
    BOOST_TEST(log.volume().stored_bytes * 20 < record.size());
  }
  const auto contents = store::read_commit_log(path + "-wal");
  BOOST_REQUIRE(contents.has_value());
  BOOST_REQUIRE(contents->records.size() == 1U);
  store::LogRecordReader in(contents->records[0], "record 1");
  BOOST_TEST(in.u64() == 42U);
  BOOST_TEST((in.append(702).bytes == rows.bytes));
  in.finish();
  const auto last = store::read_last_record(path + "-wal");
  BOOST_REQUIRE(last.has_value());
  BOOST_TEST((*last == contents->records[0]));
}

// A record whose CRC matches but whose compressed bytes are not LZ4's, or a header that
// names a format this slurmtune does not know, cannot come from a writer's death: the log
// is refused and named, nothing of it applied.
BOOST_AUTO_TEST_CASE(a_log_that_does_not_decompress_is_refused_and_named) {
  testing::TempFolder dir;
  const std::string garbled = dir.file("garbled.h5");
  logged_and_killed(garbled);
  // The first record's stored bytes replaced by `stored` (as long as they were), and its
  // CRC made to match.
  const auto forge_first_record = [](const std::string& path, const auto& fill) {
    const auto contents = store::read_commit_log(path + "-wal");
    BOOST_REQUIRE(contents.has_value());
    const std::uint64_t first = 16 + 16 + contents->base.size();  // magic, frame, base
    std::uint64_t frame[2] = {};
    std::ifstream(path + "-wal", std::ios::binary)
        .seekg(static_cast<std::streamoff>(first))
        .read(reinterpret_cast<char*>(frame), sizeof frame);
    std::string stored(frame[0], '\0');
    fill(stored);
    frame[1] =
        crc32_z(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(stored.data()), stored.size());
    overwrite(path + "-wal", first,
              std::string(reinterpret_cast<const char*>(frame), sizeof frame) + stored);
  };
  // A length that claims more than LZ4 can make of the bytes.
  forge_first_record(garbled, [](std::string& stored) {
    const std::uint64_t claims = ~std::uint64_t{0};
    std::memcpy(stored.data(), &claims, sizeof claims);
  });
  check_refused(garbled, "its record 1 is a compressed record of");
  // A plausible length and chunk header, then bytes that are not an LZ4 block.
  const std::string junk = dir.file("junk.h5");
  logged_and_killed(junk);
  forge_first_record(junk, [](std::string& stored) {
    const std::uint64_t length = 100;
    const std::uint32_t chunk[2] = {100, static_cast<std::uint32_t>(stored.size() - 16)};
    std::memcpy(stored.data(), &length, sizeof length);
    std::memcpy(stored.data() + 8, chunk, sizeof chunk);
    std::fill(stored.begin() + 16, stored.end(), '\xff');
  });
  check_refused(junk, "its record 1 is a chunk LZ4 cannot decompress");

  const std::string newer = dir.file("newer.h5");
  logged_and_killed(newer);
  overwrite(newer + "-wal", 14, "9");
  check_refused(newer, "names a format this slurmtune does not read (it reads 1 and 2)");
}
