"""How the board writes numbers a person reads: runtimes as durations ("1.3 s", "42 min", "3.1 h"), scores
with a few significant digits, and the medal a score earned in words."""

import html
import math
from functools import lru_cache

from django import template
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from leaderboard.levels import LEGEND
from leaderboard.read_models import RowView

register = template.Library()

MEDAL_WORDS = {
    "gold": "gold",
    "silver": "silver",
    "bronze": "bronze",
    "above_median": "above median",
    "valid": "no medal",
    "invalid": "invalid",
    "none": "no submission",
}


def _figure(value: float) -> str:
    """Two significant digits below 10, whole numbers above: 1.3, 42, 120."""
    return f"{value:.1f}" if value < 9.95 else f"{value:.0f}"


@register.filter
def duration(hours: float | None) -> str:
    """Hours as the unit a person reads: "1.3 s", "42 min", "3.1 h", "2.5 days"; "?" when unknown."""
    if hours is None or not isinstance(hours, (int, float)) or not math.isfinite(hours) or hours < 0:
        return "?"
    seconds = hours * 3600
    if seconds == 0:
        return "0 s"
    if seconds < 0.05:
        return "< 0.1 s"
    if seconds < 59.5:
        return f"{_figure(seconds)} s"
    if seconds < 3570:
        return f"{_figure(seconds / 60)} min"
    if hours < 99.95:
        return f"{hours:.1f}".removesuffix(".0") + " h"  # "23.5 h" against a 24 h budget, not "24 h"
    return f"{_figure(hours / 24)} days"


@register.filter
def score(value: object) -> str:
    """A competition's score with four significant digits ("0.8734", "1234", "1.2e-05"); "—" when none."""
    if value is None or isinstance(value, bool):
        return "—"
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e9:
        return str(int(value))
    return f"{value:.4g}"


@register.filter
def medal_words(medal: str) -> str:
    return MEDAL_WORDS.get(medal, medal.replace("_", " "))


# The text alternatives of the board's plots have a row per entry of the board (thousands of cells): made here
# rather than by the template's loops, which took most of a first render, with the same filters and escaping.


@lru_cache(maxsize=8192)
def _one_decimal(value: float, language: str | None) -> str:
    return floatformat(value, 1)  # the language is part of the key: the decimal mark is the active locale's


@register.simple_tag
def over_time_rows(points: list[dict]) -> SafeString:
    """The over-time plot's table rows: agent, date, any-medal %, SEM, board."""
    language = get_language()
    return mark_safe(
        "".join(
            f"<tr><td>{escape(p['agent'])}</td><td>{escape(p['date'])}</td>"
            f"<td>{_one_decimal(p['mean'], language)}</td><td>{_one_decimal(p['sem'], language)}</td>"
            f"<td>{'comparable' if p['comparable'] else 'non-comparable'}</td></tr>"
            for p in points
        )
    )


@register.simple_tag
def heatmap_rows(rows: list[tuple[str, list[float | None]]]) -> SafeString:
    """The medal heatmap's table rows: the competition (a link to its results), then each entry's medal share as a
    whole percentage ({% widthratio share 1 100 %} %), or a dash where the entry has no run of it."""
    return mark_safe(
        "".join(
            f'<tr><td><a href="{escape(reverse("leaderboard_competition", args=[competition]))}">{escape(competition)}'
            "</a></td>"
            + "".join("<td>—</td>" if share is None else f"<td>{round(float(share) * 100)} %</td>" for share in shares)
            + "</tr>"
            for competition, shares in rows
        )
    )


@lru_cache(maxsize=65536)
def _localized(value: object, kind: str, language: str | None) -> str:
    """What {{ value }} shows of a number, escaped (the type is part of the key: 1 and 1.0 read differently)."""
    return html.escape(str(localize(value)))


