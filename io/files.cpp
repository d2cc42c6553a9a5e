#include "io/files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>

#include "core/error.hpp"

namespace ropesim::io {

namespace {

/// The largest number of symbolic links followed for one output path (Linux's MAXSYMLINKS).
constexpr int max_symlink_hops = 40;

std::string error_text(int error) { return std::strerror(error); }

/// Closes a descriptor when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }
  /// Closes now; false (errno set) if close reported an error (a delayed write error).
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return fd < 0 || ::close(fd) == 0;
  }

 private:
  int fd_;
};

std::string mib(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

/// Writes all of `text` to `fd`; false (errno set) on an error.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string parent_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

/// True if the directory holding `path` is under /proc: /proc/self/fd/N and the links that
/// lead there (/dev/stdout, /dev/fd/N) name an open descriptor, not a file to replace.
bool in_proc(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(parent_of(path).c_str(), resolved) == nullptr) return false;
  const std::string_view dir(resolved);
  return dir == "/proc" || dir.starts_with("/proc/");
}

[[noreturn]] void refuse_output(const std::string& flag, const std::string& path,
                                const std::string& problem) {
  throw InvalidArgument(flag + ": '" + path + "' " + problem);
}

// Temporary files still open, for removal when a signal ends the process (SIGINT, SIGTERM,
// SIGHUP, SIGPIPE with their default action): a fixed table of paths read by the handler, which
// only calls async-signal-safe functions (unlink, sigaction, raise). A path longer than a slot
// or a 65th simultaneous temporary is not tracked (ropesim writes at most a few at once).
constexpr std::size_t kTrackedTemporaries = 64;
constexpr std::size_t kTrackedPathBytes = 4096;
struct TrackedTemporary {
  std::atomic<bool> live{false};
  char path[kTrackedPathBytes] = {};
};
TrackedTemporary g_tracked[kTrackedTemporaries];
std::atomic<bool> g_claimed[kTrackedTemporaries];

extern "C" void remove_temporaries_and_resignal(int signal_number) {
  for (auto& t : g_tracked) {
    if (t.live.load(std::memory_order_acquire)) ::unlink(t.path);
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);  // ends the process as the signal would have
}

/// Installs the handler once, for each of the signals whose action is still the default (a
/// host's own handler, such as Python's for SIGINT, and an ignored signal are left alone).
void install_temporary_cleanup() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction old {};
    if (::sigaction(signal_number, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_resignal;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal_number, &action, nullptr);
  }
}

/// Tracks `path` for removal on a signal: its slot, or -1 when it cannot be tracked.
int track_temporary(const std::string& path) {
  install_temporary_cleanup();
  if (path.size() >= kTrackedPathBytes) return -1;
  for (std::size_t i = 0; i < kTrackedTemporaries; ++i) {
    if (g_claimed[i].exchange(true)) continue;
    std::memcpy(g_tracked[i].path, path.c_str(), path.size() + 1);
    g_tracked[i].live.store(true, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

/// Stops tracking slot `slot` (before the file is renamed or removed); -1 is a no-op.
void forget_temporary(int slot) {
  if (slot < 0) return;
  g_tracked[slot].live.store(false, std::memory_order_release);
  g_claimed[slot].store(false, std::memory_order_release);
}

std::string temporary_name(const std::string& final_path) {
  static std::atomic<unsigned> counter{0};
  return final_path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

/// Creates a new temporary file next to `final_path` (mode 0666 less the umask); -1 on error.
/// `slot` receives its track_temporary slot (tracked before it is created, so that no signal
/// leaves it behind; forget_temporary when it is renamed or removed).
int create_temporary(const std::string& final_path, std::string& name, int& slot) {
  slot = -1;
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = temporary_name(final_path);
    slot = track_temporary(name);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0) return fd;
    const int saved = errno;
    forget_temporary(slot);  // not ours: another process's file, or nothing created
    slot = -1;
    errno = saved;
    if (saved != EEXIST) return fd;
  }
  return -1;
}

/// The descriptor `path` names if it is one of this process's own (/dev/stdout, /dev/stderr,
/// /dev/stdin, /dev/fd/N, /proc/self/fd/N), else -1.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(path).substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return -1;
    }
    return std::stoi(std::string(digits));
  }
  return -1;
}

