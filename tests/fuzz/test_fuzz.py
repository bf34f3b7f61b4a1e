"""Differential fuzzing: random generated programs run eagerly (the oracle), through
``laxify.to_static`` and through ``jax.jit(laxify.convert)`` must agree.

The CI test checks a fixed-seed batch of programs; a failure is shrunk by Hypothesis to a
minimal program, shown with its inputs. ``make fuzz N=...`` runs a long campaign with a
random seed (tests/fuzz/campaign.py).
"""

from __future__ import annotations

import io
import contextlib

import jax.numpy as jnp
import pytest
from hypothesis import HealthCheck, given, seed, settings

import oracle
from generator import BUILTIN_FEATURES, EFFECT_OVERFLOW_FEATURES, Config, Program, programs
from oracle import MESSAGES, Run, check_program, passes_int32, result_difference, stdout_difference

FIXED_SEED = 20_240_611
CI_PROGRAMS = 250
QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
         HealthCheck.large_base_example]


# (the seed moved with the Python-number statements: the stream the earlier one drew met a
# spurious fallback older than them, kept as a strict xfail in tests/e2e/test_shared_objects.py)
@seed(FIXED_SEED + 7)
@settings(max_examples=CI_PROGRAMS, derandomize=True, deadline=None, database=None,
          suppress_health_check=QUIET, print_blob=False, report_multiple_bugs=False)
@given(programs(Config(max_statements=10)))
def test_generated_programs_agree_with_eager_python(program: Program):
    failure = check_program(program)
    if failure is not None:
        raise failure


def test_no_user_facing_text_names_a_name_laxify_made_up():
    """Error messages, warnings and explain() output seen by the fuzz run say things in the
    user's words: never a generated `_lx...` name (DESIGN §6)."""
    if not MESSAGES:  # run alone: see some messages first
        _record_batch(30)
    assert MESSAGES, "the fuzz run produced no explain() output at all"
    offenders = [m for m in MESSAGES if "_lx" in m]
    assert not offenders, (f"{len(offenders)} of {len(MESSAGES)} messages name a made-up name; "
                           f"the first:\n{offenders[0]}")


def _record_batch(n: int) -> None:
    @seed(FIXED_SEED + 1)
    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=QUIET, phases=["generate"])
    @given(programs(Config(max_statements=8)))
    def record(program: Program):
        check_program(program)

    record()


# -- the generator and the oracle themselves ------------------------------------------

@seed(FIXED_SEED + 2)
@settings(max_examples=30, derandomize=True, deadline=None, database=None,
          suppress_health_check=QUIET)
@given(programs())
def test_generated_programs_run_eagerly(program: Program):
    """Every program compiles and runs in plain Python on each of its inputs (or raises one
    of the exceptions it was generated to raise)."""
    fn = oracle.load(program)
    with contextlib.redirect_stdout(io.StringIO()):
        for inputs in program.inputs:
            try:
                fn(*oracle.arrays(inputs))
            except Exception as e:  # noqa: BLE001 - only a generated raise may leave
                if not oracle.generated_raise(e):
                    raise



def _run_eagerly(program: Program) -> None:
    fn = oracle.load(program)
    with contextlib.redirect_stdout(io.StringIO()):
        for inputs in program.inputs:
            try:
                fn(*oracle.arrays(inputs))
            except Exception as e:  # noqa: BLE001 - only a generated raise may leave
                if not oracle.generated_raise(e):
                    raise


def test_generator_makes_each_builtin_construct_and_can_leave_each_out():
    """Builtins, math, string building, traced filters, growing lists and traced-depth
    recursion are each generated (and run eagerly); `avoid` leaves them all out."""
    seen: set[str] = set()

    @seed(FIXED_SEED + 3)
    @settings(max_examples=150, derandomize=True, deadline=None, database=None,
              suppress_health_check=QUIET, phases=["generate"])
    @given(programs(), programs(Config(avoid=frozenset(BUILTIN_FEATURES))))
    def record(program: Program, without: Program):
        assert not without.features & set(BUILTIN_FEATURES), without.describe()
        new = (program.features & set(BUILTIN_FEATURES)) - seen
        if new:
            seen.update(new)
            _run_eagerly(program)

    record()
    assert seen == set(BUILTIN_FEATURES)

def test_oracle_compares_python_scalars_as_jax_default_dtypes():
    assert result_difference((1, 2.0), (jnp.int32(1), jnp.float32(2.0))) is None
    assert result_difference(1.5, jnp.float32(1.5)) is None


@pytest.mark.parametrize("expected, actual, kind", [
    (jnp.float32(1.0), jnp.int32(1), "dtype"),
    (jnp.float32(1.0), jnp.float32(2.0), "value"),
    (jnp.zeros(3), jnp.zeros(4), "shape"),
    ((jnp.float32(1.0),), [jnp.float32(1.0)], "structure"),
    (jnp.float32(1.0), jnp.bool_(True), "dtype"),
])
def test_oracle_finds_each_kind_of_difference(expected, actual, kind):
    assert result_difference(expected, actual)[0] == kind


def test_oracle_compares_printed_output_in_order():
    assert stdout_difference("p1 1.5\np2 [1. 2.]\n", "p1 1.5\np2 [1. 2.]\n") is None
    assert stdout_difference("p1 1.0\n", "p1 1.\n") is None
    assert stdout_difference("p1 1\np2 2\n", "p2 2\np1 1\n") is not None
    assert stdout_difference("p1 1.0\n", "p1 True\n") is not None


