"""Stop a management command early, with a message, when the database it needs was never set up.

With the embedded defaults the SQLite file is created empty wherever PORTAL_DATA_DIR points, so a
command run before the first ``./scripts/run`` (or with PORTAL_DATA_DIR naming another folder) would
otherwise end in a traceback about a missing table. ``manage.py`` calls :func:`exit_unless_migrated` before
it runs the command.
"""

import sys
from collections.abc import Sequence

# Commands that set the database up, inspect it, or do not use it.
COMMANDS_WITHOUT_TABLES = frozenset(
    {
        "check",
        "collectstatic",
        "compilemessages",
        "createcachetable",
        "dbshell",
        "diffsettings",
        "findstatic",
        "help",
        "inspectdb",
        "make_demo_pack",
        "makemessages",
        "makemigrations",
        "migrate",
        "optimizemigration",
        "sendtestemail",
        "shell",
        "showmigrations",
        "sqlflush",
        "sqlmigrate",
        "sqlsequencereset",
        "squashmigrations",
        "startapp",
        "startproject",
        "test",
        "version",
    }
)


def command_name(argv: Sequence[str]) -> str | None:
    """The subcommand of ``manage.py ARGV``; None for ``manage.py``, ``--help`` or ``--version``."""
    if len(argv) < 2 or argv[1].startswith("-"):
        return None
    return argv[1]


def unmigrated_database_message() -> str | None:
    """A paragraph saying which database has no tables and how to set it up; None when it is set up.

    A database that cannot be reached is left to the command, whose own error says so.
    """
    from django.db import DatabaseError, connections

    connection = connections["default"]
    try:
        tables = connection.introspection.table_names()
    except DatabaseError:
        return None
    finally:
        connection.close()
    if "django_migrations" in tables:
        return None
    if connection.vendor == "sqlite":
        path = connection.settings_dict["NAME"]
        return (
            f"The portal's database {path} has no tables yet: the folder PORTAL_DATA_DIR names (./var by "
            "default) has not been set up. Run ./scripts/run once (it creates the tables and the demo "
            "data), or .venv/bin/python manage.py migrate, or point PORTAL_DATA_DIR at the folder that "
            "holds your db.sqlite3."
        )
    name = connection.settings_dict.get("NAME")
    host = connection.settings_dict.get("HOST") or "localhost"
    return (
        f"The portal's database {name!s} on {host} has no tables yet. Create them with "
        ".venv/bin/python manage.py migrate, or point DATABASE_URL at the portal's database."
    )


def exit_unless_migrated(argv: Sequence[str]) -> None:
    """Exit with status 1 and the message when the command needs tables the database does not have."""
    command = command_name(argv)
    if command is None or command in COMMANDS_WITHOUT_TABLES:
        return
    import django
    from django.core.management import get_commands

    django.setup()
    if command not in get_commands():
        return  # Django says it is unknown and suggests close names
    message = unmigrated_database_message()
    if message:
        print(f"{command}: {message}", file=sys.stderr)
        sys.exit(1)
