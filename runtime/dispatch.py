"""The runtime dispatcher called by converted code (as ``_lx``).

Each entry decides while tracing: a traced predicate, bound or sequence goes to ``jax.lax``
(``cond``/``switch``, ``while_loop``, ``scan``); a Python value runs plain Python, with
Python's exact semantics. Branch outputs and loop carries are joined as JAX promotes dtypes;
what cannot be joined is a located :class:`ConversionError` that shows both sides.
"""

from __future__ import annotations

import operator
from dataclasses import replace

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from laxify.ir.errors import ConversionError
from laxify.runtime import lists as lists_mod
from laxify.runtime import options
from laxify.runtime.calls import call
from laxify.runtime.lists import append
from laxify.runtime.options import pop as pop_options
from laxify.runtime.options import push_options
from laxify.runtime.lowering import Site
from laxify.runtime.messages import describe, site_error, tree_lines

__all__ = [
    "Undefined", "UndefinedReturn", "and_", "append", "call", "check_defined", "compare", "pop_options", "push_options", "cond", "final_return", "for_each", "for_range", "ifexp",
    "is_traced", "not_", "or_", "print_", "while_loop",
]

Tracer = jax.core.Tracer


def is_traced(x) -> bool:
    return isinstance(x, Tracer)


def _any_traced(tree) -> bool:
    return any(isinstance(leaf, Tracer) for leaf in jax.tree_util.tree_leaves(tree))


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def _array_like(x) -> bool:
    """An array or a Python number: something traced control flow can carry or select."""
    return _is_array(x) or isinstance(x, (bool, int, float, complex))


class Undefined:
    """Stands for a name that has no value on this path. Any use raises like Python would."""

    __slots__ = ("name", "site")

    def __init__(self, name: str, site: Site | None = None):
        self.name, self.site = name, site

    def _fail(self, *args, **kwargs):
        where = f" (line {self.site.line})" if self.site else ""
        raise NameError(
            f"name '{self.name}' is not defined on this path{where}: it is assigned only on "
            f"some paths through the control flow before its use"
        )

    __bool__ = __index__ = __int__ = __float__ = __iter__ = __len__ = __call__ = _fail
    __getattr__ = __getitem__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __matmul__ = __neg__ = __abs__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __array__ = __jax_array__ = _fail
    __str__ = __format__ = __contains__ = _fail
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


def _undefined_leaves(tree, names) -> list[str]:
    return [n for n, v in zip(names, tree) if isinstance(v, Undefined)]


def _fresh(tree):
    """Rebuild containers so that in-place changes in one branch do not leak into another."""
    return jax.tree_util.tree_map(lambda x: x, tree, is_leaf=lambda x: isinstance(x, Undefined))


# -- conditionals --------------------------------------------------------------------------

def _scalar_predicate(pred, site: Site, what: str):
    shape = getattr(pred, "shape", ())
    if shape != ():
        raise site_error(
            site,
            f"The condition of this `{what}` is an array of shape {tuple(shape)}, not a scalar.",
            "Reduce it to one value, for example with `.any()` or `.all()`.",
        )
    return pred


def cond(pred, branches, operands, site: Site):
    """``if``/``elif``/``else`` (2 branches: ``pred`` is a predicate; more: an index)."""
    if not is_traced(pred):
        index = (0 if pred else 1) if len(branches) == 2 else operator.index(pred)
        return branches[index](*operands)
    pred = _scalar_predicate(pred, site, "if")
    if any(_appendable(v) for v in operands):
        return _cond_appending(pred, branches, operands, site)
    plan = _Plan()
    fns = [_checked_branch(b, k, len(branches), site, plan) for k, b in enumerate(branches)]
    try:
        return plan.restore(_lax_cond(pred, fns, operands))
    except _NeedsPlaceholder:
        plan = _probe_outputs(branches, operands)
        fns = [_checked_branch(b, k, len(branches), site, plan) for k, b in enumerate(branches)]
        try:
            return plan.restore(_lax_cond(pred, fns, operands))
        except TypeError:
            pass
    except TypeError:
        pass
    avals = [jax.eval_shape(lambda f=f: f(operands)) for f in fns]
    names = [n for i, n in enumerate(site.names) if i not in plan.static]
    target = _join_outputs(avals, names, site, len(branches))
    return plan.restore(_lax_cond(pred, [_casting(f, target) for f in fns], operands))


