"""jax.interpreters: JAX's internal interpreters. spmdsim has the modules
libraries import at module level (flax: partial_eval), with what they use."""
