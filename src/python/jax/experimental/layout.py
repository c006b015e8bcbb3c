"""jax.experimental.layout: an array's memory layout with its sharding.
spmdsim keeps arrays row-major, so a Format's layout is descriptive only;
libraries (flax) map over its sharding."""


class Layout:
    """A device-local layout: the major-to-minor order of the dimensions."""

    def __init__(self, major_to_minor=None):
        self.major_to_minor = None if major_to_minor is None else tuple(major_to_minor)

    def __eq__(self, other):
        return isinstance(other, Layout) and self.major_to_minor == other.major_to_minor

    def __hash__(self):
        return hash(self.major_to_minor)

    def __repr__(self):
        return f'Layout(major_to_minor={self.major_to_minor})'


class Format:
    """A layout together with a sharding (jax.experimental.layout.Format)."""

    def __init__(self, layout=None, sharding=None):
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f'Format({self.layout!r}, {self.sharding!r})'
