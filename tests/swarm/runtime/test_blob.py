"""The content-addressed blob store: local folder and an fsspec URL."""

from __future__ import annotations

import hashlib

import pytest

from benchscore.common.errors import BadInput
from benchscore.swarm import BlobStore


@pytest.mark.parametrize("root", ["local", "memory://bs-blobs-test"])
def test_put_get_is_content_addressed(tmp_path, root):
    store = BlobStore(tmp_path / "blobs" if root == "local" else root)
    digest = store.put(b"accepted output")
    assert digest == hashlib.sha256(b"accepted output").hexdigest()
    assert store.put(b"accepted output") == digest  # idempotent
    assert store.exists(digest) and store.get(digest) == b"accepted output"
    assert store.get_json(store.put_json({"a": 1})) == {"a": 1}
    assert digest in store.location(digest)


def test_local_layout_and_corruption_detected(tmp_path):
    store = BlobStore(tmp_path / "b")
    digest = store.put(b"x")
    path = tmp_path / "b" / "sha256" / digest[:2] / digest
    assert path.read_bytes() == b"x"
    assert not list((tmp_path / "b").rglob("*.tmp"))
    path.write_bytes(b"tampered")
    with pytest.raises(BadInput, match="does not match"):
        store.get(digest)
    with pytest.raises(BadInput, match="not found"):
        store.get("0" * 64)
    with pytest.raises(BadInput, match="sha256"):
        store.get("../etc/passwd")
