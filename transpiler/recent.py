"""Memory of what was made of a text seen before, kept while a function of that text lives.

The text of a function is often converted again while a function made from it is alive: a
notebook cell or a module re-run unchanged (a new code object, the same text, the old function
still bound until the new one replaces it), the specialised IR of a function already converted.
Parsing and compiling that text again gives the same immutable results (libcst trees, code
objects), so they are kept for as long as some code object of that text is alive, and at most
``size`` of them. A cell edited and re-run many times keeps nothing of its old versions: each
edit's entries go with the edit's function."""

from __future__ import annotations

import threading
import weakref

__all__ = ["Recent", "clear_caches"]

_ALL: list["Recent"] = []


class Recent:
    """A least-recently-used map of at most ``size`` entries, each dropped as well once every
    code object it was stored or found for (its owners) is freed. Functions may be converted
    from several threads at once."""

    def __init__(self, size: int):
        self.size = size
        self.items: dict = {}
        self.owners: dict = {}  # key → {id: weak reference} of the live code objects that use the entry
        self.released: list = []  # (key, id) of owners freed since, applied under the lock
        self.lock = threading.Lock()
        _ALL.append(self)

    def get(self, key, owner):
        with self.lock:
            self._apply_released()
            found = self.items.pop(key, None)
            if found is not None:
                self.items[key] = found  # most recent last
                self._own(key, owner)
            return found

    def put(self, key, value, owner) -> None:
        with self.lock:
            self._apply_released()
            self.items.pop(key, None)
            self.items[key] = value
            self._own(key, owner)
            while len(self.items) > self.size:
                oldest = next(iter(self.items))
                del self.items[oldest]
                self.owners.pop(oldest, None)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.owners.clear()
            self.released.clear()

    def _own(self, key, owner) -> None:
        refs = self.owners.setdefault(key, {})
        ident = id(owner)
        if ident not in refs:
            # The callback may run in the middle of any allocation, also under this lock: it
            # only appends (atomic), the next get or put applies it. (A weak reference, not a
            # finalizer: a finalizer costs more than the rest of a lookup.)
            released = self.released

            def forget(ref, item=(key, ident)) -> None:
                released.append(item)

            refs[ident] = weakref.ref(owner, forget)

    def _apply_released(self) -> None:
        while self.released:
            key, ident = self.released.pop()
            refs = self.owners.get(key)
            if refs is None:
                continue
            refs.pop(ident, None)
            if not refs:
                del self.owners[key]
                self.items.pop(key, None)


def clear_caches() -> None:
    """Forget every text seen (benchmarks measure conversions of text never seen before)."""
    for recent in _ALL:
        recent.clear()
