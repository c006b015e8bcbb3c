// A Wadler-Lindig pretty printer ("Strictly Pretty", Lindig 2000), laid out
// as JAX's jaxpr printer lays out its documents: a group is printed flat when
// all of it fits in what is left of the line, else its breaks become
// newlines at their nesting's indentation. jaxpr text is built from these so
// that it breaks lines where JAX breaks them.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace spmd::pp {

struct Node;
using Doc = std::shared_ptr<const Node>;

Doc nil();
Doc text(std::string s);
/// A space (or `flat`) when its group is flat; a newline at the current indentation when broken.
Doc brk(std::string flat = " ");
Doc nest(int n, Doc child);
Doc group(Doc child);
Doc concat(std::vector<Doc> children);
Doc join(const Doc& separator, const std::vector<Doc>& docs);

/// The document laid out in lines of at most `width` columns where it can be.
std::string format(const Doc& doc, int width = 80);

}  // namespace spmd::pp