def _appendable(v) -> bool:
    return isinstance(v, (lists_mod.Accumulator, lists_mod.AppendProbe))


def _cond_appending(pred, branches, operands, site: Site):
    """A traced ``if`` inside a scanned loop whose branches append to a list being stacked:
    each branch must append one value; the selected value is appended after the ``if``."""
    lists = [k for k, v in enumerate(operands) if _appendable(v)]
    out_of: dict[int, int] = {}  # output index -> operand index of the list it returns

    def wrap(branch):
        def run(*ops):
            ops = list(ops)
            fresh = {k: lists_mod.Accumulator(site.names[k] if k < len(site.names) else "list") for k in lists}
            for k, acc in fresh.items():
                ops[k] = acc
            outs = list(branch(*ops))
            for i, out in enumerate(outs):
                for k, acc in fresh.items():
                    if out is acc:
                        out_of[i] = k
                        outs[i] = lists_mod.appended_once(acc, site.names[i], site)
            return tuple(outs)

        return run

    plain = tuple(None if k in lists else v for k, v in enumerate(operands))
    outs = list(cond(pred, [wrap(b) for b in branches], plain, site))
    for i, k in out_of.items():
        operands[k].append(outs[i])
        outs[i] = operands[k]
    return tuple(outs)


class _NeedsPlaceholder(Exception):
    """A branch gives a value not set yet (or ``None``) where another may give an array: the
    branches' outputs must be probed first."""


class _Plan:
    """How a traced ``if`` handles outputs that are not arrays: ``fill`` gives zeros for a
    :class:`Fillable` value where another branch has an array, ``static`` passes a value that
    is the same Python value on every path (``None``, a value not set yet) around the cond."""

    def __init__(self, fill=None, static=None, probed: bool = False):
        self.fill: dict[int, object] = fill or {}
        self.static: dict[int, object] = static or {}
        self.probed = probed

    def restore(self, outs) -> tuple:
        if not self.static:
            return outs
        outs = list(outs)
        for i in sorted(self.static):
            outs.insert(i, self.static[i])
        return tuple(outs)


def _probe_outputs(branches, operands) -> _Plan:
    """Trace each branch abstractly to decide, per output, zeros to fill or a static value."""
    avals: dict[int, object] = {}
    python: dict[int, list] = {}
    for branch in branches:
        def probe(branch=branch):
            outs = tuple(branch(*_fresh(operands)))
            kept = []
            for i, v in enumerate(outs):
                if isinstance(v, Fillable) or v is None:
                    python.setdefault(i, []).append(v)
                    kept.append(None)
                else:
                    kept.append(v)
            return tuple(kept)

        for i, aval in enumerate(jax.eval_shape(probe)):
            if aval is not None and i not in avals:
                avals[i] = aval
    fill, static = {}, {}
    for i, values in python.items():
        if i in avals:
            if all(isinstance(v, Fillable) for v in values):
                fill[i] = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), avals[i])
        elif len(values) == len(branches):
            # No branch has an array here: None on some path wins over a value not set yet.
            static[i] = None if any(v is None for v in values) else values[0]
    return _Plan(fill, static, probed=True)


def _lax_cond(pred, fns, operands):
    # Operands are closed over rather than passed: they may hold Python values that lax
    # cannot abstract (a not-yet-set return value), which the branches never return.
    thunks = [lambda f=f: f(operands) for f in fns]
    if len(fns) == 2:
        return lax.cond(pred, thunks[0], thunks[1])
    index = jnp.clip(jnp.asarray(pred, jnp.int32), 0, len(fns) - 1)
    return lax.switch(index, thunks)


def _display_name(name: str) -> str:
    """The user's word for a name laxify made up."""
    return "the return value" if name.startswith("_lx_retval") else name


def _branch_name(k: int, n: int) -> str:
    return ("true branch", "false branch")[k] if n == 2 else f"branch {k}"


