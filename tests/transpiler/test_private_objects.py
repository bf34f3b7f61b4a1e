"""transpiler/analysis/objects.py: the local lists and dicts nothing else can reach. A name
wrongly called private would lose a change in place made under a traced `if` for the other
names of its object (a silent difference), so each way an object can be reached elsewhere is
checked to make the name not private."""

from __future__ import annotations

import libcst as cst
import pytest

from laxify.transpiler.analysis.objects import private_objects


def _private(body: str) -> frozenset[str]:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return private_objects(cst.parse_module(f"def f(x, a, k):\n{lines}\n").body[0])


def test_a_display_indexed_measured_and_changed_by_its_methods_is_private():
    assert _private("""
lst = [x[0], 0.5]
lst.pop()
lst[0] = lst[0] + len(lst)
d = {"p": 1.0}
d["p"] += 1.0
if 0.5 in lst:
    d.update(q=2.0)
for v in lst:
    pass
return lst[0] + d["p"]
""") == {"lst", "d"}


@pytest.mark.parametrize("body", [
    "e = lst",                     # another name
    "e, y = lst, 0",               # by unpacking
    "g(lst)",                      # a call may keep it
    "box.held = lst",              # an object holds it
    "return lst",                  # the caller gets it
    "h = [lst]",                   # a list holds it
    "m = lst.append",              # a bound method holds it
    "(e := lst)",                  # a walrus
    "fn = lambda: lst",            # a closure
    "lst[0][0] = 1.0",             # a change below the top: the item may be shared
    "lst[0].append(1.0)",
    "row = lst[0]\nrow.append(1.0)",  # an item taken out and changed
    "for row in lst:\n    row.append(1.0)",
])
def test_each_way_the_object_can_be_reached_makes_it_not_private(body):
    assert "lst" not in _private("lst = [x[0], 0.5]\n" + body)


@pytest.mark.parametrize("value", ["[a, 1.0]", "{'p': a}", "g()", "a", "[v for v in a]", "list(a)", "[*a]"])
def test_a_value_whose_items_another_name_may_hold_is_not_private(value):
    assert "lst" not in _private(f"lst = {value}\nlst.pop()")


def test_parameters_and_globals_are_not_private():
    assert _private("global gl\ngl = [1.0]\nx.append(1.0)\ngl.pop()") == frozenset()
