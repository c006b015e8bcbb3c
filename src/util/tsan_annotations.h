#pragma once
// Happens-before edges ThreadSanitizer cannot see by itself, for synchronization
// done inside libraries built without it (Debian's oneTBB). SPMD_TSAN is set by
// cmake/SpmdSanitizers.cmake in ThreadSanitizer builds; elsewhere these are no-ops.
//
// The pattern around a oneTBB loop: the caller releases before it and acquires
// after it, each task acquires at its start and releases at its end, all on one
// address (the loop's own state), so TSan orders caller -> tasks -> caller.

#ifdef SPMD_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace spmd::detail {

#ifdef SPMD_TSAN
inline void tsan_release(const void* addr) { __tsan_release(const_cast<void*>(addr)); }
inline void tsan_acquire(const void* addr) { __tsan_acquire(const_cast<void*>(addr)); }
#else
inline void tsan_release(const void*) {}
inline void tsan_acquire(const void*) {}
#endif

}  // namespace spmd::detail
