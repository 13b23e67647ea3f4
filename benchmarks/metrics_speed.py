"""Our hand-written metrics against scikit-learn's, at the real test-set sizes of the competitions using them.

    .venv/bin/python benchmarks/metrics_speed.py [--quick] [--repeats 15] [--metric roc_auc_score ...]

For each metric that the graders compute themselves although MLE-bench calls scikit-learn for it (ROC AUC
and its curve, log loss, accuracy, macro and micro F1, pixel F-beta, sample Jaccard, quadratic kappa,
Matthews correlation, RMSE, RMSLE, MAE, LRAP, average precision), it draws synthetic inputs of every size
that occurs in the shipped registry (``competitions/data/mlebench-v1``: the competitions whose grader uses
the metric, with their ``answers_rows_estimate``, and the classes or pixels per row where the metric takes
a matrix) and times the metric step alone, ours and scikit-learn's on the same arrays. Reading, validation
and id pairing are not timed: the graders keep them whichever side computes the number (they produce
MLE-bench's invalid/valid verdicts and our error messages). Each timing is the best of ``--repeats`` runs
(``time.perf_counter``) after one warm-up run, with the median in brackets as the spread. The two results
are compared as well; a line starting with ``!`` reports a difference above 1e-9.

The rule: ours is kept where it is *measurably faster*, i.e. at least 10% faster than scikit-learn's
(ratio sklearn/ours >= 1.10) at the metric's largest real size, or where a documented MLE-bench quirk
needs it; otherwise the verdict is "switch" (call scikit-learn). ``--quick`` caps every size at 20,000
rows (and 1,000,000 pixels) and runs 3 repeats: a smoke test, not a verdict.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FASTER = 1.10  # sklearn time / our time at the largest real size, at or above which ours is kept
QUICK_ROWS = 20_000


@dataclass(frozen=True)
class Size:
    rows: int  # the competition's answers_rows_estimate (or the scored rows, see ``note``)
    competitions: tuple[str, ...]
    width: int = 1  # classes or columns per row, where the metric takes a matrix


@dataclass(frozen=True)
class Metric:
    name: str  # scikit-learn's function
    graders: tuple[str, ...]
    ours: str  # where ours lives
    make: Callable[[np.random.Generator, Size], tuple]
    run_ours: Callable[..., float]
    run_sklearn: Callable[..., float]
    width: Callable[[dict], int] = lambda params: 1
    quirk: str = ""  # a documented reason to keep ours whatever the timing
    note: str = ""
    repeats: int | None = None  # at most this many, where one run takes seconds


# ---------------------------------------------------------------------------------------------------
# Inputs


def _scores(rng, n):
    return rng.random(n)


def _binary(rng, n, rate=0.3):
    y = (rng.random(n) < rate).astype(np.int64)
    y[0], y[-1] = 0, 1
    return y


def _roc_inputs(rng, size):
    y = _binary(rng, size.rows)
    return y == 1, np.clip(y * 0.3 + _scores(rng, size.rows), 0, 1)


def _log_loss_inputs(rng, size):
    n, k = size.rows, max(size.width, 2)
    labels = rng.integers(0, k, n)
    labels[:k] = np.arange(k)
    p = rng.dirichlet(np.ones(k), n)
    one_hot = np.eye(k, dtype=np.int64)[labels]
    if size.width == 1:  # binary: one probability column, 1-D labels
        return one_hot, p, labels, p[:, 1]
    return one_hot, p, one_hot, p


def _class_labels(rng, size, classes, hit_rate=0.7):
    truth = rng.integers(0, classes, size.rows)
    truth[: min(classes, size.rows)] = np.arange(min(classes, size.rows))
    guess = np.where(rng.random(size.rows) < hit_rate, truth, rng.integers(0, classes, size.rows))
    return truth, guess


def _regression_inputs(rng, size):
    truth = rng.random(size.rows) * 100
    return truth, truth + rng.normal(0, 5, size.rows)


def _non_negative_inputs(rng, size):
    truth, predicted = _regression_inputs(rng, size)
    return truth, np.abs(predicted)


def _grouped_inputs(rng, size):
    truth, predicted = _regression_inputs(rng, size)
    return truth, predicted, rng.integers(0, 8, size.rows)  # champs: 8 coupling types


def _multilabel_text_inputs(rng, size):
    vocabulary = np.array([f"t{i}" for i in range(max(50, size.rows // 15))], dtype=object)
    pick = lambda: " ".join(vocabulary[rng.integers(0, len(vocabulary), rng.integers(1, 5))])  # noqa: E731
    actual = pd.Series([pick() for _ in range(size.rows)], dtype="str")
    predicted = pd.Series([pick() for _ in range(size.rows)], dtype="str")
    return predicted, actual


def _lrap_inputs(rng, size):
    truth = rng.random((size.rows, size.width)) < 1.5 / size.width
    truth[np.arange(size.rows), rng.integers(0, size.width, size.rows)] = True
    return truth, rng.random((size.rows, size.width))


def _ap_inputs(rng, size):
    y = _binary(rng, size.rows, rate=0.5).astype(np.float64)
    scores = np.where(rng.random(size.rows) < 0.2, 0.0, rng.random(size.rows))  # missed boxes score 0
    return y, scores


def _text_inputs(rng, size):
    words = np.array(["the", "of", "twenty three", "Mr.", "sil", "<self>", "1 9 8 5", "é", "один"], dtype=object)
    truth = words[rng.integers(0, len(words), size.rows)]
    guess = np.where(rng.random(size.rows) < 0.9, truth, words[rng.integers(0, len(words), size.rows)])
    return pd.Series(truth, dtype="str"), pd.Series(guess, dtype="str")


def _mask_inputs(rng, size):
    """A predicted and a true mask of ``size.width`` pixels, as the parsed runs both sides start from."""
    from grading.engine.graders.segmentation.rle import Runs

    def runs(n_runs):
        edges = np.sort(rng.choice(size.width, 2 * n_runs, replace=False))
        return edges[0::2], edges[1::2]

    made = []
    for n_runs in (4_000, 5_000):  # ink strokes: a few thousand runs per fragment
        starts, ends = runs(n_runs)
        made.append(Runs(np.array([0, n_runs], dtype=np.int64), starts.astype(np.int64), ends.astype(np.int64)))
    return made[0], made[1], np.array([size.width], dtype=np.int64)


def _word_set_inputs(rng, size):
    words = [f"w{i}" for i in range(300)]
    pick = lambda: " ".join(rng.choice(words, rng.integers(0, 6)))  # noqa: E731
    return [pick() for _ in range(size.rows)], [pick() for _ in range(size.rows)]


# ---------------------------------------------------------------------------------------------------
# The two sides of each metric


def _metrics() -> list[Metric]:
    from sklearn import metrics as skm
    from sklearn.preprocessing import MultiLabelBinarizer

    from grading.engine.graders import accuracy, f1_macro, kappa, log_loss
    from grading.engine.graders.correlation import matthews_corrcoef
    from grading.engine.graders.detection.pooled import average_precision
    from grading.engine.graders.ids import Pairing
    from grading.engine.graders.ranking.map_at_k import label_weighted_lrap
    from grading.engine.graders.ranking.multilabel_f1 import micro_f1
    from grading.engine.graders.regression.error import rmse
    from grading.engine.graders.roc_auc import binary_roc_auc, roc_curve_points
    from grading.engine.graders.segmentation.rle import intersections

    def grouped_ours(truth, predicted, groups):
        by_group = np.argsort(groups, kind="stable")
        errors = np.abs(predicted - truth)[by_group]
        bounds = np.concatenate([[0], np.cumsum(np.bincount(groups))])
        return float(np.mean([np.log(max(float(np.average(errors[a:b])), 1e-9)) for a, b in zip(bounds, bounds[1:])]))

    def grouped_sklearn(truth, predicted, groups):
        logs = [
            np.log(max(skm.mean_absolute_error(truth[groups == g], predicted[groups == g]), 1e-9)) for g in range(8)
        ]
        return float(np.mean(logs))

    def micro_f1_sklearn(predicted, actual):
        binarizer = MultiLabelBinarizer(sparse_output=True)
        y_true = binarizer.fit_transform([cell.split() for cell in actual.tolist()])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown predicted labels are dropped, with a warning
            y_pred = binarizer.transform([cell.split() for cell in predicted.tolist()])
        return skm.f1_score(y_true, y_pred, average="micro")

    def roc_curve_sklearn(positive, scores):
        fpr, tpr, _ = skm.roc_curve(positive, scores)
        return float(fpr.sum() + tpr.sum())

    def roc_curve_ours(positive, scores):
        fpr, tpr = roc_curve_points(positive, scores)
        return float(fpr.sum() + tpr.sum())

    def fbeta_ours(predicted, truth, sizes, beta=0.5):
        hits, actual, guessed = intersections(predicted, truth, sizes)[0], truth.areas()[0], predicted.areas()[0]
        return (1 + beta * beta) * hits / (beta * beta * actual + guessed)

    def fbeta_sklearn(predicted, truth, sizes):
        def dense(runs):
            mask = np.zeros(int(sizes[0]), dtype=np.uint8)
            for start, end in zip(runs.starts.tolist(), runs.ends.tolist()):
                mask[start:end] = 1
            return mask

        return skm.fbeta_score(dense(truth), dense(predicted), beta=0.5)

    def jaccard_ours(predicted, truth):
        scores = []
        for mine, theirs in zip(predicted, truth):
            mine, theirs = set(mine.lower().split()), set(theirs.lower().split())
            union = len(mine | theirs)
            scores.append(len(mine & theirs) / union if union else 0.0)
        return float(np.mean(scores))

    def jaccard_sklearn(predicted, truth):
        y_true = [set(t.lower().split()) for t in truth]
        y_pred = [set(p.lower().split()) for p in predicted]
        binarizer = MultiLabelBinarizer().fit(y_true + y_pred)
        return skm.jaccard_score(binarizer.transform(y_true), binarizer.transform(y_pred), average="samples")

    identity = Pairing(None, None)
    rmsle_ours = lambda t, p: rmse(np.log1p(t), np.log1p(p))  # noqa: E731
    return [
        Metric(
            "roc_auc_score",
            ("roc_auc", "roc_auc_columnwise", "jigsaw_bias_auc"),
            "roc_auc.binary_roc_auc",
            _roc_inputs,
            binary_roc_auc,
            skm.roc_auc_score,
            note="one call per scored column (roc_auc_columnwise); jigsaw_bias_auc makes 28 calls, the largest "
            "on every row",
        ),
        Metric(
            "roc_curve",
            ("weighted_roc_auc",),
            "roc_auc.roc_curve_points",
            _roc_inputs,
            roc_curve_ours,
            roc_curve_sklearn,
        ),
        Metric(
            "log_loss",
            ("log_loss_binary", "log_loss_multiclass"),
            "log_loss._loss",
            _log_loss_inputs,
            lambda truth, p, _labels, _p: log_loss._loss(truth, p),
            lambda _truth, _p, labels, p: skm.log_loss(labels, y_proba=p),
            width=lambda params: len(params.get("class_columns", ())) or 1,
            note="rows x classes",
        ),
        Metric(
            "accuracy_score",
            ("accuracy[labels]", "top1_error"),
            "accuracy.grade (np.average of ==)",
            lambda rng, size: _class_labels(rng, size, 5_000),
            lambda truth, guess: float(np.average(truth == guess)),
            skm.accuracy_score,
        ),
        Metric(
            "accuracy_score (text)",
            ("accuracy[strings]",),
            "accuracy._equal_as_text",
            _text_inputs,
            lambda truth, guess: float(np.average(accuracy._equal_as_text(guess, truth, identity))),
            lambda truth, guess: skm.accuracy_score(
                truth.astype(str).to_numpy(object), guess.astype(str).to_numpy(object)
            ),
        ),
        Metric(
            "f1_score(macro)",
            ("f1_macro",),
            "f1_macro.macro_f1",
            lambda rng, size: _class_labels(rng, size, max(10, size.rows // 7), hit_rate=0.5),
            f1_macro.macro_f1,
            lambda t, p: skm.f1_score(t, p, average="macro"),
            note="classes ~ rows / 7 (herbarium 2021: 64,500 classes)",
        ),
        Metric(
            "f1_score(micro) multilabel",
            ("f1_micro_multilabel",),
            "multilabel_f1.micro_f1",
            _multilabel_text_inputs,
            lambda predicted, actual: micro_f1(predicted, actual, answer_of_row=np.arange(len(actual))),
            micro_f1_sklearn,
            quirk="answers with one distinct label: ours keeps the label F1 where MultiLabelBinarizer + f1_score "
            "would micro-average a binary target (multilabel_f1.py, documented departure)",
            note="text cells split into sets, timed from the text",
        ),
        Metric(
            "cohen_kappa_score(quadratic)",
            ("quadratic_weighted_kappa",),
            "kappa.quadratic_weighted_kappa",
            lambda rng, size: tuple(x.astype(np.float64) for x in _class_labels(rng, size, 6)),
            kappa.quadratic_weighted_kappa,
            lambda a, b: skm.cohen_kappa_score(a, b, weights="quadratic"),
        ),
        Metric(
            "matthews_corrcoef",
            ("matthews_corrcoef",),
            "correlation.matthews_corrcoef",
            lambda rng, size: tuple(x.astype(np.float64) for x in _class_labels(rng, size, 2)),
            matthews_corrcoef,
            skm.matthews_corrcoef,
        ),
        Metric(
            "root_mean_squared_error",
            ("rmse", "mcrmse"),
            "regression.error.rmse",
            _regression_inputs,
            rmse,
            skm.root_mean_squared_error,
            note="mcrmse: one call per scored column",
        ),
        Metric(
            "root_mean_squared_log_error",
            ("rmsle_columnwise_mean",),
            "rmse(log1p, log1p)",
            _non_negative_inputs,
            rmsle_ours,
            skm.root_mean_squared_log_error,
            quirk="scikit-learn 1.5 refused any negative value, later versions accept > -1: refused before "
            "the metric either way",
        ),
        Metric(
            "mean_absolute_error",
            ("mae",),
            "regression.mae.grade_mae (np.average of abs)",
            _regression_inputs,
            lambda t, p: float(np.average(np.abs(p - t))),
            skm.mean_absolute_error,
        ),
        Metric(
            "mean_absolute_error per group",
            ("grouped_log_mae",),
            "regression.mae.grade_grouped_log_mae",
            _grouped_inputs,
            grouped_ours,
            grouped_sklearn,
            note="8 groups, log of each group's MAE",
        ),
        Metric(
            "label_ranking_average_precision_score",
            ("lwlrap",),
            "ranking.map_at_k.label_weighted_lrap",
            _lrap_inputs,
            label_weighted_lrap,
            lambda t, s: skm.label_ranking_average_precision_score(t, s, sample_weight=t.sum(axis=1)),
            width=lambda params: len(params.get("class_columns", ())) or 1,
            note="rows x classes",
        ),
        Metric(
            "average_precision_score",
            ("siim_covid_map",),
            "detection.pooled.average_precision",
            _ap_inputs,
            average_precision,
            skm.average_precision_score,
            note="one call per class over ~rows (box, score) pairs",
        ),
        Metric(
            "fbeta_score(beta=0.5) over pixels",
            ("rle_fbeta",),
            "segmentation rle_fbeta (rle.intersections)",
            _mask_inputs,
            fbeta_ours,
            fbeta_sklearn,
            width=lambda params: 7_600 * 5_200,  # the test fragment, ~7.6k x 5.2k pixels
            note="rows x pixels; scikit-learn needs the masks drawn (timed), ours counts on the runs",
            repeats=3,
        ),
        Metric(
            "jaccard_score(samples)",
            ("word_jaccard[zero]",),
            "text_match.grade_word_jaccard (its loop)",
            _word_set_inputs,
            jaccard_ours,
            jaccard_sklearn,
            note="chaii's reference calls scikit-learn; tweet-sentiment's is Kaggle's loop, not timed",
        ),
    ]


# ---------------------------------------------------------------------------------------------------
# Registry sizes and timing


_VARIANTS = {"accuracy": ("compare", "labels"), "word_jaccard": ("both_empty", "invalid")}


def real_sizes(metric: Metric, registry) -> list[Size]:
    by_rows: dict[tuple[int, int], list[str]] = {}
    for competition in registry:
        grader = competition.grader_name
        names = {grader}
        if grader in _VARIANTS:  # e.g. accuracy[strings]: the graders whose parameter picks the computation
            parameter, default = _VARIANTS[grader]
            names = {f"{grader}[{competition.grader_params.get(parameter, default)}]"}
        if not names & set(metric.graders) or not competition.answers_rows_estimate:
            continue
        key = (int(competition.answers_rows_estimate), metric.width(competition.grader_params))
        by_rows.setdefault(key, []).append(competition.slug)
    return [Size(rows, tuple(sorted(c)), width) for (rows, width), c in sorted(by_rows.items(), key=_cells)]


def _cells(item) -> int:
    (rows, width), _ = item
    return rows * width


def best_and_median(fn: Callable[[], float], repeats: int) -> tuple[float, float, float]:
    value = fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3, statistics.median(times) * 1e3, value


def measure(metric: Metric, size: Size, repeats: int) -> dict:
    inputs = metric.make(np.random.default_rng(size.rows), size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_best, ours_median, ours_value = best_and_median(lambda: metric.run_ours(*inputs), repeats)
        sk_best, sk_median, sk_value = best_and_median(lambda: metric.run_sklearn(*inputs), repeats)
    return {
        "ours": (ours_best, ours_median),
        "sklearn": (sk_best, sk_median),
        "ratio": sk_best / ours_best,
        "diff": abs(float(ours_value) - float(sk_value)),
    }


def verdict(metric: Metric, ratio: float) -> str:
    if ratio >= FASTER:
        return "keep ours"
    return "keep ours (quirk)" if metric.quirk else "switch"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"sizes capped at {QUICK_ROWS:,} rows, 3 repeats")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--metric", action="append", help="only these metrics (scikit-learn names), repeatable")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats

    from competitions.shipped import read_benchmark

    registry = read_benchmark().competitions
    header = (
        f"{'metric (scikit-learn)':38} {'rows':>11} {'ours ms':>17} {'sklearn ms':>17} {'ratio':>6}  "
        f"{'verdict':18} competitions"
    )
    print(f"best of {repeats} after a warm-up (median in brackets); ratio = sklearn / ours; keep ours at >= {FASTER}")
    print(header)
    print("-" * len(header))
    summary = []
    for metric in _metrics():
        if args.metric and metric.name not in args.metric:
            continue
        sizes = real_sizes(metric, registry)
        for k, size in enumerate(sizes):
            rows = min(size.rows, QUICK_ROWS) if args.quick else size.rows
            width = min(size.width, QUICK_ROWS * 50) if args.quick else size.width
            times = min(repeats, metric.repeats or repeats)
            measured = measure(metric, Size(rows, size.competitions, width), times)
            if measured["diff"] > 1e-9:
                print(f"  ! {metric.name} at {rows} rows: ours and scikit-learn differ by {measured['diff']:.3g}")
            largest = k == len(sizes) - 1
            decision = verdict(metric, measured["ratio"]) if largest else ""
            shape = f"{rows:,}" + (f"x{width:,}" if width > 1 else "")
            ours, sk = measured["ours"], measured["sklearn"]
            print(
                f"{metric.name if k == 0 else '':38} {shape:>11} {ours[0]:8.3f} ({ours[1]:6.3f}) "
                f"{sk[0]:8.3f} ({sk[1]:6.3f}) {measured['ratio']:6.2f}  {decision:18} {', '.join(size.competitions)}"
            )
            if largest:
                summary.append((metric, measured["ratio"], decision))
    print()
    for metric, ratio, decision in summary:
        why = f"  [{metric.quirk}]" if decision.endswith("(quirk)") else ""
        notes = f" ({metric.note})" if metric.note else ""
        print(
            f"{metric.name:38} {decision:18} {ratio:6.2f}  ours: {metric.ours}; graders {', '.join(metric.graders)}"
            f"{notes}{why}"
        )


if __name__ == "__main__":
    main()
