#pragma once
// SIGINT / SIGTERM: stop the run in progress so the report shows where every
// device stood, flush everything, and exit with 128 + the signal number
// (130 / 143). Nothing is lost and nothing hangs: devices stop at their next
// collective, breakpoint or step count, the interpreter at its next host
// statement; if the program still does not stop within a grace period (stuck
// in one long array op), or a second signal arrives, the process flushes its
// output and exits anyway.

namespace spmd::cli {

/// Blocks SIGINT/SIGTERM in the calling thread (call first in main, before any
/// thread exists, so every thread inherits the mask) and starts the thread
/// that handles them.
void install_signal_handling();

/// Tells the signal thread the command finished (it then exits at once on a
/// late signal instead of waiting).
void mark_finished();

/// The first SIGINT/SIGTERM received, or 0.
int received_signal();

/// Called on the signal thread before the process exits without its report
/// (the grace period ran out, or a second signal came): the launcher kills
/// its ranks there, so none is left running.
void set_forced_exit_hook(void (*hook)());

/// The grace period after the first signal, 10 s unless set: the launcher
/// gives its ranks their own 10 s to report, and more to relay it.
void set_grace_seconds(int seconds);

/// "SIGINT", "SIGTERM".
const char* signal_name(int sig);

}  // namespace spmd::cli
