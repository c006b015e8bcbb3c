"""jnp.einsum by broadcasting: each operand is laid out over every label,
the product taken, and the labels missing from the output summed away.
Simple and exact; the operands data-parallel programs give it are small."""

import jax.numpy as jnp
from jax._src import core

_MAX_ELEMENTS = 1 << 26


def _parse(subscripts, count):
    spec = subscripts.replace(' ', '')
    if '...' in spec:
        raise NotImplementedError("jnp.einsum with '...': spmdsim needs every axis named")
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


def einsum(subscripts, *operands, optimize=None, precision=None, preferred_element_type=None):
    ops = [jnp._as_array(o) for o in operands]
    terms, out = _parse(subscripts, len(ops))
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
    labels = list(out) + sorted(l for l in size if l not in out)
    total = 1
    for l in labels:
        total *= size[l]
    if total > _MAX_ELEMENTS:
        raise NotImplementedError('jnp.einsum on operands this large: use jnp.dot / jnp.matmul / jnp.tensordot')
    product = None
    for t, x in zip(terms, ops):
        x = _diagonal(x, t)
        t = ''.join(dict.fromkeys(t))
        # Transpose to the order of `labels`, then add size-1 axes for the rest.
        order = sorted(range(len(t)), key=lambda i: labels.index(t[i]))
        x = jnp.transpose(x, order) if order != list(range(len(t))) else x
        shape = [size[l] if l in t else 1 for l in labels]
        x = jnp.reshape(x, shape)
        product = x if product is None else jnp.multiply(product, x)
    summed = tuple(range(len(out), len(labels)))
    return jnp.sum(product, axis=summed) if summed else product


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
