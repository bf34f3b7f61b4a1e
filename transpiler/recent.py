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
        self.owners: dict = {}     # key → ids of the live code objects that use the entry
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
        ids = self.owners.setdefault(key, set())
        if id(owner) not in ids:
            ids.add(id(owner))
            # A finalizer may run in the middle of any allocation, also under this lock: it only
            # appends (atomic), the next get or put applies it.
            weakref.finalize(owner, self.released.append, (key, id(owner)))

    def _apply_released(self) -> None:
        while self.released:
            key, ident = self.released.pop()
            ids = self.owners.get(key)
            if ids is None:
                continue
            ids.discard(ident)
            if not ids:
                del self.owners[key]
                self.items.pop(key, None)


def clear_caches() -> None:
    """Forget every text seen (benchmarks measure conversions of text never seen before)."""
    for recent in _ALL:
        recent.clear()
