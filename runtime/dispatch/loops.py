"""``while``, ``for i in range(...)`` and ``for x in xs``: Python loops on Python values,
``lax.while_loop``/``lax.scan``/bounded scans on traced ones."""

from __future__ import annotations

import builtins
import functools
import operator
import types
import warnings
from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from laxify.ir.errors import ConversionError, NeedsPython
from laxify.ir.naming import is_break_flag, is_return_flag, is_stop_flag
from laxify.runtime import effects
from laxify.runtime import lists as lists_mod
from laxify.runtime import options
from laxify.runtime import updates
from laxify.runtime.dispatch import reverse_gate
from laxify.runtime.dispatch.conditionals import (
    _appendable,
    _fits_default_int,
    _int_too_large,
    _join_tree,
    _scalar_predicate,
)
from laxify.runtime import error_channel
from laxify.runtime import numbers
from laxify.runtime import split
from laxify.runtime.capture import capture, output_avals, promoted
from laxify.runtime import report
from laxify.runtime.dispatch.values import (
    Fillable,
    Undefined,
    UnsetName,
    any_traced,
    array_like,
    fresh,
    is_array,
    is_traced,
)
from laxify.runtime.iterables import as_scan_input
from laxify.runtime.lowering import Site
from laxify.runtime.messages import describe, location, site_error

__all__ = ["CarryChange", "for_each", "for_range", "while_loop"]


_PYTHON_CONSTANTS = (bool, str, bytes, type(None))


_FUNCTIONS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial)


def _passes_through(v) -> bool:
    """A carry that may stay a Python value through a traced loop if no iteration changes it:
    a name with no value yet, ``None``, a flag (``break``/``return`` flags are Python bools),
    or functions (also a tuple of them, such as an optax transformation: `tx.update(...)` is
    taken for a list's `update` by the analysis, which goes by the method's name)."""
    return isinstance(v, (Undefined, *_PYTHON_CONSTANTS)) or _functions(v)


def _functions(v) -> bool:
    if isinstance(v, _FUNCTIONS):
        return True
    return isinstance(v, tuple) and bool(v) and all(_functions(e) or isinstance(e, _PYTHON_CONSTANTS) for e in v)


class UnboundInLoop(ConversionError, UnboundLocalError):
    """A traced loop reads a name before its first assignment (located; Python's error type)."""


def _settle_unset(init, one_step, site: Site, construct: str, runs: bool = False, body=None, traced_flags=True):
    """Decide from abstract steps what a traced loop does with each carry that is not an
    array yet (a return value before any ``return``, a name first assigned in the loop, a
    Python flag):

    - no iteration changes it (the step gives back the same Python value, or leaves the name
      unset): it passes through the loop unchanged, outside the lax carry (returned as the
      second result, by index), so a ``return`` or ``break`` under a branch that is false
      while tracing costs nothing;
    - the body sets a name that has no value yet and no path can observe its value before
      that (a return value, or any name when the loop surely ``runs``): zeros of the type
      one step gives, overwritten by the first iteration that sets it, as in Python;
    - otherwise it stays as it is: a Python flag becomes a traced carry, and a name with no
      value is reported by :func:`_check_carries`.

    Gives the carries (some set to zeros), the positions of those that pass through, and
    where ``body`` (the loop's body on all its carries, as the lax loop runs it) is given and
    the last abstract step is the loop's (each carry that passes through passed as it will),
    that step's trace (``runtime/capture.py``), which the loop then replays: the body is
    traced once more only where the carries changed after the last step.
    """
    candidates = [k for k, v in enumerate(init) if _passes_through(v)]
    if not candidates:
        return init, (), None
    init = list(init)
    # A `return`/`raise`/`break` flag a `while` carries is almost always set by the body under
    # a traced condition: probed as a traced flag from the start, the body is traced once
    # (a Python `False` would be probed, found changed, and probed again as an array). Where
    # no step changes it after all (the body gives the very value it got), it goes back to
    # Python's `False` and the body is probed again, as before (also where a step sets it to a
    # Python value: a body that always returns or raises). Not in a scan's body (``traced_flags``
    # false), whose flags guard the rest of the iteration: probed as Python's `False`, a `raise`
    # there outside the body's traced branches is one its first iteration always makes (``_scan``).
    flags = [
        k
        for k in candidates
        if body is not None
        and traced_flags
        and type(init[k]) is bool
        and k < len(site.names)
        and (is_stop_flag(site.names[k]) or is_break_flag(site.names[k]))
    ]
    python_flags = {k: init[k] for k in flags}
    for k in flags:
        init[k] = jnp.asarray(init[k])
    candidates = [k for k in candidates if k not in flags]
    while True:
        # While probing, a name not set yet may flow through a traced `if` of the body.
        probe = [
            Fillable(v.name, v.site) if isinstance(v, Undefined) and not isinstance(v, Fillable) else v for v in init
        ]
        abstract = [k for k in range(len(init)) if k not in candidates]
        changed: dict[int, bool] = {}
        as_python: list[bool] = []

        def step(arrays, probe=probe, abstract=abstract, changed=changed, as_python=as_python):
            full = list(probe)
            for k, a in zip(abstract, arrays):
                full[k] = a
            outs = one_step(tuple(full)) if body is None else body(tuple(full))
            if flags:  # never set, or set to a Python value (every run sets it): Python flags after all
                as_python.append(all(outs[k] is full[k] for k in flags) or any(type(outs[k]) is bool for k in flags))
            kept = []
            for k in candidates:
                out, before = outs[k], probe[k]
                if isinstance(before, Undefined):
                    same = isinstance(out, Undefined)
                else:
                    same = out is before or (type(out) is type(before) and out == before)
                changed[k] = not same
                if (
                    not same
                    and not isinstance(out, Undefined)
                    and not all(array_like(leaf) for leaf in jax.tree_util.tree_leaves(out))
                ):
                    name = site.names[k] if k < len(site.names) else "a value"
                    leaf = next(leaf for leaf in jax.tree_util.tree_leaves(out) if not array_like(leaf))
                    raise _python_carry(name, leaf, site, construct)
                kept.append(None if same or isinstance(out, Undefined) else out)
            return tuple(kept) if body is None else (outs, tuple(kept))

        run = None
        try:
            if body is None:
                avals = jax.eval_shape(report.discarded(step), tuple(init[k] for k in abstract))
            else:
                run = capture(report.collected(step), tuple(init[k] for k in abstract))
                avals = [None if v is None else output_avals(v) for v in run.outputs[0][1]]
        except UnsetName as e:
            unset = {
                site.names[k]
                for k in candidates
                if k < len(site.names) and isinstance(init[k], Undefined) and not isinstance(init[k], Fillable)
            }
            if e.name not in unset:
                raise
            if e.line is not None:
                site = replace(site, line=e.line, col=0)
            raise site_error(
                site,
                f"`{e.name}` is read in this `{construct}` loop on a traced value before it is "
                f"assigned: on the first iteration it has no value (Python raises "
                f"UnboundLocalError there).",
                f"Assign `{e.name}` before the loop.",
                UnboundInLoop,
            ) from None
        if flags and as_python[-1]:
            for k in flags:  # (probed again as the Python values they were)
                init[k] = python_flags[k]
            candidates, flags = sorted((*candidates, *flags)), []
            continue
        flags = []
        now_changed = [k for k in candidates if changed[k]]
        for k, aval in zip(candidates, avals):
            if (
                changed[k]
                and isinstance(init[k], Undefined)
                and aval is not None
                and (runs or isinstance(init[k], Fillable))
            ):
                init[k] = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aval)
        if not now_changed:
            return tuple(init), tuple(candidates), run
        unset = [k for k in now_changed if isinstance(init[k], Undefined)]
        if unset:
            # Set by the loop, yet it may run zero times: zeros of the type one step gives,
            # and a check after the loop that it ran (Python's UnboundLocalError otherwise).
            for k, aval in zip(candidates, avals):
                if k in unset and aval is not None:
                    init[k] = _Unbound(jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aval))
            return tuple(init), (), None
        # A flag that changes is carried as an array from now on (as the lax loop will see it:
        # not a candidate again); the others are probed again with it abstract.
        for k in now_changed:
            if type(init[k]) is bool:
                init[k] = jnp.asarray(init[k])
        candidates = [k for k in candidates if not changed[k]]
        if not candidates:
            return tuple(init), (), None


