"""jax.example_libraries: the optimizers module (stax is not provided)."""
