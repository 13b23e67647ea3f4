"""The example agent: a baseline that runs anywhere python3 does (standard library only, Python 3.9+).

It shows what a hosted run expects of an agent, not how to win: read the public data in $DATA_DIR, "train"
a tiny model (per target column of sample_submission.csv: the mean of that column in train.csv when it holds
numbers, its most frequent value otherwise, the sample's own values when train.csv lacks the column), write
$SUBMISSION_DIR/submission.csv with the sample's ids and columns, check its format once with
$VALIDATE_SUBMISSION, copy its code to $CODE_DIR and log each step to $LOGS_DIR/agent.log. It stops reading
train.csv when half of TIME_LIMIT_SECS has gone, so that it always leaves a submission.
"""

import csv
import os
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


def write_submission(sample_path, predictions):
    SUBMISSION_DIR.mkdir(parents=True, exist_ok=True)
    out_path = SUBMISSION_DIR / "submission.csv"
    rows = 0
    with open(sample_path, newline="") as source, open(out_path, "w", newline="") as out:
        reader = csv.reader(source)
        writer = csv.writer(out)
        header = next(reader)
        writer.writerow(header)
        for row in reader:
            writer.writerow([row[0]] + [predictions.get(column, value) for column, value in zip(header[1:], row[1:])])
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
    sample_path = DATA_DIR / "sample_submission.csv"
    if not sample_path.is_file():
        say(f"no sample_submission.csv in {DATA_DIR}: nothing to submit")
        return 1
    with open(sample_path, newline="") as source:
        header = next(csv.reader(source))
    predictions = train(header[1:], deadline=STARTED + TIME_LIMIT / 2)
    path = write_submission(sample_path, predictions)
    check_format(path)
    save_code()
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
