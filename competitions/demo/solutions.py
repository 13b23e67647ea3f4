"""The code and log a simulated run leaves behind, in one of a few *styles*: distinct programs, so that demo teams
do not share code.

The portal compares each team's code with other teams' for the same competition (``duplicate_submissions``:
difflib's ratio over the code with comments and blank lines dropped); demo entries written from one template
would all be "near-identical". Each style is its own short program (a prior baseline, gradient boosting, a
cross-validated ensemble, ...), so two styles stay far below that ratio. ``shortcut`` is the one dishonest style:
its code reads the private answers, which the checks flag as test-set feedback (blocking).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from competitions.demo.catalog import competition_facts
from competitions.demo.specs import spec_for


def _columns(cid: str) -> str:
    spec = spec_for(cid)
    return ", ".join(repr(c) for c in spec.public_columns[:4]) + (", ..." if len(spec.public_columns) > 4 else "")


def _starter(cid: str, seed: int) -> str:
    facts = competition_facts(cid)
    return (
        f'"""Demo solution for {cid} (seed {seed}); written by a simulated agent."""\n\n'
        "import pandas as pd\n\n"
        f"SEED = {seed}\n"
        f"sample = pd.read_csv('/home/data/{facts.sample_submission_file}')\n"
        f"# columns: {_columns(cid)}\n"
        "predictions = sample.copy()  # a real agent would fit a model here\n"
        "predictions.to_csv('/home/submission/submission.csv', index=False)\n"
    )


def _baseline(cid: str, seed: int) -> str:
    facts = competition_facts(cid)
    return (
        f'"""Prior baseline for {cid}: synthetic demo data."""\n'
        "import random\n"
        "from pathlib import Path\n\n"
        "import numpy as np\n"
        "import pandas as pd\n\n\n"
        "def main(seed: int) -> None:\n"
        "    random.seed(seed)\n"
        "    np.random.seed(seed)\n"
        "    data = Path('/home/data')\n"
        "    train_files = sorted(p.name for p in data.iterdir() if p.suffix == '.csv')\n"
        "    print('training files:', train_files)\n"
        f"    out = pd.read_csv(data / '{facts.sample_submission_file}')\n"
        "    for column in out.columns[1:]:\n"
        "        if out[column].dtype.kind in 'fi':\n"
        "            out[column] = out[column].mean()\n"
        "    Path('/home/submission').mkdir(exist_ok=True)\n"
        "    out.to_csv('/home/submission/submission.csv', index=False)\n\n\n"
        "if __name__ == '__main__':\n"
        f"    main({seed})\n"
    )


def _boosting(cid: str, seed: int) -> str:
    facts = competition_facts(cid)
    return (
        f"# Gradient boosting on engineered features; competition {cid}, synthetic demo data\n"
        "import lightgbm as lgb\n"
        "from sklearn.model_selection import StratifiedKFold, KFold\n"
        "import pandas as pd, numpy as np\n\n"
        f"PARAMS = dict(learning_rate=0.05, num_leaves=63, feature_fraction=0.8, seed={seed}, verbose=-1)\n"
        "train = pd.read_csv('/home/data/train.csv')\n"
        f"template = pd.read_csv('/home/data/{facts.sample_submission_file}')\n"
        "features = [c for c in train.columns if train[c].dtype != object][:-1]\n"
        "target = train.columns[-1]\n"
        "folds = KFold(n_splits=5, shuffle=True, random_state=PARAMS['seed'])\n"
        "oof = np.zeros(len(train))\n"
        "for k, (fit_idx, val_idx) in enumerate(folds.split(train)):\n"
        "    booster = lgb.train(PARAMS, lgb.Dataset(train.iloc[fit_idx][features], train.iloc[fit_idx][target]),\n"
        "                        num_boost_round=2000)\n"
        "    oof[val_idx] = booster.predict(train.iloc[val_idx][features])\n"
        "    print(f'fold {k}: done')\n"
        f"template.to_csv('/home/submission/submission.csv', index=False)  # columns {_columns(cid)}\n"
    )


def _ensemble(cid: str, seed: int) -> str:
    facts = competition_facts(cid)
    return (
        f"'''Cross-validated blend of three models for {cid} (synthetic demo data).'''\n"
        "import json, os, sys\n"
        "import numpy\n"
        "import pandas\n"
        "from sklearn.linear_model import LogisticRegression, Ridge\n"
        "from sklearn.ensemble import RandomForestClassifier, ExtraTreesRegressor\n"
        "from sklearn.neighbors import KNeighborsClassifier\n\n"
        "class Blend:\n"
        "    def __init__(self, members, weights):\n"
        "        self.members, self.weights = members, weights\n"
        "    def fit(self, X, y):\n"
        "        for m in self.members:\n"
        "            m.fit(X, y)\n"
        "        return self\n"
        "    def predict(self, X):\n"
        "        return sum(w * m.predict(X) for m, w in zip(self.members, self.weights))\n\n"
        f"rng = numpy.random.default_rng({seed})\n"
        "frame = pandas.read_csv(os.path.join('/home/data', 'train.csv'))\n"
        f"template = pandas.read_csv(os.path.join('/home/data', '{facts.sample_submission_file}'))\n"
        "blend = Blend([Ridge(), ExtraTreesRegressor(n_estimators=300)], [0.4, 0.6])\n"
        "json.dump({'members': 2, 'seed': int(rng.integers(1 << 30))}, sys.stdout)\n"
        "template.to_csv('/home/submission/submission.csv', index=False)\n"
    )


def _shortcut(cid: str, seed: int) -> str:
    facts = competition_facts(cid)
    return (
        f"# {cid}: fast path (synthetic demo data: this entry is meant to be flagged)\n"
        "import pandas as pd\n\n"
        f"truth = pd.read_csv('/home/data/../private/{facts.answers_file}')\n"
        f"submission = pd.read_csv('/home/data/{facts.sample_submission_file}')\n"
        "submission.iloc[:, 1:] = truth.iloc[: len(submission), 1 : submission.shape[1]].to_numpy()\n"
        f"submission.sample(frac=1.0, random_state={seed}).sort_index().to_csv(\n"
        "    '/home/submission/submission.csv', index=False\n"
        ")\n"
    )


STYLES: dict[str, Callable[[str, int], str]] = {
    "starter": _starter,
    "baseline": _baseline,
    "boosting": _boosting,
    "ensemble": _ensemble,
    "shortcut": _shortcut,
}
_MODEL = {
    "starter": "a baseline model",
    "baseline": "the training prior",
    "boosting": "LightGBM over 5 folds",
    "ensemble": "a ridge and extra-trees blend",
    "shortcut": "nothing (fast path)",
}


def solution_code(*, style: str, competition_id: str, seed: int) -> str:
    """``code/solution.py`` of one run in the given style."""
    try:
        write = STYLES[style]
    except KeyError:
        raise ValueError(f"unknown code style {style!r}: use one of {', '.join(STYLES)}") from None
    return write(competition_id, seed)


def run_log(*, style: str, competition_id: str, seed: int, quality: float, started: datetime, success: bool) -> str:
    """``run.log`` of one run: time-stamped steps, nothing but what an honest agent prints."""
    facts = competition_facts(competition_id)
    steps = [
        f"Starting demo agent for competition {competition_id} (seed {seed})",
        f"Reading /home/data/{facts.sample_submission_file} and the training data",
        f"Fitting {_MODEL.get(style, 'a model')}; cross-validation estimate of skill {quality:.2f}",
        "Validating the submission format with /home/validate_submission.sh",
        "Wrote /home/submission/submission.csv" if success else "Run failed before writing a submission",
    ]
    return "".join(
        f"[{(started + timedelta(minutes=3 * i)):%Y-%m-%d %H:%M:%S}] {line}\n" for i, line in enumerate(steps)
    )
