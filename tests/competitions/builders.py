"""Small competition packs built in code, in the exact formats of the real competitions."""

import json
from pathlib import Path

SPOOKY = "spooky-author-identification"
AUTHORS = ("EAP", "HPL", "MWS")


def spooky_answers(rows: int = 30) -> str:
    lines = ["id,EAP,HPL,MWS"]
    for i in range(rows):
        onehot = [0, 0, 0]
        onehot[i % 3] = 1
        lines.append(f"id{i:05d},{onehot[0]},{onehot[1]},{onehot[2]}")
    return "\n".join(lines) + "\n"


def spooky_submission(rows: int = 30, *, confidence: float = 0.8) -> str:
    other = (1 - confidence) / 2
    lines = ["id,EAP,HPL,MWS"]
    for i in range(rows):
        probs = [other, other, other]
        probs[i % 3] = confidence
        lines.append(f"id{i:05d},{probs[0]:.6f},{probs[1]:.6f},{probs[2]:.6f}")
    return "\n".join(lines) + "\n"


def write_portal_pack(
    folder: Path,
    *,
    competition_id: str = SPOOKY,
    answers: str | None = None,
    leaderboard: list[float] | None = None,
    extra: dict | None = None,
) -> Path:
    (folder / "private").mkdir(parents=True, exist_ok=True)
    (folder / "public").mkdir(parents=True, exist_ok=True)
    (folder / "private" / "test.csv").write_text(answers if answers is not None else spooky_answers())
    (folder / "public" / "sample_submission.csv").write_text(spooky_submission(confidence=1 / 3))
    (folder / "public" / "description.md").write_text("# Spooky\nPredict the author.\n")
    spec = {
        "competition_id": competition_id,
        "answers": "private/test.csv",
        "sample_submission": "public/sample_submission.csv",
        "description": "public/description.md",
    }
    if leaderboard is not None:
        (folder / "leaderboard.csv").write_text(
            "rank,score\n" + "".join(f"{i + 1},{s}\n" for i, s in enumerate(leaderboard))
        )
        spec["leaderboard"] = "leaderboard.csv"
    spec.update(extra or {})
    (folder / "pack.json").write_text(json.dumps(spec))
    return folder


def write_mlebench_data_dir(data: Path, *, competition_id: str = SPOOKY) -> Path:
    public = data / competition_id / "prepared" / "public"
    private = data / competition_id / "prepared" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    (private / "test.csv").write_text(spooky_answers())
    (public / "sample_submission.csv").write_text(spooky_submission(confidence=1 / 3))
    (public / "description.md").write_text("Predict the author.\n")
    return data
