"""Files that only the portal's own user may read: answers, bundles, the local caches made of them, the
SQLite database and the secret key. Files get FILE_MODE and the folders holding them FOLDER_MODE, so that
another account on the machine can neither read them nor list their names. Framework-free: settings use it.
"""

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(path: Path) -> Path:
    """path as a folder only this user can enter; missing parents are created the same way."""
    missing = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            pass  # another process made it at the same time; the chmod below still applies
        folder.chmod(FOLDER_MODE)  # the umask may have taken bits; this is exact
    if stat.S_IMODE(path.stat().st_mode) != FOLDER_MODE:
        path.chmod(FOLDER_MODE)
    return path


def private_file(path: Path) -> Path:
    """path (created empty when missing) readable and writable by this user only."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    if stat.S_IMODE(path.stat().st_mode) != FILE_MODE:
        path.chmod(FILE_MODE)
    return path


def private_opener(path: str, flags: int) -> int:
    """For open(..., opener=private_opener): a file it creates starts with FILE_MODE."""
    return os.open(path, flags, FILE_MODE)
