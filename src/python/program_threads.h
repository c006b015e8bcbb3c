#pragma once
// A program's other threads once its main module has ended (spmd run, each
// program of spmd test). CPython ends a daemon thread where it next asks for
// the GIL once the interpreter finalizes. spmd's runner does not finalize
// the interpreter (spmd test runs the next program in it), but the run's
// Runtime goes away with the program: so a daemon thread must not be inside,
// or enter, a device run after that. Its run is stopped, and the thread waits
// for the process to end where it would next take the GIL (coming back from
// the run) or start a run.

namespace spmd {
class Runtime;
}

namespace spmd::python {

/// The calling thread runs a program's main module from now on.
void program_begins();
/// With the GIL, once the main module and its exit (non-daemon threads
/// joined, atexit handlers run) are over: stops the device runs that other
/// threads are in (on `runtime`, null when none was made), waits until they
/// left them, and ends those threads from then on, as above. With
/// `end_threads` (spmd run, whose report and next program come after), the
/// other threads still running Python (daemons, and non-daemon threads whose
/// join a stop cut short) get SystemExit too, and up to a second to end;
/// python3 ends those itself as it finalizes.
void program_ended(Runtime* runtime, bool end_threads);

/// Host code is about to release the GIL for a device run (with the GIL),
/// and has come back from it (without): FiberSafeGilRelease calls them. For
/// another thread of an ended program neither returns.
void host_run_begins();
void host_run_returns();
/// Whether host code of any thread is inside a device run now.
bool host_runs_in_progress();

}  // namespace spmd::python
