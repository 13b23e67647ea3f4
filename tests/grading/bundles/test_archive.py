"""Safe extraction: every refusal names the member and leaves nothing behind."""

from __future__ import annotations

import gzip
import io
import os
import random
import shutil
import stat
import struct
import tarfile
import time
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import pytest

from grading.bundles import BundleError, Limits, extract_archive
from grading.bundles.limits import DEFAULT_LIMITS, MiB

from .builders import bundle_files, leftovers, tar_member, write_tar_gz, write_zip


def refusal(archive: Path, target: Path, limits: Limits = DEFAULT_LIMITS) -> BundleError:
    with pytest.raises(BundleError) as caught:
        extract_archive(archive=archive, target=target, limits=limits)
    assert leftovers(target.parent) == [], "a refused bundle must leave nothing behind"
    return caught.value


class Zeros(io.RawIOBase):
    """``size`` zero bytes, read in chunks, so tests can archive big members without holding them."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def test_it_extracts_a_tar_gz_bundle(inbox, target):
    files = bundle_files()
    result = extract_archive(archive=write_tar_gz(inbox / "b.tar.gz", files), target=target)
    assert result.format == "tar.gz" and result.root == target and result.files == len(files)
    for name, data in files.items():
        assert (target / name).read_bytes() == data
    assert [p.name for p in target.parent.iterdir()] == ["bundle"]  # no staging folder left


def test_it_extracts_a_zip_bundle(inbox, target):
    files = bundle_files()
    result = extract_archive(archive=write_zip(inbox / "b.zip", files), target=target)
    assert result.format == "zip" and result.files == len(files)
    assert (target / "manifest.json").read_bytes() == files["manifest.json"]


def test_it_detects_the_format_by_content_not_by_name(inbox, target):
    archive = write_zip(inbox / "named-like-a.tar.gz", bundle_files())
    assert extract_archive(archive=archive, target=target).format == "zip"


def test_it_accepts_a_leading_dot_slash_and_folder_entries(inbox, target):
    with tarfile.open(inbox / "b.tgz", "w:gz") as tar:
        tar.add(inbox, arcname=".", recursive=False)  # the "./" entry of `tar czf b.tgz -C dir .`
        info = tarfile.TarInfo("./manifest.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    extract_archive(archive=inbox / "b.tgz", target=target)
    assert (target / "manifest.json").read_bytes() == b"{}"


@pytest.mark.parametrize(
    "name, why",
    [
        ("../evil.sh", "'..'"),
        ("runs/../../evil.sh", "'..'"),
        ("/etc/cron.d/evil", "absolute path"),
        ("C:/Windows/evil.dll", "drive letter"),
        ("runs\\..\\evil.sh", "backslash"),
        ("runs/evil\nname", "control character"),
    ],
)
@pytest.mark.parametrize("writer", [write_tar_gz, write_zip])
def test_it_refuses_a_zip_slip_path(inbox, target, writer, name, why):
    error = refusal(writer(inbox / "b", {"manifest.json": b"{}", name: b"x"}), target)
    assert error.code == "unsafe_path"
    assert repr(name) in error.message and why in error.message
    assert error.details["member"] == name
    assert not (target.parent.parent / "evil.sh").exists()


def test_it_refuses_a_name_that_is_not_utf8(inbox, target):
    archive = write_tar_gz(inbox / "b.tgz", {"runs/x\udcff.csv": b"x"})  # tarfile writes the raw byte 0xff
    error = refusal(archive, target)
    assert error.code == "unsafe_path" and "not valid UTF-8" in error.message
    assert error.details["member"] == "runs/x\\udcff.csv"


def test_it_refuses_a_symlink(inbox, target):
    link = tar_member("runs/g/c_1/code/data", tarfile.SYMTYPE, linkname="/private/data")
    error = refusal(write_tar_gz(inbox / "b.tgz", {"manifest.json": b"{}"}, extra=[link]), target)
    assert error.code == "link_not_allowed"
    assert "'runs/g/c_1/code/data' is a symbolic link (to '/private/data')" in error.message


def test_it_refuses_a_symlink_in_a_zip(inbox, target):
    info = zipfile.ZipInfo("runs/g/c_1/code/data")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(inbox / "b.zip", "w") as archive:
        archive.writestr(info, "/private/data")
    error = refusal(inbox / "b.zip", target)
    assert error.code == "link_not_allowed" and "'runs/g/c_1/code/data' is a symbolic link" in error.message


def test_it_refuses_a_hard_link(inbox, target):
    link = tar_member("runs/g/c_1/code/copy", tarfile.LNKTYPE, linkname="manifest.json")
    error = refusal(write_tar_gz(inbox / "b.tgz", {"manifest.json": b"{}"}, extra=[link]), target)
    assert error.code == "link_not_allowed"
    assert "'runs/g/c_1/code/copy' is a hard link (to 'manifest.json')" in error.message


@pytest.mark.parametrize(
    "kind, word",
    [(tarfile.CHRTYPE, "device file"), (tarfile.BLKTYPE, "device file"), (tarfile.FIFOTYPE, "fifo")],
)
def test_it_refuses_a_device_file(inbox, target, kind, word):
    error = refusal(write_tar_gz(inbox / "b.tgz", {}, extra=[tar_member("runs/dev", kind)]), target)
    assert error.code == "special_file_not_allowed"
    assert error.message.startswith(f"'runs/dev' is a {word}")


def test_it_refuses_a_device_file_in_a_zip(inbox, target):
    info = zipfile.ZipInfo("runs/tty")
    info.external_attr = (stat.S_IFCHR | 0o666) << 16
    with zipfile.ZipFile(inbox / "b.zip", "w") as archive:
        archive.writestr(info, b"")
    error = refusal(inbox / "b.zip", target)
    assert error.code == "special_file_not_allowed" and "'runs/tty' is a device file" in error.message


def _zip_with_lying_size(path: Path, *, real_size: int, claimed_size: int) -> Path:
    zeros = Zeros(real_size)
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("runs/bomb.csv", "w") as member,
    ):
        while chunk := zeros.read(MiB):
            member.write(chunk)
    data = bytearray(path.read_bytes())
    # Rewrite the uncompressed size in the local header (offset 22) and the central directory (offset 24).
    struct.pack_into("<I", data, 22, claimed_size)
    directory = data.rindex(b"PK\x01\x02")
    struct.pack_into("<I", data, directory + 24, claimed_size)
    path.write_bytes(bytes(data))
    return path


def test_it_refuses_an_archive_bomb(inbox, target):
    # 64 MiB of zeros deflate to about 64 KiB; the headers claim 1000 bytes.
    archive = _zip_with_lying_size(inbox / "bomb.zip", real_size=64 * MiB, claimed_size=1000)
    assert zipfile.ZipFile(archive).getinfo("runs/bomb.csv").file_size == 1000
    error = refusal(archive, target, Limits(ratio_floor_bytes=4 * MiB))
    assert error.code == "compression_ratio_too_high"
    assert "'runs/bomb.csv'" in error.message and "archive bomb" in error.message


def test_it_refuses_a_bomb_over_the_total_cap_whatever_its_header_says(inbox, target):
    archive = _zip_with_lying_size(inbox / "bomb.zip", real_size=32 * MiB, claimed_size=1000)
    error = refusal(archive, target, Limits(max_total_bytes=8 * MiB, max_ratio=1e9))
    assert error.code == "bundle_too_large" and "more than 8 MiB (reached at 'runs/bomb.csv')" in error.message


def test_it_refuses_a_tar_gz_bomb_whose_gzip_trailer_lies(inbox, target):
    archive = inbox / "bomb.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("runs/bomb.csv")
        info.size = 64 * MiB
        tar.addfile(info, Zeros(info.size))
    with archive.open("r+b") as f:
        f.seek(-4, os.SEEK_END)
        f.write(struct.pack("<I", 1000))  # gzip's ISIZE: "this unpacks to 1000 bytes"
    error = refusal(archive, target, Limits(ratio_floor_bytes=4 * MiB))
    assert error.code == "compression_ratio_too_high" and "'runs/bomb.csv'" in error.message


def test_it_refuses_a_member_over_the_size_cap(inbox, target):
    files = {"manifest.json": b"{}", "runs/big.csv": os.urandom(300_000)}
    for writer in (write_tar_gz, write_zip):
        error = refusal(writer(inbox / f"b-{writer.__name__}", files), target, Limits(max_member_bytes=200_000))
        assert error.code == "member_too_large"
        assert error.message == "'runs/big.csv' unpacks to more than 195.3 KiB, the limit for one file"


def test_it_refuses_a_giant_tar_header(inbox, target):
    info = tarfile.TarInfo("runs/x.csv")
    info.pax_headers = {"comment": "x" * (2 * MiB)}
    with tarfile.open(inbox / "b.tgz", "w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b""))
    error = refusal(inbox / "b.tgz", target)
    assert error.code == "corrupt_archive" and "tar header of more than 8 KiB" in error.message


def pax_digits_bundle(path: Path, digits: int) -> Path:
    """CVE-2024-6232's shape: a pax header of nothing but digits, which tarfile before Python 3.12.6
    parses in time growing with the square of its length. It compresses to a few hundred bytes."""
    data = b"1" * digits
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, len(data)
    raw = header.tobuf(format=tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)
    raw += tarfile.TarInfo("manifest.json").tobuf(format=tarfile.USTAR_FORMAT) + bytes(1024)
    path.write_bytes(gzip.compress(raw))
    return path


def test_it_refuses_a_pax_header_of_200000_digits_before_tarfile_parses_it(inbox, target):
    archive = pax_digits_bundle(inbox / "b.tgz", 200_000)
    assert archive.stat().st_size < 1000
    started = time.monotonic()
    error = refusal(archive, target)
    assert error.code == "corrupt_archive" and "tar header of more than 8 KiB" in error.message
    # On Python 3.12.1 tarfile alone took 91 s over this header; refused unread, it takes milliseconds.
    assert time.monotonic() - started < 2


def test_a_pax_header_with_a_long_name_is_still_read(inbox, target):
    name = "runs/" + "/".join(["d" * 200] * 4) + "/run.log"
    with tarfile.open(inbox / "b.tgz", "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"ok"))
    extract_archive(archive=inbox / "b.tgz", target=target)
    assert (target / name).read_bytes() == b"ok"


# 16 folders of 63 emoji: each 252 bytes (under the 255 a name may have), 4047 bytes in all, under the
# 4096 of a Linux path until the portal's own folders stand in front of it.
EMOJI_PATH = "/".join(["\U0001f600" * 63] * 16) + "/x.csv"


@pytest.mark.parametrize("writer", [write_tar_gz, write_zip])
def test_it_refuses_a_name_longer_than_1024_bytes(inbox, target, writer):
    error = refusal(writer(inbox / "b", {"manifest.json": b"{}", EMOJI_PATH: b"x"}), target)
    assert error.code == "unsafe_path"
    assert "is 4053 bytes long; at most 1024 are accepted" in error.message
    assert error.details["member"] == EMOJI_PATH


def test_a_name_the_file_system_refuses_is_a_bundle_error(inbox, tmp_path):
    # A deep staging folder makes a 1 KiB member name pass 4096 bytes: ENAMETOOLONG must not be a 500.
    deep = tmp_path.joinpath(*["f" * 250] * 13)
    deep.mkdir(parents=True)
    name = "runs/" + "/".join(["n" * 200] * 5)
    error = refusal(write_tar_gz(inbox / "b", {name: b"x"}), deep / "bundle")
    assert error.code == "unsafe_path" and "the file system refuses it" in error.message


def test_extracted_files_are_readable_by_the_portals_user_only(inbox, target):
    extract_archive(archive=write_tar_gz(inbox / "b.tar.gz", bundle_files()), target=target)
    for path in [target, *target.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def joined_zip_layouts(inbox: Path) -> dict[str, Path]:
    """Zips that read differently from the front and from the end."""
    files = bundle_files()
    plain = write_zip(inbox / "plain.zip", files).read_bytes()
    decoy = write_zip(inbox / "decoy.zip", {"manifest.json": b"{}"}).read_bytes()
    layouts = {"two_zips_joined": decoy + plain, "data_after_the_end": plain + b"hidden"}

    # A submission hidden inside another member's stored bytes: entry B's header lies inside entry A.
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_STORED) as z:
        z.writestr("runs/g/c_1/submission/submission.csv", b"id,label\n1,1\n")
    inner_bytes = inner.getvalue()
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w", zipfile.ZIP_STORED) as z:
        z.writestr("manifest.json", b"{}")
        z.writestr("runs/g/c_1/logs/blob.bin", inner_bytes)
    data = bytearray(outer.getvalue())
    blob_at = data.index(inner_bytes)
    end_at = data.rindex(b"PK\x05\x06")
    directory_at = struct.unpack_from("<I", data, end_at + 16)[0]
    hidden = zipfile.ZipFile(io.BytesIO(inner_bytes)).infolist()[0]
    # Copy the hidden entry's directory record, pointed at its header inside blob.bin.
    inner_directory_at = inner_bytes.index(b"PK\x01\x02")
    record = bytearray(inner_bytes[inner_directory_at : inner_bytes.index(b"PK\x05\x06")])
    struct.pack_into("<I", record, 42, blob_at + hidden.header_offset)
    directory = bytes(data[directory_at:end_at]) + bytes(record)
    end = bytearray(data[end_at:])
    struct.pack_into("<HHI", end, 8, 3, 3, len(directory))
    layouts["overlapping_entries"] = bytes(data[:directory_at]) + directory + bytes(end)

    # An end record that declares fewer entries than the directory holds.
    low = bytearray(plain)
    at = low.rindex(b"PK\x05\x06")
    struct.pack_into("<HH", low, at + 8, 1, 1)
    layouts["entry_count_too_low"] = bytes(low)
    paths = {}
    for name, content in layouts.items():
        paths[name] = inbox / f"{name}.zip"
        paths[name].write_bytes(content)
    return paths


@pytest.mark.parametrize(
    "layout, words",
    [
        ("two_zips_joined", "bytes in front of the first entry"),
        ("data_after_the_end", "data after its end record"),
        ("overlapping_entries", "overlaps the entry before it"),
        ("entry_count_too_low", "end record says it holds 1 entries but its directory lists"),
    ],
)
def test_it_refuses_an_ambiguous_zip(inbox, target, layout, words):
    error = refusal(joined_zip_layouts(inbox)[layout], target)
    assert error.code == "corrupt_archive" and words in error.message


def test_it_refuses_a_zip64_locator_pointing_far_outside_the_file(inbox, target):
    data = bytearray(write_zip(inbox / "b.zip", bundle_files()).read_bytes())
    at = data.rindex(b"PK\x05\x06")
    struct.pack_into("<HHII", data, at + 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    locator = b"PK\x06\x07" + struct.pack("<IQI", 0, 2**62, 1)
    archive = inbox / "z64.zip"
    archive.write_bytes(bytes(data[:at]) + locator + bytes(data[at:]))
    error = refusal(archive, target)
    assert error.code == "corrupt_archive" and "zip64 locator points at byte 4611686018427387904" in error.message


def test_a_zip_written_with_data_descriptors_is_accepted(inbox, target):
    class Unseekable(io.RawIOBase):
        def __init__(self, sink):
            self.sink = sink

        def writable(self):
            return True

        def write(self, data):
            return self.sink.write(data)

    sink = io.BytesIO()
    with zipfile.ZipFile(Unseekable(sink), "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in bundle_files().items():
            z.writestr(name, content)
    (inbox / "streamed.zip").write_bytes(sink.getvalue())
    assert zipfile.ZipFile(inbox / "streamed.zip").infolist()[0].flag_bits & 0x8
    result = extract_archive(archive=inbox / "streamed.zip", target=target)
    assert result.files == len(bundle_files())


@pytest.mark.parametrize("writer", [write_tar_gz, write_zip])
def test_it_refuses_too_many_files(inbox, target, writer):
    files = {f"runs/g/c_1/logs/{i}.log": b"x" for i in range(11)}
    error = refusal(writer(inbox / "b", files), target, Limits(max_files=10))
    assert error.code == "too_many_files" and "10" in error.message


@pytest.mark.parametrize("writer", [write_tar_gz, write_zip])
def test_it_refuses_a_truncated_archive(inbox, target, writer):
    archive = writer(inbox / "b", {"manifest.json": b"{}", "runs/g/c_1/run.log": os.urandom(256_000)})
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size * 2 // 3])
    error = refusal(archive, target)
    assert error.code == "corrupt_archive" and "truncated" in error.message


def test_it_refuses_a_tar_gz_cut_after_its_last_member(inbox, target):
    archive = write_tar_gz(inbox / "b.tgz", {"manifest.json": b"{}"})
    archive.write_bytes(archive.read_bytes()[:-6])  # the gzip trailer is damaged, the tar is whole
    assert refusal(archive, target).code == "corrupt_archive"


def test_it_refuses_a_corrupt_archive(inbox, target):
    archive = write_tar_gz(inbox / "b.tgz", {"runs/g/c_1/run.log": b"line of a log\n" * 20_000})
    data = bytearray(archive.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    archive.write_bytes(bytes(data))
    error = refusal(archive, target)
    # Deflate may decode damaged bytes into wrong data; gzip's CRC at the end still catches it.
    assert error.code == "corrupt_archive" and "damaged" in error.message


@pytest.mark.parametrize(
    "content, code, words",
    [
        (b"", "not_an_archive", "empty"),
        (b'{"schema": "bundle-v1"}', "not_an_archive", "not a .tar.gz, .tgz or .zip"),
        (gzip.compress(b"id,label\n1,0\n" * 100), "not_an_archive", "holds no tar archive"),
        (b"BZh91AY&SY", "unsupported_format", "bzip2"),
    ],
)
def test_it_refuses_a_file_that_is_not_an_archive(inbox, target, content, code, words):
    (inbox / "b.tar.gz").write_bytes(content)
    error = refusal(inbox / "b.tar.gz", target)
    assert error.code == code and words in error.message


def test_it_refuses_an_uncompressed_tar(inbox, target):
    with tarfile.open(inbox / "b.tar", "w") as tar:
        tar.addfile(tarfile.TarInfo("manifest.json"), io.BytesIO(b""))
    error = refusal(inbox / "b.tar", target)
    assert error.code == "unsupported_format" and "uncompressed tar" in error.message


def test_it_refuses_a_zip_whose_utf8_flagged_name_is_not_utf8(inbox, target):
    archive = write_zip(inbox / "b.zip", {"runs/\u00e9.csv": b"x"})  # zipfile sets the UTF-8 flag
    archive.write_bytes(archive.read_bytes().replace("\u00e9".encode(), b"\xff\xfe"))
    error = refusal(archive, target)
    assert error.code == "corrupt_archive" and "the zip directory" in error.message


def test_it_refuses_duplicate_member_names(inbox, target):
    with tarfile.open(inbox / "b.tgz", "w:gz") as tar:
        for data in (b"first", b"second"):
            info = tarfile.TarInfo("runs/g/c_1/submission/submission.csv")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    error = refusal(inbox / "b.tgz", target)
    assert error.code == "duplicate_member"
    assert error.message == "'runs/g/c_1/submission/submission.csv' appears twice in the archive"


def test_it_refuses_duplicate_member_names_in_a_zip(inbox, target):
    with warnings.catch_warnings(), zipfile.ZipFile(inbox / "b.zip", "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate we want
        archive.writestr("manifest.json", b"{}")
        archive.writestr("./manifest.json", b"{}")
    error = refusal(inbox / "b.zip", target)
    assert error.code == "duplicate_member" and "'./manifest.json' appears twice" in error.message


def test_it_refuses_a_file_where_a_folder_is_needed(inbox, target):
    error = refusal(write_tar_gz(inbox / "b.tgz", {"runs": b"x", "runs/g/metadata.json": b"{}"}), target)
    assert error.code == "duplicate_member"
    assert error.message == "'runs/g/metadata.json' needs 'runs' to be a folder, but it is a file"


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_it_refuses_zip_members_with_unbounded_decompressors(inbox, target, compression):
    error = refusal(write_zip(inbox / "b.zip", {"runs/x.csv": b"x" * 1000}, compression=compression), target)
    assert error.code == "unsupported_member" and "only stored and deflate" in error.message


def test_it_never_merges_into_an_existing_folder(inbox, target):
    target.mkdir()
    with pytest.raises(FileExistsError):
        extract_archive(archive=write_zip(inbox / "b.zip", bundle_files()), target=target)
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("writer", [write_tar_gz, write_zip])
def test_memory_stays_small_whatever_the_member_size(inbox, target, writer):
    size = 48 * MiB
    archive = inbox / "big"
    if writer is write_zip:
        with (
            zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as out,
            out.open("runs/big.bin", "w") as f,
        ):
            for _ in range(size // MiB):
                f.write(os.urandom(MiB))
    else:
        with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
            info = tarfile.TarInfo("runs/big.bin")
            info.size = size
            tar.addfile(info, Zeros(size))
    tracemalloc.start()
    try:
        extract_archive(archive=archive, target=target, limits=Limits(max_ratio=1e9))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (target / "runs/big.bin").stat().st_size == size
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB for a {size // MiB} MiB member"


@pytest.mark.parametrize("writer", [write_tar_gz, write_zip])
def test_damaged_archives_only_ever_fail_with_a_bundle_error(inbox, target, writer):
    """Random byte flips, cuts and deletions: each is extracted whole or refused cleanly, never a crash,
    and the thread that inflates a .tar.gz is gone after each, refused or not."""
    import threading

    threads = threading.active_count()
    rng = random.Random(20240801)
    original = writer(inbox / "b", bundle_files(**{"runs/g/c_1/logs/x.log": b"abc" * 20_000})).read_bytes()
    for _ in range(150):
        data = bytearray(original)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            if rng.random() < 0.7:
                data[at] = rng.randrange(256)
            else:
                del data[at : at + rng.randint(1, 40)]
        (inbox / "damaged").write_bytes(bytes(data))
        try:
            extract_archive(archive=inbox / "damaged", target=target)
        except BundleError:
            assert leftovers(target.parent) == []
        else:
            shutil.rmtree(target)
        assert threading.active_count() == threads


def test_a_tar_gz_refused_early_leaves_no_inflating_thread_behind(inbox, target):
    """The refusal comes at the first member while megabytes of data still wait in the archive: the thread
    that inflates ahead must be stopped, not left waiting to hand over its next block."""
    import os
    import threading
    import time

    link = tarfile.TarInfo("runs/g/c_1/evil")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    files = {"runs/g/c_1/logs/big.bin": os.urandom(8 * MiB)}
    path = inbox / "b.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.addfile(link)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    threads = threading.active_count()
    try:
        extract_archive(archive=path, target=target)
    except BundleError as refused:  # kept alive on purpose: the stream must not rely on being collected
        error = refused
    assert "symbolic link" in error.message
    deadline = time.monotonic() + 2
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == threads
    assert leftovers(target.parent) == []