/// create_temporary, or the one-line refusal naming `flag`, `path` and the directory.
int create_temporary_or_refuse(const std::string& final_path, const std::string& flag,
                               const std::string& path, std::string& name, int& slot) {
  const int fd = create_temporary(final_path, name, slot);
  if (fd < 0) {
    refuse_output(flag, path,
                  "cannot be written: cannot create a file in '" + parent_of(final_path) + "' (" +
                      error_text(errno) + ")");
  }
  return fd;
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what,
                            const std::string& where_given, const InputBudget& budget) {
  const std::size_t limit = budget.bytes;
  const std::string where = where_given.empty() ? path : where_given;
  if (path.empty())
    throw InvalidArgument(where + ": empty file name; accepted: the path of a " + what);
  // O_NONBLOCK: opening a FIFO does not wait for a writer (poll below waits, with a limit).
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    throw InvalidArgument(where + ": cannot open the " + what + " (" + error_text(errno) + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw InvalidArgument(where + ": cannot read the " + what + " (" + error_text(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw InvalidArgument(where + ": is a directory; accepted: a " + what);
  const auto too_long = [&] {
    throw InvalidArgument(where + ": longer than " + mib(limit) + ", the limit for a " + what);
  };
  const bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<std::uintmax_t>(st.st_size) > limit) too_long();
  std::string text;
  if (regular) text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    if (!regular) {
      pollfd p{fd.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, budget.idle_seconds * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        throw InvalidArgument(where + ": no data for " + std::to_string(budget.idle_seconds) +
                              " s; accepted: a " + what + " that ends");
      }
    }
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw InvalidArgument(where + ": cannot read the " + what + " (" + error_text(errno) + ")");
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > limit) too_long();
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

OutputTarget output_target(const std::string& path, const std::string& flag) {
  if (path.empty())
    throw InvalidArgument(flag +
                          ": empty file name; accepted: a file path, /dev/stdout or /dev/null");
  if (path.back() == '/') refuse_output(flag, path, "names a directory; accepted: a file path");
  std::string current = path;
  for (int hop = 0; hop <= max_symlink_hops; ++hop) {
    // /dev/stdout, or a link to it: the open descriptor itself (never reopened, see the header).
    if (const int fd = own_descriptor(current); fd >= 0) {
      if (::fcntl(fd, F_GETFD) < 0)
        refuse_output(flag, path, "is not an open descriptor of this process");
      return {path, OutputMode::descriptor, fd};
    }
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT)
        return {current, OutputMode::replace};  // a new file (or a dangling link's target)
      refuse_output(flag, path, "cannot be written (" + error_text(errno) + ")");
    }
    if (in_proc(current)) return {path, OutputMode::through};  // /dev/stdout, /dev/fd/N
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const std::filesystem::path target = std::filesystem::read_symlink(current, ec);
      if (ec) refuse_output(flag, path, "cannot be written (" + ec.message() + ")");
      current = target.is_absolute()
                    ? target.string()
                    : (std::filesystem::path(parent_of(current)) / target).string();
      continue;
    }
    if (S_ISDIR(st.st_mode)) refuse_output(flag, path, "is a directory; accepted: a file path");
    if (S_ISREG(st.st_mode)) return {current, OutputMode::replace};
    return {path, OutputMode::through};  // a device, FIFO or socket
  }
  refuse_output(flag, path,
                "is a chain of more than " + std::to_string(max_symlink_hops) + " symbolic links");
}

