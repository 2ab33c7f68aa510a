#include "core/input_file.hpp"

#include <filesystem>
#include <system_error>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {

std::string kind_of(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  switch (type) {
    case file_type::fifo:
      return "a named pipe";
    case file_type::directory:
      return "a folder";
    case file_type::socket:
      return "a socket";
    case file_type::character:
      return "a character device";
    case file_type::block:
      return "a block device";
    default:
      return "not a file";
  }
}

}  // namespace

void require_regular_file(const std::string& path, const std::string& what) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || status.type() == std::filesystem::file_type::not_found ||
      status.type() == std::filesystem::file_type::regular)
    return;
  throw InputError(path + ": not a regular file (" + kind_of(status.type()) + "); " + what +
                   " must be a regular file");
}

}  // namespace slurmtune::core
