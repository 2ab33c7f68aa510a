#include "store/file/row_layout.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "store/file/hdf5.hpp"

namespace slurmtune::store {

std::size_t RowLayout::add(std::string name, FieldKind kind, std::size_t string_size,
                           std::vector<std::string> enum_names) {
  std::size_t size = 8;
  if (kind == FieldKind::I32) size = 4;
  if (kind == FieldKind::Enum8) size = 1;
  if (kind == FieldKind::FixedString) size = string_size;
  fields_.push_back(Field{std::move(name), kind, size, size_, std::move(enum_names)});
  size_ += size;
  return fields_.size() - 1;
}

std::size_t RowLayout::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == name) return i;
  throw UsageError("row layout has no field '" + name + "'");
}

Hid RowLayout::compound_type() const {
  Hid type = check(H5Tcreate(H5T_COMPOUND, size_), "H5Tcreate compound");
  for (const auto& f : fields_) {
    Hid owned;
    hid_t member = H5T_NATIVE_UINT64;
    switch (f.kind) {
      case FieldKind::U64:
        member = H5T_NATIVE_UINT64;
        break;
      case FieldKind::I64:
        member = H5T_NATIVE_INT64;
        break;
      case FieldKind::I32:
        member = H5T_NATIVE_INT32;
        break;
      case FieldKind::F64:
        member = H5T_NATIVE_DOUBLE;
        break;
      case FieldKind::Enum8:
        owned = enum_type(f.enum_names);
        member = owned;
        break;
      case FieldKind::FixedString:
        owned = fixed_string_type(f.size);
        member = owned;
        break;
    }
    check_status(H5Tinsert(type, f.name.c_str(), f.offset, member), "H5Tinsert " + f.name);
  }
  return type;
}

void RowLayout::put_string(std::byte* row, std::size_t field, const std::string& text) const {
  const Field& f = fields_[field];
  std::byte* at = row + f.offset;
  std::memset(at, 0, f.size);
  const std::string fitted = core::fit_utf8(text, f.size);
  std::memcpy(at, fitted.data(), fitted.size());
}

std::string RowLayout::get_string(const std::byte* row, std::size_t field) const {
  const Field& f = fields_[field];
  const auto* at = reinterpret_cast<const char*>(row + f.offset);
  // Files of older versions may hold a character cut in two: read it as U+FFFD.
  return core::repair_utf8(std::string_view(at, strnlen(at, f.size)));
}

}  // namespace slurmtune::store
