#include "store/file/hdf5.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "core/number_text.hpp"

namespace slurmtune::store {

Hid& Hid::operator=(Hid&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.release();
  }
  return *this;
}

hid_t Hid::release() noexcept {
  const hid_t id = id_;
  id_ = H5I_INVALID_HID;
  return id;
}

void Hid::reset() noexcept {
  if (id_ < 0) return;
  const hid_t id = release();
  if (H5Iis_valid(id) <= 0) return;
  if (H5Idec_ref(id) < 0)
    std::fprintf(stderr, "slurmtune: warning: releasing an HDF5 handle failed: %s\n",
                 error_stack_text().c_str());
}

void quiet_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {
herr_t collect(unsigned n, const H5E_error2_t* e, void* data) {
  auto& text = *static_cast<std::string*>(data);
  if (n > 0) text += "; ";
  text += std::string(e->func_name ? e->func_name : "?") + "(): " + (e->desc ? e->desc : "");
  return 0;
}
}  // namespace

std::string error_stack_text() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? "no HDF5 error recorded" : text;
}

Hid check(hid_t id, std::string_view what) {
  if (id < 0) throw Hdf5Error("HDF5: " + std::string(what) + " failed: " + error_stack_text());
  return Hid(id);
}

bool lock_held_elsewhere(const std::string& stack) {
  return stack.find("unable to lock") != std::string::npos &&
         stack.find("errno = " + std::to_string(EWOULDBLOCK) + ",") != std::string::npos;
}

std::string file_lock_refusal(const std::string& path, const std::string& stack, double waited_s) {
  if (stack.find("unable to lock") == std::string::npos) return {};
  const auto at = stack.find("errno = ");
  const std::string code =
      at == std::string::npos
          ? ""
          : " (errno " + stack.substr(at + 8, stack.find(',', at) - at - 8) + ")";
  if (lock_held_elsewhere(stack))
    return path + ": another process holds HDF5's lock on the file" + code + ", still after " +
           core::format_double(waited_s) +
           " s: a program that has it open without SWMR (h5py's File(path) without "
           "swmr=True, HDFView, h5dump) or a writer of it. Close that program and run again. "
           "HDF5 said: " +
           stack;
  return path + ": the file system refused HDF5's file lock" + code +
         ", as some Lustre, GPFS and DVS mounts refuse flock(). Set HDF5_USE_FILE_LOCKING=FALSE "
         "in the environment of slurmtune and of whatever reads the file (HDF5 and h5py honour "
         "it; a study still has one writer, which STUDY.lock ensures without flock), or keep "
         "the results file on a file system with locks (doc/slurm.md, \"Where the files "
         "live\"). HDF5 said: " +
         stack;
}

Hid check_file(hid_t id, std::string_view what, const std::string& path) {
  return open_file([id] { return id; }, what, path, 0);  // no wait: `id` is not opened again
}

LockWait::LockWait(double wait_s) : wait_s_(wait_s) {}

bool LockWait::again(const std::string& stack) {
  if (!lock_held_elsewhere(stack) || slept_s_ + pause_s_ > wait_s_) return false;
  std::this_thread::sleep_for(std::chrono::duration<double>(pause_s_));
  slept_s_ += pause_s_;
  pause_s_ = std::min(pause_s_ * 2, 0.5);
  return true;
}

void check_status(herr_t status, std::string_view what) {
  if (status < 0) throw Hdf5Error("HDF5: " + std::string(what) + " failed: " + error_stack_text());
}

