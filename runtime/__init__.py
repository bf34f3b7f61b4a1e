# The runtime's modules and the dispatcher that converted code calls (``_lx``) import each
# other; the dispatcher first gives them one order, whichever of them is imported first.
from laxify.runtime import dispatch as _dispatch  # noqa: E402,F401