def _seed_cells(seeds: list[dict], language: str | None) -> str:
    """One entry's seeds: score and medal in words, each cell followed by a space."""
    cells = []
    for seed in seeds:
        number = _localized(seed["seed"], type(seed["seed"]).__name__, language)
        value = seed["score"]
        shown = "none" if value is None else _localized(value, type(value).__name__, language)
        words = html.escape(medal_words(seed["medal"]))
        cells.append(
            f'<span class="cell {html.escape(seed["medal"])}" title="seed {number}: score {shown}, {words}" '
            f'data-seed="{number}">'
            f'{html.escape(score(value))} <span class="medal-word">({words})</span></span> '
        )
    return "".join(cells)


@register.simple_tag
def competition_rows(rows: list[dict]) -> SafeString:
    """A competition page's table rows, an entry each (a thousand entries, three seeds each: made here rather than
    by the template's loops, with the same filters and escaping)."""
    language = get_language()
    url = reverse("leaderboard_entry", args=[0]).rsplit("0/", 1)[0] + "{}/"
    out = []
    for row in rows:
        entry = row["entry"]
        badge = ' <span class="badge">self-reported</span>' if entry.verified == "self_reported" else ""
        out.append(
            f'<tr><td><a href="{url.format(entry.pk)}">{html.escape(entry.agent)}</a> '
            f'<span class="muted">{html.escape(entry.team)}</span></td>\n'
            f"    <td>{html.escape(str(entry.get_board_display()))}{badge}</td>\n"
            f"    <td>{round(float(row['medal_share']) * 100)} %</td>\n"
            f'    <td class="seed-scores">{_seed_cells(row["seeds"], language)}</td></tr>\n  '
        )
    return mark_safe("".join(out))


def _text(value: object) -> str:
    """What {{ value }} shows of a text: escaped (numbers go through _localized)."""
    return html.escape(str(value))


def _number(value: object, language: str | None) -> str:
    return _localized(value, type(value).__name__, language)


