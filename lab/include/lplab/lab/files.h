// The files lplab reads and writes for a user, and the rules that keep the
// user's data safe. Every command, and the Python package, goes through here:
//
//   - An input is read only when it is a regular file; anything else is
//     refused with its real cause (no such file, a directory, a device or
//     FIFO, a path through a regular file, a name too long, no permission).
//   - An output is checked before any work: never one of the run's inputs
//     (compared by device and inode, links followed, so a hard link or a
//     symbolic link to an input is caught whatever its spelling), never a
//     directory, never a file its owner made read-only or that this user
//     could not write, always in a directory that takes a new file.
//   - An output is written atomically: a temporary file beside it, every
//     write checked (a full disk, EFBIG under a file-size limit), then a
//     rename. A replaced file keeps its mode, and its owner and group where
//     the process may set them; a symbolic link stays and the file it names
//     is replaced. A device or FIFO (/dev/null, a named pipe) is written
//     through, never replaced. Nothing is left behind on failure, and stale
//     temporaries of this target that lplab can prove are its own (its name
//     pattern, the PID of a process that no longer runs, this user's file)
//     are removed.
//   - "-" is standard output in every command, as in coreutils; an empty path
//     is refused.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lplab::experiments {

// A write that failed (a full disk, a file-size limit, an I/O error): one
// line, and the tool's exit status for a failed output (1; 3 from
// `lplab regress`), not a usage error's 2. Nothing was replaced.
struct WriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The name that means standard output wherever a command takes an output.
inline constexpr std::string_view kStandardOutput = "-";

// Throws UsageError ("PATH: <cause>, not WHAT") unless `path` names a
// readable regular file. `what` names what was expected: "a spec file".
void require_input_file(const std::string& path, std::string_view what);

// The whole of a regular file, at most `max_bytes` (more is refused with
// the limit named: a file that grows, or a device, never reads forever).
std::string read_input_file(const std::string& path, std::string_view what, std::uintmax_t max_bytes);

// Whether two paths name the same existing file (device and inode, symbolic
// links followed). False when either does not exist.
bool same_file(const std::string& a, const std::string& b);

// Checks, before any work, that write_file_atomic(path, ...) can succeed and
// destroys nothing the user gave: see the rules above. `option` names the
// output in the message ("--out", "--junit"); `inputs` are every file the
// run reads.
void check_output_file(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs = {});

// Writes `content` to `path` ("-": standard output) by the rules above.
// Throws WriteError with one line naming the cause when a write fails
// (UsageError when the path itself is wrong: a directory, a bad link).
void write_file_atomic(const std::string& path, const std::string& content);

// A file name's extension with its dot, lower-cased (".json"; "" for none).
std::string extension_of(const std::string& path);

// The text format a file name asks for by its extension: "json", "csv",
// "" for any other name (a table, or a name that says nothing). Case is
// ignored (.JSON is JSON).
std::string extension_format(const std::string& path);

// The temporary file write_file_atomic uses for `target` in this process,
// and whether a file name is one of lplab's temporaries for `target` left by
// a process that no longer runs (the tests read both).
std::string temporary_name(const std::string& target);
bool is_stale_temporary(const std::string& name, const std::string& target_name);

}  // namespace lplab::experiments
