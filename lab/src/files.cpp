// The files lplab reads and writes for a user (files.h): inputs read only
// when they are regular files, outputs checked before any work and written
// atomically without losing what they replace.
#include "lplab/lab/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "lplab/lab/vocabulary.h"

namespace lplab::experiments {
namespace {

namespace fs = std::filesystem;

// Linux's limits (limits.h): a name of at most 255 bytes, a path of at most
// 4096 bytes with its terminating NUL.
constexpr std::size_t kNameMax = NAME_MAX;
constexpr std::size_t kPathMax = PATH_MAX;

// 1. Names the kernel would refuse, said before any system call does.
void check_name_lengths(const std::string& label, const std::string& path) {
  if (path.size() >= kPathMax)
    throw UsageError(fmt::format("{}: the path is {} bytes; the system takes at most {}", label,
                                 path.size(), kPathMax - 1));
  for (const fs::path& part : fs::path(path)) {
    const std::string name = part.string();
    if (name.size() > kNameMax)
      throw UsageError(fmt::format("{}: the name '{}' is {} bytes; a file name has at most {}", label,
                                   shown(name), name.size(), kNameMax));
  }
}

// 2. Why `dir` is not a directory one can write in: the first part of it
// that is a file, or the first that does not exist.
std::string directory_cause(const fs::path& dir) {
  fs::path so_far;
  for (const fs::path& part : dir) {
    so_far /= part;
    struct stat st {};
    if (::stat(so_far.c_str(), &st) != 0)
      return errno == ENOENT ? fmt::format("the directory {} does not exist", so_far.string())
                             : fmt::format("{}: {}", so_far.string(), std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) return fmt::format("{} is a file, not a directory", so_far.string());
  }
  return fmt::format("the directory {} cannot be used", dir.string());
}

// 3. What a failed stat() of an existing-or-not path means to a user.
std::string stat_cause(int err, const std::string& path) {
  switch (err) {
    case ENOENT: {
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0) return "a symbolic link to a file that does not exist";
      return "no such file";
    }
    case ENOTDIR: return directory_cause(fs::path(path).parent_path());
    case ENAMETOOLONG: return "the path is longer than the system allows";
    case ELOOP: return "too many symbolic links";
    case EACCES: return "permission denied (a directory on the way cannot be searched)";
    default: return std::strerror(err);
  }
}

std::string kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// The file a path names: symbolic links followed (a dangling one names the
// file it would create), at most 40 of them, as the kernel allows.
fs::path link_target(const std::string& option, const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40) throw UsageError(fmt::format("{} {}: too many symbolic links", option, path));
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) throw UsageError(fmt::format("{} {}: cannot read the link ({})", option, path, ec.message()));
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p;
}

// Writes the whole of `content` to `fd`; false with errno set on failure.
bool write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string write_cause(int err) {
  if (err == EFBIG) return "the file is larger than the file-size limit allows (ulimit -f)";
  if (err == ENOSPC) return "no space left on the device";
  if (err == EDQUOT) return "the disk quota is exhausted";
  return std::strerror(err);
}

// Writes through an existing device or FIFO (/dev/null, a named pipe).
void write_through(const std::string& path, const fs::path& target, const std::string& content) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw UsageError(fmt::format("{}: cannot open it for writing ({})", path, std::strerror(errno)));
  const bool ok = write_all(fd, content);
  const int err = errno;
  if (::close(fd) != 0 && ok)
    throw WriteError(fmt::format("{}: write failed ({})", path, write_cause(errno)));
  if (!ok) throw WriteError(fmt::format("{}: write failed ({})", path, write_cause(err)));
}

void write_stdout(const std::string& content) {
  if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
    throw WriteError(fmt::format("standard output: write failed ({})", write_cause(errno)));
}

// lplab's temporaries: ".NAME.lplab-PID.tmp" beside NAME (hidden, so that a
// glob of the user's files does not pick one up).
constexpr std::string_view kTempInfix = ".lplab-";
constexpr std::string_view kTempSuffix = ".tmp";

// 4. Removes this target's temporaries left by lplab processes that no
// longer run. Only files of this user, with the exact name pattern and a PID
// that kill(2) says does not exist, are touched.
void remove_stale_temporaries(const fs::path& target) {
  std::error_code ec;
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string name = target.filename().string();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (!is_stale_temporary(n, name)) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid())
      ::unlink(it->path().c_str());
  }
}

}  // namespace

std::string temporary_name(const std::string& target) {
  const fs::path t(target);
  return (t.parent_path() / fmt::format(".{}{}{}{}", t.filename().string(), kTempInfix, ::getpid(), kTempSuffix))
      .string();
}

bool is_stale_temporary(const std::string& name, const std::string& target_name) {
  const std::string prefix = fmt::format(".{}{}", target_name, kTempInfix);
  if (!name.starts_with(prefix) || !name.ends_with(kTempSuffix)) return false;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - kTempSuffix.size());
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  if (pid <= 0 || pid == ::getpid()) return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