def _checked_branch(fn, k: int, n: int, site: Site, plan: _Plan):
    def run(operands):
        outs = tuple(fn(*_fresh(operands)))
        if not plan.probed and any(isinstance(v, Fillable) or v is None for v in outs):
            raise _NeedsPlaceholder()
        outs = tuple(plan.fill.get(i, v) if isinstance(v, Fillable) else v for i, v in enumerate(outs))
        kept = [i for i in range(len(outs)) if i not in plan.static]
        names = [_display_name(site.names[i]) if i < len(site.names) else "value" for i in kept]
        outs = tuple(outs[i] for i in kept)
        for name, v in zip(names, outs):
            if isinstance(v, Undefined):
                other = "the other branch" if n == 2 else "another branch"
                raise site_error(
                    site,
                    f"`{name}` is defined in {other} of this `if` on a traced value, but not in "
                    f"the {_branch_name(k, n)}, and it is used after the `if`.",
                    f"Assign `{name}` before the `if` or in every branch, so that it has a value "
                    f"whichever branch runs.",
                )
            for leaf in jax.tree_util.tree_leaves(v):
                if not _array_like(leaf):
                    raise site_error(
                        site,
                        f"`{name}` is a {describe(leaf)} in the {_branch_name(k, n)} of this `if` "
                        f"on a traced value; only arrays and numbers can differ between branches.",
                        f"Compute `{name}` outside the `if`, or make it an array.",
                    )
        return outs

    return run


def _join_outputs(avals, names, site: Site, n: int):
    """Per output, the common type of every branch's output, or a located error."""
    first = avals[0]
    out = []
    for idx, name in enumerate(names):
        ref = first[idx]
        for k in range(1, len(avals)):
            other = avals[k][idx]
            ref = _join_tree(ref, other, name, site, (_branch_name(0, n), _branch_name(k, n)),
                             "this `if` on a traced value")
        out.append(ref)
    return out


def _join_tree(a, b, name: str, site: Site, sides: tuple[str, str], construct: str):
    ta, tb = jax.tree_util.tree_structure(a), jax.tree_util.tree_structure(b)
    if ta != tb:
        raise _mismatch(site, name, sides, a, b, construct, "structure")
    joined = []
    for la, lb in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        if la.shape != lb.shape:
            raise _mismatch(site, name, sides, a, b, construct, "shape")
        dtype = jnp.result_type(la, lb) if la.dtype != lb.dtype else la.dtype
        joined.append(jax.ShapeDtypeStruct(la.shape, dtype))
    return jax.tree_util.tree_unflatten(ta, joined)


def _mismatch(site, name, sides, a, b, construct, what) -> ConversionError:
    left, right = tree_lines(name, a), tree_lines(name, b)
    rows = []
    for path in dict.fromkeys([*left, *right]):
        l, r = left.get(path, "(absent)"), right.get(path, "(absent)")
        mark = "  <- differs" if l != r else ""
        rows.append(f"    {path}: {l}  vs  {r}{mark}")
    if what == "structure":
        ta, tb = jax.tree_util.tree_structure(a), jax.tree_util.tree_structure(b)
        rows.append(f"    structure: {ta}  vs  {tb}")
    width = max(len(s) for s in sides)
    header = f"  {sides[0]:<{width}}  vs  {sides[1]}"
    return site_error(
        site,
        f"`{name}` has a different {what} on the two sides of {construct}:\n{header}\n" + "\n".join(rows),
        f"Revise the code so that `{name}` keeps one {what} on every path "
        f"(pad or reshape it, or give it its final {what} before the control flow).",
    )


def _casting(fn, target):
    def run(operands):
        outs = fn(operands)
        return tuple(
            jax.tree_util.tree_map(lambda v, t: lax.convert_element_type(v, t.dtype), o, t)
            for o, t in zip(outs, target)
        )

    return run


# -- loops ---------------------------------------------------------------------------------

def _fill_return_carries(init, one_step, runs: bool = False):
    """Zeros for return values not yet set when a traced loop starts (shaped by one step).
    When the loop surely ``runs`` at least once, names first assigned in it are filled too:
    their zeros are overwritten by the first iteration, as in Python."""
    kind = Undefined if runs else Fillable
    missing = [k for k, v in enumerate(init) if isinstance(v, kind)]
    # While probing, a name not set yet may flow through a traced `if` of the body.
    init = tuple(Fillable(v.name, v.site) if k in missing and not isinstance(v, Fillable) else v
                 for k, v in enumerate(init))
    if not missing:
        return init
    present = [k for k in range(len(init)) if k not in missing]

    def step(arrays):
        full = list(init)
        for k, a in zip(present, arrays):
            full[k] = a
        outs = one_step(tuple(full))
        return tuple(None if isinstance(outs[k], Undefined) else outs[k] for k in missing)

    avals = jax.eval_shape(step, tuple(init[k] for k in present))
    init = list(init)
    for k, aval in zip(missing, avals):
        if aval is not None:
            init[k] = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aval)
    return tuple(init)