class _Unbound:
    """The zeros a traced loop starts a carry with that has no value before it (see
    :func:`_settle_unset`): after the loop the name has a value only if the loop ran."""

    __slots__ = ("zeros",)

    def __init__(self, zeros):
        self.zeros = zeros


def _checking_ran(cond_fn, body_fn, init, site: Site, construct: str, early_exit: bool):
    """The loop with the carries :func:`_settle_unset` started as zeros: it also carries
    whether it ran, and after it a run-time check raises ``UnboundLocalError`` for the first
    such name when it did not (reading the name after the loop is where Python raises)."""
    unset = [k for k, v in enumerate(init) if isinstance(v, _Unbound)]
    init = tuple(v.zeros if isinstance(v, _Unbound) else v for v in init)
    counted = replace(site, names=(*site.names, "(ran)"))
    out = _traced_while_loop(
        lambda *c: cond_fn(*c[:-1]),
        lambda *c: (*body_fn(*c[:-1]), jnp.asarray(True)),
        (*init, jnp.asarray(False)),
        counted,
        construct,
        early_exit,
    )
    names = [
        site.names[k]
        for k in unset
        if k < len(site.names) and not site.names[k].startswith("(") and site.names[k] not in site.unread
    ]
    if names:

        def unbound(name=names[0]):
            error = UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")
            error.add_note(f"(`{name}` is first assigned in this `{construct}` loop, which ran zero times)")
            return error

        error_channel.check_at(out[-1], unbound, site.filename, site.line)
    return out[:-1]


def _without(passing, init, site: Site, lead: int = 0):
    """Carries ``passing`` (indices into ``init``) kept out of a lax loop: ``narrow`` drops
    them from a carry tuple, ``widen`` puts their unchanged values back, ``wrap`` adapts a
    loop function taking ``lead`` leading arguments and the carries."""
    keep = [k for k in range(len(init)) if k not in passing]

    def widen(vals):
        full = list(init)
        for k, v in zip(keep, vals):
            full[k] = v
        return tuple(full)

    def narrow(vals):
        vals = tuple(vals)
        return tuple(vals[k] for k in keep)

    def wrap(fn, returns_carries: bool):
        def run(*args):
            out = fn(*args[:lead], *widen(args[lead:]))
            return narrow(out) if returns_carries else out

        return run

    names = replace(site, names=tuple(site.names[k] for k in keep if k < len(site.names)))
    return narrow, widen, wrap, names


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
            if type(leaf) is int and not _fits_default_int(leaf):
                raise _int_too_large(site, name, leaf, f"this `{construct}` loop on a traced value")
            if not array_like(leaf):
                raise _python_carry(name, leaf, site, construct)


def _python_carry(name: str, leaf, site: Site, construct: str) -> NeedsPython:
    """A Python value (a string, a deque, an object) that changes from one iteration of a
    traced loop to the next: what it holds after the loop depends on the data, which eager
    Python runs (``to_static`` falls back)."""
    return site_error(
        site,
        f"`{name}` is a Python {type(leaf).__name__} changed in this `{construct}` loop on a traced value, and "
        f"one XLA program carries only arrays and numbers from one iteration to the next",
        f"Keep `{name}` unchanged inside the loop, or make it an array.",
        NeedsPython,
    )


class CarryChange(NeedsPython):
    """One iteration changes a carried value's shape, structure or dtype: Python's variables
    take any value, so eager Python runs it (``to_static`` falls back, at the loop's line)."""


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
        try:
            after = one_step(init)
        except Exception:
            after = None  # the body itself fails: the error `run` raised says why, once
        if after is not None:
            _diagnose_carries(names, init, after, site, construct)
        raise


