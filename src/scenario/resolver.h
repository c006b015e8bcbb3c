#pragma once
// Name resolution: decides for every name whether it is a fast local, a
// closure cell or a module global (Python's scoping rules, including
// comprehension scopes, global and nonlocal), and assigns frame slots.

#include "scenario/ast.h"

namespace spmd::scenario {

/// Annotates every NameRef of `m` and fills the ScopeInfo of the module and of
/// each function. Throws SyntaxError (e.g. "no binding for nonlocal 'x' found").
void resolve_names(Module& m);

}  // namespace spmd::scenario