def _check_carries(init, names, site: Site, construct: str):
    for name, v in zip(names, init):
        if isinstance(v, Undefined):
            raise site_error(
                site,
                f"`{name}` is first assigned inside this `{construct}` loop on a traced value and "
                f"used after it; if the loop runs zero times it has no value.",
                f"Assign `{name}` before the loop (for example `{name} = jnp.zeros_like(...)`).",
            )
        for leaf in jax.tree_util.tree_leaves(v):
            if not _array_like(leaf):
                raise site_error(
                    site,
                    f"`{name}` is a {describe(leaf)} carried through this `{construct}` loop on a "
                    f"traced value; only arrays and numbers can change from one iteration to the next.",
                    f"Keep `{name}` unchanged inside the loop, or make it an array.",
                )


class CarryChange(ConversionError):
    """One iteration changes a carried value's shape, structure or dtype."""


def _diagnose_carries(names, init, after, site: Site, construct: str) -> None:
    """Raise the located error for a carry whose type one iteration changes."""
    sides = ("before the loop", "after one iteration")
    for name, before, out in zip(names, init, after):
        before = jax.eval_shape(lambda v: v, before)
        try:
            _join_tree(before, out, name, site, sides, f"this `{construct}` loop")
        except ConversionError as e:
            raise CarryChange(e.message, e.location, e.fix) from None
        for a, b in zip(jax.tree_util.tree_leaves(before), jax.tree_util.tree_leaves(out)):
            if a.dtype != b.dtype and not getattr(a, "weak_type", False):
                raise site_error(
                    site,
                    f"`{name}` is {describe(a)} before this `{construct}` loop and {describe(b)} "
                    f"after one iteration; a carried array keeps the dtype it enters the loop "
                    f"with (only Python numbers are widened).",
                    f"Give `{name}` its final dtype before the loop (for example "
                    f"`{name} = jnp.asarray({name}, jnp.{b.dtype})`), or cast inside the loop.",
                    CarryChange,
                )


def _loop(run, init, one_step, names, site: Site, construct: str):
    """Run a lax loop; if JAX rejects the carry types, explain which name changed and how."""
    try:
        return run(init)
    except TypeError:
        _diagnose_carries(names, init, one_step(init), site, construct)
        raise


def while_loop(cond_fn, body_fn, init, deps, site: Site):
    """``while``: Python while its condition is a Python value, else ``lax.while_loop``."""
    init = tuple(init)
    if not _any_traced(deps):
        vals = init
        while True:
            pred = cond_fn(*vals)
            if is_traced(pred):
                return _traced_while(cond_fn, body_fn, vals, site)
            if not pred:
                return vals
            vals = tuple(body_fn(*vals))
    return _traced_while(cond_fn, body_fn, init, site)


def _traced_while(cond_fn, body_fn, init, site: Site, construct: str = "while"):
    init = _fill_return_carries(init, lambda c: tuple(body_fn(*c)))
    opts = options.current()
    if opts.max_iters is not None:
        return _bounded_while(cond_fn, body_fn, init, site, opts.max_iters)
    lists = lists_mod.appended_carries(init, site.names, lambda c: tuple(body_fn(*c)))
    if lists:
        raise lists_mod.traced_length_error(site.names[lists[0]], site)
    _check_carries(init, site.names, site, construct)

    def cond(c):
        return _scalar_predicate(cond_fn(*_fresh(c)), site, construct)

    def body(c):
        return tuple(body_fn(*_fresh(c)))

    return _loop(lambda c: lax.while_loop(cond, body, c), init,
                 lambda c: jax.eval_shape(body, c), site.names, site, construct)