def while_loop(cond_fn, body_fn, init, deps, site: Site):
    """``while``: Python while its condition is a Python value, else ``lax.while_loop``."""
    init = tuple(init)
    if not any_traced(deps):
        vals = init
        while True:
            pred = cond_fn(*vals)
            if is_traced(pred):
                return _traced_while(cond_fn, body_fn, vals, site)
            if not pred:
                return vals
            vals = tuple(body_fn(*vals))
    return _traced_while(cond_fn, body_fn, init, site)


def _guarded(fn, site: Site, construct: str, identity=None, init=None):
    """``fn`` (a body or condition traced once for every iteration) with its effects on Python
    objects watched (``runtime/effects.py``); a body's carries (``init``: their values before
    the loop) checked as :func:`_numbers_checked` says."""
    return _numbers_checked(
        effects.guarded(fn, f"this `{construct}` loop, traced as one lax loop,", lambda: location(site), identity),
        site,
        construct,
        init,
    )


def _numbers_checked(fn, site: Site, construct: str, init=None):
    """``fn``, whose carried Python ints must fit JAX's default integer (they would wrap or be
    refused), and whose carries that are Python numbers before the loop (``init``) must not
    become Python floats (:func:`_python_float`): one that does is a ``NeedsPython`` naming it
    (eager Python runs it)."""
    floats = init is not None and jnp.zeros((), float).dtype != jnp.float64
    found: dict = {}  # (no reference to `run` itself in its closure: effects.py walks closures)

    def run(*args):
        outs = fn(*args)
        if type(outs) is tuple:
            # (the Python type each carry came out as: `numbers.mark_results` after the loop)
            found["kinds"] = [numbers.python_type(v) for v in outs]
            for k, v in enumerate(outs):
                for leaf in jax.tree_util.tree_leaves(v):
                    if type(leaf) is int and not _fits_default_int(leaf):
                        name = site.names[k] if k < len(site.names) else "a value"
                        raise _int_too_large(site, name, leaf, f"this `{construct}` loop on a traced value")
                if floats and k < len(init) and _float_carry(init[k], v):
                    raise _python_float(site, site.names[k] if k < len(site.names) else "a value", construct)
        return outs

    run.found = found
    return run


def _traced_while(cond_fn, body_fn, init, site: Site, construct: str = "while", early_exit: bool = False):
    """A traced ``while``: a list or dict the body changes in place is the caller's object
    after it (``effects.Identity``); a ``raise`` in the body waits for run time."""
    identity = effects.Identity(init, site, loop=True, may_skip=True)
    cond_fn, guarded = _guarded(cond_fn, site, construct), _guarded(body_fn, site, construct, identity, init)
    body_fn = numbers.marking(guarded, init)  # its Python ints: overflow checked (numbers.py)
    try:
        with error_channel.traced_region():  # the body runs only for some data: a `raise` in it waits
            out = _traced_while_loop(cond_fn, body_fn, init, site, construct, early_exit)
    except Exception as e:
        if not error_channel.is_users_error(e):
            raise
        out = _raising_loop(e, cond_fn, body_fn, init, site, construct)
    return numbers.mark_results(init, identity.write_back(out), guarded.found.get("kinds"))


def _python_float(site: Site, name: str, construct: str) -> NeedsPython:
    """A carry that is a Python number before the loop and a Python float after its body
    (only ever combined with Python numbers: ``t = 0.0; while t < x: t += 0.1``, ``acc = 0;
    acc += 2 ** -k``) is float64 in eager Python and float32 in the program, without
    ``jax_enable_x64``: the loop could run a different number of times, its value after the
    loop differs past float32's rounding (a sum of many terms, a cancellation), and an int the
    loop runs zero times over stays an int in Python. The loop runs as Python instead."""
    return site_error(
        site,
        f"this `{construct}` loop changes the Python float `{name}` (float64 in eager code), which the "
        f"program would compute in float32 (without jax_enable_x64): its value after the loop, and how "
        f"many times a loop reading it runs, could differ from Python's",
        f"Start `{name}` as an array of the dtype you want (`{name} = jnp.float32(0.0)`), or enable "
        f'64-bit floats before any JAX call (jax.config.update("jax_enable_x64", True)).',
        NeedsPython,
    )


def _float_carry(before, after) -> bool:
    """Whether a carry is a Python int or float before a loop and a Python float after it (an
    item of a list, tuple or dict too)."""
    if type(before) in (list, tuple):
        return (
            type(after) in (list, tuple)
            and len(before) == len(after)
            and any(_float_carry(b, a) for b, a in zip(before, after))
        )
    if type(before) is dict:
        return type(after) is dict and any(_float_carry(v, after[k]) for k, v in before.items() if k in after)
    # A traced value is a Python number where a rule marked it so: a weakly typed array that
    # none did (`jnp.array(2.0)`, a Python float that jax.jit traced) is an array here.
    kind = numbers.marked_type(before) if isinstance(before, jax.core.Tracer) else numbers.python_type(before)
    if kind is int:  # (a float in Python after one iteration: an int where the loop runs zero times)
        return numbers.python_type(after) is float
    # A float the rules computed, whatever the carry was before: an array made a Python float
    # (`x = 0.99 * math.sin(math.pi * x)` of a float32 `x`) is float64 from the first iteration
    # on in eager code.
    return numbers.computed_float(after)


