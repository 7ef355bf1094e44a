"""Tables of per-sample scores: a ``.parquet``, ``.csv`` or ``.jsonl`` file with the columns ``model``,
``sample_id``, optionally ``epoch``, and one numeric column per metric (docs/results.md).

A table is recognised by its columns (:func:`columns_of`: the parquet schema, the CSV header, the first JSON
line's keys) and read whole by pyarrow, column by column (never row by row in Python). Every check is done on
the columns, and every refusal is one :class:`~benchscore.common.errors.BadInput` line naming the file, the row
(1-based, the header not counted) and the column:

- no row, no metric column, a ``model`` that is not text, a ``sample_id`` that is neither text nor an integer,
  an ``epoch`` that is not an integer >= 1, a metric column that is not numeric (bool, integer or float), a null
  ``model``, ``sample_id`` or ``epoch``;
- a non-finite score (NaN, infinity); a null score is a sample x epoch that was not scored (counted ``unscored``
  under compare's errors policy, as in a log);
- a (model, sample_id, epoch) on two rows;
- a model without a row for some sample x epoch the table holds (every model must hold every sample in every
  epoch the table has): refused, or, with ``intersection``, the samples some model misses left out of every model
  (:attr:`ScoreTable.dropped`).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchscore.common.errors import BadInput, shown
from benchscore.common.readers import head_of

MODEL, SAMPLE, EPOCH = "model", "sample_id", "epoch"
SUFFIXES = (".parquet", ".csv", ".jsonl")
_HEAD = 65536
_PARQUET_MAGIC = b"PAR1"


def _head(path: Path, size: int = _HEAD) -> bytes:
    return head_of(path, size)


def columns_of(path: Path) -> list[str] | None:
    """The column names of a table file (None: not a ``.parquet``, ``.csv`` or ``.jsonl`` file, or its columns
    cannot be read cheaply). Reads the parquet footer, the CSV header line or the first JSON line only."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        return None
    head = _head(path)
    if not head:
        return None
    if suffix == ".parquet":
        if not head.startswith(_PARQUET_MAGIC):
            return None
        try:
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        except Exception:  # noqa: BLE001 - a broken footer: not recognised here, refused when read
            return None
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if suffix == ".csv":
        try:
            return next(csv.reader(io.StringIO(text)), None)
        except csv.Error:
            return None
    import orjson

    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return list(doc) if isinstance(doc, dict) else None


def is_score_table(path: Path) -> bool:
    """Whether the file is a table of per-sample scores: its columns include ``model`` and ``sample_id``."""
    columns = columns_of(path)
    return columns is not None and MODEL in columns and SAMPLE in columns


@dataclass
class ScoreTable:
    """A checked table, columns as arrays, rows sorted by model (in order of first appearance), sample (in
    order of first appearance) and epoch.

    ``models``: each model's name; ``rows[k]``: the slice of rows of model ``k``. ``sample_ids`` and ``epochs``
    hold one entry per row; ``values[metric]`` the row's score (NaN where ``unscored[metric]`` is True: a null).
    ``dropped``: the sample ids left out with ``intersection`` (some model misses some epoch of them), in order of
    first appearance. ``epochs_per_sample``: the epochs every sample has."""

    path: Path
    metrics: list[str]
    models: list[str]
    rows: list[slice]
    sample_ids: list[str]
    epochs: np.ndarray
    values: dict[str, np.ndarray]
    unscored: dict[str, np.ndarray]
    epochs_per_sample: int
    has_epoch_column: bool
    dropped: list[str] = field(default_factory=list)

    @property
    def in_unit_interval(self) -> dict[str, bool]:
        """Per metric, every score in the table lies in [0, 1]."""
        out = {}
        for m, v in self.values.items():
            scored = v[~self.unscored[m]]
            out[m] = bool(np.all((scored >= 0.0) & (scored <= 1.0)))
        return out


