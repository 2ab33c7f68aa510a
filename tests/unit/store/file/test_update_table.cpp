#define BOOST_TEST_MODULE store_update_table
// UpdateTable (store/file/tables.hpp), the rows rewritten in place (/trials): a row is
// written once per take however often it changed, in the file's order; a retired row
// is written once more and forgotten; a row's address holds while it lives; a resumed
// row is read back; the memory of a written batch is used again.
#include <boost/test/unit_test.hpp>
#include <vector>

#include "store/file/hdf5.hpp"
#include "store/file/tables.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::store;

namespace {

RowLayout layout() {
  RowLayout l;
  l.add("id", FieldKind::U64);
  l.add("value", FieldKind::F64);
  return l;
}

struct File {
  testing::TempFolder folder;
  Hid file;
  RowLayout rows = layout();
  File()
      : file(check(H5Fcreate(folder.file("t.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   "create")) {
    create_table(file, "trials", rows, DatasetOptions{});
  }
  Hid dataset() const { return check(H5Dopen2(file, "trials", H5P_DEFAULT), "open trials"); }
};

void set(const UpdateTable& table, std::byte* row, std::uint64_t id, double value) {
  table.layout().put_u64(row, 0, id);
  table.layout().put_f64(row, 1, value);
}

double value_in_file(const File& f, std::uint64_t index) {
  const auto bytes = read_table_rows(f.dataset(), f.rows, index, 1);
  return f.rows.get<double>(bytes.data(), 1);
}

}  // namespace

BOOST_AUTO_TEST_CASE(dirty_rows_go_once_each_in_the_file_s_order) {
  File f;
  UpdateTable table(f.dataset(), f.rows, 0);
  for (const std::uint64_t index : {700U, 3U, 4U, 5U, 1000U})
    set(table, table.row(index), index, 1.0);
  set(table, table.row(4), 4, 2.0);  // changed twice: one row in the batch
  const UpdateBatch batch = table.take();
  BOOST_TEST(batch.extent == 1001U);
  const std::vector<std::pair<hsize_t, hsize_t>> runs = {{3, 3}, {700, 1}, {1000, 1}};
  BOOST_TEST(batch.runs == runs);
  BOOST_TEST(batch.bytes.size() == 5 * f.rows.row_size());
  table.write(batch);
  BOOST_TEST(value_in_file(f, 4) == 2.0);
  BOOST_TEST(value_in_file(f, 1000) == 1.0);
  BOOST_TEST(table.take().runs.empty());  // nothing changed since
}

BOOST_AUTO_TEST_CASE(a_retired_row_is_written_once_more_then_forgotten) {
  File f;
  UpdateTable table(f.dataset(), f.rows, 0);
  std::vector<std::byte*> addresses;
  for (std::uint64_t index = 0; index < 600; ++index)
    addresses.push_back(table.row(index));
  // Rows keep their addresses while others come (more than one block of rows).
  for (std::uint64_t index = 0; index < 600; ++index)
    BOOST_TEST(table.row(index) == addresses[index]);
  table.write(table.take());
  set(table, table.row(7), 7, 9.0);
  table.retire(7);
  table.retire(7);  // twice: still once
  BOOST_TEST(table.is_live(7));
  const UpdateBatch last = table.take();
  BOOST_TEST(last.runs.size() == 1U);
  table.write(last);
  BOOST_TEST(!table.is_live(7));
  BOOST_TEST(value_in_file(f, 7) == 9.0);
  // Touched again later: a fresh row (zeroed), and its slot is used again.
  std::byte* again = table.row(7);
  BOOST_TEST(f.rows.get<double>(again, 1) == 0.0);
  BOOST_TEST(table.is_live(7));
}

BOOST_AUTO_TEST_CASE(a_resumed_row_is_read_back_and_a_written_batch_s_memory_returns) {
  File f;
  {
    UpdateTable first(f.dataset(), f.rows, 0);
    set(first, first.row(2), 2, 5.5);
    first.write(first.take());
  }
  UpdateTable table(f.dataset(), f.rows, 3);
  table.adopt(2);
  table.adopt(8);  // past the file's rows: zeroed
  BOOST_TEST(f.rows.get<double>(table.row(2), 1) == 5.5);
  BOOST_TEST(f.rows.get<double>(table.row(8), 1) == 0.0);
  UpdateBatch batch = table.take();
  const std::byte* memory = batch.bytes.data();
  table.write(batch);
  table.recycle(std::move(batch));
  table.row(2);
  table.row(8);
  BOOST_TEST(table.take().bytes.data() == memory);  // the same memory, filled again
}