def _raising_loop(error: Exception, cond_fn, body_fn, init, site: Site, construct: str):
    """A traced loop whose body raised while it was traced, outside the body's own traced
    branches. A ``raise`` of the user's (``PathRaised``: a function the body calls raises
    whenever it is called) is the body's every run: the loop raises exactly when its body runs
    once, so it is that first run, in a ``lax.cond`` on the loop's condition that records the
    exception; the return flag is set where it raised, so the function does no more, and the
    other carries keep their values (never observed there). An error Python raised by itself
    (an empty list's ``pop``, a missing key) may come from the trace's Python state (a list
    that the data empties at run time), which one program cannot follow: eager Python runs it."""
    if not isinstance(error, error_channel.PathRaised):
        raise site_error(
            site,
            f"Python raised {type(error).__name__}({', '.join(map(repr, error.args))}) while laxify traced "
            f"the body of this `{construct}` loop on a traced value, which one XLA program cannot decide at "
            f"run time (a Python list or dict the loop changes, a key or index that only some iterations reach)",
            "Keep Python lists and dicts out of loops on traced values (use arrays: `buf.at[i].set(v)`), or "
            "run the function unconverted.",
            NeedsPython,
        ) from None
    pred = _scalar_predicate(cond_fn(*fresh(init)), site, construct)
    if not is_traced(pred):
        if pred:
            body_fn(*fresh(init))  # raises it again, here
        return init

    def first_run():
        with error_channel.traced_region():
            try:
                body_fn(*fresh(init))
            except error_channel.PathRaised:
                pass

    ran = capture(report.collected(first_run))
    union = report.Union([ran.outputs[1], report.EMPTY])
    report.absorb(lax.cond(pred, lambda: union.of(0, ran.replay()[1]), lambda: union.of(1, report.EMPTY)))
    return tuple(jnp.logical_or(v, pred) if is_stop_flag(name) else v for name, v in zip(site.names, init))


def _traced_while_loop(cond_fn, body_fn, init, site: Site, construct: str, early_exit: bool):
    def body(c):
        return _keep_carry_types(c, tuple(body_fn(*fresh(c))))

    # An early-exit range is not empty, and its flags are unset: it runs at least once.
    init, passing, run = _settle_unset(init, lambda c: tuple(body_fn(*c)), site, construct, runs=early_exit, body=body)
    if any(isinstance(v, _Unbound) for v in init):
        return _checking_ran(cond_fn, body_fn, init, site, construct, early_exit)
    if not passing and run is None:
        return _lax_while(cond_fn, body_fn, init, site, construct, early_exit)
    narrow, widen, wrap, narrowed = _without(passing, init, site)
    replayed = None
    if run is not None:  # the last abstract step is the loop's body with these carries passing through

        def step(c):
            outs, found = run.replay(c)
            return narrow(outs[0]), found

        replayed = (step, narrow(run.outputs[0][0]), run.outputs[1])
    return widen(
        _lax_while(wrap(cond_fn, False), wrap(body_fn, True), narrow(init), narrowed, construct, early_exit, replayed)
    )


def _lax_while(cond_fn, body_fn, init, site: Site, construct: str, early_exit: bool, replayed=None):
    """The ``lax.while_loop`` of a traced loop whose carries are settled (``replayed``: its
    body's trace where one was made already)."""
    opts = options.current()
    if opts.max_iters is not None:
        return _bounded_while(cond_fn, body_fn, init, site, opts.max_iters)
    lists = lists_mod.appended_carries(init, site.names, lambda c: tuple(body_fn(*c)))
    if lists:
        if early_exit:
            raise _early_exit_list_error(site.names[lists[0]], site)
        raise lists_mod.traced_length_error(site.names[lists[0]], site)
    _check_carries(init, site.names, site, construct)

    def cond(c):
        return _scalar_predicate(cond_fn(*fresh(c)), site, construct)

    def body(c):
        return _keep_carry_types(c, tuple(body_fn(*fresh(c))))

    out = _loop(
        lambda c: _reporting_while(cond, body, c, replayed),
        init,
        lambda c: jax.eval_shape(report.discarded(body), c),
        site.names,
        site,
        construct,
    )
    error = _early_exit_reverse_error if early_exit else _no_reverse_error
    return reverse_gate.gate(out, site, construct, error)


def _reporting_while(cond, body, init, replayed=None):
    """``lax.while_loop(cond, body, init)``, its body traced once (``runtime/capture.py``) in a
    report frame of its own, whose report the loop carries (the first failure of every
    iteration) and gives to the frame around it. ``replayed``: that trace made already, as the
    function giving ``(outputs, report)`` for the carries, and their types. A carry that
    starts weakly typed (a Python number) and becomes another type is promoted first, as
    ``lax.while_loop`` promotes it, and the body traced again for it."""
    if replayed is not None and promoted(init, replayed[1]) is not None:
        replayed = None
    if replayed is None:
        run = capture(report.collected(body), init)
        for _ in jax.tree_util.tree_leaves(init):  # (each round widens one carry at least)
            wider = promoted(init, run.outputs[0])
            if wider is None:
                break
            init = wider
            run = capture(report.collected(body), init)
        replayed = (run.replay, run.outputs[0], run.outputs[1])
    replay, _, found_type = replayed

    def step(carry):
        c, carried = carry
        out, found = replay(c)
        return out, report.merged(carried, found)

    def go_on(carry):
        c, carried = carry
        if not carried.rules:
            return cond(c)
        # A check that failed stops the loop: the call raises it (or runs eagerly) whatever
        # the loop computes after it, which may never end (`p <<= 1` past int32 wraps to 0).
        return jnp.logical_and(cond(c), carried.code == 0)

    out, found = lax.while_loop(go_on, step, (init, report.initial(found_type)))
    report.absorb(found)
    return out


def _no_reverse_error(site: Site, construct: str) -> ConversionError:
    return site_error(
        site,
        f"Reverse-mode differentiation (`jax.grad`, `jax.vjp`) cannot go through this "
        f"`{construct}` loop on a traced value: its number of iterations is not known while "
        f"tracing, so nothing says how many iterations to keep for the backward pass.",
        "Bound the loop: `with laxify.loop_options(max_iters=N):` around it (or "
        "`@laxify.loop_options(max_iters=N)` on the function) makes it a scan of at most N "
        "iterations, which reverse mode differentiates. Forward mode (`jax.jvp`, "
        "`jax.jacfwd`) works without a bound.",
        reverse_gate.ReverseModeError,
    )


def _early_exit_reverse_error(site: Site, construct: str) -> ConversionError:
    return site_error(
        site,
        "Reverse-mode differentiation (`jax.grad`, `jax.vjp`) cannot go through this `for` loop: "
        "`loop_options(early_exit=True)` made it a `lax.while_loop` that stops at its `break`, and "
        "JAX cannot differentiate a while loop in reverse mode.",
        "Leave out early_exit for loops you differentiate (the loop is then a scan that runs to the "
        "end of the range), or add `max_iters=N` to the same loop_options (a scan of at most N "
        "iterations). Forward mode (`jax.jvp`, `jax.jacfwd`) works as it is.",
        reverse_gate.ReverseModeError,
    )