def test_oracle_reports_a_wrong_converted_result():
    """A program laxify gets right passes; a failure names its class and shows the source."""
    good = Program("def f(x, y, a, k):\n    if a > 0:\n        return x * 2.0\n    return x\n",
                   frozenset(), (([1.0, 2.0, 3.0], [0, 1, 2], 1.0, 0),
                                 ([1.0, 2.0, 3.0], [0, 1, 2], -1.0, 0)))
    assert check_program(good) is None
    failure = oracle.failure_type("value mismatch")("to_static on input #0: ...", good)
    assert failure.label == "value mismatch" and "return x * 2.0" in str(failure)


def test_generator_makes_traced_effects_and_int_overflows_and_can_leave_them_out():
    """Effects in conditional expressions and `and`/`or` operands under traced conditions, and
    Python ints of traced loops that pass int32 on some inputs and not on others are
    generated (and run eagerly); `avoid` leaves them out."""
    seen: set[str] = set()
    inputs = {True: 0, False: 0}  # int_overflow programs' inputs that pass int32, that do not

    @seed(FIXED_SEED + 4)
    @settings(max_examples=300, derandomize=True, deadline=None, database=None,
              suppress_health_check=QUIET, phases=["generate"])
    @given(programs(), programs(Config(avoid=frozenset(EFFECT_OVERFLOW_FEATURES))))
    def record(program: Program, without: Program):
        assert not without.features & set(EFFECT_OVERFLOW_FEATURES), without.describe()
        assert "big" not in without.source  # the witness is only made with the feature
        new = program.features & set(EFFECT_OVERFLOW_FEATURES)
        if "int_overflow" in new and not (inputs[True] and inputs[False]):
            fn = oracle.load(program)
            with contextlib.redirect_stdout(io.StringIO()):
                for args in map(oracle.arrays, program.inputs):
                    try:
                        inputs[passes_int32(fn(*args))] += 1
                    except Exception as e:  # noqa: BLE001 - only a generated raise may leave
                        if not oracle.generated_raise(e):
                            raise
        if new - seen:
            seen.update(new)
            _run_eagerly(program)

    record()
    assert {"traced_effect", "int_overflow"} <= seen  # (overflow_print: both with a `print`)
    assert inputs[True] and inputs[False], inputs


def test_oracle_compares_integers_exactly():
    assert result_difference(16_777_217, jnp.int32(16_777_216))[0] == "value"  # equal in float32
    assert result_difference(2 ** 40, 2 ** 40) is None
    assert result_difference(479_001_600, jnp.int32(479_001_600)) is None
    wrapped = jnp.int32(1_932_053_504)  # 13! in int32
    assert result_difference(6_227_020_800, wrapped)[0] == "value"
    assert result_difference((0, 6_227_020_800), (jnp.int32(0), 6_227_020_801))[0] == "value"
    assert passes_int32((1.0, 2 ** 31)) and not passes_int32((2.0 ** 40, 2 ** 31 - 1, True))


_FACTORIAL = Program(
    "def f(x, y, a, k):\n    big = 0\n    r = 1\n    for i in range(k * 3):\n"
    "        r = r * (i + 1)\n    big = max(big, r)\n    return x[0], big\n",
    frozenset({"int_overflow"}),
    (([1.0, 2.0, 3.0], [0, 1, 2], 1.0, 4), ([1.0, 2.0, 3.0], [0, 1, 2], 1.0, 5)))


def test_oracle_expects_eagers_exact_int_and_a_located_overflow_error():
    """On k = 5, 15! passes int32: to_static falls back for eager's exact int, and
    laxify.checked(jax.jit(convert)) raises the located OverflowError; on k = 4 both compile."""
    assert check_program(_FACTORIAL) is None


def test_oracle_reports_a_silently_wrapped_int(monkeypatch):
    monkeypatch.setattr(oracle.laxify, "checked", lambda fn: fn)  # plain jit: no check, 15! wraps
    failure = check_program(_FACTORIAL)
    assert failure is not None and failure.label == "silent int32 overflow", failure


def test_oracle_allows_only_the_fallbacks_a_program_calls_for():
    program = Program("def f(x, y, a, k):\n    log1 = [a, 0.5]\n"
                      "    c = len(log1) + int((a > 1.0) and log1.append(a) is None)\n    return c\n",
                      frozenset({"traced_effect", "int_overflow"}), ())
    overflowed = "`r` is a Python int in eager code ... its value passed int32's range (2**31 - 1) here"
    effect = "laxify runs this line as plain Python because `log1` is changed in place while ..."
    run = Run(warnings=[overflowed], warned_at=[("<laxify-fuzz-0>", 5)])
    assert oracle._expected_fallbacks(program, run, overflow=False)[0] == "spurious int32 fallback"
    run = Run(warnings=[overflowed, effect, "another"], warned_at=[("<laxify-fuzz-0>", 5),
                                                                    ("<laxify-fuzz-0>", 3), ("<x>", 1)])
    assert oracle._expected_fallbacks(program, run, overflow=True) is None
    assert run.warnings == ["another"] and run.allowed == {"int_overflow", "traced_effect"}
    run = Run(warnings=[effect], warned_at=[("<laxify-fuzz-0>", 2)])  # not the line that changes it
    assert oracle._expected_fallbacks(program, run, overflow=None)[0] == "located"


def test_oracle_expects_a_traced_effect_to_fall_back():
    """`log1.append` in an `and` under a traced condition: to_static splits the line (eager's
    list, once), jit(convert) is the located ConversionError that names the list."""
    program = Program("def f(x, y, a, k):\n    log1 = [a, 0.5]\n"
                      "    c = len(log1) + int((a > 1.0) and log1.append(x[0]) is None)\n"
                      "    return c + len(log1), log1[-1]\n",
                      frozenset({"traced_effect"}),
                      (([1.0, 2.0, 3.0], [0, 1, 2], 2.0, 1), ([1.0, 2.0, 3.0], [0, 1, 2], -1.0, 1)))
    assert check_program(program) is None