def _bounded_while(cond_fn, body_fn, init, site: Site, max_iters: int):
    """A traced loop run at most ``max_iters`` times, as a scan (reverse differentiable):
    each step runs the body under ``lax.cond`` while the loop is still active."""

    def step(_, active, *vals):
        go = jnp.logical_and(active, _scalar_predicate(cond_fn(*vals), site, "while"))
        accs = [k for k, v in enumerate(vals) if _appendable(v)]
        plain = [k for k in range(len(vals)) if k not in accs]

        def run():
            fresh = list(_fresh(vals))
            for k in accs:
                fresh[k] = lists_mod.Accumulator(site.names[k])
            outs = tuple(body_fn(*fresh))
            appended = tuple(lists_mod.appended_once(outs[k], site.names[k], site) for k in accs)
            return tuple(outs[k] for k in plain), appended

        shapes = jax.eval_shape(run)

        def skip():
            zeros = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), shapes[1])
            return tuple(vals[k] for k in plain), zeros

        new, appended = lax.cond(go, run, skip)
        out = list(vals)
        for k, v in zip(plain, new):
            out[k] = v
        for k, v in zip(accs, appended):
            out[k].append(v)
        return (go, *out)

    flagged = replace(site, names=("(loop active)", *site.names))
    out = _scan(step, (jnp.asarray(True), *init), lax.iota(jnp.int32, max_iters), flagged)
    return out[1:]


def _static_int(x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, (jax.Array, np.ndarray)) and not is_traced(x) and x.shape == () and \
            jnp.issubdtype(x.dtype, jnp.integer):
        return int(x)
    return None


def for_range(start, stop, step, body_fn, init, deps, site: Site, python_index=None):
    """``for i in range(start, stop, step)``: static bounds scan, traced bounds loop while."""
    init = tuple(init)
    bounds = [_static_int(b) for b in (start, stop, step)]
    if None not in bounds:
        r = range(*bounds)
        traced = python_index is None and (
            _any_traced(deps) or any(_is_array(leaf) for leaf in jax.tree_util.tree_leaves(init))
        )
        def python_loop():
            vals = init
            for i in r:
                vals = tuple(body_fn(i, *vals))
            return vals

        if not traced or _python_values(init):
            return python_loop()
        if len(r) == 0:
            return init
        xs = lax.iota(jnp.int32, len(r))
        if r.step != 1:
            xs = xs * r.step
        if r.start != 0:
            xs = xs + r.start
        return _scan_or_python(lambda: _scan(body_fn, init, xs, site), python_loop)
    if python_index is not None:
        raise site_error(
            site,
            f"This loop's bounds are traced, but its index must be a Python int because "
            f"{python_index}.",
            "Make the bounds static (pass them as Python ints or mark them with static_argnums), "
            "or use `lax.dynamic_slice` instead of slicing with the index.",
        )
    return _traced_range(start, stop, step, body_fn, init, site)


_NEEDS_PYTHON = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    CarryChange,
)


def _python_values(init) -> bool:
    """Whether a carry holds a Python value that no array can stand for (a str, an object)."""
    for leaf in jax.tree_util.tree_leaves(init, is_leaf=lambda v: isinstance(v, Undefined)):
        if isinstance(leaf, Undefined):
            continue
        if not _array_like(leaf):
            return True
    return False


def _scan_or_python(scan, python_loop):
    """A loop with a static trip count: one ``lax.scan`` unless its body needs Python
    semantics (the index where a Python int is required, a carry whose shape changes, a
    traced key into a Python dict); then the unrolled Python loop, as DESIGN §5 says."""
    try:
        return scan()
    except _NEEDS_PYTHON:
        return python_loop()
    except TypeError as e:
        if "unhashable" not in str(e):
            raise
        return python_loop()


def _traced_range(start, stop, step, body_fn, init, site: Site):
    """A range with traced bounds: a while loop over the trip count (any sign of step)."""
    start, stop, step = (jnp.asarray(b, jnp.int32) for b in (start, stop, step))
    trips = jnp.where(
        step > 0,
        (stop - start + step - 1) // jnp.where(step == 0, 1, step),
        (start - stop - step - 1) // jnp.where(step == 0, 1, -step),
    )
    trips = jnp.maximum(trips, 0)
    counted = replace(site, names=("(iteration)", *site.names))
    out = _traced_while(
        lambda k, *c: k < trips,
        lambda k, *c: (k + 1, *body_fn(start + k * step, *c)),
        (jnp.asarray(0, jnp.int32), *init), counted, "for",
    )
    return out[1:]


