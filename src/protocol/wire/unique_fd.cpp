#include "protocol/wire/unique_fd.hpp"

#include <cerrno>
#include <system_error>

namespace slurmtune::protocol {

void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace slurmtune::protocol
