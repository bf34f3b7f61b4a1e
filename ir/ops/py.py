"""Opaque Python: a statement or expression kept verbatim, and the undefined marker."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, register_op

STATIC_RULES = ("always", "operands", "never")


@register_op
@dataclass(eq=False)
class PyOp(Op):
    """A Python statement (``kind='stmt'``) or expression (``kind='expr'``), kept verbatim.

    Operands are the values of the local names the code reads, results the new values of
    the names it writes (a statement) or the expression's value (an expression).
    ``static`` says when the result is known while tracing: ``always`` (``x.shape[0]``,
    ``len(x)``), ``operands`` (when every operand is static: ``n + 1``), ``never``.
    ``fallback`` (optional) says why a compound statement was kept whole.

    Equivalent Python::

        y = x * 2              # attributes: code="y = x * 2", kind="stmt"
    """

    name = "py"

    @property
    def code(self) -> str:
        return self.attributes["code"]

    @property
    def kind(self) -> str:
        return self.attributes["kind"]

    def verify(self) -> None:
        if not isinstance(self.attributes.get("code"), str):
            self.fail("'code' attribute must be a string")
        kind = self.attributes.get("kind")
        if kind not in ("stmt", "expr"):
            self.fail(f"'kind' must be 'stmt' or 'expr', found {kind!r}")
        if self.attributes.get("static", "never") not in STATIC_RULES:
            self.fail(f"'static' must be one of {STATIC_RULES}")
        if self.regions:
            self.fail("'py' has no regions")
        if kind == "expr" and len(self.results) != 1:
            self.fail(f"an expression defines exactly one result, found {len(self.results)}")
        if kind == "stmt" and any(not r.hint for r in self.results):
            self.fail("every result of a statement must name the Python variable it writes")
        if any(not v.hint for v in self.operands):
            self.fail("every operand must name the Python variable the code reads")


@register_op
@dataclass(eq=False)
class UndefOp(Op):
    """The name has no value on this path; using it raises like Python's NameError.

    Equivalent Python::

        del y                  # y is unbound from here on
    """

    name = "undef"

    def verify(self) -> None:
        if self.operands or self.regions:
            self.fail("'undef' takes no operands and has no regions")
        if len(self.results) != 1 or not self.results[0].hint:
            self.fail("'undef' defines exactly one result that names a Python variable")