def _scan(body_fn, init, xs, site: Site):
    """``lax.scan`` of ``body_fn(x, *carries)`` over ``xs``; list carries become stacked outputs."""
    opts = options.current()
    first = jax.tree_util.tree_map(lambda a: a[0], xs)
    init = _fill_return_carries(init, lambda c: tuple(body_fn(first, *c)), runs=True)
    lists = lists_mod.appended_carries(init, site.names, lambda c: tuple(body_fn(first, *c)))
    plain = [k for k in range(len(init)) if k not in lists]
    names = [site.names[k] for k in plain]
    carries = tuple(init[k] for k in plain)
    _check_carries(carries, names, site, "for")

    def body(c, x):
        full = list(init)
        for k in lists:
            full[k] = lists_mod.Accumulator(site.names[k])
        for k, v in zip(plain, _fresh(c)):
            full[k] = v
        outs = tuple(body_fn(x, *full))
        ys = tuple(lists_mod.appended_once(outs[k], site.names[k], site) for k in lists)
        return tuple(outs[k] for k in plain), ys

    step = jax.checkpoint(body) if opts.checkpoint else body

    def run(c):
        return lax.scan(step, c, xs, unroll=opts.unroll if opts.unroll is not None else 1)

    def one_step(c):
        return jax.eval_shape(lambda c: body(c, first)[0], c)

    out, ys = _loop(run, carries, one_step, names, site, "for")
    result = list(init)
    for k, v in zip(plain, out):
        result[k] = v
    for k, stacked in zip(lists, ys):
        result[k] = lists_mod.stacked_result(init[k], stacked)
    return tuple(result)


def for_each(xs, body_fn, init, deps, site: Site):
    """``for x in xs``: ``lax.scan`` over the leading axis of an array, else a Python loop."""
    init = tuple(init)
    if (seq := as_scan_input(xs)) is not None:  # enumerate/zip over arrays: a pytree to scan
        return _scan(body_fn, init, seq, site)
    if _is_array(xs) or is_traced(xs):
        if xs.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if xs.shape[0] == 0:
            return init

        def python_rows():
            vals = init
            for item in xs:
                vals = tuple(body_fn(item, *vals))
            return vals

        if _python_values(init):
            return python_rows()
        return _scan_or_python(lambda: _scan(body_fn, init, jnp.asarray(xs), site), python_rows)
    vals = init
    for item in xs:
        vals = tuple(body_fn(item, *vals))
    return vals


# -- logical operators and conditional expressions -------------------------------------------

def not_(x):
    """``not x``: ``jnp.logical_not`` on a traced value, Python's ``not`` otherwise."""
    if is_traced(x):
        return jnp.logical_not(x)
    return not x


def and_(a, b_fn, lazy: bool = False):
    """``a and b``: Python short-circuit for Python values; on a traced ``a``, ``logical_and``
    (``b`` evaluated in a ``lax.cond`` branch when ``lazy``, that is when it may have effects)."""
    if not is_traced(a):
        return a and b_fn()
    if lazy:
        return lax.cond(a, lambda: jnp.asarray(b_fn(), bool), lambda: jnp.asarray(False))
    return jnp.logical_and(a, b_fn())


def or_(a, b_fn, lazy: bool = False):
    """``a or b``: like :func:`and_`."""
    if not is_traced(a):
        return a or b_fn()
    if lazy:
        return lax.cond(a, lambda: jnp.asarray(True), lambda: jnp.asarray(b_fn(), bool))
    return jnp.logical_or(a, b_fn())


_COMPARE = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
    "!=": operator.ne, "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
    "is": operator.is_, "is not": operator.is_not,
}


def compare(first, *pairs, lazy: bool = False):
    """A chained comparison ``a < b < c``: each operand evaluated once, Python's short-circuit
    on Python values, ``logical_and`` of the parts on traced ones (with ``lazy``, the parts
    after a traced one run in a ``lax.cond`` branch, as they contain calls)."""
    left, result = first, None
    for k, (op, thunk) in enumerate(pairs):
        if lazy and result is not None and is_traced(result):
            rest = pairs[k:]
            return lax.cond(result, lambda: jnp.asarray(compare(left, *rest), bool),
                            lambda: jnp.asarray(False))
        right = thunk()
        part = _COMPARE[op](left, right)
        if result is None:
            result = part
        elif is_traced(result) or is_traced(part):
            result = jnp.logical_and(result, part)
        else:
            result = result and part
        if not is_traced(result) and not result:
            return result
        left = right
    return result


