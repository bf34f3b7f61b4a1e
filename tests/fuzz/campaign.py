"""A long differential fuzzing campaign: ``make fuzz N=10000 [SEED=...]``.

Environment: ``LAXIFY_FUZZ_N`` (programs, default 1000), ``LAXIFY_FUZZ_SEED`` (default: a
random seed, printed first so that a run can be repeated), ``LAXIFY_FUZZ_STATEMENTS``
(statement budget per function, default 12), ``LAXIFY_FUZZ_AVOID`` (comma-separated known
bug features not to generate: ``loop_else_jump,and_or_value,closure_in_loop,return_in_loop``),
``LAXIFY_FUZZ_REPORT`` (a Markdown file the minimal failing programs are written to),
``LAXIFY_FUZZ_FOCUS=raise`` (``raise`` statements and validator calls about five times as
often: a campaign on the run-time error channel, where about 7 programs in 10 raise somewhere;
``objects``: the object-semantics statements, aliases above all, one statement in two).

Programs are checked one after the other; the first program of a failure class not seen
before is shrunk by Hypothesis to a minimal program, recorded, and the campaign goes on
(with the next seed) looking for other classes. The summary counts the programs run (shrink
runs not included) and the failing programs by class.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from generator import KNOWN_FEATURES, Config, programs  # noqa: E402
from oracle import FuzzFailure, check_program  # noqa: E402

CLEAR_CACHES_EVERY = 200


@dataclass
class Summary:
    """What a campaign saw."""

    seed: int
    programs: int = 0
    failing: Counter = field(default_factory=Counter)
    minimal: dict[str, FuzzFailure] = field(default_factory=dict)

    def text(self) -> str:
        lines = [f"seed {self.seed}: {self.programs} programs, "
                 f"{sum(self.failing.values())} failing, {len(self.minimal)} classes"]
        for label, count in self.failing.most_common():
            lines.append(f"  {count:6d}  {label}")
        for label in self.minimal:
            if label not in self.failing:
                lines.append(f"  {'(shrunk)':>6}  {label}")
        return "\n".join(lines)


def run(n: int, base_seed: int, config: Config, report: Path | None = None) -> Summary:
    """Check ``n`` programs; shrink the first program of each new failure class."""
    summary = Summary(base_seed)
    attempt = 0
    while summary.programs < n:
        shrinking = [False]

        @seed(base_seed + attempt)
        @settings(max_examples=n - summary.programs, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                  phases=[Phase.generate, Phase.shrink], print_blob=False)
        @given(programs(config))
        def check(program):
            failure = check_program(program)
            if not shrinking[0]:
                summary.programs += 1
                if summary.programs % CLEAR_CACHES_EVERY == 0:
                    jax.clear_caches()
                    print(f"... {summary.programs} programs, "
                          f"{sum(summary.failing.values())} failing", flush=True)
                if failure is not None:
                    summary.failing[failure.label] += 1
            if failure is not None and failure.label not in summary.minimal:
                shrinking[0] = True
                raise failure

        attempt += 1
        try:
            check()
        except FuzzFailure as failure:
            summary.minimal[failure.label] = failure
            print(f"\n=== new failure class: {failure.label}\n{failure}\n", flush=True)
            if report is not None:
                with report.open("a") as fh:
                    fh.write(f"\n## {failure.label}\n\n```\n{failure}\n```\n")
        else:
            break
    return summary


def main() -> int:
    n = int(os.environ.get("LAXIFY_FUZZ_N") or 1000)
    seed_text = os.environ.get("LAXIFY_FUZZ_SEED") or ""
    base_seed = int(seed_text) if seed_text else secrets.randbelow(2**31)
    avoid = frozenset(f for f in (os.environ.get("LAXIFY_FUZZ_AVOID") or "").split(",") if f)
    unknown = avoid - set(KNOWN_FEATURES)
    if unknown:
        print(f"unknown LAXIFY_FUZZ_AVOID features {sorted(unknown)}; known: {KNOWN_FEATURES}")
        return 2
    focus = frozenset(f for f in (os.environ.get("LAXIFY_FUZZ_FOCUS") or "").split(",") if f)
    if focus - {"raise", "objects"}:
        print(f"unknown LAXIFY_FUZZ_FOCUS features {sorted(focus - {'raise', 'objects'})}; known: ['objects', 'raise']")
        return 2
    config = Config(max_statements=int(os.environ.get("LAXIFY_FUZZ_STATEMENTS") or 12), avoid=avoid, focus=focus)
    report = Path(os.environ["LAXIFY_FUZZ_REPORT"]) if os.environ.get("LAXIFY_FUZZ_REPORT") else None
    print(f"laxify fuzz campaign: seed {base_seed} (repeat with LAXIFY_FUZZ_SEED={base_seed} "
          f"or make fuzz SEED={base_seed}), {n} programs, avoiding {sorted(avoid) or 'nothing'}"
          + (f", focus on {sorted(focus)}" if focus else ""),
          flush=True)
    started = time.perf_counter()
    summary = run(n, base_seed, config, report)
    print(f"\n{summary.text()}\n({time.perf_counter() - started:.0f} s)")
    return 1 if summary.minimal else 0


if __name__ == "__main__":
    sys.exit(main())
