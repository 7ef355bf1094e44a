"""A content-addressed blob store for artifacts (convergence outputs, reports).

A blob's name is the sha256 of its bytes, stored at ``ROOT/sha256/ab/abcdef...``. ROOT is a local
folder by default or any fsspec URL (``s3://bucket/prefix``, ``memory://x``, ...) where the user
has the filesystem installed. Writes go to a temporary name and are then moved into place; a
blob that already exists is not written again; reads verify the hash.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import fsspec
import orjson

from benchscore.common.atomic import dumps_json
from benchscore.common.errors import BadInput

DEFAULT_BLOB_ROOT = "swarm-blobs"


class BlobStore:
    def __init__(self, root: str | Path = DEFAULT_BLOB_ROOT) -> None:
        root = str(root)
        try:
            self.fs, self.root = fsspec.core.url_to_fs(root)
        except (ImportError, ValueError) as exc:
            raise BadInput(f"blob store {root!r}: {exc}") from None
        self.url = root
        self.root = self.root.rstrip("/")

    def _path(self, digest: str) -> str:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise BadInput(f"blob name {digest!r}: expected a sha256 hex digest")
        return f"{self.root}/sha256/{digest[:2]}/{digest}"

    def location(self, digest: str) -> str:
        """Where the blob lives (a path or an fsspec URL)."""
        path = self._path(digest)
        protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        return path if protocol in ("file", "local") else f"{protocol}://{path}"

    def put(self, data: bytes) -> str:
        """Store ``data``; returns its sha256 (the blob's name)."""
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if self.fs.exists(path):
            return digest
        self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        with self.fs.open(tmp, "wb") as fh:
            fh.write(data)
        self.fs.mv(tmp, path)
        return digest

    def put_json(self, obj: object) -> str:
        return self.put(dumps_json(obj))

    def exists(self, digest: str) -> bool:
        return self.fs.exists(self._path(digest))

    def get(self, digest: str) -> bytes:
        """The blob's bytes; raises BadInput if missing or if its content no longer matches."""
        path = self._path(digest)
        if not self.fs.exists(path):
            raise BadInput(f"blob {digest} not found in {self.url}")
        with self.fs.open(path, "rb") as fh:
            data = fh.read()
        if hashlib.sha256(data).hexdigest() != digest:
            raise BadInput(f"blob {digest} in {self.url}: content does not match its sha256")
        return data

    def get_json(self, digest: str) -> object:
        return orjson.loads(self.get(digest))