def _early_exit_list_error(name: str, site: Site) -> ConversionError:
    return site_error(
        site,
        f"The list `{name}` is appended to in this loop, which `loop_options(early_exit=True)` makes a "
        f"`lax.while_loop` that stops at its `break`: one XLA program cannot hold a list whose length "
        f"is known only at run time.",
        "Write the rows into an array made before the loop (`buf = jnp.zeros((n, ...))` before it, "
        "`buf = buf.at[i].set(v)` in it), which the loop carries, and count the rows written.",
    )


def _keep_carry_types(carries, outs, skip=()):
    """Outputs of one iteration cast to their carry's dtype where they are weakly typed (a
    Python number) and that dtype holds them as JAX promotes (``y = 0.0`` before the loop,
    ``y = 3`` in it: the carry stays float32, as a traced ``if`` would give)."""
    if len(carries) != len(outs):
        return outs

    def cast(c, o):
        if isinstance(c, Undefined) or not hasattr(c, "dtype") or not isinstance(o, (int, float, bool, jax.Array)):
            return o
        weak = isinstance(o, (int, float, bool)) or getattr(o, "weak_type", False)
        if not weak or getattr(o, "shape", ()) != () or jnp.result_type(c, o) != c.dtype:
            return o
        if getattr(c, "weak_type", False) and isinstance(o, jax.Array):
            return o  # a Python number on both sides: it stays weakly typed after the loop, as one
        return (
            lax.convert_element_type(o, c.dtype) if not isinstance(o, (int, float, bool)) else jnp.asarray(o, c.dtype)
        )

    result = []
    for k, (c, o) in enumerate(zip(carries, outs)):
        if k in skip:
            result.append(o)
            continue
        if isinstance(o, Fillable) and not isinstance(c, Undefined):
            # No path observes it (the iteration raised, or the return value before a
            # `return`): the carry's own value stands for it.
            result.append(c)
            continue
        try:
            result.append(jax.tree_util.tree_map(cast, c, o))
        except (ValueError, TypeError):  # another structure: reported where the loop joins types
            result.append(o)
    return tuple(result)


def _bounded_while(cond_fn, body_fn, init, site: Site, max_iters: int):
    """A traced loop run at most ``max_iters`` times, as a scan (reverse differentiable):
    each step runs the body under ``lax.cond`` while the loop is still active."""

    def step(_, active, iterations, *vals):
        go = jnp.logical_and(active, _scalar_predicate(cond_fn(*vals), site, "while"))
        accs = [k for k, v in enumerate(vals) if _appendable(v)]
        plain = [k for k in range(len(vals)) if k not in accs]

        def run():
            new = list(fresh(vals))
            for k in accs:
                new[k] = lists_mod.branch_of(vals[k], site.names[k], site)
            outs = _keep_carry_types(vals, tuple(body_fn(*new)), skip=accs)
            appended = tuple(lists_mod.appended_once(outs[k], site.names[k], site) for k in accs)
            return tuple(outs[k] for k in plain), appended

        ran = capture(report.collected(run))
        union = report.Union([ran.outputs[1], report.EMPTY])
        shapes = ran.outputs[0]

        def skip():
            zeros = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), shapes[1])
            return (tuple(vals[k] for k in plain), zeros), union.of(1, report.EMPTY)

        def take():
            out, found = ran.replay()
            return out, union.of(0, found)

        (new, appended), found = lax.cond(go, take, skip)
        report.absorb(found)
        out = list(vals)
        for k, v in zip(plain, new):
            out[k] = v
        for k, v in zip(accs, appended):
            out[k].append(v)
        return (go, iterations + go.astype(jnp.int32), *out)

    flagged = replace(site, names=("(loop active)", "(iterations)", *site.names))
    out = _scan(step, (jnp.asarray(True), jnp.asarray(0, jnp.int32), *init), Count(0, 1, max_iters), flagged)
    # The last step ran and the condition still holds: Python would have gone on. Say so.
    cut = jnp.logical_and(out[0], _scalar_predicate(cond_fn(*fresh(out[2:])), site, "while"))
    if options.run_time_warnings():
        jax.debug.callback(functools.partial(_warn_cut_short, site, max_iters), cut)
    # A list the loop appended to holds a row per step (zeros after the last iteration): it
    # is the list of its first items, as many as the loop had before plus the iterations run.
    result = list(out[2:])
    for k, (before, after) in enumerate(zip(init, result)):
        if isinstance(before, list) and not isinstance(after, list):
            name = site.names[k] if k < len(site.names) else "list"
            result[k] = lists_mod.bounded_result(after, out[1] + len(before), name, site, max_iters, len(before))
    return tuple(result)


def _warn_cut_short(site: Site, max_iters: int, cut) -> None:
    """Run time: the bounded loop at ``site`` stopped at ``max_iters`` with its condition true."""
    if not np.any(np.asarray(cut)):
        return
    warnings.warn_explicit(
        f"laxify: this `{site.construct}` loop stopped after max_iters={max_iters} iterations "
        f"while its condition still held; Python would have run more iterations, so the result "
        f"differs from the Python loop's. Raise laxify.loop_options(max_iters=...).",
        RuntimeWarning,
        site.filename,
        site.line,
    )