namespace {
Hid scalar_space() {
  return check(H5Screate(H5S_SCALAR), "H5Screate");
}

Hid variable_string_type() {
  Hid type = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_status(H5Tset_size(type, H5T_VARIABLE), "H5Tset_size");
  check_status(H5Tset_cset(type, H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

void write_attribute(hid_t object, const std::string& name, hid_t type, hid_t space,
                     const void* data) {
  if (H5Aexists(object, name.c_str()) > 0)
    check_status(H5Adelete(object, name.c_str()), "H5Adelete " + name);
  const Hid attr = check(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Acreate2 " + name);
  check_status(H5Awrite(attr, type, data), "H5Awrite " + name);
}
}  // namespace

void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  const char* text = value.c_str();
  write_attribute(object, name, variable_string_type(), scalar_space(), &text);
}

void write_int_attribute(hid_t object, const std::string& name, std::int64_t value) {
  write_attribute(object, name, H5T_NATIVE_INT64, scalar_space(), &value);
}

void write_double_attribute(hid_t object, const std::string& name, double value) {
  write_attribute(object, name, H5T_NATIVE_DOUBLE, scalar_space(), &value);
}

void write_strings_attribute(hid_t object, const std::string& name,
                             const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const auto& v : values)
    pointers.push_back(v.c_str());
  const hsize_t n = values.size();
  const Hid space = check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  write_attribute(object, name, variable_string_type(), space, pointers.data());
}

namespace {
// False when the attribute is absent; an error (a damaged object header) throws.
bool attribute_exists(hid_t object, const std::string& name) {
  const htri_t exists = H5Aexists(object, name.c_str());
  if (exists < 0) throw Hdf5Error("HDF5: H5Aexists " + name + " failed: " + error_stack_text());
  return exists > 0;
}
}  // namespace

std::optional<std::string> read_string_attribute(hid_t object, const std::string& name) {
  if (!attribute_exists(object, name)) return std::nullopt;
  const Hid attr = check(H5Aopen(object, name.c_str(), H5P_DEFAULT), "H5Aopen " + name);
  const Hid stored = check(H5Aget_type(attr), "H5Aget_type");
  if (H5Tget_class(stored) != H5T_STRING) return std::nullopt;
  if (H5Tis_variable_str(stored) > 0) {
    char* text = nullptr;
    const Hid type = variable_string_type();
    check_status(H5Aread(attr, type, &text), "H5Aread " + name);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(stored), '\0');
  check_status(H5Aread(attr, stored, value.data()), "H5Aread " + name);
  value.resize(value.find('\0') == std::string::npos ? value.size() : value.find('\0'));
  return value;
}

std::optional<std::int64_t> read_int_attribute(hid_t object, const std::string& name) {
  if (!attribute_exists(object, name)) return std::nullopt;
  const Hid attr = check(H5Aopen(object, name.c_str(), H5P_DEFAULT), "H5Aopen " + name);
  const Hid stored = check(H5Aget_type(attr), "H5Aget_type");
  if (H5Tget_class(stored) != H5T_INTEGER) return std::nullopt;
  std::int64_t value = 0;
  check_status(H5Aread(attr, H5T_NATIVE_INT64, &value), "H5Aread " + name);
  return value;
}

std::vector<std::string> read_strings_attribute(hid_t object, const std::string& name) {
  std::vector<std::string> out;
  if (!attribute_exists(object, name)) return out;
  const Hid attr = check(H5Aopen(object, name.c_str(), H5P_DEFAULT), "H5Aopen " + name);
  const Hid space = check(H5Aget_space(attr), "H5Aget_space");
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  std::vector<char*> pointers(n, nullptr);
  const Hid type = variable_string_type();
  check_status(H5Aread(attr, type, pointers.data()), "H5Aread " + name);
  for (char* p : pointers) {
    out.emplace_back(p ? p : "");
    H5free_memory(p);
  }
  return out;
}

Hid fixed_string_type(std::size_t size) {
  Hid type = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_status(H5Tset_size(type, size), "H5Tset_size");
  check_status(H5Tset_strpad(type, H5T_STR_NULLPAD), "H5Tset_strpad");
  check_status(H5Tset_cset(type, H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

Hid enum_type(const std::vector<std::string>& names) {
  Hid type = check(H5Tenum_create(H5T_NATIVE_UINT8), "H5Tenum_create");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto value = static_cast<std::uint8_t>(i);
    check_status(H5Tenum_insert(type, names[i].c_str(), &value), "H5Tenum_insert " + names[i]);
  }
  return type;
}

void flush_dataset(hid_t dataset, const char* what) {
  check_status(H5Dflush(dataset), std::string("H5Dflush ") + what);
}

}  // namespace slurmtune::store
