"""Safe, streaming extraction of a bundle archive (.tar.gz, .tgz or .zip) into a folder.

A bundle comes from outside, so nothing in it is trusted: not its member names, not its member types,
not the sizes its headers declare. Data is copied in 1 MiB chunks and every limit is checked against the
bytes that actually come out of the decompressor, so a 2 GB bundle needs no more memory than a small one
and a header that lies about a size cannot slip a bomb through.

Extraction writes into a fresh folder next to the target and renames it into place only when the whole
archive has been read; any refusal (or crash) removes that folder, so a refused bundle leaves nothing.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import os
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from isal import igzip_threaded, isal_zlib

from grading.bundles import ziputil
from grading.bundles.errors import BundleError
from grading.bundles.limits import DEFAULT_LIMITS, Limits, human
from grading.bundles.members import MemberTree, safe_path
from grading.bundles.streams import CHUNK, Budget, CountingFile, InflatedTar

INFLATE_BLOCK = 256 * 1024  # what the inflating thread hands over at a time

_OTHER_FORMATS = (
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"Rar!\x1a\x07", "a rar archive"),
)


@dataclass(frozen=True, kw_only=True)
class ExtractedArchive:
    root: Path
    format: str  # "tar.gz" or "zip", from the file's content, whatever its name says
    files: int
    folders: int
    unpacked_bytes: int  # bytes decompressed (tar headers included), as counted against the limits
    archive_bytes: int


def extract_archive(*, archive: Path, target: Path, limits: Limits = DEFAULT_LIMITS) -> ExtractedArchive:
    """Unpack ``archive`` into ``target`` (which must not exist yet), or raise BundleError and leave
    neither ``target`` nor a partial folder behind."""
    archive, target = Path(archive), Path(target)
    if target.exists() or target.is_symlink():
        # A caller bug, not a bad bundle: never merge a bundle into existing files.
        raise FileExistsError(f"extraction target already exists: {target}")
    kind = _sniff(archive)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        with archive.open("rb") as raw:
            source = CountingFile(raw)
            tree = MemberTree(root=staging, limits=limits)
            budget = Budget(limits=limits, source=source)
            if kind == "zip":
                _extract_zip(source=source, tree=tree, budget=budget, limits=limits)
            else:
                _extract_tar_gz(source=source, tree=tree, budget=budget, limits=limits)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExtractedArchive(
        root=target,
        format=kind,
        files=len(tree.files),
        folders=len(tree.folders),
        unpacked_bytes=budget.unpacked,
        archive_bytes=archive.stat().st_size,
    )


def _sniff(archive: Path) -> str:
    with archive.open("rb") as f:
        head = f.read(512)
    if not head:
        raise BundleError("not_an_archive", "the bundle file is empty")
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    for magic, what in _OTHER_FORMATS:
        if head.startswith(magic):
            raise BundleError(
                "unsupported_format", f"the bundle is {what}; upload a .tar.gz (tar czf) or a .zip instead"
            )
    if head[257:262] == b"ustar":
        raise BundleError(
            "unsupported_format", "the bundle is an uncompressed tar; compress it (tar czf bundle.tar.gz ...)"
        )
    raise BundleError("not_an_archive", "the bundle is not a .tar.gz, .tgz or .zip archive (unknown content)")


def _extract_tar_gz(*, source: CountingFile, tree: MemberTree, budget: Budget, limits: Limits) -> None:
    # ISA-L inflates in a thread of its own while this one writes the files: the two overlap.
    stream = igzip_threaded.open(source, "rb", threads=1, block_size=INFLATE_BLOCK)
    try:
        _extract_tar_stream(stream=stream, tree=tree, budget=budget, limits=limits)
    finally:
        stream.close()  # stops the inflating thread whatever happened


def _extract_tar_stream(*, stream: BinaryIO, tree: MemberTree, budget: Budget, limits: Limits) -> None:
    inflated = InflatedTar(stream=stream, budget=budget)
    try:
        # Seekable mode ("r"), not stream mode ("r|"): there tarfile buffers a whole pax header before we
        # see its size; here every header read comes through InflatedTar.read, which refuses huge ones.
        tar = tarfile.TarFile(fileobj=inflated, mode="r")  # type: ignore[arg-type]
    except BundleError:
        raise
    except tarfile.ReadError as exc:
        raise BundleError("not_an_archive", f"the bundle is gzip-compressed but holds no tar archive ({exc})") from exc
    # isal's stub declares ``error: Exception`` (an instance); at runtime it is the exception class.
    except (EOFError, OSError, zlib.error, isal_zlib.error) as exc:  # type: ignore[misc]
        raise BundleError("corrupt_archive", f"the archive is damaged or truncated at its start: {exc}") from exc
    previous: str | None = None
    while True:
        inflated.between("the start of the archive" if previous is None else f"the entry after {previous!r}")
        with _reading(inflated.where):
            member = tar.next()
        # tarfile keeps every header it has read; a long archive must not grow memory.
        tar.members.clear()  # type: ignore[attr-defined]
        if member is None:
            break
        name = member.name
        path = safe_path(name)  # first: the name must be safe even to quote in another refusal
        inflated.at_member(name)
        tree.count(name)
        if member.issym() or member.islnk():
            kind = "symbolic link" if member.issym() else "hard link"
            raise BundleError(
                "link_not_allowed",
                f"{name!r} is a {kind} (to {member.linkname!r}); bundles may hold only files and folders",
                {"member": name, "link_target": member.linkname},
            )
        if member.isdir():
            tree.add_folder(path, name=name)
        elif not member.isreg():
            raise _special(name, _tar_kind(member))
        elif member.sparse is not None:
            raise BundleError("unsupported_member", f"{name!r} is a sparse file; archive it without -S")
        else:
            # A tar header's size is exactly how many bytes follow it, so refusing on it early is safe.
            if member.size > limits.max_member_bytes:
                raise _member_too_large(name, limits)
            with _reading(repr(name), member=name):
                member_stream = tar.extractfile(member)
            assert member_stream is not None  # a regular member always has a data stream
            with member_stream, tree.create(path, name=name) as out:
                _copy(read=member_stream.read, out=out, name=name, limits=limits, budget=None)
        previous = name
    # Read gzip to its very end: that checks its CRC and length, and whatever hides behind the
    # end-of-archive marker still counts against the limits.
    inflated.between("the end of the archive")
    with _reading(inflated.where):
        inflated.drain()


def _extract_zip(*, source: CountingFile, tree: MemberTree, budget: Budget, limits: Limits) -> None:
    declared_entries = ziputil.check_directory(source=source, max_files=limits.max_files)
    with _reading("the zip directory"):
        archive = zipfile.ZipFile(source)
    with archive:
        with _reading("the zip directory"):
            ziputil.check_layout(archive=archive, source=source, declared_entries=declared_entries)
        for info in archive.infolist():
            name = info.filename
            path = safe_path(name)
            tree.count(name)
            kind = ziputil.member_kind(info)
            if kind == "symlink":
                raise BundleError(
                    "link_not_allowed",
                    f"{name!r} is a symbolic link; bundles may hold only files and folders",
                    {"member": name},
                )
            if kind == "folder":
                tree.add_folder(path, name=name)
                continue
            if kind != "file":
                raise _special(name, kind)
            problem = ziputil.unsupported(info)
            if problem:
                raise BundleError("unsupported_member", f"{name!r} {problem}", {"member": name})
            # Decompress until the compressed data ends, whatever the header's file_size says: zipfile
            # stops at file_size, and a header that understates it would hide the real size from us.
            probe = copy.copy(info)
            probe.file_size = ziputil.UNBOUNDED
            with _reading(repr(name), member=name):
                stream = archive.open(probe)
            with stream, tree.create(path, name=name) as out:
                size = _copy(read=stream.read, out=out, name=name, limits=limits, budget=budget)
            if size != info.file_size:
                raise BundleError(
                    "corrupt_archive",
                    f"{name!r}: the zip header says {info.file_size} bytes but it unpacks to {size}",
                    {"member": name},
                )


def _copy(*, read: Callable[[int], bytes], out: BinaryIO, name: str, limits: Limits, budget: Budget | None) -> int:
    """Copy one member in chunks. ``budget`` is None where the stream below already charges it (tar)."""
    size = 0
    while True:
        with _reading(repr(name), member=name):
            chunk = read(CHUNK)
        if not chunk:
            return size
        size += len(chunk)
        if size > limits.max_member_bytes:
            raise _member_too_large(name, limits)
        if budget is not None:
            budget.charge(len(chunk), where=repr(name), member=name)
        out.write(chunk)


@contextlib.contextmanager
def _reading(where: str, *, member: str | None = None) -> Iterator[None]:
    """Turn the decoders' many ways of saying "damaged" into one refusal naming where it happened.
    Only reads go through here, so a full disk on our side is never blamed on the bundle."""
    try:
        yield
    except BundleError:
        raise
    # UnicodeDecodeError: zipfile decodes names flagged as UTF-8 strictly when it opens the archive.
    except (  # type: ignore[misc]  # isal's stub types isal_zlib.error as an instance, not a class
        tarfile.TarError,
        zipfile.BadZipFile,
        zlib.error,
        isal_zlib.error,  # ISA-L's gzip reader (tar.gz bundles)
        EOFError,
        gzip.BadGzipFile,
        UnicodeDecodeError,
    ) as exc:
        raise BundleError(
            "corrupt_archive",
            f"the archive is damaged or truncated at {where}: {exc or type(exc).__name__}",
            {"member": member, "where": where},
        ) from exc
    except NotImplementedError as exc:  # zipfile's answer to a newer zip version or an unknown method
        raise BundleError(
            "unsupported_member", f"the archive uses a feature that is not supported at {where}: {exc}"
        ) from exc


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.ischr() or member.isblk():
        return "device file"
    if member.isfifo():
        return "fifo"
    return f"member of tar type {member.type!r}"


def _special(name: str, kind: str) -> BundleError:
    return BundleError(
        "special_file_not_allowed",
        f"{name!r} is a {kind}; bundles may hold only files and folders",
        {"member": name, "kind": kind},
    )


def _member_too_large(name: str, limits: Limits) -> BundleError:
    return BundleError(
        "member_too_large",
        f"{name!r} unpacks to more than {human(limits.max_member_bytes)}, the limit for one file",
        {"member": name, "limit": limits.max_member_bytes},
    )
