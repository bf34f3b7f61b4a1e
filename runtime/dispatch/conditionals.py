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
from laxify.runtime import error_channel, numbers, report
from laxify.runtime.capture import capture, output_avals
from laxify.runtime.dispatch.values import Fillable, Undefined, array_like, fresh, is_traced
from laxify.runtime.lowering import Site
from laxify.runtime.messages import location, site_error, tree_lines

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
    with error_channel.traced_region():  # the branches run only for some data: a `raise` in them waits
        out = _traced_cond(pred, branches, operands, site)
    split.joined_python_floats(operands, out)
    return out


def _caught(e: Exception, site: Site) -> tuple:
    """What a branch gives after Python raised ``e`` while it was traced (a static ``10 // k``,
    a missing key: see ``error_channel.is_users_error``): recorded for run time, for the runs
    that take it, as a ``raise``; the branch gives values nothing observes. JAX's own errors
    are not the user's: they go on (a fallback)."""
    if not error_channel.is_users_error(e) or raised_by_array_library(e):
        raise e
    error_channel.record_exception(e)
    return tuple(True if is_stop_flag(name) else Fillable(name) for name in site.names)


def _traced_cond(pred, branches, operands, site: Site):
    if any(_appendable(v) for v in operands):
        return _cond_appending(pred, branches, operands, site)  # (its `cond` catches what they raise)
    # Effects on Python objects are watched in the user's branch itself; an exception Python
    # raises there is recorded for the runs that take it (outside the watch).
    identity = effects.Identity(operands, site)
    branches = [
        effects.guarded(b, f"this `{site.construct}` on a traced value", lambda: location(site), identity)
        for b in branches
    ]
    return identity.write_back(_joined_cond(pred, branches, operands, site))


def _joined_cond(pred, branches, operands, site: Site):
    """``lax.cond`` of the branches, their outputs joined (see ``_plan``): each branch is
    traced once (``runtime/capture.py``) in a report frame of its own, its outputs read, and
    its operations replayed in the ``lax.cond``, whose report output goes to the frame around."""
    runs = [capture(_branch_run(b, operands, site, k)) for k, b in enumerate(branches)]
    plan = _plan([run.outputs[0] for run in runs], site)
    union = report.Union([run.outputs[1] for run in runs])
    fns = [plan.branch(run, k, union) for k, run in enumerate(runs)]
    if site.after_raise and _runs_through(runs[0]) and not runs[1].jaxpr.eqns:
        # The code after a `raise` (only a failed check skips it): computed on every run, its
        # checks counted where no check failed before (the first failure is the one raised),
        # no `lax.cond` (whose two computations, in a loop body, cost the compiler and each
        # iteration more than the code itself).
        out, found = fns[0]()
        with report.on_path(lambda: pred):
            report.absorb(found)
    else:
        # (`lax.switch` clamps the index of an elif chain)
        out, found = lax.cond(pred, *fns) if len(fns) == 2 else lax.switch(jnp.asarray(pred, jnp.int32), fns)
        report.absorb(found)
    joined = plan.restore(out)
    numbers.mark_joined(joined, [run.outputs[0] for run in runs])
    return joined


