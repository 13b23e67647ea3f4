"""How long a maintainer needs to judge a flagged entry: what the review pages make them read and click, and
the server's time per page, measured in Chromium through Playwright.

    .venv/bin/python benchmarks/review_time.py [--root DIR] [--keep] [--repeat 20]

Needs PostgreSQL (127.0.0.1:5432, user postgres) and Redis (127.0.0.1:6379), as scripts/test starts them, and
Debian's Chromium. It creates the database portal_bench_review afresh (dropped at the end unless --keep), uses
Redis db 13 and a temporary PORTAL_DATA_DIR, and serves with DEBUG off (gunicorn, static files collected).
``--root`` measures another checkout of the portal (its own code and .venv; e.g. the main branch before a change)
with this same script.

The flagged entries are made through the real path: Lite packs and simulated run groups of competitions.demo
(as the tests' fixtures make them), packed as bundles, uploaded with grading.services.intake.submission_create,
validated, every run graded and the entry checked by the pipeline's own services (called in this process in
the order the queue would run them, not through Celery). Three entries, each of another team:

- leaky: one run's log shows a scoring endpoint's answer (a private score, a medal), one line 3,000 characters
  long; test_set_feedback flags it (blocking);
- copy: one scored file is the private answers, columns reordered and rows shuffled; answer_copy (blocking);
- api: one run's code calls OpenAI's API, which the manifest does not declare; rule_violation (blocking).

Then, as a maintainer in Chromium: open the queue, open the first entry listed (it must be blocking), and for
each entry (taken from the queue in its order) count what must be read before each decision form: the words and
lines rendered (innerText: what a closed <details> holds is not counted, as it is not on screen until opened)
of each undecided flag's section without its form, and of the page above the first flag; count the clicks
(open the entry; per flag: choose a decision, send it; typing the reason is counted apart, in words) and decide
every flag (accept, with a reason). Server time per page is measured twice: in the browser (the navigation's
time to first byte, localhost) and in-process with django.test.Client (--repeat requests of the queue and of each
review page, median and p95).

The estimate of a maintainer's time adds reading at 238 words a minute (the mean silent reading rate for
non-fiction, Brysbaert 2019), one second per click, a reason (REASON, 11 words) typed at 40 words a minute per
decision, and the server's time; once deciding each flag, once deciding the whole entry (one choice, one
reason). It does not measure judgment: how long a person thinks about what they read, whether they open the
context or the JSON, or read the runs' table below the flags (not counted: the decision does not need it).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DB = "portal_bench_review"
REDIS_DB = 13
READING_WPM = 238
TYPING_WPM = 40
REASON = "Validation score only, not the test set; checked against the code."
SECONDS_PER_CLICK = 1.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="the checkout")
    parser.add_argument("--repeat", type=int, default=20, help="in-process requests per page for server time")
    parser.add_argument("--keep", action="store_true", help="keep the database and the data folder")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--screenshots", type=Path, help="save the queue and each review page (before deciding) here")
    return parser.parse_args()


ARGS = parse_args()
ROOT = ARGS.root.resolve()
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)  # the checking step's child processes import the portal from the working folder


def psql(*sql: str) -> None:
    for statement in sql:
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-q", "-v", "ON_ERROR_STOP=1"]
            + ["-c", statement],
            check=True,
            capture_output=True,
        )


def configure(data_dir: Path) -> dict[str, str]:
    env = {
        "DATABASE_URL": f"postgresql://postgres@127.0.0.1:5432/{DB}",
        "REDIS_URL": f"redis://127.0.0.1:6379/{REDIS_DB}",
        "PORTAL_DATA_DIR": str(data_dir),
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
    }
    os.environ.update(env)
    return env


# --- the flagged entries, through the real upload, grading and checking path ---------------------------------


def run_inline() -> list[tuple[str, int]]:
    """The queue's messages, kept to be run here in order instead of sent to Celery."""
    from django.db import transaction

    from grading import queue

    pending: list[tuple[str, int]] = []
    queue.validate_after_commit = lambda *, submission_id: transaction.on_commit(  # type: ignore[assignment]
        lambda: pending.append(("validate", submission_id))
    )
    queue.finish_after_commit = lambda *, submission_id: transaction.on_commit(  # type: ignore[assignment]
        lambda: pending.append(("finish", submission_id))
    )
    queue.grade_now = lambda *, run_ids: pending.extend(("grade", pk) for pk in run_ids)  # type: ignore[assignment]
    queue.validate_now = lambda *, submission_id: pending.append(("validate", submission_id))  # type: ignore[assignment]
    queue.finish_now = lambda *, submission_id: pending.append(("finish", submission_id))  # type: ignore[assignment]
    return pending


