"""Prompt templates, one per question type (written as ``prompt_<question_type>.txt`` in a build).

Placeholders in braces are filled from the sample's ``input``: ``{reaction}``,
``{constant_conditions}``, ``{yield_measure}``, and per type ``{target_key}``,
``{fixed_conditions}``, ``{options}``, ``{reference_conditions}``, ``{query_keys}``,
``{candidate_values}``. :func:`render` fills a template from one sample.

Where the endpoint enforces a schema, ``rxn predict`` appends :func:`structured_suffix` (the JSON object
the constraint allows); for ``--method loglikelihood`` the context is the prompt followed by
:data:`LOGLIKELIHOOD_CUE`, and each option's text (:func:`option_text`, as the prompt lists it, after one
space) is scored as its continuation.
"""

from __future__ import annotations

import json
from typing import Any

_HEAD = """You are an expert synthetic chemist. Recommend reaction conditions for the reaction below.

Reaction (substrates by role, SMILES): {reaction}
Conditions that are fixed for this reaction: {constant_conditions}
The outcome measured is: {yield_measure}
"""

_REFERENCE = """
Some condition groups that were actually run, with their measured outcomes (they are NOT the best):
{reference_conditions}
"""

_MC_SINGLE = """Other varying conditions are fixed to: {fixed_conditions}
Choose the value of "{target_key}" that gives the best outcome (highest effective score:
yield x (100+ee)/200 x dr/(dr+1)).

Options (0-based index: condition):
{options}
"""

_MC_ALL = """Choose the condition group that gives the best outcome (highest effective score:
yield x (100+ee)/200 x dr/(dr+1)).

Options (0-based index: condition group):
{options}
"""

_MC_ANSWER = """
Answer with the index of one option only. The evaluation file maps each sample id to that integer,
e.g. {{"<sample id>": 2}}.
"""

_FIB = """Fill in every blank condition key: {query_keys}
For each key choose one candidate by its 0-based index so that the whole combination gives the best
outcome (highest effective score: yield x (100+ee)/200 x dr/(dr+1)).

Candidates per key (index: value):
{candidate_values}

Answer with one integer index per key. The evaluation file maps each sample id to
{{"<key>": <index>, ...}}; text instead of an index is not accepted.
"""

TEMPLATES: dict[str, str] = {
    "single_varying": _HEAD + _MC_SINGLE + _MC_ANSWER,
    "all_varying": _HEAD + _MC_ALL + _MC_ANSWER,
    "single_varying_reference": _HEAD + _REFERENCE + _MC_SINGLE + _MC_ANSWER,
    "all_varying_reference": _HEAD + _REFERENCE + _MC_ALL + _MC_ANSWER,
    "single_varying_reference_control": _HEAD + _MC_SINGLE + _MC_ANSWER,
    "all_varying_reference_control": _HEAD + _MC_ALL + _MC_ANSWER,
    "all_blank": _HEAD + _FIB,
    "all_blank_reference": _HEAD + _REFERENCE + _FIB,
}


_MEASURE = {
    "yield": "yield (%)",
    "conversion": "conversion (%); in the score below, `yield` means conversion",
    None: "selectivity only (no yield reported); in the score below, yield is taken as 100",
}


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render(sample: dict[str, Any], template: str | None = None) -> str:
    """The prompt for one sample: ``template`` (default: its type's built-in template, the text of a build's
    ``prompt_<question_type>.txt``) filled from ``sample['input']``."""
    inp = sample["input"]
    fields = {
        "reaction": _js(inp["reaction"]),
        "constant_conditions": _js(inp["constant_conditions"]),
        "yield_measure": _MEASURE.get(inp["yield_measure"], str(inp["yield_measure"])),
        "reference_conditions": "\n".join(_js(r) for r in inp.get("reference_conditions") or []),
    }
    if "options" in sample:
        fields["options"] = "\n".join(f"{i}: {_js(o)}" for i, o in enumerate(sample["options"]))
        fields["target_key"] = inp.get("target_key") or ""
        fields["fixed_conditions"] = _js(inp.get("fixed_conditions") or {})
    else:
        fields["query_keys"] = _js(sample["query_keys"])
        fields["candidate_values"] = "\n".join(
            f"{k}: " + _js({c["index"]: c["value"] for c in vals}) for k, vals in inp["candidate_values"].items()
        )
    return (TEMPLATES[sample["question_type"]] if template is None else template).format(**fields)


#: what follows the prompt in ``--method loglikelihood``: each option's text is scored after it
LOGLIKELIHOOD_CUE = "\nThe best option is:"


def option_text(option: Any) -> str:
    """An option as the prompt lists it after its index (JSON: a value or a condition group)."""
    return _js(option)


def structured_suffix(sample: dict[str, Any]) -> str:
    """The answer instruction appended where the endpoint enforces the answer's schema."""
    if "options" in sample:
        return ('\nReply with the JSON object {"option": <index>} and nothing else; the index is one of '
                f"0..{len(sample['options']) - 1}.")
    keys = ", ".join(f'"{k}": <index>' for k in sample["query_keys"])
    return f"\nReply with the JSON object {{{keys}}} and nothing else."
