"""laxify: Python control flow on JAX arrays, converted to one static ``jax.lax`` program.

@laxify.to_static
def f(x, n):
    while x.sum() < n:
        x = x * 2
    return x
"""

from laxify.api import StaticFunction, convert, do_not_convert, load, to_static
from laxify.checking import checked
from laxify.conversion import set_cache_dir
from laxify.ir.errors import ConversionError, FallbackWarning, UncheckedWarning
from laxify.ir.user_code import convert_packages, keep_packages
from laxify.runtime.options import loop_options

__all__ = [
    "ConversionError",
    "FallbackWarning",
    "StaticFunction",
    "UncheckedWarning",
    "checked",
    "convert",
    "convert_packages",
    "do_not_convert",
    "keep_packages",
    "load",
    "loop_options",
    "set_cache_dir",
    "to_static",
]
__version__ = "0.1.0"
