#pragma once
// A device fiber that overflows its stack runs into its slot's guard page
// (stack_pool.h). Without a handler that is a bare SIGSEGV: no message, no
// report. The guard's handler recognises a fault in a registered guard page
// and ends the process with a report naming the device, the stack size and
// --stack-size; any other fault goes on to the handler that was there before
// (the default's core dump, a sanitizer's, faulthandler's).
//
// The handler cannot run on the overflowed stack: each thread that runs
// fibers gets an alternate signal stack (prepare_thread).

#include <cstddef>

namespace spmd::sim::stack_guard {

/// `slots` stack slots of `slot_size` bytes from `base`, each with a guard
/// page at its lowest address, `stack_size` usable bytes each.
void register_region(void* base, std::size_t slot_size, std::size_t slots, std::size_t stack_size);
/// Before the region is unmapped.
void unregister_region(void* base);
/// The calling thread is about to run device fibers: installs the handler
/// (once per process) and gives the thread its alternate signal stack.
void prepare_thread();
/// The calling fiber runs device `device` on a registered stack.
void note_device(int device);

}  // namespace spmd::sim::stack_guard
