#pragma once
// Which backends exist and how to make one: "sim" always, "cuda" when
// compiled in, and any name a test registers. The runtime chooses its
// backend here, so backend/ (the interface) knows none of its
// implementations: runtime/ depends on backend/sim and backend/cuda, never
// the other way round.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"

namespace spmd::detail {

/// "sim" always; "cuda" when compiled in; any name added with
/// register_backend_factory. Throws BackendUnavailable otherwise, listing the
/// valid names.
/// `local` says which devices this process runs (count 0: all of them);
/// only the cuda backend binds GPUs to just those.
std::unique_ptr<Backend> create_backend(std::string_view name, int devices, int threads, std::uint64_t seed,
                                        std::size_t fiber_stack_size, LocalDevices local = {});
std::vector<std::string> compiled_backends();

using BackendFactory =
    std::function<std::unique_ptr<Backend>(int devices, int threads, std::uint64_t seed, std::size_t stack_size)>;
/// Makes create_backend(name, ...) call `factory` (tests install fakes this
/// way; a null factory removes the name). Not for "sim" or "cuda".
void register_backend_factory(std::string name, BackendFactory factory);

}  // namespace spmd::detail