def _read_arrow(path: Path) -> Any:
    """The whole file as a pyarrow Table (every parse failure one line)."""
    import pyarrow as pa

    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            with pq.ParquetFile(path) as f:  # not pq.read_table: its dataset layer imports pandas (about 1 s)
                return f.read()
        if suffix == ".csv":
            import pyarrow.csv as pcsv

            # text columns stay text (a sample id "007" is not the integer 7): model and sample_id are read as
            # written, the other columns as pyarrow infers them (numbers, bools, or text: refused below); only an
            # empty cell is null ("nan" is a number, refused as not finite)
            return pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
                column_types={MODEL: pa.string(), SAMPLE: pa.string()}, null_values=[""],
                strings_can_be_null=False))
        import pyarrow.json as pjson

        return pjson.read_json(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError) as exc:
        detail = " ".join(str(exc).split())
        raise BadInput(f"not a readable {suffix[1:]} table: {detail[:300]}", source=path) from None


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _column(table: Any, name: str) -> Any:
    col = table.column(name)
    return col.combine_chunks() if hasattr(col, "combine_chunks") else col


def read_table(path: str | os.PathLike[str], *, intersection: bool = False) -> ScoreTable:
    """Read and check a table of per-sample scores (the module docstring lists what is refused)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from benchscore.common.readers import check_file

    path = Path(path)
    check_file(path)  # a regular file under the size limit (never a FIFO or a device)
    table = _read_arrow(path)
    names = list(table.column_names)
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise BadInput(f"column {dup!r} appears twice", source=path)
    for required in (MODEL, SAMPLE):
        if required not in names:
            raise BadInput(f"no {required!r} column: a table of per-sample scores has the columns model, sample_id, "
                           "optionally epoch, and one numeric column per metric", source=path)
    metrics = [n for n in names if n not in (MODEL, SAMPLE, EPOCH)]
    if not metrics:
        raise BadInput("no metric column: besides model, sample_id and epoch, a table of per-sample scores has one "
                       "numeric column per metric", source=path)
    n = table.num_rows
    if n == 0:
        raise BadInput("holds no row", source=path)

    def null_row(col: Any, name: str) -> None:
        empty = col.is_null()
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            empty = pc.fill_null(pc.or_kleene(empty, pc.equal(pc.utf8_length(col), 0)), True)
        if pc.any(empty).as_py():
            row = _first(empty.to_numpy(zero_copy_only=False))
            raise BadInput("is empty", source=path, record=f"row {row + 1}", field=name)

    model = _column(table, MODEL)
    if not (pa.types.is_string(model.type) or pa.types.is_large_string(model.type)):
        raise BadInput(f"is of type {model.type}: a model is named by text", source=path, field=MODEL)
    null_row(model, MODEL)
    sample = _column(table, SAMPLE)
    if pa.types.is_integer(sample.type):
        sample = pc.cast(sample, pa.string())
    elif not (pa.types.is_string(sample.type) or pa.types.is_large_string(sample.type)):
        raise BadInput(f"is of type {sample.type}: a sample id is text or an integer", source=path, field=SAMPLE)
    null_row(sample, SAMPLE)
    if EPOCH in names:
        epoch_col = _column(table, EPOCH)
        if not pa.types.is_integer(epoch_col.type):
            raise BadInput(f"is of type {epoch_col.type}: an epoch is an integer >= 1", source=path, field=EPOCH)
        null_row(epoch_col, EPOCH)
        epochs = epoch_col.to_numpy().astype(np.int64)
        if (epochs < 1).any():
            row = _first(epochs < 1)
            raise BadInput(f"epoch {int(epochs[row])}: an epoch is an integer >= 1", source=path,
                           record=f"row {row + 1}", field=EPOCH)
    else:
        epochs = np.ones(n, dtype=np.int64)
    values: dict[str, np.ndarray] = {}
    unscored: dict[str, np.ndarray] = {}
    for m in metrics:
        col = _column(table, m)
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_boolean(col.type)):
            example = next((v for v in col.to_pylist() if v is not None), None)
            raise BadInput(f"is of type {col.type} ({shown(example, 40)}...): a metric column holds numbers (0/1 or "
                           "continuous; an empty cell is a sample not scored)", source=path, field=m)
        nulls = col.is_null().to_numpy(zero_copy_only=False)
        v = pc.cast(col, pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False).astype(np.float64)
        bad = ~np.isfinite(v) & ~nulls
        if bad.any():
            row = _first(bad)
            raise BadInput(f"score {float(v[row])!r} is not a finite number (an empty cell is a sample not scored)",
                           source=path, record=f"row {row + 1}", field=m)
        values[m], unscored[m] = v, nulls

    # codes in order of first appearance, then one sort: by model, sample, epoch
    model_enc = pc.dictionary_encode(model)
    sample_enc = pc.dictionary_encode(sample)
    model_codes = model_enc.indices.to_numpy().astype(np.int64)
    sample_codes = sample_enc.indices.to_numpy().astype(np.int64)
    model_names = model_enc.dictionary.to_pylist()
    sample_names = sample_enc.dictionary.to_pylist()
    order = np.lexsort((epochs, sample_codes, model_codes))
    mc, sc, ep = model_codes[order], sample_codes[order], epochs[order]
    same = (mc[1:] == mc[:-1]) & (sc[1:] == sc[:-1]) & (ep[1:] == ep[:-1])
    if same.any():
        k = _first(same)
        a, b = sorted((int(order[k]), int(order[k + 1])))
        raise BadInput(f"model {model_names[mc[k]]!r}, sample {sample_names[sc[k]]!r}, epoch {int(ep[k])} is on two "
                       f"rows (first on row {a + 1}): one row per model, sample and epoch", source=path,
                       record=f"row {b + 1}", field=SAMPLE)

    # every model holds every sample x epoch of the table
    epoch_values = np.unique(ep)
    n_models, n_samples, n_epochs = len(model_names), len(sample_names), len(epoch_values)
    ep_codes = np.searchsorted(epoch_values, ep)
    held = np.zeros((n_models, n_samples, n_epochs), dtype=bool)
    held[mc, sc, ep_codes] = True
    complete = held.all(axis=(0, 2))  # per sample: every model holds every epoch of it
    dropped: list[str] = []
    if not complete.all():
        if not intersection:
            lacking = np.argwhere(~held)
            m_, s_, e_ = (int(x) for x in lacking[0])
            epoch_text = f" epoch {int(epoch_values[e_])}" if EPOCH in names else ""
            raise BadInput(f"model {model_names[m_]!r} has no row for sample {sample_names[s_]!r}{epoch_text} "
                           f"({len(lacking)} of the {held.size} model x sample x epochs of the table are missing): "
                           "every model must have every sample in every epoch; --intersection compares the models "
                           "on the samples each has", source=path, field=SAMPLE)
        dropped = [sample_names[i] for i in np.flatnonzero(~complete)]
        if not complete.any():
            raise BadInput("no sample is held by every model in every epoch (--intersection leaves none)", source=path,
                           field=SAMPLE)
        keep = complete[sc]
        order, mc, sc, ep = order[keep], mc[keep], sc[keep], ep[keep]
    bounds = np.searchsorted(mc, np.arange(n_models + 1))
    rows = [slice(int(bounds[k]), int(bounds[k + 1])) for k in range(n_models)]
    return ScoreTable(
        path=path, metrics=metrics, models=[str(x) for x in model_names], rows=rows,
        sample_ids=[sample_names[i] for i in sc.tolist()], epochs=ep,
        values={m: values[m][order] for m in metrics}, unscored={m: unscored[m][order] for m in metrics},
        epochs_per_sample=n_epochs, has_epoch_column=EPOCH in names, dropped=dropped)


__all__ = ["EPOCH", "MODEL", "SAMPLE", "SUFFIXES", "ScoreTable", "columns_of", "is_score_table", "read_table"]
