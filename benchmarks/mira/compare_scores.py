"""Check that two mira score outputs say the same thing, whatever their derivation representation.

    .venv/bin/python benchmarks/mira/compare_scores.py OLD NEW   # two score files, or two folders of them

1. Every value outside the derivations is identical (keys ending in ``derivation`` and the
   legends ``formulas`` / ``exclusion_reasons`` are left out; key order counts).
2. Every metric's full derivation (formula, used, excluded) is the same set of facts: a metric
   without its own ``used`` / ``excluded`` takes its group's shared derivation (the case's
   ``derivation``, ``overall_derivation``, ``diagnostic_untimed_derivation``), see
   ``benchscore.mira.scoring.effective_derivation``; the older form spelled them out per metric.
3. Each repetition's derivation text and ``infrastructure_invalid_count`` are identical.

Used to check the change that wrote derivations once per case and per aggregate: the outputs of
every golden vector, the examples and three benchmark shapes were compared before and after.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from benchscore.mira.scoring import effective_derivation

LEGENDS = ("formulas", "exclusion_reasons")


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if not k.endswith("derivation")}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _full(group: dict[str, Any], shared_key: str, derivation: dict[str, Any]) -> dict[str, Any]:
    shared = group.get(shared_key) or {"used": [], "excluded": {}}
    return effective_derivation(shared, derivation)


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The differences between two scores (empty when they say the same thing)."""
    problems = []
    a = _strip({k: v for k, v in old.items() if k not in LEGENDS})
    b = _strip({k: v for k, v in new.items() if k not in LEGENDS})
    if orjson.dumps(a) != orjson.dumps(b):
        problems += [f"value differs under {k!r}" for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
        return problems
    for ca, cb in zip(old["cases"], new["cases"], strict=True):
        for name in ca["metrics"]:
            da = _full(ca, "derivation", ca["metrics"][name]["derivation"])
            db = _full(cb, "derivation", cb["metrics"][name]["derivation"])
            if da != db:
                problems.append(f"case {ca['case_id']} metric {name}: {da} != {db}")
    for section in ("overall", "diagnostic_untimed"):
        for name in old[section]:
            da = _full(old, section + "_derivation", old[section][name]["derivation"])
            db = _full(new, section + "_derivation", new[section][name]["derivation"])
            if da != db:
                problems.append(f"{section}.{name}: {da} != {db}")
    if old["infrastructure_invalid_count"] != new["infrastructure_invalid_count"]:
        problems.append("infrastructure_invalid_count differs")
    for ra, rb in zip(old["repetitions"], new["repetitions"], strict=True):
        if ra["derivation"] != rb["derivation"]:
            problems.append(f"repetition {ra['id']}: derivation text differs")
    return problems


def main() -> None:
    old, new = Path(sys.argv[1]), Path(sys.argv[2])
    pairs = ([(p, new / p.name) for p in sorted(old.glob("*.json"))] if old.is_dir() else [(old, new)])
    bad = 0
    for a, b in pairs:
        problems = compare(orjson.loads(a.read_bytes()), orjson.loads(b.read_bytes()))
        bad += bool(problems)
        print(f"{a.name}: {'same' if not problems else 'DIFFERENT'} ({a.stat().st_size:,} -> {b.stat().st_size:,} bytes)")
        for line in problems[:10]:
            print("   ", line)
    print(f"{len(pairs)} file(s): " + ("every non-derivation value identical, every derivation the same facts"
                                       if not bad else f"{bad} differ"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