def _static_int(x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if (
        isinstance(x, (jax.Array, np.ndarray))
        and not is_traced(x)
        and x.shape == ()
        and jnp.issubdtype(x.dtype, jnp.integer)
    ):
        return int(x)
    return None


def for_range(
    start,
    stop,
    step,
    body_fn,
    init,
    deps,
    site: Site,
    python_index=None,
    range_fn=builtins.range,
    range_args: int = 3,
    index_carries: tuple[int, ...] = (),
):
    """``for i in range(start, stop, step)``: static bounds scan, traced bounds loop while.
    ``range_fn`` is what the name ``range`` is where the loop stands: when a global or a
    closure variable shadows the builtin, the loop is Python's, over ``range_fn`` called with
    the ``range_args`` arguments written (``range(n)``: 1, ``range(a, b)``: 2).
    ``index_carries``: the carries that hold the index at the end of every iteration (the loop
    variable read after the loop); after a scan over static bounds they are the range's last
    item, the Python int that Python leaves in the variable."""
    init = tuple(init)
    if range_fn is not builtins.range:
        vals = init
        for i in range_fn(*((stop,) if range_args == 1 else (start, stop, step)[:range_args])):
            vals = tuple(body_fn(i, *vals))
        return vals
    bounds = [_static_int(b) for b in (start, stop, step)]
    if None not in bounds:
        r = range(*bounds)
        traced = python_index is None and (
            any_traced(deps) or any(is_array(leaf) for leaf in jax.tree_util.tree_leaves(init))
        )

        def python_loop():
            vals = init
            for i in r:
                vals = tuple(body_fn(i, *vals))
            return vals

        if not traced or _python_values(init) or split.runs_as_python(init):
            return python_loop()
        if len(r) == 0:
            return init
        stops = _stop_flags(site.names) if options.current().early_exit else ()
        if stops:
            return _scan_or_python(lambda: _early_exit_range(r, body_fn, init, site, stops), python_loop)
        out = _scan_or_python(lambda: _scan(body_fn, init, Count(r.start, r.step, len(r)), site), python_loop)
        return tuple(r[-1] if k in index_carries else v for k, v in enumerate(out))
    if python_index is not None:
        raise site_error(
            site,
            f"this loop's bounds are traced, but its index must be a Python int because {python_index}",
            "Make the bounds static (pass them as Python ints or mark them with static_argnums), "
            "or use `lax.dynamic_slice` instead of slicing with the index.",
            NeedsPython,
        )
    _check_range_args(start, stop, step, site)
    return _traced_range(start, stop, step, body_fn, init, site)


def _check_range_args(start, stop, step, site: Site) -> None:
    """Python's errors of ``range()`` on traced arguments: a ``TypeError`` for a bound that is
    no integer (its dtype decides, as eagerly), a ``ValueError`` for a step that is 0 (its value
    decides: a run-time check)."""
    for bound in (start, stop, step):
        dtype = getattr(bound, "dtype", None)
        if dtype is not None and not jnp.issubdtype(dtype, jnp.integer):
            raise TypeError(
                f"range() takes integers, and this bound is an array of dtype {dtype}, which cannot be "
                f"interpreted as an integer (as in eager Python: only integer scalar arrays can be "
                f"converted to a scalar index)"
            )
    if isinstance(step, jax.core.Tracer):
        error_channel.check_at(
            step != 0, lambda: ValueError("range() arg 3 must not be zero"), site.filename, site.line
        )


_NEEDS_PYTHON = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    CarryChange,
    lists_mod.NeedsPythonLoop,  # a stacked list's `len`, slice or iteration in the body
)


def _python_values(init) -> bool:
    """Whether a carry holds a Python value that no array can stand for (a str, an object)."""
    for leaf in jax.tree_util.tree_leaves(init, is_leaf=lambda v: isinstance(v, Undefined)):
        if isinstance(leaf, Undefined):
            continue
        if not array_like(leaf):
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


def _stop_flags(names) -> tuple[int, ...]:
    """Positions of the carried ``break`` and ``return`` flags: once one is set, the rest of a
    ``for`` loop's iterations do nothing (the converters guard the body with it)."""
    return tuple(k for k, name in enumerate(names) if is_break_flag(name) or is_return_flag(name))


def _early_exit_range(r: range, body_fn, init, site: Site, stops: tuple[int, ...]):
    """``loop_options(early_exit=True)``: a static range whose ``break``/``return`` flag is
    traced, as a ``lax.while_loop`` that runs until the range ends or a flag is set. The scan
    form would run the remaining iterations with the body switched off, so the carries after
    the loop are the same."""
    trips = len(r)
    nonneg = not r or min(r[0], r[-1]) >= 0
    body_fn = numbers.marking(body_fn, init, lead=1, index=True, nonneg=nonneg)  # range gives Python ints

    def cond(k, *c):
        go = k < trips
        for j in stops:
            go = jnp.logical_and(go, jnp.logical_not(c[j]))
        return go

    def body(k, *c):
        # The condition let this iteration run, so every flag is false here: as a Python
        # False, the guards the converters put around the body stay Python (no lax.cond).
        c = tuple(False if j in stops else v for j, v in enumerate(c))
        i = k if r.step == 1 else k * r.step
        return (k + 1, *body_fn(i if r.start == 0 else i + r.start, *c))

    counted = replace(site, names=("(iteration)", *site.names))
    out = _traced_while(cond, body, (jnp.asarray(0, jnp.int32), *init), counted, "for", early_exit=True)
    return out[1:]


def _traced_range(start, stop, step, body_fn, init, site: Site):
    """A range with traced bounds: a while loop over the trip count (any sign of step)."""
    # (an index from a start that is a Python int >= 0 by a positive Python step is never negative)
    nonneg = type(start) is int and start >= 0 and type(step) is int and step > 0
    # The bounds' integer dtype (int64 under x64 for an int64 bound: Python ints unbounded as
    # far as x64 goes), int32 otherwise.
    dtype = jnp.result_type(start, stop, step)
    dtype = dtype if jnp.issubdtype(dtype, jnp.integer) else jnp.int32
    start, stop, step = (jnp.asarray(b, dtype) for b in (start, stop, step))
    trips = jnp.where(
        step > 0,
        (stop - start + step - 1) // jnp.where(step == 0, 1, step),
        (start - stop - step - 1) // jnp.where(step == 0, 1, -step),
    )
    trips = jnp.maximum(trips, 0)
    counted = replace(site, names=("(iteration)", *site.names))
    body_fn = numbers.marking(body_fn, init, lead=1, index=True, nonneg=nonneg)  # range gives Python ints
    out = _traced_while(
        lambda k, *c: k < trips,
        lambda k, *c: (k + 1, *body_fn(start + k * step, *c)),
        (jnp.asarray(0, jnp.int32), *init),
        counted,
        "for",
    )
    return out[1:]


