#pragma once
/// Input and output files, the one way ropesim reads and writes them.
///
/// Inputs (model specs, config.json files, DFA files, shard files) are read with a byte budget,
/// so a device such as /dev/zero or a runaway file is refused at once instead of exhausting
/// memory, and a FIFO or terminal that stops sending data is abandoned after a fixed idle time.
///
/// Outputs (`--out`, `-o`, `--dot`, `--data`) behave as with any Unix tool:
///   - a regular file, or a path that does not exist yet, is replaced atomically: the text is
///     written to a temporary file in the same directory (`NAME.tmp.<pid>.<n>`), which is
///     renamed over the path, so a failed run never leaves a partial file; an existing file
///     keeps its permission bits;
///   - a symbolic link is followed: the file it points to is replaced, the link stays;
///   - a character or block device, a FIFO or a socket (/dev/null, /dev/full, a named pipe) is
///     written through: opened and written, never renamed over;
///   - a descriptor of this process (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N) is
///     written to that open descriptor, as the shell does for `> /dev/stdout`: nothing is
///     reopened, truncated or renamed, so `-o /dev/stdout >> log` appends to the log.
/// Every error is a ropesim::InvalidArgument whose message is one line naming the path.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/budget.hpp"

namespace ropesim::io {

/// The largest input file ropesim reads by default: 64 MiB. A model spec of that size already
/// holds about 4·10^6 exact decimal weights, far beyond any model a construction or a test
/// makes; parsing it into JSON takes about ten times that much memory.
inline constexpr std::size_t input_limit_bytes = kMaxInputFileBytes;  // core/budget.hpp

/// Seconds a FIFO, terminal or socket given as an input may stay silent (no data, no end of
/// file) before reading is abandoned, by default.
inline constexpr int input_idle_seconds = 30;

/// What reading one input may cost.
struct InputBudget {
  std::size_t bytes = input_limit_bytes;  ///< the most bytes read
  int idle_seconds = input_idle_seconds;  ///< the longest wait for data from a FIFO/terminal
};

/// The whole content of the input file at `path`.
///
/// `what` names the kind of file in messages ("model spec file", "DFA file", …), `where` the
/// place the messages start with (the path when empty). Throws ropesim::InvalidArgument with
/// one line "WHERE: …" when the path is empty, missing or unreadable, a directory, longer than
/// `budget.bytes` (checked before reading for a regular file, while reading otherwise:
/// /dev/zero is refused after `budget.bytes` bytes), or a FIFO/terminal that sends nothing for
/// `budget.idle_seconds`. A FIFO is opened without waiting for a writer.
std::string read_input_file(const std::string& path, const std::string& what,
                            const std::string& where = "", const InputBudget& budget = {});

/// How an output path is written (see the file comment).
enum class OutputMode {
  replace,     ///< a regular file or a new path: temporary file, then rename
  through,     ///< a device, FIFO or socket: opened and written in place
  descriptor,  ///< an open descriptor of this process: written as it is
};

/// Where and how `path` is written: the final path after following symbolic links (for
/// `replace`; `path` itself for `through`), or the descriptor, and the mode. Throws
/// ropesim::InvalidArgument naming `flag` for an empty path, a directory, a path ending in '/', or
/// a chain of more than 40 symbolic links.
struct OutputTarget {
  std::string path;
  OutputMode mode = OutputMode::replace;
  int descriptor = -1;  ///< for OutputMode::descriptor
};
OutputTarget output_target(const std::string& path, const std::string& flag);

/// Checks, before any computation, that `path` can be written as `flag`'s output: for
/// `replace`, that a temporary file can be created next to the final path (created and removed
/// at once) and that an existing file is writable; for `through`, that the path is writable
/// (a FIFO is not opened, so the check never blocks). Throws ropesim::InvalidArgument naming
/// `flag` and the path otherwise. Nothing is left on disk.
void check_output_path(const std::string& path, const std::string& flag);

/// One output of a command: its path and the flag that names it.
struct NamedOutput {
  std::string path;
  std::string flag;
};

/// Checks that no two of a command's outputs are the same regular file (after following
/// symbolic links; a new path counts by where it would be created), so that one is never
/// written over the other. Empty paths are skipped; devices, FIFOs and descriptors
/// (/dev/null, /dev/stdout) may be shared, as a shell's redirections may. Throws
/// ropesim::InvalidArgument: "<flag2>: '<path2>' is also the <flag1> file; give different
/// files".
void check_distinct_outputs(const std::vector<NamedOutput>& outputs);

/// Writes `text` to `path` as `flag`'s output, by the rules of the file comment. Throws
/// ropesim::InvalidArgument naming `flag` and the path if the file cannot be created, written
/// (a full disk, /dev/full) or renamed; a failed replace removes its temporary file and leaves
/// the old file as it was.
void write_output_file(const std::string& path, const std::string& text,
                       const std::string& flag = "--out");

/// An output file written piece by piece, by the rules of write_output_file (the file
/// comment): a regular file is written to a temporary file next to it and renamed over it only
/// by commit(), so a run that throws before commit() leaves the old file as it was (the
/// destructor removes the temporary file); devices, FIFOs and this process's descriptors are
/// written through as the pieces arrive. Memory does not grow with the file: each write() goes
/// straight to the descriptor. Errors are ropesim::InvalidArgument naming `flag` and the path.
/// A temporary file is also removed when SIGINT, SIGTERM, SIGHUP or SIGPIPE ends the process
/// (a handler installed on first use for each of them whose action is still the default; a
/// host's own handler, such as Python's SIGINT, is left alone): an interrupted run leaves
/// neither a partial file nor its temporary.
class OutputStream {
 public:
  /// Opens `path` as `flag`'s output (creates the temporary file, or opens the device).
  OutputStream(const std::string& path, const std::string& flag = "--out");
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  /// Removes the temporary file unless commit() ran.
  ~OutputStream();
  /// Appends `bytes`. Throws on a write error (a full disk, /dev/full).
  void write(std::string_view bytes);
  /// Bytes written so far.
  std::uint64_t size() const { return size_; }
  /// Closes the file and renames the temporary file over the path (regular files). Throws if
  /// the close or the rename fails.
  void commit();

 private:
  std::string path_, flag_, final_path_, temporary_;
  int fd_ = -1;
  bool owned_ = false;  ///< fd_ is ours to close (not /dev/stdout)
  bool replace_ = false;
  bool committed_ = false;
  std::uint64_t size_ = 0;
  int tracked_slot_ = -1;  ///< the temporary's slot in the signal cleanup's table
};

}  // namespace ropesim::io