def drain(pending: list[tuple[str, int]]) -> None:
    from grading.services import finish, pipeline

    steps = {
        "validate": lambda pk: pipeline.submission_validate(submission_id=pk),
        "grade": lambda pk: pipeline.run_grade(run_id=pk),
        "finish": lambda pk: finish.submission_finish(submission_id=pk),
    }
    while pending:
        kind, pk = pending.pop(0)
        steps[kind](pk)


def build_entries(work: Path) -> dict[str, int]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from competitions.demo.csvio import write_csv
    from competitions.demo.packs import make_demo_pack
    from competitions.demo.runs import default_manifest, pack_answers, run_id_for, write_run_bundle, write_run_group
    from competitions.demo.specs import spec_for
    from competitions.pack_services import pack_import
    from grading.models import Submission
    from grading.services.intake import submission_create
    from portal.accounts import services

    packs = work / "packs"
    make_demo_pack(out_dir=packs, split="low", size="small", seed=0, n_teams=80)
    pack_import(path=packs)
    answers = pack_answers(packs)
    pending = run_inline()
    made: dict[str, int] = {}
    text = "text-normalization-challenge-english-language"
    spooky = "spooky-author-identification"
    for index, (name, quality) in enumerate((("leaky", 0.9), ("copy", 0.8), ("api", 0.7))):
        user = services.user_ensure(username=f"{name}-author", email=f"{name}@example.org")
        team = services.team_create(user=user, name=f"Team {name}")
        group = write_run_group(out_dir=work / name, seeds=(0, 1, 2), quality=quality, answers=answers, agent=name)
        for run_dir in group.iterdir():  # each team's own code: no near-identical code across teams
            if (run_dir / "code").is_dir():
                (run_dir / "code" / "solution.py").write_text(
                    f'"""{name}: {run_dir.name}"""\nimport pandas as pd\n\n'
                    + "\n".join(f"FEATURE_{i}_{name.upper()} = {i * (index + 3)}" for i in range(8))
                    + "\n"
                )
        if name == "leaky":
            log = group / run_id_for(competition_id=spooky, seed=1) / "run.log"
            log.write_text(
                log.read_text()
                + "[2024-08-01 10:30:00] POST https://kaggle-proxy.example.org/score submission.csv\n"
                + '[2024-08-01 10:30:02] response: {"private_score": 0.41, "medal": "silver", "rank": 12}\n'
                + "[2024-08-01 10:31:00] progress "
                + "=" * 1500
                + " leaderboard rank 12 of 1200 "
                + "=" * 1500
                + "\n[2024-08-01 10:32:00] tuning again\n"
            )
        if name == "copy":
            path = group / run_id_for(competition_id=text, seed=0) / "submission" / "submission.csv"
            columns = list(reversed(spec_for(text).public_columns))
            write_csv(answers(text)[columns].sample(frac=1.0, random_state=0), path, quoting=spec_for(text).csv_quoting)
        if name == "api":
            code = group / run_id_for(competition_id=spooky, seed=0) / "code" / "llm.py"
            code.write_text("import os\nfrom openai import OpenAI\nclient = OpenAI()\n")
        manifest = default_manifest()
        manifest["agent"] = {**manifest["agent"], "name": f"{name}-agent"}
        bundle = write_run_bundle(run_group=group, out_path=work / f"{name}.tar.gz", manifest=manifest)
        upload = SimpleUploadedFile(bundle.name, bundle.read_bytes())
        submission = submission_create(team=team, user=user, upload=upload)
        drain(pending)
        submission.refresh_from_db()
        made[name] = submission.pk
        flags = list(submission.flags.values_list("severity", "code", "key"))
        print(f"  {name}: submission {submission.pk} {submission.status}; flags {flags}", flush=True)
        assert submission.status == Submission.Status.IN_REVIEW, f"{name} is {submission.status}, not in review"
    return made


# --- the server and the browser ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict[str, str], port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "portal.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("gunicorn did not start")


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    raise SystemExit("Chromium is not installed (apt-get install chromium)")


def ttfb(response) -> float:
    timing = response.request.timing
    return timing["responseStart"] - timing["requestStart"]