@dataclass(frozen=True)
class Count:
    """The indices of a static range, as a scan's input: ``start``, ``start + step``, ... for
    ``length`` steps. Carried as one int32 (as ``lax.fori_loop`` does), not scanned over an
    array of them: no buffer of ``length`` indices, no slicing of it at each step."""

    start: int
    step: int
    length: int

    def first(self):
        return jnp.asarray(self.start, jnp.int32)  # traced under a trace, as the scan's index is


def _scan(body_fn, init, xs, site: Site):
    """``lax.scan`` of ``body_fn(x, *carries)`` over ``xs`` (arrays, or a :class:`Count`); list
    carries become stacked outputs.

    A list the body reads an earlier iteration's item of is carried instead as a buffer of
    all its rows (:class:`lists_mod.Rows`): the body is traced with stacked outputs first and
    again with a buffer for each list whose read asked for one (``NeedsRows``)."""
    identity = effects.Identity(init, site, offset=1, loop=True)
    body_fn = guarded = _guarded(body_fn, site, "for", identity, init)
    # A range's index (a Count) and the carries that start as Python ints stand for Python ints.
    counted = isinstance(xs, Count)
    nonneg = counted and min(xs.start, xs.start + xs.step * (xs.length - 1)) >= 0
    values = tuple(range(xs.start, xs.start + xs.step * xs.length, xs.step)) if counted else None
    body_fn = numbers.marking(body_fn, init, lead=1, index=counted, nonneg=nonneg, values=values)
    try:
        out = _scan_carries(body_fn, init, xs, site)
    except error_channel.PathRaised:
        # The body raises whenever it runs (a `raise` outside its traced branches, in a function
        # it calls), and a scan runs at least once: the loop raises at its first iteration.
        # The check went into the abstract trace that first met it (a probe of the carries),
        # which is thrown away: its first iteration is traced here, in the program, where it
        # records the check again and stops the caller.
        body_fn(_first_item(xs), *fresh(init))
        raise
    return numbers.mark_results(init, identity.write_back(out), guarded.found.get("kinds"))


def _first_item(xs):
    """What a scan over ``xs`` (arrays, or a :class:`Count`) gives its first iteration."""
    return xs.first() if isinstance(xs, Count) else jax.tree_util.tree_map(lambda a: a[0], xs)


def _scan_carries(body_fn, init, xs, site: Site):
    first = _first_item(xs)
    counting = isinstance(xs, Count)

    def probe(c):
        # The scan's body on its carries and, last, the item (a range's index: carried), as
        # `_scan_lists` runs it: where no carry passes through and no list is stacked, the
        # probe's trace is the scan's (replayed there, not traced again).
        item = c[-1]
        outs = _keep_carry_types(c[:-1], tuple(body_fn(item, *fresh(c[:-1]))))
        return (*outs, item + xs.step if counting else item)

    settled, passing, run = _settle_unset((*init, first), None, site, "for", runs=True, body=probe, traced_flags=False)
    init = settled[:-1]
    if not passing:
        return _scan_settled(body_fn, init, xs, first, site, None if run is None else (run, tuple))
    narrow, widen, wrap, narrowed = _without(passing, init, site, lead=1)
    # (the probe's arguments are the carries that do not pass through)
    probed = None if run is None else (run, narrow)
    return widen(_scan_settled(wrap(body_fn, True), narrow(init), xs, first, narrowed, probed))


def _scan_settled(body_fn, init, xs, first, site: Site, probed):
    """The scan of carries :func:`_settle_unset` settled (none passes through)."""
    elements = lists_mod.probe_appends(init, site.names, lambda c: tuple(body_fn(first, *c)), site)
    token, buffered = object(), set()
    while True:
        try:
            out, wanted = _scan_lists(
                body_fn, init, xs, first, site, elements, buffered, token, None if elements else probed
            )
        except lists_mod.NeedsRows as e:
            if e.key[0] is not token or e.key[1] in buffered:
                raise
            buffered.add(e.key[1])
            continue
        if wanted <= buffered:  # a read that asked for rows did not stop the trace (caught by user code)
            return out
        buffered |= wanted


