#pragma once
// Recursive-descent parser for the scenario language (a Python subset).
// Syntax errors throw spmd::SyntaxError; valid Python outside the subset
// throws ProgramError kind "NotImplementedError". Both carry file:line:col.

#include <memory>

#include "scenario/ast.h"
#include "scenario/source_text.h"

namespace spmd::scenario {

/// Expressions may nest this deep (parenthesised, unary, `**`, lambdas, ...).
inline constexpr int kMaxExprDepth = 200;
/// Binary operators or trailers (calls, subscripts, attributes) chained in one
/// expression (`a + b + c ...`): each one nests the syntax tree one level.
inline constexpr int kMaxChain = 1000;

/// Parses and resolves a whole program.
std::shared_ptr<const Module> parse_module(std::shared_ptr<const SourceText> src);

}  // namespace spmd::scenario