def _yes_no(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


_LEVEL_STYLES = {"verified": "ok strong", "audited": "ok", "registered": "ok", "reported": ""}
_LEVEL_MEANINGS = dict(LEGEND)
_REGRADED = {"hosted": "✔✔ ", "regraded": "✔ "}  # how the figures were obtained: run here, re-graded here


def _level_badge(row: RowView) -> str:
    """The evidence level as a badge, marked ✔ when the figures were re-graded here (✔✔: run here), with both
    explained on hover; one badge, so that the column stays as narrow as before."""
    level = row.level if row.level in _LEVEL_STYLES else "reported"
    title = html.escape(f"{level}: {_LEVEL_MEANINGS[level]}; {row.verified_label}")
    mark = _REGRADED.get(row.verified, "")
    return (
        f'<span class="badge level {_LEVEL_STYLES[level]}" data-level="{level}" data-verified="{_text(row.verified)}"'
        f' title="{title}">{mark}{level}</span>'
    )


def _rank_cell(row: RowView, overview: bool, language: str | None) -> str:
    if row.rank:
        low, high = _number(row.rank_low, language), _number(row.rank_high, language)
        out = (
            f'<strong title="95% interval of the rank: {low}–{high} (bootstrap over seeds)">'
            f"{_number(row.rank, language)}</strong>"
        )
        if row.rank_low != row.rank_high:
            out += (
                ' <span class="muted small interval" title="95% interval of the rank (bootstrap over seeds)">'
                f"{low}–{high}</span>"
            )
        if row.tied_with:
            out += (
                f' <span class="tie" title="statistically tied with {_text(row.tied_text)}">'
                f"≈{_number(len(row.tied_with), language)}</span>"
            )
    else:
        out = '<span class="muted">—</span>'
    if overview and row.tier != "all":
        short = str(row.tier_label).replace("Low ", "").replace("(", "").replace(")", "")
        out += (
            f' <span class="badge tier" title="rank and order in {_text(row.tier_label)}: this entry has no All '
            f'figure">{_text(short)}</span>'
        )
    return out


def _agent_cell(row: RowView, language: str | None) -> str:
    out = f'<a href="{_text(row.url)}">{_text(row.agent)}</a>'
    if row.agent_version:
        out += f' <span class="muted small">{_text(row.agent_version)}</span>'
    if row.footnote_marks:
        marks = ",".join(
            f'<a href="#note-{_number(n, language)}" title="{_text(note)}">{_number(n, language)}</a>'
            for n, note in row.footnote_marks
        )
        if row.footnotes_more:
            more = _number(row.footnotes_more, language)
            plural = "" if row.footnotes_more == 1 else "s"
            marks += (
                f' <a href="{_text(row.url)}#notes" class="more-notes" title="{more} more note{plural} on the entry '
                f'page">+{more}</a>'
            )
        out += f'<sup class="marks">{marks}</sup>'
    return out


def _tier_cells(row: RowView, overview: bool, language: str | None) -> str:
    out = []
    for tier, cell in row.cells.items():
        classes = f"col-{_text(tier)} figure"
        if cell and cell.padded:
            classes += " padded"
        if overview and tier == row.tier:
            classes += " headline"
        if cell:
            shown = f'{_text(cell.text)} <span class="muted small">({_number(cell.seeds, language)})</span>'
            if cell.padded:
                shown += ' <span class="badge warn">padded</span>'
        else:
            shown = '<span class="muted" title="not run">—</span>'
        out.append(f'<td class="{classes}">{shown}</td>')
    return "".join(out)


@register.simple_tag
def board_rows(rows: list[RowView], tier: str) -> SafeString:
    """A board page's table rows (`tier` the view's tab: on the overview a row's headline tier is marked): made
    here rather than by the template's loops, which took a third of a first render, with the same filters and
    escaping ({{ value }}, |join, |default, |yesno, |pluralize, |cut, |duration)."""
    language = get_language()
    overview = tier == "overview"
    out = []
    for row in rows:
        entry = _number(row.entry_id, language)
        llms = ", ".join(_text(llm) for llm in row.llms)
        runtime = "" if row.runtime_hours is None else f'title="{_number(row.runtime_hours, language)} h"'
        if row.open_source and row.source_link:
            source = f'<a href="{_text(row.source_link)}" rel="nofollow noopener">yes</a>'
        else:
            source = _yes_no(row.open_source)
        test_set = (
            '<span class="muted" title="no test-set feedback declared or flagged">none</span>'
            if row.test_set_info == "none"
            else f'<span class="badge bad">{_text(row.test_set_info)}</span>'
        )
        padded = ' <span class="muted small">padded</span>' if row.uses == "padded" else ""
        hardware = _text(row.hardware_text)
        out.append(
            f'\n  <tr data-entry="{entry}" data-tier="{_text(row.tier)}" class="{_text(row.board)}">\n'
            f'    <td class="col-rank rank"><input type="checkbox" name="compare" value="{entry}" '
            f'aria-label="compare {_text(row.agent)}">\n'
            f"      {_rank_cell(row, overview, language)}</td>\n"
            f'    <td class="col-agent">{_agent_cell(row, language)}</td>\n'
            f'    <td class="col-team small">{_text(row.team)}</td>\n'
            f'    <td class="col-llms small" title="{llms}">{llms or "—"}</td>\n'
            f"    {_tier_cells(row, overview, language)}\n"
            f'    <td class="col-runtime" {runtime}>{_text(duration(row.runtime_hours))}</td>\n'
            f'    <td class="col-hardware small" title="{hardware}">{_text(row.hardware_text or "?")}</td>\n'
            f'    <td class="col-internet">{_yes_no(row.internet_access)}</td>\n'
            f'    <td class="col-date">{_text(row.date)}</td>\n'
            f'    <td class="col-source">{source}</td>\n'
            f'    <td class="col-benchmark">{_text(row.benchmark_version or "?")}</td>\n'
            f'    <td class="col-test_set">{test_set}</td>\n'
            f'    <td class="col-seeds">{_number(row.seeds, language)}{padded}</td>\n'
            f'    <td class="col-verified">{_level_badge(row)}</td>\n'
            "  </tr>"
        )
    return mark_safe("".join(out))
