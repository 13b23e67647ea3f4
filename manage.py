#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from django.core.management import execute_from_command_line

    from portal.database_ready import exit_unless_migrated

    exit_unless_migrated(sys.argv)
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
