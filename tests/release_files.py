"""The Python files of a torch release, without installing it.

``release_files(version, paths, dest)`` writes ``dest/<path>`` for each ``torch/...`` path, as
the release ships it: from the installed torch when it is that release and unmodified, otherwise
read out of the release's wheel on PyPI with HTTP range requests (zipfile over a seekable remote
file: the central directory and those members only, a few MB of a wheel of hundreds). Every file
is checked against the release hashes the package ships (``torch-<version>.sha256``), so what the
tests see is the release's file or nothing. Raises ``Unavailable`` (with the reason) when neither
source can be read, e.g. with no network.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from torch_export_names.tools.torch_patch import status, store

__all__ = ["Unavailable", "release_files"]

_INDEX = "https://pypi.org/simple/torch/"
_TIMEOUT = 60


class Unavailable(RuntimeError):
    """The release's files could not be read; the message says why."""


class _RemoteFile(io.RawIOBase):
    """A read-only, seekable view of ``url`` that fetches what is read with Range requests."""

    _BLOCK = 1 << 20

    def __init__(self, url: str, size: int):
        self._url, self._size, self._pos = url, size, 0
        self._blocks: dict[int, bytes] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def _block(self, index: int) -> bytes:
        if index not in self._blocks:
            start = index * self._BLOCK
            end = min(start + self._BLOCK, self._size) - 1
            request = urllib.request.Request(self._url, headers={"Range": f"bytes={start}-{end}"})
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
                if response.status != 206:
                    raise Unavailable(f"{self._url} ignores Range requests (HTTP {response.status})")
                self._blocks[index] = response.read()
        return self._blocks[index]

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        n = min(len(view), self._size - self._pos)
        done = 0
        while done < n:
            index, offset = divmod(self._pos + done, self._BLOCK)
            chunk = self._block(index)[offset : offset + n - done]
            view[done : done + len(chunk)] = chunk
            done += len(chunk)
        self._pos += done
        return done


def _wheel(version: str) -> tuple[str, int]:
    """URL and size of the smallest Linux wheel of torch ``version`` (the .py files of a Windows
    wheel have other line endings)."""
    request = urllib.request.Request(_INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
        files = json.load(response)["files"]
    wheels = [
        f
        for f in files
        if f["filename"].startswith(f"torch-{version}-")
        and "linux" in f["filename"]
        and f["filename"].endswith(".whl")
    ]
    if not wheels:
        raise Unavailable(f"{_INDEX} lists no wheel of torch {version}")
    wheel = min(wheels, key=lambda f: f["size"])
    return wheel["url"], wheel["size"]


def release_files(version: str, paths: list[str], dest: Path) -> str:
    """Write the release's ``paths`` under ``dest``; returns where they were read from."""
    patch = store.load(version)
    missing = sorted(set(paths) - set(patch.pristine))
    if missing:
        raise ValueError(f"torch-{version}.sha256 has no hash for {missing}")
    try:
        site = store.installed_site()
        installed = status.status(site)
        local = installed.torch_version.split("+")[0] == version and installed.state == status.STOCK
    except (FileNotFoundError, store.NoPatch):
        local = False
    if local:
        source = f"the installed torch ({site})"
        read = lambda path: (site / path).read_bytes()  # noqa: E731
    else:
        try:
            url, size = _wheel(version)
            wheel = zipfile.ZipFile(io.BufferedReader(_RemoteFile(url, size), buffer_size=1 << 16))
        except (urllib.error.URLError, OSError, zipfile.BadZipFile) as e:
            raise Unavailable(f"cannot read the torch {version} wheel from PyPI: {e}") from None
        source = url
        read = wheel.read
    for path in paths:
        data = read(path)
        if store.sha256(data) != patch.pristine[path]:
            raise Unavailable(f"{path} from {source} is not torch {version}'s (sha256 differs)")
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(data)
    return source
