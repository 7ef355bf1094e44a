"""A table of per-sample scores (``benchscore.sources.score_tables``) as this room's evaluations: one per model.

The table's file name without its suffix is the task (``scores.parquet``: task ``scores``); each metric column
``C`` is the metric ``TASK/C``, a mean of per-sample values whose epochs are reduced by the mean (or
``--reducer``). A sample's identity is its id (a table records no dataset hash). A null score is a sample x
epoch not scored (counted ``unscored`` under ``--errors``); with ``--intersection`` the samples some model does
not hold in every epoch are left out of every model (named in a note).
"""

from __future__ import annotations

import os
from pathlib import Path

from benchscore.sources.score_tables import read_table

from .formats import Evaluation, MetricInfo, SampleResult
from .values import DEFAULT_REDUCER

SCORE_TABLE = "score_table"
IDENTITY = "the sample id (a table of per-sample scores records no dataset hash)"
_LISTED = 20


def from_score_table(path: str | os.PathLike[str], *, reducer: str | None = None,
                     intersection: bool = False) -> list[Evaluation]:
    """One evaluation per model of the table, in order of first appearance (see the module docstring)."""
    table = read_table(path, intersection=intersection)
    path = Path(path)
    task = path.stem
    names = [f"{task}/{m}" for m in table.metrics]
    unit = table.in_unit_interval
    settings = {task: {"table": path.name, "metrics": list(table.metrics), "epochs": table.epochs_per_sample}}
    notes = []
    if table.dropped:
        shown = ", ".join(repr(s) for s in table.dropped[:_LISTED])
        more = f" and {len(table.dropped) - _LISTED} more" if len(table.dropped) > _LISTED else ""
        notes.append(f"{path.name}: {len(table.dropped)} samples left out of every model (--intersection: some model "
                     f"has no row for them in some epoch): {shown}{more}")
    out = []
    for k, model in enumerate(table.models):
        rows = table.rows[k]
        sids = table.sample_ids[rows]
        epochs = table.epochs[rows].tolist()
        columns = []
        for m in table.metrics:
            values = table.values[m][rows].tolist()
            for i in table.unscored[m][rows].nonzero()[0].tolist():
                values[i] = None
            columns.append(values)
        samples = [SampleResult(task, sid, epoch, dict(zip(names, row, strict=True)), sid)
                   for sid, epoch, *row in zip(sids, epochs, *columns, strict=True)]
        metrics = {name: MetricInfo(name, task, reducer=reducer or DEFAULT_REDUCER,
                                    values_in_unit_interval=unit[m]) for name, m in zip(names, table.metrics, strict=True)}
        out.append(Evaluation(
            tool=SCORE_TABLE, tool_version=None, model=model, source=path, settings=settings, metrics=metrics,
            samples=samples, files=[path], identity_method=IDENTITY, epochs=table.epochs_per_sample,
            planned_epochs={task: table.epochs_per_sample}, notes=notes if k == 0 else [], datasets={task: task}))
    return out


__all__ = ["IDENTITY", "SCORE_TABLE", "from_score_table"]
