"""The example agent: a baseline that runs anywhere python3 does (standard library only, Python 3.9+).

It shows what a hosted run expects of an agent, not how to win: read the public data in $DATA_DIR, find the
competition's sample submission there (sample_submission.csv, or however the competition names it:
sampleSubmission.csv, sample_submission_null.csv, en_sample_submission_2.csv ...), tell its target columns
from its id columns (the targets are the columns the sample fills with one placeholder value; without such a
column, every column after the first), "train" a tiny model per target column (the mean of that column in
train.csv when it holds numbers, its most frequent value otherwise, the sample's own values when train.csv lacks
the column), write $SUBMISSION_DIR/submission.csv with the sample's rows and columns, check its format once with
$VALIDATE_SUBMISSION, copy its code to $CODE_DIR and log each step to $LOGS_DIR/agent.log. It stops reading
train.csv when half of TIME_LIMIT_SECS has gone, so that it always leaves a submission.
"""

import csv
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

STARTED = time.monotonic()
DATA_DIR = Path(os.environ.get("DATA_DIR", "/home/data"))
SUBMISSION_DIR = Path(os.environ.get("SUBMISSION_DIR", "/home/submission"))
LOGS_DIR = Path(os.environ.get("LOGS_DIR", "/home/logs"))
CODE_DIR = Path(os.environ.get("CODE_DIR", "/home/code"))
VALIDATE = os.environ.get("VALIDATE_SUBMISSION", "/home/validate_submission.sh")
TIME_LIMIT = float(os.environ.get("TIME_LIMIT_SECS") or 3600)
MAX_DISTINCT = 10000  # a column with more distinct values than this is text, not a label: no mode kept
SAMPLE_ROWS = 1000  # the sample's rows read to tell placeholder (target) columns from id columns

csv.field_size_limit(1 << 30)


def say(message):
    """One line to stdout (the run's log) and to agent.log."""
    line = f"[{time.monotonic() - STARTED:7.1f}s] {message}"
    print(line, flush=True)
    try:
        LOGS_DIR.mkdir(parents=True, exist_ok=True)
        with open(LOGS_DIR / "agent.log", "a") as log:
            log.write(line + "\n")
    except OSError as exc:
        print(f"cannot write agent.log: {exc}", file=sys.stderr, flush=True)


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


class ColumnModel:
    """Running mean while every value is a number, and counts of values while there are few distinct."""

    def __init__(self):
        self.total = 0.0
        self.count = 0
        self.numeric = True
        self.counts = Counter()

    def add(self, text):
        if text == "":
            return
        if self.numeric:
            number = as_number(text)
            if number is None:
                self.numeric = False
            else:
                self.total += number
                self.count += 1
        if self.counts is not None:
            self.counts[text] += 1
            if len(self.counts) > MAX_DISTINCT:
                self.counts = None

    def prediction(self):
        if self.numeric and self.count:
            return repr(self.total / self.count)
        if self.counts:
            return self.counts.most_common(1)[0][0]
        return None


def train(targets, deadline):
    """{column: prediction} from train.csv for the target columns it has; {} without train.csv."""
    path = DATA_DIR / "train.csv"
    if not path.is_file():
        say("no train.csv: the sample's own values will be used")
        return {}
    models = {}
    rows = 0
    with open(path, newline="") as source:
        reader = csv.DictReader(source)
        known = [column for column in targets if column in (reader.fieldnames or [])]
        models = {column: ColumnModel() for column in known}
        say(f"training on train.csv for {known or 'no target column it has'}")
        for row in reader:
            if not models:
                break
            for column, model in models.items():
                model.add(row.get(column) or "")
            rows += 1
            if rows % 10000 == 0 and time.monotonic() > deadline:
                say(f"half of the time limit has gone: stopping after {rows} rows")
                break
    predictions = {column: model.prediction() for column, model in models.items()}
    say(f"trained on {rows} rows: {predictions}")
    return {column: value for column, value in predictions.items() if value is not None}


def find_sample():
    """The sample submission among the public files, or None: sample_submission.csv when there is one, else the
    CSV whose name says sample and submission (any case, any separators) with the shortest name, at the top of
    DATA_DIR first, then one folder down."""
    if (DATA_DIR / "sample_submission.csv").is_file():
        return DATA_DIR / "sample_submission.csv"
    for pattern in ("*", "*/*"):
        found = [
            path
            for path in DATA_DIR.glob(pattern)
            if path.is_file()
            and path.suffix.lower() == ".csv"
            and "samplesubmission" in re.sub(r"[^a-z]", "", path.stem.lower())
        ]
        if found:
            return min(found, key=lambda path: (len(path.name), path.name))
    return None


def columns_of(sample_path):
    """(header, target columns) of the sample. A target is a column the sample fills with one placeholder value
    (sample_submission_null.csv of detecting-insults puts its target, Insult, first and keeps Date and Comment
    as the ids); when no column or every column is constant, the first column is the id and the rest targets."""
    with open(sample_path, newline="") as source:
        reader = csv.reader(source)
        header = next(reader, [])
        seen = [set() for _ in header]
        rows = 0
        for row in reader:
            for index, value in enumerate(row[: len(header)]):
                seen[index].add(value)
            rows += 1
            if rows >= SAMPLE_ROWS:
                break
    constant = [column for column, values in zip(header, seen) if len(values) <= 1]
    if rows >= 2 and constant and len(constant) < len(header):
        return header, constant
    return header, header[1:]


def write_submission(sample_path, header, predictions):
    SUBMISSION_DIR.mkdir(parents=True, exist_ok=True)
    out_path = SUBMISSION_DIR / "submission.csv"
    rows = 0
    with open(sample_path, newline="") as source, open(out_path, "w", newline="") as out:
        reader = csv.reader(source)
        writer = csv.writer(out)
        next(reader)
        writer.writerow(header)
        for row in reader:
            writer.writerow([predictions.get(column, value) for column, value in zip(header, row)])
            rows += 1
    say(f"wrote {out_path}: {rows} rows, columns {header}")
    return out_path


def check_format(path):
    """Ask the portal once whether the file's format is right; logs the answer, never stops on a failure."""
    if not os.path.exists(VALIDATE):
        say(f"no format check script at {VALIDATE}: skipped")
        return
    try:
        done = subprocess.run(["bash", VALIDATE, str(path)], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        say(f"format check could not run: {exc}")
        return
    answer = (done.stdout.strip() or done.stderr.strip()).replace("\n", " ")
    say(f"format check: exit {done.returncode}, {answer}")


def save_code():
    CODE_DIR.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    for name in ("agent.py", "start.sh"):
        if (here / name).is_file():
            shutil.copyfile(here / name, CODE_DIR / name)
    say(f"code saved to {CODE_DIR}")


def main():
    competition = os.environ.get("COMPETITION_ID", "?")
    say(f"competition {competition}, data in {DATA_DIR}, time limit {TIME_LIMIT:g}s")
    sample_path = find_sample()
    if sample_path is None:
        public = sorted(str(path.relative_to(DATA_DIR)) for path in DATA_DIR.glob("*"))[:20]
        say(f"no sample submission (a CSV named like sample_submission.csv) in {DATA_DIR}, which holds {public}")
        return 1
    header, targets = columns_of(sample_path)
    shown = ", ".join(targets[:8]) + (f" and {len(targets) - 8} more" if len(targets) > 8 else "")
    say(f"sample submission {sample_path.name}: {len(header)} columns; predicting {shown}")
    predictions = train(targets, deadline=STARTED + TIME_LIMIT / 2)
    path = write_submission(sample_path, header, predictions)
    check_format(path)
    save_code()
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
