"""Results of any evaluation: inspect_ai logs, lm-evaluation-harness ``--log_samples`` output and
Every Eval Ever records, read as they are and compared with the same machinery as the contracts
(docs/results.md). This room imports only ``benchscore.common`` and holds no statistics.

The public API (imported on first use):

- :func:`read` (``reading``): paths (files, folders) -> a list of :class:`Evaluation`;
- :class:`Evaluation`, :class:`SampleResult`, :class:`MetricInfo` (``formats``): one model's
  per-sample results of one run of one tool;
- :func:`entries` and :class:`Options` (``comparison``): evaluations -> ``benchscore compare``
  entries under an errors policy, a unit and a choice of metrics; :func:`compare_inputs` reads and
  converts in one call;
- :func:`scalar`, :func:`flatten`, :func:`reducer` (``values``): inspect_ai's value conventions and
  epoch reducers.
"""

from __future__ import annotations

from benchscore.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "Evaluation": "formats", "MetricInfo": "formats", "SampleResult": "formats", "TOOL_NAMES": "formats",
    "read": "reading", "recognises": "reading", "kind_of_file": "reading",
    "entries": "comparison", "Options": "comparison", "compare_inputs": "comparison", "ERRORS": "comparison",
    "DEFAULT_ERRORS": "comparison", "labels": "comparison",
    "scalar": "values", "flatten": "values", "reducer": "values", "NotNumeric": "values",
})
