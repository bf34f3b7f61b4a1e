"""Python's private name mangling (``self.__k`` is ``self._Model__k`` inside ``class Model``).

Shared by the transpiler, which reads a method's names from its code object (mangled) and
from its source (as written), and the runtime, which compiles a converted method inside a
class of the same name so that its private names are mangled as in the user's class.
"""

from __future__ import annotations

__all__ = ["mangle", "private_owner", "spellings"]


def private_owner(qualname: str) -> str | None:
    """The class whose name mangles the private names of the function with qualified name
    ``qualname``: the innermost class whose body holds it, a function nested in a method
    included (Python's rule). ``None`` outside classes, or when the class name is only
    underscores (Python mangles nothing then)."""
    parts = qualname.split(".")
    classes = [p for p, after in zip(parts, parts[1:]) if p != "<locals>" and after != "<locals>"]
    owner = classes[-1] if classes else None
    return owner if owner and owner.strip("_") else None


def mangle(name: str, owner: str | None) -> str:
    """``name`` as the compiler stores it inside the body of class ``owner``: a name that
    starts with two underscores and does not end with two gets ``_Owner`` in front."""
    if owner is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    return f"_{owner.lstrip('_')}{name}"


def spellings(name: str, owner: str | None) -> tuple[str, ...]:
    """The ways the source may write ``name``, a name of a code object compiled in class
    ``owner``: ``_Model__k`` may be written ``__k`` (or so, explicitly)."""
    if owner is None:
        return (name,)
    prefix = f"_{owner.lstrip('_')}__"
    if name.startswith(prefix) and not name.endswith("__") and len(name) > len(prefix):
        return (name, "__" + name[len(prefix) :])
    return (name,)
