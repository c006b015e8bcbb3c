#include "backend/backend.h"

#include <string>

#include "spmd/error.h"

namespace spmd::detail {

void Backend::execute_across_processes(CollectiveCall&, dist::ProcessGroup&) {
  Report r = make_report("BackendError",
                         "the " + std::string(name()) + " backend cannot run a collective across processes",
                         "run every device in every process (no --process-devices local), or use --backend sim or "
                         "cuda");
  throw BackendError(std::move(r));
}

}  // namespace spmd::detail