def _scan_lists(body_fn, init, xs, first, site: Site, elements: dict, buffered: set, token, probed=None):
    """One ``lax.scan``: lists in ``elements`` are stacked outputs, or carried buffers for
    those in ``buffered`` (with the iteration count); gives the carries after the loop and
    the lists whose reads asked for a buffer. ``probed``: the trace of the body on these
    carries and the item made already (``_scan_carries``), where no list is stacked, and
    what of its carried outputs are these carries."""
    opts = options.current()
    lists = list(elements)
    plain = [k for k in range(len(init)) if k not in elements]
    names = [site.names[k] for k in plain]
    carries = tuple(init[k] for k in plain)
    _check_carries(carries, names, site, "for")
    counting = isinstance(xs, Count)
    steps = xs.length if counting else jax.tree_util.tree_leaves(xs)[0].shape[0]
    sizes = {k: len(init[k]) + steps for k in buffered}
    if buffered:
        rows = {k: lists_mod.Rows.initial(init[k], elements[k], sizes[k]) for k in buffered}
        carries = (*carries, (rows, jnp.asarray(0, jnp.int32)))
    if counting:
        carries = (*carries, first)
    made: list = []

    def body(c, x):
        if counting:
            c, x = c[:-1], c[-1]
        if buffered:
            c, (bufs, count) = c[:-1], c[-1]
        full = list(init)
        accs = {}
        for k in lists:
            held = None
            if k in buffered:
                held = lists_mod.Rows(bufs[k], count + len(init[k]) if init[k] else count, sizes[k])
            accs[k] = full[k] = lists_mod.Accumulator(
                site.names[k], site, prefix=init[k], rows=held, element=elements[k], key=(token, k)
            )
        made.extend(accs.values())
        for k, v in zip(plain, fresh(c)):
            full[k] = v
        outs = _keep_carry_types(full, tuple(body_fn(x, *full)), skip=lists)
        appended = {k: lists_mod.appended_once(outs[k], site.names[k], site) for k in lists}
        new = tuple(outs[k] for k in plain)
        if buffered:
            new = (*new, ({k: accs[k].rows.written(appended[k]) for k in buffered}, count + 1))
        if counting:
            new = (*new, x + xs.step)
        return new, tuple(appended[k] for k in lists if k not in buffered)

    def probe_carries(outs):
        # (the probe's carried outputs as this scan's carries: the index last where counting)
        new = probed[1](outs[:-1])
        return (*new, outs[-1]) if counting else new

    def from_probe(c, x):
        (outs, _), found = probed[0].replay(c if counting else (*c, x))
        return (probe_carries(outs), ()), found

    def run(c):
        # The body traced once (runtime/capture.py) in a report frame of its own, whose report
        # the scan carries (the first failure of every iteration).
        if probed is not None and not buffered and promoted(c, probe_carries(probed[0].outputs[0][0])) is None:
            replay, found_type = from_probe, probed[0].outputs[1]
        else:
            ran = capture(report.collected(body), c, None if counting else first)
            for _ in jax.tree_util.tree_leaves(c):  # (each round widens one carry at least)
                wider = promoted(c, ran.outputs[0][0])
                if wider is None:
                    break
                # (a carry that starts as a Python number, promoted as lax.scan does)
                c = wider
                ran = capture(report.collected(body), c, None if counting else first)
            replay, found_type = ran.replay, ran.outputs[1]

        def step(carry, x):
            c, carried = carry
            (new, ys), found = replay(c, x)
            return (new, report.merged(carried, found)), ys

        (out, found), ys = lax.scan(
            jax.checkpoint(step) if opts.checkpoint else step,
            (c, report.initial(found_type)),
            None if counting else xs,
            length=steps,
            unroll=opts.unroll if opts.unroll is not None else 1,
        )
        report.absorb(found)
        return out, ys

    def one_step(c):
        return jax.eval_shape(report.discarded(lambda c: body(c, first)[0]), c)

    out, ys = _loop(run, carries, one_step, names, site, "for")
    if counting:
        out = out[:-1]
    result = list(init)
    if buffered:
        out, (bufs, _) = out[:-1], out[-1]
        for k in buffered:
            result[k] = lists_mod.buffer_result(bufs[k])
    for k, v in zip(plain, out):
        result[k] = v
    for k, stacked in zip([k for k in lists if k not in buffered], ys):
        result[k] = lists_mod.stacked_result(init[k], stacked)
    return tuple(result), {a.key[1] for a in made if a.wants_rows}


def _live_rows(seq, init, marked: dict) -> dict[int, int]:
    """Leaves of what a ``for`` runs over that the conversion marked (``_lx.live_rows``: the body
    updates items of that array) and that are carries of the loop (the very object): leaf
    position → carry index. As over a NumPy array, each iteration must see the rows the
    earlier ones changed. (A body that only rebinds the name, ``a = a + 1``, iterates the
    array as it was, as in Python: it is not marked.)"""
    if not marked:
        return {}
    found = {}
    for p, leaf in enumerate(jax.tree_util.tree_leaves(seq)):
        if id(leaf) not in marked:
            continue
        for k, value in enumerate(init):
            if leaf is value:
                found[p] = k
                break
    return found


def _scan_live(body_fn, init, seq, live: dict[int, int], site: Site):
    """``for`` over arrays some of which the body changes: a scan over the step index (and the
    other arrays) whose body reads each changed array's row from its carry, at that step. An
    array the body only rebinds (``x = x + 1``) is iterated as it was, as in Python."""
    leaves, treedef = jax.tree_util.tree_flatten(seq)
    n = leaves[0].shape[0]
    others = [leaf for p, leaf in enumerate(leaves) if p not in live]

    def body(x, *c):
        step, rest = x[0], iter(x[1])
        items = [c[live[p]][step] if p in live else next(rest) for p in range(len(leaves))]
        return body_fn(jax.tree_util.tree_unflatten(treedef, items), *c)

    return _scan(body, init, (lax.iota(jnp.int32, n), others), site)


def for_each(xs, body_fn, init, deps, site: Site):
    """``for x in xs``: ``lax.scan`` over the leading axis of an array, else a Python loop."""
    init = tuple(init)
    marked = updates.marked_rows()
    if (seq := as_scan_input(xs)) is not None:  # enumerate/zip over arrays: a pytree to scan
        if xs.kind == "enumerate":  # its index is a Python int in eager code
            body_fn = numbers.marking(body_fn, (), lead=1, index=operator.itemgetter(0))
        live = _live_rows(seq, init, marked)
        if live:
            return _scan_live(body_fn, init, seq, live, site)

        def python_items():
            vals = init
            for item in xs:
                vals = tuple(body_fn(item, *vals))
            return vals

        if _python_values(init) or split.runs_as_python((seq, init)):
            return python_items()
        # As for an array: a body that needs Python's semantics runs as the Python loop.
        return _scan_or_python(lambda: _scan(body_fn, init, seq, site), python_items)
    if is_array(xs) or is_traced(xs):
        if xs.ndim == 0:
            error = TypeError("iteration over a 0-d array")  # JAX's own text
            if is_traced(xs):  # a refusal of a traced value (eager Python may have a list there)
                setattr(error, error_channel.ABOUT_TRACED, True)
            raise error
        if xs.shape[0] == 0:
            return init
        live = _live_rows(xs, init, marked)

        def python_rows():
            vals = init
            for k, item in enumerate(xs):
                if live:  # the body changes the array it runs over: read its row now
                    item = vals[live[0]][k]
                vals = tuple(body_fn(item, *vals))
            return vals

        if _python_values(init) or split.runs_as_python((xs, init)):
            return python_rows()
        if live:
            return _scan_or_python(lambda: _scan_live(body_fn, init, xs, live, site), python_rows)
        return _scan_or_python(lambda: _scan(body_fn, init, jnp.asarray(xs), site), python_rows)
    vals = init
    for item in xs:
        vals = tuple(body_fn(item, *vals))
    return vals