def _caller_location():
    """The user's line that called into the runtime (generated code keeps user line numbers)."""
    import linecache
    import sys

    from laxify.ir.errors import Location

    frame = sys._getframe(2)
    filename, line = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(filename, line).rstrip("\n")
    col = len(text) - len(text.lstrip())
    positions = list(frame.f_code.co_positions())
    here = positions[frame.f_lasti // 2] if frame.f_lasti // 2 < len(positions) else None
    if here is not None and here[0] == line and here[2] is not None:
        col = here[2]  # the call's own column (lowering maps it onto the user's expression)
    return Location(filename, line, col, text)


def ifexp(pred, true_fn, false_fn, lazy: bool = False):
    """``a if pred else b``: Python for a Python ``pred``; ``select_n`` (``jnp.where``) for cheap
    pure operands, ``lax.cond`` when evaluating an operand may have effects (``lazy``)."""
    if not is_traced(pred):
        return true_fn() if pred else false_fn()
    if getattr(pred, "shape", ()) != ():
        raise ConversionError(
            f"The condition of this conditional expression (`a if c else b`) is an array of "
            f"shape {tuple(pred.shape)}, not a scalar.",
            _caller_location(),
            "Use `jnp.where(c, a, b)` for an elementwise choice, or reduce the condition with "
            "`.any()`/`.all()`.",
        )
    if lazy:
        t_aval = jax.eval_shape(true_fn)
        f_aval = jax.eval_shape(false_fn)
        target = jax.tree_util.tree_map(lambda a, b: jnp.result_type(a, b), t_aval, f_aval)

        def cast(fn):
            return lambda: jax.tree_util.tree_map(lambda v, t: jnp.asarray(v, t), fn(), target)

        return lax.cond(pred, cast(true_fn), cast(false_fn))
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), true_fn(), false_fn())


# -- return values ---------------------------------------------------------------------------

class Fillable(Undefined):
    """A value no path observes before it is set (a return value before any ``return``, a
    loop target after a ``break``): filled with zeros where a traced branch or loop must
    carry it."""

    __slots__ = ()


class UndefinedReturn(Fillable):
    """The return value before any ``return`` ran (the return flag guards every use)."""

    __slots__ = ()

    def __init__(self):
        super().__init__("return value")


def final_return(flag, value, def_line: int):
    """The end of a function whose ``return``s were converted: return the value, or ``None``
    when no ``return`` ran (falling off the end), exactly as Python does."""
    if not is_traced(flag):
        return value if flag else None
    if value is None or isinstance(value, Undefined):
        return None  # every path that returns returns None, as falling off the end does
    import sys

    from laxify.ir.errors import ConversionError, Location
    import linecache

    filename = sys._getframe(1).f_code.co_filename
    raise ConversionError(
        "Some paths through this function return a value and others, decided by a traced "
        "value, fall off its end (returning None); one XLA program cannot return both.",
        Location(filename, def_line, 0, linecache.getline(filename, def_line).rstrip("\n")),
        "Add a `return` at the end of the function (or in every branch) so that every path "
        "returns a value of the same structure.",
    )


from laxify.runtime.iterables import as_scan_input, enumerate_, reversed_, zip_  # noqa: E402


def check_defined(value):
    """``return value`` where ``value`` may be a name with no value on this path."""
    if isinstance(value, Undefined):
        value._fail()
    return value


def print_(*args, sep: str = " ", end: str = "\n", **kwargs):
    """``print``: ``jax.debug.print`` when an argument is traced, so that the values are
    printed each time the program runs; Python's ``print`` otherwise."""
    if not _any_traced(args) or kwargs.get("file") is not None:
        print(*args, sep=sep, end=end, **kwargs)
        return
    fmt = sep.join("{}" for _ in args) + ("" if end == "\n" else end)
    jax.debug.print(fmt, *args)