void check_output_path(const std::string& path, const std::string& flag) {
  const OutputTarget target = output_target(path, flag);
  if (target.mode == OutputMode::descriptor) {
    const int flags = ::fcntl(target.descriptor, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
      refuse_output(flag, path, "is not open for writing");
    return;
  }
  if (target.mode == OutputMode::through) {
    if (::access(target.path.c_str(), W_OK) != 0)
      refuse_output(flag, path, "is not writable (" + error_text(errno) + ")");
    return;
  }
  if (::access(target.path.c_str(), F_OK) == 0 && ::access(target.path.c_str(), W_OK) != 0) {
    refuse_output(flag, path, "is not writable (" + error_text(errno) + ")");
  }
  std::string probe;
  int slot = -1;
  Descriptor fd(create_temporary_or_refuse(target.path, flag, path, probe, slot));
  fd.close();
  ::unlink(probe.c_str());
  forget_temporary(slot);
}

void check_distinct_outputs(const std::vector<NamedOutput>& outputs) {
  std::vector<std::pair<std::filesystem::path, const NamedOutput*>> files;
  for (const NamedOutput& o : outputs) {
    if (o.path.empty()) continue;
    const OutputTarget target = output_target(o.path, o.flag);
    if (target.mode != OutputMode::replace) continue;
    std::error_code ec;
    std::filesystem::path where = std::filesystem::weakly_canonical(target.path, ec);
    if (ec) where = std::filesystem::absolute(target.path);
    for (const auto& [earlier, named] : files) {
      if (earlier == where) {
        throw InvalidArgument(o.flag + ": '" + o.path + "' is also the " + named->flag +
                              " file; give different files");
      }
    }
    files.emplace_back(where, &o);
  }
}

void write_output_file(const std::string& path, const std::string& text, const std::string& flag) {
  // The one writer: OutputStream's rules (descriptor, write-through, or a temporary file renamed
  // over the path by commit(); removed by its destructor when a write throws).
  OutputStream out(path, flag);
  out.write(text);
  out.commit();
}

OutputStream::OutputStream(const std::string& path, const std::string& flag)
    : path_(path), flag_(flag) {
  const OutputTarget target = output_target(path, flag);
  if (target.mode == OutputMode::descriptor) {
    std::cout.flush();  // what the program printed before comes first
    std::fflush(nullptr);
    fd_ = target.descriptor;
    return;
  }
  owned_ = true;
  if (target.mode == OutputMode::through) {
    fd_ = ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) refuse_output(flag, path, "cannot be opened (" + error_text(errno) + ")");
    return;
  }
  replace_ = true;
  final_path_ = target.path;
  struct stat old {};
  const bool existed = ::stat(target.path.c_str(), &old) == 0;
  fd_ = create_temporary_or_refuse(target.path, flag, path, temporary_, tracked_slot_);
  if (existed && ::fchmod(fd_, old.st_mode & 07777) != 0) {
    const int saved = errno;
    ::close(fd_);
    ::unlink(temporary_.c_str());
    forget_temporary(tracked_slot_);
    tracked_slot_ = -1;
    fd_ = -1;
    refuse_output(flag, path, "cannot keep the file's permissions (" + error_text(saved) + ")");
  }
}

OutputStream::~OutputStream() {
  if (owned_ && fd_ >= 0) ::close(fd_);
  if (replace_ && !committed_) {
    ::unlink(temporary_.c_str());
    forget_temporary(tracked_slot_);
  }
}

void OutputStream::write(std::string_view bytes) {
  if (fd_ < 0 || committed_) refuse_output(flag_, path_, "write after the file was closed");
  if (!write_all(fd_, bytes))
    refuse_output(flag_, path_, "write failed (" + error_text(errno) + ")");
  size_ += bytes.size();
}

void OutputStream::commit() {
  if (committed_) return;
  if (owned_) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) refuse_output(flag_, path_, "write failed (" + error_text(errno) + ")");
  }
  if (replace_ && ::rename(temporary_.c_str(), final_path_.c_str()) != 0)
    refuse_output(flag_, path_, "cannot be replaced (" + error_text(errno) + ")");
  if (replace_) forget_temporary(tracked_slot_);
  committed_ = true;
}

}  // namespace ropesim::io