def _runs_through(run) -> bool:
    """Whether a captured branch may run where its values are never observed: it has no effect
    (a print, a callback) and holds no ``while`` loop (which values nothing observes may keep
    from ending)."""
    if run.jaxpr.effects:
        return False
    stack = [run.jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            if eqn.primitive.name == "while":
                return False
            for param in eqn.params.values():
                for inner in param if isinstance(param, (tuple, list)) else (param,):
                    inner = getattr(inner, "jaxpr", inner)  # (a closed jaxpr's own)
                    if hasattr(inner, "eqns"):
                        stack.append(inner)
    return True


def _branch_run(branch, operands, site: Site, k: int):
    """The run of branch ``k`` on (fresh copies of) the operands, in a traced region and a
    report frame of its own: ``(outputs, report)``. (One function: each traced ``if`` nests its
    branches' traces, and deeply nested code should not pay Python frames for wrappers.)"""
    left = site.return_guard and k == 1  # (where the function has returned)

    def run():
        with error_channel.traced_region(), report.frame() as made:
            try:
                out = _unobserved(tuple(branch(*fresh(operands))), site, left)
            except Exception as e:
                out = _caught(e, site)
        return out, made.report()

    return run


def elif_chain(arms, operands, site: Site):
    """``if``/``elif``/.../``else``: per arm, its condition (the first one's value, a thunk for
    each later one, None for the ``else``) and its branch function.

    The conditions are evaluated in order, as Python does, until one is true as a Python
    value: a Python false condition skips its arm (its branch is never traced) and a Python
    true one ends the chain, so later conditions are not evaluated. A traced condition cannot
    end it: the later conditions are evaluated too, and the first true one (``argmax``)
    chooses among the arms still possible, in one ``lax.switch`` (``lax.cond`` for two).

    A later condition that raises (a helper that always raises, a static ``10 // k``) after a
    traced one is the chain's raise where no earlier condition holds: recorded for those runs,
    the arm that stands for it gives values nothing observes, and no later condition is
    evaluated (Python evaluates none there)."""
    preds, possible = [], []
    chosen, branch = len(arms) - 1, None
    for k, (test, _) in enumerate(arms[:-1]):
        if k == 0:
            value = test
        elif not preds:
            value = test()
        else:
            value, raised = _later_condition(test, preds, site)
            if raised is not None:
                chosen, branch = k, lambda *operands, raised=raised: raised
                break
        if is_traced(value):
            preds.append(_chain_condition(value, site, k))
            possible.append(k)
        elif value:
            chosen = k
            break
    possible.append(chosen)
    branches = [arms[k][1] for k in possible]
    if branch is not None:
        branches[-1] = branch
    if not preds:
        return split.run_branch(branches[0], operands, site)
    if site.branches:
        site = replace(
            site,
            branches=tuple(site.branches[k] for k in possible),
            branch_lines=tuple(site.branch_lines[k] for k in possible),
        )
    if len(preds) == 1:
        return cond(preds[0], branches, operands, site)
    return cond(_first_true(preds), branches, operands, site)


def _later_condition(test, preds, site: Site) -> tuple:
    """``(value, None)`` of a later condition of an ``elif`` chain, evaluated where none of
    ``preds`` holds; ``(None, outputs)`` where it raised the user's exception: recorded for
    those runs, and the arm's outputs are values nothing observes, as a traced branch's that
    raised (:func:`_caught`)."""
    earlier = tuple(preds)
    with error_channel.traced_region(), report.on_path(lambda: jnp.logical_not(jnp.any(jnp.stack(earlier)))):
        try:
            return test(), None
        except Exception as e:
            return None, _caught(e, site)


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
            fresh = {
                k: lists_mod.branch_of(operands[k], site.names[k] if k < len(site.names) else "list", site)
                for k in lists
            }
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


def _unobserved(outs: tuple, site: Site, left: bool = False) -> tuple:
    """A branch that has left the function (its ``return`` flag is set as a Python ``True``: a
    ``return``, or a ``raise`` recorded for run time; ``left``: the branch of a return guard
    that runs where the function has returned) gives values no later code reads: a name with
    no value there is :class:`Fillable`, zeros where another branch gives an array."""
    names = site.names
    if left:
        # The guard's test is the flag's negation: the flag is true wherever this branch runs
        # (so an enclosing branch that returned on every path is seen to have returned).
        outs = tuple(True if k < len(names) and is_return_flag(names[k]) else v for k, v in enumerate(outs))
    elif not any(outs[i] is True for i in range(min(len(outs), len(names))) if is_return_flag(names[i])):
        return outs
    return tuple(Fillable(v.name, v.site) if type(v) is Undefined else v for v in outs)


def _no_python_leaves(value, name: str, k: int, n: int, site: Site, display: bool = True) -> None:
    """A Python value that differs between the branches (a string, an object): which one
    Python has depends on the data. Eager Python runs it (``NeedsPython``)."""
    for leaf in jax.tree_util.tree_leaves(value):
        if not (array_like(leaf) or isinstance(leaf, jax.ShapeDtypeStruct)):
            name = _display_name(name) if display else name
            raise site_error(
                site,
                f"`{name}` is a Python {type(leaf).__name__} in the {_branch_name(k, n, site)} of this "
                f"`if` on a traced value, and only arrays and numbers can differ between the "
                f"branches of one XLA program",
                f"Compute `{name}` outside the `if`, or make it an array.",
                NeedsPython,
            )


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
        f'Enable 64-bit integers before any JAX call (jax.config.update("jax_enable_x64", True)), '
        f"or compute `{name}` outside the traced construct, or as a float.",
        NeedsPython,
    )


def _join_outputs(avals, names, site: Site, n: int):
    """Per output, the common type of every branch's output, or a located error."""
    first = avals[0]
    out = []
    for idx, name in enumerate(names):
        ref = first[idx]
        for k in range(1, len(avals)):
            other = avals[k][idx]
            ref = _join_tree(
                ref, other, name, site, (_branch_name(0, n, site), _branch_name(k, n, site)), _construct_phrase(site)
            )
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


