"""What a converted ``try`` must not let the user's ``except`` clauses handle.

A ``try`` whose blocks are converted runs while tracing: its ``except`` clauses see the
exceptions raised while tracing. Those of them that an eager run would not raise (JAX's
refusal of a traced value where Python needs a concrete one, laxify's located errors and its
internal signals between one construct and the one around it) must reach laxify, not a
handler such as ``except Exception:``: the lowered ``try`` re-raises them first.
"""

from __future__ import annotations

import jax

from laxify.ir.errors import ConversionError
from laxify.runtime.lists import NeedsRows

__all__ = ["internal_errors"]

internal_errors = (ConversionError, jax.errors.JAXTypeError, NeedsRows)
