"""The call path of a ``to_static`` function: Signature → Program → Decision.

- ``signature``: the typed cache key of a call's arguments (what is traced, what is static);
- ``program``: one compiled program per signature, traced once under one trace state, whose
  run returns its outputs and one report (``runtime/report.py``);
- ``decision``: the one place that chooses what a call becomes when the program cannot give
  Python's answer: the user's exception, a split run around the Python it needs, or an eager run.
"""
