"""Shared by the stand-alone evaluators of a build folder (standard library only).

Copied into every build folder as ``rxn_standalone.py`` beside ``rxn_metrics.py``.
"""

from __future__ import annotations

import json
import sys


class InputError(Exception):
    """Bad input: printed as one line, exit status 2."""


def _pairs(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise InputError(f"duplicate key {key!r} in a JSON object")
        out[key] = value
    return out


def _constant(name):
    raise InputError(f"{name} is not allowed; write finite numbers or null")


def load_json(path):
    """Strict JSON: UTF-8, no duplicate keys, no NaN/Infinity."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, object_pairs_hook=_pairs, parse_constant=_constant)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: cannot read JSON: {exc}") from None


def load_datasets(paths, expected_format):
    """Dataset files -> list of (question_type, samples); ids unique across files."""
    out = []
    seen_ids = set()
    seen_types = set()
    for path in paths:
        data = load_json(path)
        if not isinstance(data, dict) or data.get("format") != expected_format:
            raise InputError(f"{path}: field 'format': expected {expected_format!r}")
        qtype = data.get("question_type")
        samples = data.get("samples")
        if not isinstance(samples, list):
            raise InputError(f"{path}: field 'samples': expected a list")
        if qtype in seen_types:
            raise InputError(f"{path}: field 'question_type': {qtype!r} given twice")
        seen_types.add(qtype)
        for i, s in enumerate(samples):
            sid = s.get("id") if isinstance(s, dict) else None
            if not isinstance(sid, str):
                raise InputError(f"{path}: record {i}: field 'id': expected a string")
            if sid in seen_ids:
                raise InputError(f"{path}: record {i}: field 'id': duplicate sample id {sid!r}")
            seen_ids.add(sid)
        out.append((qtype, samples))
    return out, seen_ids


def load_predictions(path):
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object {{sample_id: prediction}}")
    return data


def run(main):
    """Run ``main()``; bad input becomes one line on stderr and exit status 2."""
    try:
        main()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def emit(result, output):
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