READ_JS = """() => {
  const words = t => t.split(/\\s+/).filter(Boolean).length;
  const lines = t => t.split('\\n').filter(l => l.trim()).length;
  const flags = [...document.querySelectorAll('section.flag')].filter(
    s => s.querySelector('form') && !s.querySelector('.decided'));
  const out = flags.map(s => {
    const form = s.querySelector('form').innerText;
    const all = s.innerText;
    const text = all.replace(form, '');
    return {code: s.dataset.code, words: words(text), lines: lines(text)};
  });
  const main = document.querySelector('main') || document.body;
  const first = document.querySelector('section.flag');
  let above = '';
  if (first) { const r = document.createRange(); r.setStartBefore(main.firstChild); r.setEndBefore(first);
    const div = document.createElement('div'); div.appendChild(r.cloneContents()); above = div.innerText; }
  return {flags: out, above_words: words(above), above_lines: lines(above)};
}"""


def judge_in_browser(base: str) -> dict:
    from playwright.sync_api import sync_playwright

    figures: dict = {"entries": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(base_url=base, viewport={"width": 1366, "height": 768}).new_page()
        page.set_default_timeout(20000)
        page.goto("/accounts/login/")
        page.fill("input[name=login]", "maya@example.org")
        page.fill("input[name=password]", "maya-password-1")
        page.locator("form button[type=submit]").last.click()
        page.wait_for_load_state()
        response = page.goto("/review/")
        assert response is not None
        figures["queue_ttfb_ms"] = ttfb(response)
        sections = page.locator("#queue section.queue-entry")
        links = [sections.nth(i).locator("a[href*='/review/submissions/']").first for i in range(sections.count())]
        hrefs = [href.split("#")[0] for link in links if (href := link.get_attribute("href"))]
        first_text = page.locator("#queue section.queue-entry").first.inner_text()
        figures["first_listed_is_blocking"] = "blocking" in first_text
        figures["queue_words"] = len(page.locator("#queue").inner_text().split())
        if ARGS.screenshots:
            ARGS.screenshots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARGS.screenshots / "queue.png"))
        for number, href in enumerate(dict.fromkeys(hrefs)):
            if number == 0:
                with page.expect_navigation() as nav:
                    links[0].click()
                response = nav.value
            else:
                response = page.goto(href)
            assert response is not None
            entry: dict[str, Any] = {"href": href, "ttfb_ms": [ttfb(response)], "clicks": 1, "flags": []}
            read = page.evaluate(READ_JS)
            entry["whole_entry_form"] = page.locator("#decide-entry").count() == 1
            if ARGS.screenshots:
                page.screenshot(path=str(ARGS.screenshots / f"review-{number + 1}.png"))  # what is above the fold
                first_flag = page.locator("section.flag").first
                if first_flag.count():
                    first_flag.screenshot(path=str(ARGS.screenshots / f"review-{number + 1}-first-flag.png"))
            entry["above_words"], entry["above_lines"] = read["above_words"], read["above_lines"]
            entry["flags"] = read["flags"]
            undecided = page.locator("section.flag:not(:has(.decided)) form")
            for _ in range(len(entry["flags"])):
                form = undecided.first
                radio = form.locator("input[type=radio][value=accept]")
                if radio.count():
                    radio.check()
                else:  # a checkout whose form is a select (preset to accept): one click to check it
                    form.locator("select").select_option("accept")
                form.locator("textarea").fill(REASON)
                with page.expect_navigation() as nav:
                    form.locator("button[type=submit]").click()
                entry["clicks"] += 2
                entry["ttfb_ms"].append(ttfb(nav.value))
            figures["entries"].append(entry)
        browser.close()
    return figures


def server_times(urls: list[str], repeat: int) -> dict[str, dict[str, float]]:
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.get(username="maya"))
    found = {}
    for url in urls:
        client.get(url)  # warm
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        times.sort()
        found[url] = {"median": statistics.median(times), "p95": times[min(len(times) - 1, int(0.95 * len(times)))]}
    return found


