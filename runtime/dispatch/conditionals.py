"""``if``/``elif``/``else`` on a traced predicate: ``lax.cond``/``lax.switch``, with branch outputs
joined as JAX promotes dtypes and located errors for what cannot be joined."""

from __future__ import annotations

import math
import operator
from dataclasses import replace

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

from laxify.ir.errors import ConversionError, NeedsPython
from laxify.ir.naming import is_return_flag, is_return_value, is_stop_flag
from laxify.runtime import effects, split
from laxify.runtime import lists as lists_mod
from laxify.ir.user_code import raised_by_array_library
from laxify.runtime import error_channel
from laxify.runtime.error_channel import traced_region
from laxify.runtime.dispatch.values import Fillable, Undefined, array_like, fresh, is_traced
from laxify.runtime.lowering import Site
from laxify.runtime.messages import describe, location, site_error, tree_lines

__all__ = ["cond", "elif_chain"]


def _scalar_predicate(pred, site: Site, what: str):
    """The traced condition of an ``if``/``while`` as a scalar: a size-1 array is one truth
    value (as in NumPy and JAX), a larger one is a located error. A ``while`` condition becomes
    a boolean (``lax.while_loop`` needs one); an ``if`` keeps an integer, which may be the
    branch index of an ``elif`` chain or ``match``."""
    shape = tuple(getattr(pred, "shape", ()))
    if shape != ():
        if math.prod(shape) != 1:
            raise site_error(
                site,
                f"The condition of this `{what}` is an array of shape {shape}, not a scalar.",
                "Reduce it to one value, for example with `.any()` or `.all()`.",
            )
        pred = jnp.reshape(pred, ())
    dtype = jnp.result_type(pred)
    if dtype != jnp.bool_ and (what != "if" or not jnp.issubdtype(dtype, jnp.integer)):
        pred = pred != 0  # Python's truth value of a number
    return pred


def cond(pred, branches, operands, site: Site):
    """``if``/``elif``/``else`` (2 branches: ``pred`` is a predicate; more: an index)."""
    if not is_traced(pred):
        index = (0 if pred else 1) if len(branches) == 2 else operator.index(pred)
        return split.run_branch(branches[index], operands, site)
    pred = _scalar_predicate(pred, site, "if")
    with traced_region():  # the branches run only for some data: a `raise` in them waits
        out = _traced_cond(pred, branches, operands, site)
    split.joined_python_floats(operands, out)
    return out


def _catching(branch, site: Site):
    """``branch``, where an exception Python raises while it is traced (a static ``10 // k``,
    a missing key: see ``error_channel.is_users_error``) is recorded for run time, for the
    runs that take it; the branch then gives values nothing observes, as a ``raise``."""

    def run(*ops):
        try:
            return branch(*ops)
        except Exception as e:
            if not error_channel.is_users_error(e) or raised_by_array_library(e):  # JAX's: a fallback
                raise
            error_channel.record_exception(e)
            if isinstance(e, error_channel.PathRaised):
                error_channel.raised_in(site.names)
            return tuple(True if is_stop_flag(name) else Fillable(name) for name in site.names)

    return run


def _traced_cond(pred, branches, operands, site: Site):
    if any(_appendable(v) for v in operands):
        return _cond_appending(pred, [_catching(b, site) for b in branches], operands, site)
    # Effects on Python objects are watched in the user's branch itself; an exception Python
    # raises there is recorded for the runs that take it (outside the watch).
    identity = effects.Identity(operands, site)
    branches = [_catching(effects.guarded(b, f"this `{site.construct}` on a traced value", lambda: location(site),
                                          identity), site) for b in branches]
    return identity.write_back(_joined_cond(pred, branches, operands, site))


def _joined_cond(pred, branches, operands, site: Site):
    """``lax.cond`` of the branches, their outputs joined (see ``_join_outputs``)."""
    plan = _Plan()
    fns = [_checked_branch(b, k, len(branches), site, plan) for k, b in enumerate(branches)]
    try:
        return plan.restore(_lax_cond(pred, fns, operands))
    except _NeedsPlaceholder:
        plan = _probe_outputs(branches, operands, site)
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