class _Plan:
    """How a traced ``if`` joins its branches' outputs: ``fill`` gives zeros of an output's
    type in a branch that has no value for it (:class:`Fillable`) where another has an array;
    ``static`` passes around the cond an output that is the same Python value on every path
    (``None``, a value not set yet); ``target``: the dtypes every branch is cast to, where
    their dtypes differ (as JAX promotes them)."""

    def __init__(self, fill: dict, static: dict, target: list | None):
        self.fill, self.static, self.target = fill, static, target

    def branch(self, run, k: int, union: report.Union):
        """The function of no arguments ``lax.cond`` calls for branch ``k``: its captured run
        replayed, zeros filled in, static outputs left out, cast to the joined types; with its
        report in the structure of every branch's (``union``)."""

        def replayed():
            outs, found = run.replay()
            outs = tuple(
                jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), self.fill[i])
                if isinstance(v, Fillable) and i in self.fill
                else v
                for i, v in enumerate(outs)
            )
            outs = tuple(v for i, v in enumerate(outs) if i not in self.static)
            if self.target is not None:
                outs = tuple(
                    jax.tree_util.tree_map(lambda v, t: lax.convert_element_type(v, t.dtype), o, t)
                    for o, t in zip(outs, self.target)
                )
            return outs, union.of(k, found)

        return replayed

    def restore(self, outs) -> tuple:
        if not self.static:
            return outs
        outs = list(outs)
        for i in sorted(self.static):
            outs.insert(i, self.static[i])
        return tuple(outs)


def _plan(outputs: list, site: Site) -> _Plan:
    """The plan that joins the branches' ``outputs`` (captured: arrays as their types), or the
    located error for an output that cannot be joined: a name defined in some branches only,
    a Python value that differs between them, a Python int too large for JAX's integers, a
    structure or shape that differs."""
    n = len(outputs)
    width = len(outputs[0])
    fill, static = {}, {}
    names = site.names
    flags = [i for i in range(min(width, len(names))) if is_return_flag(names[i])]
    stayed = [k for k, outs in enumerate(outputs) if not any(outs[i] is True for i in flags)]
    for i in range(width):
        values = [outs[i] for outs in outputs]
        if (
            stayed
            and len(stayed) < n
            and i < len(names)
            and not (is_stop_flag(names[i]) or is_return_value(names[i]))  # (read after a return)
            and all(isinstance(values[k], Undefined) for k in stayed)
        ):
            # Only branches that left the function (whose values nothing reads) give it a
            # value: after the `if` it has none, as in Python on the paths that go on.
            unset = [values[k] for k in stayed if type(values[k]) is Undefined]
            static[i] = (unset or [values[k] for k in stayed])[0]
            continue
        if i in flags and all(v is True for v in values):  # (the function left on every path)
            static[i] = True
            continue
        python = [v for v in values if isinstance(v, Fillable) or v is None]
        if not python:
            continue
        arrays = [v for v in values if not (isinstance(v, Fillable) or v is None)]
        if arrays:
            if all(isinstance(v, Fillable) for v in python) and all(
                array_like(leaf) or isinstance(leaf, jax.ShapeDtypeStruct)
                for leaf in jax.tree_util.tree_leaves(arrays[0])
            ):
                fill[i] = output_avals(arrays[0])  # (cast below with the others where dtypes differ)
        elif len(python) == n:
            # No branch has an array here: None on some path wins over a value not set yet.
            set_ = [v for v in python if not isinstance(v, Fillable)]
            static[i] = None if any(v is None for v in python) else (set_ or python)[0]
    kept = [i for i in range(width) if i not in static]
    names = [_display_name(site.names[i]) if i < len(site.names) else "value" for i in kept]
    avals = []
    for k, outs in enumerate(outputs):
        outs = [fill[i] if isinstance(outs[i], Fillable) and i in fill else outs[i] for i in kept]
        for name, v in zip(names, outs):
            _check_output(v, name, k, n, site)
        avals.append([output_avals(v) for v in outs])
    joined = _join_outputs(avals, names, site, n)
    differ = any(
        a.dtype != t.dtype
        for k in range(n)
        for j in range(len(kept))
        for a, t in zip(jax.tree_util.tree_leaves(avals[k][j]), jax.tree_util.tree_leaves(joined[j]))
    )
    return _Plan(fill, static, joined if differ else None)


def _check_output(v, name: str, k: int, n: int, site: Site) -> None:
    """The located error for branch ``k``'s output ``v`` (named ``name``) that no traced
    ``if`` can give out."""
    where = replace(site, line=site.branch_lines[k]) if site.branch_lines else site
    if isinstance(v, Undefined):
        other = "the other branch" if n == 2 else "another branch"
        raise site_error(
            where,
            f"`{name}` is defined in {other} of this `if` on a traced value, but not in "
            f"the {_branch_name(k, n, site)}, and it is used after the `if`.",
            f"Assign `{name}` before the `if` or in every branch, so that it has a value whichever branch runs.",
        )
    for leaf in jax.tree_util.tree_leaves(v):
        if type(leaf) is int and not _fits_default_int(leaf):
            raise _int_too_large(where, name, leaf, f"the {_branch_name(k, n, site)} of this `if` on a traced value")
    _no_python_leaves(v, name, k, n, site, display=False)
