#include "runtime/pbt/file_copy.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "protocol/wire/unique_fd.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error) {
  throw Error("cannot " + what + " " + path.string() + ": " + std::strerror(error));
}

struct stat stat_of(int fd, const fs::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("stat", path, errno);
  return st;
}

// copy_file_range's refusals that mean "not between these files": read and write then.
bool kernel_copy_unsupported(int error) {
  return error == EXDEV || error == EINVAL || error == ENOSYS || error == EOPNOTSUPP ||
         error == EBADF;
}

// Returns false, having copied nothing, when the kernel cannot copy between the two.
bool kernel_copy(int in, int out, std::uint64_t size, const fs::path& from) {
  std::uint64_t copied = 0;
  while (copied < size) {
    const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, size - copied, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (copied == 0 && kernel_copy_unsupported(errno)) return false;
      fail("copy", from, errno);
    }
    if (n == 0) break;  // the file shrank while being copied: the stamp will tell
    copied += static_cast<std::uint64_t>(n);
  }
  return true;
}

void read_write(int in, int out, const fs::path& from, const fs::path& to) {
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("read", from, errno);
    }
    if (n == 0) return;
    for (ssize_t written = 0; written < n;) {
      const ssize_t w =
          ::write(out, buffer.data() + written, static_cast<std::size_t>(n - written));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("write", to, errno);
      }
      written += w;
    }
  }
}

void copy_file(const fs::path& from, const fs::path& to, TreeCopy& copy) {
  const protocol::UniqueFd in(::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in) fail("open", from, errno);
  const struct stat st = stat_of(in.get(), from);
  const mode_t mode = st.st_mode & 0777;
  const protocol::UniqueFd out(
      ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!out) fail("create", to, errno);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (::ioctl(out.get(), FICLONE, in.get()) == 0) {
    ++copy.reflinked;
  } else if (kernel_copy(in.get(), out.get(), size, from)) {
    ++copy.kernel_copied;
  } else {
    read_write(in.get(), out.get(), from, to);
    ++copy.read_written;
  }
  if (::fchmod(out.get(), mode) != 0) fail("set the permissions of", to, errno);
  copy.bytes += size;
}

void copy_entry(const fs::path& from, const fs::path& to, TreeCopy& copy) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(from, ec);
  if (ec) fail("stat", from, ec.value());
  switch (status.type()) {
    case fs::file_type::regular:
      return copy_file(from, to, copy);
    case fs::file_type::symlink:
      fs::copy_symlink(from, to, ec);
      if (ec) fail("copy the link", from, ec.value());
      return;
    case fs::file_type::directory:
      fs::create_directory(to, ec);
      if (ec) fail("create", to, ec.value());
      for (const auto& entry : fs::directory_iterator(from, ec))
        copy_entry(entry.path(), to / entry.path().filename(), copy);
      if (ec) fail("list", from, ec.value());
      return;
    default:
      throw Error("cannot copy " + from.string() +
                  ": not a file, a folder or a link (a checkpoint holds only those)");
  }
}

}  // namespace

TreeCopy copy_tree(const fs::path& source, const fs::path& target) {
  const auto began = std::chrono::steady_clock::now();
  TreeCopy copy;
  copy_entry(source, target, copy);
  copy.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return copy;
}

std::string TreeCopy::describe() const {
  std::string how;
  const auto add = [&](std::uint64_t files, const char* what) {
    if (files == 0) return;
    how += how.empty() ? ", " : " and ";
    how += what;
  };
  add(reflinked, "reflinked");
  add(kernel_copied, "copied in the kernel");
  add(read_written, "read and written");
  char text[96];
  std::snprintf(text, sizeof text, "%.2f GB in %.2f s", static_cast<double>(bytes) / 1e9, seconds);
  return text + how;
}

TreeStamp stamp_tree(const fs::path& root) {
  TreeStamp stamp;
  const auto add = [&](const fs::path& path, const std::string& key) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    const std::int64_t mtime_ns =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    stamp[key] = {static_cast<std::uint64_t>(st.st_size), mtime_ns};
  };
  std::error_code ec;
  add(root, ".");
  if (!fs::is_directory(fs::symlink_status(root, ec))) return stamp;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    add(it->path(), it->path().lexically_relative(root).string());
  return stamp;
}

}  // namespace slurmtune::runtime