def elif_chain(arms, operands, site: Site):
    """``if``/``elif``/.../``else``: per arm, its condition (the first one's value, a thunk for
    each later one, None for the ``else``) and its branch function.

    The conditions are evaluated in order, as Python does, until one is true as a Python
    value: a Python false condition skips its arm (its branch is never traced) and a Python
    true one ends the chain, so later conditions are not evaluated. A traced condition cannot
    end it: the later conditions are evaluated too, and the first true one (``argmax``)
    chooses among the arms still possible, in one ``lax.switch`` (``lax.cond`` for two)."""
    preds, possible = [], []
    chosen = len(arms) - 1
    for k, (test, _) in enumerate(arms[:-1]):
        value = test if k == 0 else test()
        if is_traced(value):
            preds.append(_chain_condition(value, site, k))
            possible.append(k)
        elif value:
            chosen = k
            break
    possible.append(chosen)
    branches = [arms[k][1] for k in possible]
    if not preds:
        return split.run_branch(branches[0], operands, site)
    if site.branches:
        site = replace(site, branches=tuple(site.branches[k] for k in possible),
                       branch_lines=tuple(site.branch_lines[k] for k in possible))
    if len(preds) == 1:
        return cond(preds[0], branches, operands, site)
    return cond(_first_true(preds), branches, operands, site)


def _first_true(preds) -> jax.Array:
    """The index of the first true condition of ``preds``, ``len(preds)`` when none is: a few
    selects for a short chain (what one writes by hand), one ``argmax`` for a long one."""
    if len(preds) > 8:
        return jnp.argmax(jnp.stack([*preds, jnp.asarray(True)])).astype(jnp.int32)
    index = jnp.int32(len(preds))
    for k in reversed(range(len(preds))):
        index = jnp.where(preds[k], jnp.int32(k), index)
    return index


def _chain_condition(value, site: Site, k: int):
    """The truth value of condition ``k`` of an ``elif`` chain as a boolean scalar."""
    if k:
        site = replace(site, line=site.branch_lines[k]) if site.branch_lines else site
    pred = _scalar_predicate(value, site, "if" if k == 0 else "elif")
    return pred if jnp.result_type(pred) == jnp.bool_ else pred != 0


def _appendable(v) -> bool:
    return isinstance(v, (lists_mod.Accumulator, lists_mod.AppendProbe))


def _cond_probing(pred, branches, operands, site: Site):
    """A traced ``if`` met while a loop body is probed for appends: each branch gets its own
    copy of the probed lists, linked to the original so that an append in any branch is noted
    there; the original comes out of the ``if`` unchanged (the probe's values are never used)."""
    lists = [k for k, v in enumerate(operands) if isinstance(v, lists_mod.AppendProbe)]
    out_of: dict[int, int] = {}

    def wrap(branch):
        def run(*ops):
            ops = list(ops)
            copies = {k: lists_mod.AppendProbe(operands[k], origin=operands[k]) for k in lists}
            for k, copy in copies.items():
                ops[k] = copy
            outs = list(branch(*ops))
            for i, out in enumerate(outs):
                for k, copy in copies.items():
                    if out is copy or (isinstance(out, lists_mod.AppendProbe) and _comes_from(out, copy)):
                        out_of[i] = k
                        outs[i] = None  # an append reached the original through `origin`
            return tuple(outs)

        return run

    plain = tuple(None if k in lists else v for k, v in enumerate(operands))
    outs = list(cond(pred, [wrap(b) for b in branches], plain, site))
    for i, k in out_of.items():
        outs[i] = operands[k]
    return tuple(outs)


def _comes_from(probe, origin) -> bool:
    """Whether ``probe`` is ``origin`` or a copy an inner loop or branch rebuilt from it."""
    while probe is not None:
        if probe is origin:
            return True
        probe = probe.origin
    return False


def _cond_appending(pred, branches, operands, site: Site):
    """A traced ``if`` inside a scanned loop whose branches append to a list being stacked:
    each branch must append one value; the selected value is appended after the ``if``. Each
    branch gets its own copy of the list, which reads the list as it is before the ``if``."""
    if not any(isinstance(v, lists_mod.Accumulator) for v in operands):
        return _cond_probing(pred, branches, operands, site)
    lists = [k for k, v in enumerate(operands) if _appendable(v)]
    out_of: dict[int, int] = {}  # output index -> operand index of the list it returns

    def wrap(branch):
        def run(*ops):
            ops = list(ops)
            fresh = {k: lists_mod.branch_of(operands[k], site.names[k] if k < len(site.names) else "list", site)
                     for k in lists}
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