void require_input_file(const std::string& path, std::string_view what) {
  if (path.empty()) throw UsageError(fmt::format("an empty path is not {}", what));
  check_name_lengths(shown(path), path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw UsageError(fmt::format("{}: {}", path, stat_cause(errno, path)));
  if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{}: is a directory, not {}", path, what));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("{}: {}, not a regular file (expected {})", path, kind_of(st.st_mode), what));
  if (::access(path.c_str(), R_OK) != 0)
    throw UsageError(fmt::format("{}: cannot read it ({})", path, std::strerror(errno)));
}

std::string read_input_file(const std::string& path, std::string_view what, std::uintmax_t max_bytes) {
  require_input_file(path, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UsageError(fmt::format("{}: cannot open it ({})", path, std::strerror(errno)));
  // At most one byte more than the limit, whatever the file's size says.
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw UsageError(fmt::format("{}: cannot read it ({})", path, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (text.size() > max_bytes) {
    constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;
    const std::string limit = max_bytes % kMiB == 0 ? fmt::format("{} MiB", max_bytes / kMiB)
                                                    : fmt::format("{} bytes", max_bytes);
    throw UsageError(fmt::format("{}: larger than {}, too large for {}", path, limit, what));
  }
  return text;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (a.empty() || b.empty() || ::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string extension_of(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

std::string extension_format(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == ".json") return "json";
  if (ext == ".csv") return "csv";
  return "";
}

void check_output_file(const std::string& option, const std::string& path, const std::vector<std::string>& inputs) {
  if (path == kStandardOutput) return;
  if (path.empty()) throw UsageError(fmt::format("{} is empty: give a file name, or - for standard output", option));
  const std::string label = fmt::format("{} {}", option, shown(path));  // a long path: its first 60 bytes
  check_name_lengths(label, path);
  const fs::path target = link_target(option, path);
  if (path.ends_with('/')) throw UsageError(fmt::format("{}: is a directory; give a file name", label));
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) throw UsageError(fmt::format("{}: {}", label, stat_cause(errno, path)));
  if (exists) {
    for (const std::string& in : inputs)
      if (same_file(path, in))
        throw UsageError(fmt::format("{}: is {}an input of this run; lplab never writes over its inputs "
                                     "(name another file)",
                                     label, in == path ? "" : fmt::format("the same file as {}, ", in)));
    if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{}: is a directory; give a file name", label));
    if (!S_ISREG(st.st_mode)) {  // a device or FIFO: written through, never replaced
      if (::access(target.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("{}: cannot write to it ({})", label, std::strerror(errno)));
      return;
    }
    if (::access(target.c_str(), W_OK) != 0)
      throw UsageError(fmt::format("{}: cannot write to it ({}); lplab replaces only files you may write",
                                   label, std::strerror(errno)));
    if ((st.st_mode & 0222) == 0)
      throw UsageError(fmt::format("{}: is read-only (mode {:04o}); lplab does not replace a file its owner "
                                   "protected",
                                   label, st.st_mode & 07777));
  }
  std::error_code ec;
  const fs::path dir = fs::absolute(target, ec).parent_path();
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{}: {}", label, directory_cause(dir)));
  // A file created and removed here: a read-only place (/proc, a read-only
  // mount, a directory without write permission) fails now, not after the run.
  std::string probe = (dir / ".lplab-out-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw UsageError(fmt::format("{}: cannot create a file in {} ({})", label, dir.string(), std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file_atomic(const std::string& path, const std::string& content) {
  if (path == kStandardOutput) {
    write_stdout(content);
    return;
  }
  const fs::path target = link_target("output", path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{}: is a directory", path));
  if (exists && !S_ISREG(st.st_mode)) {
    write_through(path, target, content);
    return;
  }
  remove_stale_temporaries(target);
  const std::string tmp = temporary_name(target.string());
  ::unlink(tmp.c_str());  // only ever this process's own name
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw WriteError(fmt::format("{}: cannot create a file beside it ({})", path, std::strerror(errno)));
  auto fail = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw WriteError(fmt::format("{}: {} ({}); the file is unchanged", path, what, write_cause(err)));
  };
  if (!write_all(fd, content)) fail("write failed", errno);
  if (exists) {
    // The replaced file's permissions, and its owner and group where this
    // process may give them (root may; anyone may keep their own).
    if (::fchmod(fd, st.st_mode & 07777) != 0) fail("cannot keep the file's mode", errno);
    if (::fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM) fail("cannot keep the file's owner", errno);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw WriteError(fmt::format("{}: write failed ({}); the file is unchanged", path, write_cause(err)));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw WriteError(fmt::format("{}: cannot put the finished file in place ({})", path, std::strerror(err)));
  }
}

}  // namespace lplab::experiments
