#pragma once
// SIGINT / SIGTERM: stop the run in progress so the report shows where every
// device stood, flush everything, and exit non-zero. Nothing is lost and
// nothing hangs: if the program does not stop within a grace period (it runs
// on the host, or in code that never yields), the process exits anyway.

namespace spmd::cli {

/// Blocks SIGINT/SIGTERM in the calling thread (call first in main, before any
/// thread exists, so every thread inherits the mask) and starts the thread
/// that handles them.
void install_signal_handling();

/// Tells the signal thread the command finished (it then exits at once on a
/// late signal instead of waiting).
void mark_finished();

}  // namespace spmd::cli