def _unobserved(outs: tuple, site: Site) -> tuple:
    """A branch that has left the function (its ``return`` flag is set as a Python ``True``: a
    ``return``, or a ``raise`` recorded for run time) gives values no later code reads: a name
    with no value there is :class:`Fillable`, zeros where another branch gives an array."""
    names = site.names
    if not any(outs[i] is True for i in range(min(len(outs), len(names))) if is_return_flag(names[i])):
        return outs
    return tuple(Fillable(v.name, v.site) if type(v) is Undefined else v for v in outs)


def _no_python_leaves(value, name: str, k: int, n: int, site: Site, display: bool = True) -> None:
    """A Python value that differs between the branches (a string, an object): which one
    Python has depends on the data. Eager Python runs it (``NeedsPython``)."""
    for leaf in jax.tree_util.tree_leaves(value):
        if not array_like(leaf):
            name = _display_name(name) if display else name
            raise site_error(
                site,
                f"`{name}` is a Python {type(leaf).__name__} in the {_branch_name(k, n, site)} of this "
                f"`if` on a traced value, and only arrays and numbers can differ between the "
                f"branches of one XLA program",
                f"Compute `{name}` outside the `if`, or make it an array.",
                NeedsPython,
            )


def _probe_outputs(branches, operands, site: Site) -> _Plan:
    """Trace each branch abstractly to decide, per output, zeros to fill or a static value."""
    avals: dict[int, object] = {}
    python: dict[int, list] = {}
    for k, branch in enumerate(branches):
        def probe(branch=branch, k=k):
            outs = _unobserved(tuple(branch(*fresh(operands))), site)
            kept = []
            for i, v in enumerate(outs):
                if isinstance(v, Fillable) or v is None:
                    python.setdefault(i, []).append(v)
                    kept.append(None)
                else:
                    _no_python_leaves(v, site.names[i] if i < len(site.names) else "value", k, len(branches), site)
                    kept.append(v)
            return tuple(kept)

        for i, aval in enumerate(jax.eval_shape(probe)):
            if aval is not None and i not in avals:
                avals[i] = aval
    fill, static = {}, {}
    for i, values in python.items():
        if i in avals:
            if all(isinstance(v, Fillable) for v in values):
                fill[i] = avals[i]  # zeros made inside the branch that needs them (see `run`)
        elif len(values) == len(branches):
            # No branch has an array here: None on some path wins over a value not set yet.
            set_ = [v for v in values if not isinstance(v, Fillable)]
            static[i] = None if any(v is None for v in values) else (set_ or values)[0]
    return _Plan(fill, static, probed=True)


def _lax_cond(pred, fns, operands):
    # Operands are closed over rather than passed: they may hold Python values that lax
    # cannot abstract (a not-yet-set return value), which the branches never return.
    if len(fns) == 2:
        truth = (lambda: pred) if jnp.result_type(pred) == jnp.bool_ else (lambda: pred != 0)
        taken = [truth, lambda: jnp.logical_not(truth())]
    else:
        index = lambda: jnp.clip(jnp.asarray(pred, jnp.int32), 0, len(fns) - 1)  # noqa: E731
        taken = [lambda k=k: index() == k for k in range(len(fns))]

    def thunk(f, on_path):
        def run():
            with traced_region(on_path):  # where a `raise` in the branch fails (see vmap)
                return f(operands)

        return run

    thunks = [thunk(f, on_path) for f, on_path in zip(fns, taken)]
    if len(fns) == 2:
        return lax.cond(pred, thunks[0], thunks[1])
    return lax.switch(jnp.asarray(pred, jnp.int32), thunks)  # which clamps the index


def _display_name(name: str) -> str:
    """The user's word for a name laxify made up."""
    return "the return value" if is_return_value(name) else name


def _branch_name(k: int, n: int, site: Site | None = None) -> str:
    if site is not None and site.branches:
        return site.branches[k]
    return ("true branch", "false branch")[k] if n == 2 else f"branch {k}"


def _fits_default_int(value: int) -> bool:
    """Whether JAX's default integer dtype (int32 without x64) holds the Python int ``value``."""
    info = np.iinfo(jax.dtypes.canonicalize_dtype(np.int64))
    return info.min <= value <= info.max


