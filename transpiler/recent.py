"""Bounded memory of what was made of a text seen before.

The text of a function is often converted again: a notebook cell or a module re-run (a new
code object, the same text), the specialised IR of a function already converted. Parsing and
compiling that text again gives the same immutable results (libcst trees, code objects), so
they are kept, a bounded number of them, so that a cell edited and re-run many times keeps
only its latest versions alive."""

from __future__ import annotations

import threading

__all__ = ["Recent", "clear_caches"]

_ALL: list["Recent"] = []


class Recent:
    """A least-recently-used map holding at most ``size`` entries (functions may be converted
    from several threads at once)."""

    def __init__(self, size: int):
        self.size = size
        self.items: dict = {}
        self.lock = threading.Lock()
        _ALL.append(self)

    def get(self, key):
        with self.lock:
            found = self.items.pop(key, None)
            if found is not None:
                self.items[key] = found  # most recent last
            return found

    def put(self, key, value) -> None:
        with self.lock:
            self.items.pop(key, None)
            self.items[key] = value
            if len(self.items) > self.size:
                del self.items[next(iter(self.items))]

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


def clear_caches() -> None:
    """Forget every text seen (benchmarks measure conversions of text never seen before)."""
    for recent in _ALL:
        recent.clear()
