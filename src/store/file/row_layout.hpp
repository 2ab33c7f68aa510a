#pragma once
// Row layouts of the results file's compound datasets. A layout is built at run time
// (the trial table has one column per hyperparameter, the metric table one per metric)
// and gives both the HDF5 compound type and the byte offsets used to fill rows.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace slurmtune::store {

class Hid;  // store/hdf5.hpp: only compound_type() needs it, and its callers include it

enum class FieldKind { U64, I64, I32, F64, Enum8, FixedString };

struct Field {
  std::string name;
  FieldKind kind;
  std::size_t size;                     ///< bytes
  std::size_t offset;                   ///< within a row
  std::vector<std::string> enum_names;  ///< Enum8 only
};

class RowLayout {
 public:
  std::size_t add(std::string name, FieldKind kind, std::size_t string_size = 0,
                  std::vector<std::string> enum_names = {});
  std::size_t row_size() const { return size_; }
  const std::vector<Field>& fields() const { return fields_; }
  /// Index of a field by name; throws UsageError when absent.
  std::size_t index_of(const std::string& name) const;
  /// The compound type (native byte order; files from x86 and ARM read the same).
  Hid compound_type() const;

  void put_u64(std::byte* row, std::size_t field, std::uint64_t v) const { put(row, field, v); }
  void put_i64(std::byte* row, std::size_t field, std::int64_t v) const { put(row, field, v); }
  void put_i32(std::byte* row, std::size_t field, std::int32_t v) const { put(row, field, v); }
  void put_f64(std::byte* row, std::size_t field, double v) const { put(row, field, v); }
  void put_enum(std::byte* row, std::size_t field, std::uint8_t v) const { put(row, field, v); }
  /// The text as UTF-8 (ill-formed bytes replaced), null padded; longer text is cut at a
  /// character boundary and ends with "…" (core::fit_utf8). Paths, which must not be
  /// cut, are checked against the field's size before they get here.
  void put_string(std::byte* row, std::size_t field, const std::string& text) const;

  template <class T>
  T get(const std::byte* row, std::size_t field) const {
    T v;
    std::memcpy(&v, row + fields_[field].offset, sizeof v);
    return v;
  }
  /// The text as well-formed UTF-8 (ill-formed bytes read as U+FFFD).
  std::string get_string(const std::byte* row, std::size_t field) const;

 private:
  template <class T>
  void put(std::byte* row, std::size_t field, T v) const {
    std::memcpy(row + fields_[field].offset, &v, sizeof v);
  }
  std::vector<Field> fields_;
  std::size_t size_ = 0;
};

}  // namespace slurmtune::store