def _int_too_large(site: Site, name: str, value: int, where: str) -> NeedsPython:
    """A Python int a traced construct gives out that JAX's default integer cannot hold: a
    Python int is unbounded, an int32 would wrap or refuse it (eager Python runs it)."""
    dtype = jax.dtypes.canonicalize_dtype(np.int64).name
    return site_error(
        site,
        f"`{name}` is the Python int {value} in {where}, and a value of a traced construct is "
        f"an {dtype} array, which cannot hold it (Python's ints are unbounded)",
        f"Enable 64-bit integers before any JAX call (jax.config.update(\"jax_enable_x64\", True)), "
        f"or compute `{name}` outside the traced construct, or as a float.",
        NeedsPython,
    )


def _checked_branch(fn, k: int, n: int, site: Site, plan: _Plan):
    def run(operands):
        outs = _unobserved(tuple(fn(*fresh(operands))), site)
        if not plan.probed and any(isinstance(v, Fillable) or v is None for v in outs):
            raise _NeedsPlaceholder()
        # Zeros made here, in the branch: an array made outside would be an operand of the
        # cond, materialized (and copied to its output) even where this branch never runs.
        outs = tuple(jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), plan.fill[i])
                     if isinstance(v, Fillable) and i in plan.fill else v for i, v in enumerate(outs))
        kept = [i for i in range(len(outs)) if i not in plan.static]
        names = [_display_name(site.names[i]) if i < len(site.names) else "value" for i in kept]
        outs = tuple(outs[i] for i in kept)
        for name, v in zip(names, outs):
            if isinstance(v, Undefined):
                other = "the other branch" if n == 2 else "another branch"
                raise site_error(
                    replace(site, line=site.branch_lines[k]) if site.branch_lines else site,
                    f"`{name}` is defined in {other} of this `if` on a traced value, but not in "
                    f"the {_branch_name(k, n, site)}, and it is used after the `if`.",
                    f"Assign `{name}` before the `if` or in every branch, so that it has a value "
                    f"whichever branch runs.",
                )
            for leaf in jax.tree_util.tree_leaves(v):
                if type(leaf) is int and not _fits_default_int(leaf):
                    raise _int_too_large(replace(site, line=site.branch_lines[k]) if site.branch_lines else site,
                                         name, leaf, f"the {_branch_name(k, n, site)} of this `if` on a traced value")
            _no_python_leaves(v, name, k, n, site, display=False)
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
            ref = _join_tree(ref, other, name, site, (_branch_name(0, n, site), _branch_name(k, n, site)),
                             _construct_phrase(site))
        out.append(ref)
    return out


def _construct_phrase(site: Site) -> str:
    """The construct whose paths a join compares, in the user's words: the `if` itself, or for
    the code after a statement that may return, that statement."""
    kind = site.construct
    if kind == "if":
        return "this `if` on a traced value"
    noun = {"for": "loop", "while": "loop", "with": "block"}.get(kind, "statement")
    return f"a `return` in this `{kind}` {noun}"


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
    returned = is_return_value(name)
    label = "return value" if returned else name
    left, right = tree_lines(label, a), tree_lines(label, b)
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
    # Values of a different structure or shape on the paths of a traced `if`: which one Python
    # has depends on the data, so eager Python runs it (NeedsPython: to_static falls back).
    if returned:
        return site_error(
            site,
            f"the function returns values of a different {what} on paths decided by {construct}, "
            f"and one XLA program returns one {what}:\n{header}\n" + "\n".join(rows),
            f"Revise the `return` statements so that every path returns the same {what} "
            f"(for example the same tuple length or dict keys).",
            NeedsPython,
        )
    return site_error(
        site,
        f"`{name}` has a different {what} on the two sides of {construct}:\n{header}\n" + "\n".join(rows),
        f"Revise the code so that `{name}` keeps one {what} on every path "
        f"(pad or reshape it, or give it its final {what} before the control flow).",
        NeedsPython,
    )


def _casting(fn, target):
    def run(operands):
        outs = fn(operands)
        return tuple(
            jax.tree_util.tree_map(lambda v, t: lax.convert_element_type(v, t.dtype), o, t)
            for o, t in zip(outs, target)
        )

    return run

