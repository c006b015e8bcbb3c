"""jnp.einsum as JAX computes it: operands contracted pairwise, each pair by
one dot_general (one batched matmul on BLAS)."""

import jax.numpy as jnp
from jax import lax
from jax._src import core


def _expand_ellipsis(spec, ranks):
    """'...' as fresh upper-case labels, one per broadcast dimension (aligned
    from the right, as numpy's einsum does); in implicit mode they lead the
    output, before the labels seen once."""
    lhs, arrow, out = spec.partition('->')
    terms = lhs.split(',')
    if len(terms) != len(ranks):
        raise ValueError(f'einsum(): {len(terms)} subscript terms for {len(ranks)} operands')
    used = set(spec)
    fresh = [c for c in 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' if c not in used]
    widest = 0
    for t, r in zip(terms, ranks):
        if '...' in t:
            widest = max(widest, r - len(t.replace('...', '')))
    if widest > len(fresh):
        raise ValueError('einsum(): too many dimensions under ...')
    ell = ''.join(fresh[:widest])
    out_terms = []
    for t, r in zip(terms, ranks):
        n = r - len(t.replace('...', ''))
        out_terms.append(t.replace('...', ell[widest - n:] if n > 0 else ''))
    if arrow:
        out = out.replace('...', ell)
    else:
        counts = {}
        for t in out_terms:
            for label in t:
                if label not in ell:
                    counts[label] = counts.get(label, 0) + 1
        out = ell + ''.join(sorted(l for l, c in counts.items() if c == 1))
    return ','.join(out_terms) + '->' + out


def _parse(subscripts, count, ranks=None):
    spec = subscripts.replace(' ', '')
    if '...' in spec:
        spec = _expand_ellipsis(spec, ranks)
    if '->' in spec:
        lhs, out = spec.split('->')
    else:
        lhs, out = spec, None
    terms = lhs.split(',')
    if len(terms) != count:
        raise ValueError(f'einsum(): {len(terms)} subscript terms for {count} operands')
    for t in terms + ([out] if out is not None else []):
        for label in t:
            if not label.isalpha():
                raise ValueError(f"einsum(): invalid subscript '{label}'")
    if out is None:
        # Implicit mode: the labels seen once, in alphabetical order.
        counts = {}
        for t in terms:
            for label in t:
                counts[label] = counts.get(label, 0) + 1
        out = ''.join(sorted(l for l, c in counts.items() if c == 1))
    return terms, out


def einsum(subscripts, *operands, optimize=None, precision=None, preferred_element_type=None, _dot_general=None):
    """`_dot_general` (JAX's private override, which flax's attention passes) is
    the dot_general each pair of operands is contracted with."""
    dot_general = lax.dot_general if _dot_general is None else _dot_general
    ops = [jnp._as_array(o) for o in operands]
    terms, out = _parse(subscripts, len(ops), [core.aval_of(o).ndim for o in ops])
    size = {}
    for k, (t, x) in enumerate(zip(terms, ops)):
        shape = core.aval_of(x).shape
        if len(t) != len(shape):
            raise ValueError(f'einsum(): operand {k} has {len(shape)} axes but its subscripts {t!r} name {len(t)}')
        for label, d in zip(t, shape):
            if label in size and size[label] != d:
                raise ValueError(f"einsum(): size of label '{label}' differs between operands ({size[label]} vs {d})")
            size[label] = d
    for label in out:
        if label not in size:
            raise ValueError(f"einsum(): output label '{label}' is not in the inputs")
    # Each operand's diagonals taken and its own labels summed, then the
    # operands contracted left to right, each pair by one dot_general.
    pending = []
    for k, (t, x) in enumerate(zip(terms, ops)):
        x = _diagonal(x, t)
        t = ''.join(dict.fromkeys(t))
        elsewhere = set(out).union(*(set(u) for j, u in enumerate(terms) if j != k))
        x, t = _sum_labels(x, t, [l for l in t if l not in elsewhere])
        pending.append((x, t))
    dtype = jnp._product_dtype(ops, preferred_element_type)
    x, t = pending[0]
    for k in range(1, len(pending)):
        y, u = pending[k]
        later = set(out).union(*(set(v) for _, v in pending[k + 1:]))
        x, t = _contract(x, t, y, u, later, out if k == len(pending) - 1 else None,
                         lambda a, b, dims: dot_general(a, b, dims, precision, preferred_element_type=dtype))
    x, t = _sum_labels(x, t, [l for l in t if l not in out])
    order = [t.index(l) for l in out]
    x = jnp.transpose(x, order) if order != list(range(len(t))) else x
    return x if preferred_element_type is None else x.astype(preferred_element_type)


def _sum_labels(x, t, labels):
    if not labels:
        return x, t
    return jnp.sum(x, axis=tuple(t.index(l) for l in labels)), ''.join(l for l in t if l not in labels)


def _contract(x, t, y, u, keep, result, dot):
    """x (labels t) times y (labels u), JAX's way: the labels of both that
    are kept are batch dimensions (in the result's order when this is the last
    product), the others contracted (sorted); the result's labels are the
    batch ones, then one operand's free ones, then the other's. y goes first
    when that is the result's order, so no transpose follows."""
    shared = [l for l in t if l in u]
    batch = [l for l in (result if result is not None else t) if l in shared and l in keep]
    contract = sorted(l for l in shared if l not in keep)
    free_x = ''.join(l for l in t if l not in shared)
    free_y = ''.join(l for l in u if l not in shared)
    if result is not None and ''.join(batch) + free_y + free_x == result:
        x, t, y, u, free_x, free_y = y, u, x, t, free_y, free_x
    dims = (([t.index(l) for l in contract], [u.index(l) for l in contract]),
            ([t.index(l) for l in batch], [u.index(l) for l in batch]))
    return dot(x, y, dims), ''.join(batch) + free_x + free_y


def _diagonal(x, t):
    """A label repeated within one operand ('ii') takes its diagonal."""
    while len(set(t)) != len(t):
        for i, label in enumerate(t):
            j = t.find(label, i + 1)
            if j >= 0:
                break
        n = core.aval_of(x).shape[i]
        x = jnp.moveaxis(jnp.moveaxis(x, i, -1), j - 1, -1)  # the two axes last
        mask = jnp.eye(n, dtype=bool)
        x = jnp.sum(jnp.where(mask, x, jnp.zeros((), x.dtype)), axis=-1)
        t = t[:i] + t[i + 1:j] + t[j + 1:] + label
    return x
