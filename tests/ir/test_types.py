"""The type lattice: join rules, join errors, static types."""

from __future__ import annotations

import pytest

from laxify.ir.types import UNDEFINED, UNKNOWN, Array, PyTree, Static, Type, TypeJoinError, is_static, join


def tup(*children: Type) -> PyTree:
    return PyTree("tuple", tuple(range(len(children))), children)


def dct(**children: Type) -> PyTree:
    return PyTree("dict", tuple(children), tuple(children.values()))


F32, I32 = Array((), "float32"), Array((), "int32")
WEAK_I32, WEAK_F32 = Array((), "int32", weak=True), Array((), "float32", weak=True)

JOINS: list[tuple[str, Type, Type, Type]] = [
    ("same", F32, F32, F32),
    ("weak-int-with-float32", WEAK_I32, F32, F32),
    ("python-int-with-float32", Static(0), F32, F32),
    ("python-float-with-int32", Static(1.5), I32, WEAK_F32),
    ("python-int-with-bool", Static(2), Array((), "bool"), WEAK_I32),
    ("python-bool-with-bool", Static(True), Array((), "bool"), Array((), "bool")),
    ("python-int-pytype-with-float32", Static(pytype=int), F32, F32),
    ("both-weak", WEAK_I32, WEAK_F32, WEAK_F32),
    ("int32-with-float32-is-float32-as-in-jax", I32, F32, F32),
    ("int32-with-complex64", I32, Array((), "complex64"), Array((), "complex64")),
    ("unknown-shape-takes-known", Array(None, "float32"), Array((3,), "float32"), Array((3,), "float32")),
    ("unknown-dtype", Array((3,), None), Array((3,), "float32"), Array((3,), None)),
    ("undefined-left", UNDEFINED, F32, F32),
    ("undefined-right", Static(3), UNDEFINED, Static(3)),
    ("unknown-absorbs-array", UNKNOWN, F32, UNKNOWN),
    ("unknown-absorbs-static", Static(1), UNKNOWN, UNKNOWN),
    ("unknown-absorbs-undefined", UNDEFINED, UNKNOWN, UNKNOWN),
    ("equal-static-values", Static(3), Static(3), Static(3)),
    ("static-values-same-type", Static(3), Static(4), Static(pytype=int)),
    ("static-value-and-its-pytype", Static(3), Static(pytype=int), Static(pytype=int)),
    ("static-values-other-types", Static(3), Static("a"), Static()),
    ("static-bool-is-not-int", Static(True), Static(1), Static()),
    ("pytree-leafwise", tup(Static(0), F32), tup(F32, UNDEFINED), tup(F32, F32)),
    ("dict-leafwise", dct(a=WEAK_I32), dct(a=F32), dct(a=F32)),
]


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in JOINS], ids=[c[0] for c in JOINS])
def test_join(a: Type, b: Type, expected: Type) -> None:
    assert join(a, b) == expected
    assert join(b, a) == expected


FAILURES: list[tuple[str, Type, Type, str]] = [
    ("shape", Array((3,), "float32"), Array((4,), "float32"),
     "float32[3] and float32[4] cannot be joined: shapes (3,) and (4,) differ"),
    ("python-number-with-vector", Static(0), Array((3,), "float32"), "shapes () and (3,) differ"),
    ("not-a-number", Static("a"), F32, "a Python value that is not a number cannot become an array"),
    ("structure", tup(F32), tup(F32, F32), "the pytree structures differ"),
    ("dict-keys", dct(a=F32), dct(b=F32), "the pytree structures differ"),
    ("tuple-vs-list", tup(F32), PyTree("list", (0,), (F32,)), "the pytree structures differ"),
    ("container-vs-leaf", tup(F32), F32, "a container and a leaf cannot be joined"),
]


@pytest.mark.parametrize(("a", "b", "message"), [c[1:] for c in FAILURES], ids=[c[0] for c in FAILURES])
def test_join_error(a: Type, b: Type, message: str) -> None:
    with pytest.raises(TypeJoinError) as info:
        join(a, b)
    assert message in str(info.value)
    assert info.value.reason in str(info.value)


def test_join_error_names_the_pytree_path() -> None:
    a = dct(params=tup(F32, Array((2, 3), "float32")))
    b = dct(params=tup(F32, Array((3, 2), "float32")))
    with pytest.raises(TypeJoinError) as info:
        join(a, b, "state")
    error = info.value
    assert error.path == "state['params'][1]"
    assert (error.left, error.right) == (Array((2, 3), "float32"), Array((3, 2), "float32"))
    assert str(error) == (
        "float32[2,3] and float32[3,2] cannot be joined at state['params'][1]: "
        "shapes (2, 3) and (3, 2) differ"
    )


STATICS: list[tuple[Type, bool]] = [
    (Static(1), True),
    (Static(pytype=int), True),
    (tup(Static(1), dct(k=Static())), True),
    (tup(Static(1), F32), False),
    (F32, False),
    (UNKNOWN, False),
    (UNDEFINED, False),
]


@pytest.mark.parametrize(("t", "expected"), STATICS, ids=[str(t) for t, _ in STATICS])
def test_is_static(t: Type, expected: bool) -> None:
    assert is_static(t) is expected


def test_static_equality_distinguishes_value_type_and_presence() -> None:
    assert Static(1) == Static(1) and hash(Static(1)) == hash(Static(1))
    assert Static(1) != Static(True)
    assert Static(1) != Static(1.0)
    assert Static(None) != Static()
    assert Static([1]) == Static([1])  # unhashable values still compare
    assert hash(Static([1])) == hash(Static([2]))


TEXTS: list[tuple[Type, str]] = [
    (UNKNOWN, "?"),
    (UNDEFINED, "undef"),
    (Static(), "static"),
    (Static(pytype=float), "static(float)"),
    (Static("a"), "static('a')"),
    (Array(None, None, weak=True), "?~[?]"),
    (Array((2, 3), "int32"), "int32[2,3]"),
    (dct(a=tup(F32), b=PyTree("list", (), ())), "{'a': (float32[]), 'b': []}"),
]


@pytest.mark.parametrize(("t", "text"), TEXTS, ids=[text for _, text in TEXTS])
def test_type_text(t: Type, text: str) -> None:
    assert str(t) == text