def main() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="portal-bench-review-"))
    env = configure(data_dir)
    print(f"review_time: checkout {ROOT}; database {DB}, Redis db {REDIS_DB}, DEBUG off", flush=True)
    psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)", f"CREATE DATABASE {DB}")
    subprocess.run(["redis-cli", "-n", str(REDIS_DB), "flushdb"], check=True, capture_output=True)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # the teams' mail is not measured

    server = None
    try:
        started = time.perf_counter()
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        from competitions.services import competitions_load
        from portal.accounts import services

        competitions_load()
        maya = services.user_ensure(username="maya", email="maya@example.org")
        maya.set_password("maya-password-1")
        maya.save()
        services.maintainer_grant(user=maya)
        made = build_entries(data_dir / "work")
        print(f"  entries built through upload, grading and checks in {time.perf_counter() - started:.0f} s")
        from grading.models import Flag

        waiting = {
            pk: list(Flag.objects.filter(submission_id=pk, decision="", severity__in=("blocking", "warning")))
            for pk in made.values()
        }
        urls = ["/review/", *(f"/review/submissions/{pk}/" for pk in made.values())]
        server_ms = server_times(urls, ARGS.repeat)
        port = free_port()
        server = start_server(env, port)
        browser = judge_in_browser(f"http://127.0.0.1:{port}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
        from django.db import connections

        connections.close_all()
        if not ARGS.keep:
            psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            shutil.rmtree(data_dir, ignore_errors=True)

    print(
        f"\nqueue: first listed entry blocking: {browser['first_listed_is_blocking']}; "
        f"{browser['queue_words']} words; server {server_ms['/review/']['median']:.0f} ms median, "
        f"{server_ms['/review/']['p95']:.0f} ms p95 (in-process), {browser['queue_ttfb_ms']:.0f} ms to first byte"
    )
    per_entry = []
    reason_words = len(REASON.split())
    for entry in browser["entries"]:
        pk = int(entry["href"].rstrip("/").rsplit("/", 1)[1])
        words = entry["above_words"] + sum(flag["words"] for flag in entry["flags"])
        lines = entry["above_lines"] + sum(flag["lines"] for flag in entry["flags"])
        decisions = len(entry["flags"])
        server_s = server_ms[f"/review/submissions/{pk}/"]["median"] / 1000 * (1 + decisions)
        reading = words / READING_WPM * 60
        typing = decisions * reason_words / TYPING_WPM * 60
        clicks = entry["clicks"]
        estimate = reading + typing + clicks * SECONDS_PER_CLICK + server_s
        per_flag = estimate / max(1, decisions)
        # The same reading, then one decision on the whole entry (one choice, one reason, one send).
        whole = reading + reason_words / TYPING_WPM * 60 + 3 * SECONDS_PER_CLICK + 2 * server_s / (1 + decisions)
        per_entry.append(
            {
                "submission": pk,
                "words": words,
                "lines": lines,
                "flags": decisions,
                "clicks": clicks,
                "reading_s": reading,
                "typing_s": typing,
                "server_s": server_s,
                "estimate_s": estimate,
                "per_flag_s": per_flag,
                "whole_entry_s": whole if entry["whole_entry_form"] else None,
                "codes": [f["code"] for f in entry["flags"]],
                "flag_words": [f["words"] for f in entry["flags"]],
                "ttfb_ms": entry["ttfb_ms"],
                "open_flags": len(waiting.get(pk, [])),
            }
        )
        print(
            f"submission {pk}: {decisions} flag(s) to decide ({', '.join(f['code'] for f in entry['flags'])}); "
            f"read {words} words on {lines} lines (page top {entry['above_words']}, per flag "
            f"{[f['words'] for f in entry['flags']]}); {clicks} clicks; reasons {decisions * reason_words} words; "
            f"server {server_ms[f'/review/submissions/{pk}/']['median']:.0f} ms median / "
            f"{server_ms[f'/review/submissions/{pk}/']['p95']:.0f} ms p95 per page, to first byte "
            f"{', '.join(f'{t:.0f}' for t in entry['ttfb_ms'])} ms"
        )
        print(
            f"  estimate: reading {reading:.0f} s + typing {typing:.0f} s + clicks {clicks * SECONDS_PER_CLICK:.0f} s"
            f" + server {server_s:.1f} s = {estimate:.0f} s for the entry deciding each flag ({per_flag:.0f} s a flag)"
            + (f"; {whole:.0f} s deciding the whole entry at once" if entry["whole_entry_form"] else "")
        )
    if ARGS.json:
        ARGS.json.write_text(json.dumps({"server_ms": server_ms, "browser": browser, "entries": per_entry}, indent=2))


if __name__ == "__main__":
    main()
