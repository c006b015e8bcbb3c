"""jax.extend.source_info_util: libraries register their own paths so that
source locations skip them (spmdsim's reports point at the user's frame)."""
from jax._src.traceback_util import register_exclusion  # noqa: F401
