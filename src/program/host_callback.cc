#include "spmd/program/host_callback.h"

#include <utility>

#include "spmd/error.h"

namespace spmd::program {

namespace {
CallbackSink& sink() {
  static CallbackSink s;
  return s;
}
}  // namespace

void set_callback_sink(CallbackSink s) { sink() = std::move(s); }

void record_callback(CallbackCall call) {
  if (!sink()) {
    throw ProgramError(make_report("NotImplementedError", "debug_callback: no front end takes host callbacks here",
                                   "jax.debug.callback runs under spmd run or spmdsim's jax package"));
  }
  sink()(std::move(call));
}

}  // namespace spmd::program
