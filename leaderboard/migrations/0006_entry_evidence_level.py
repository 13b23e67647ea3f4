from django.db import migrations, models


def levels_fill(apps, schema_editor):
    """The level of every entry already on the board, by the rule of leaderboard/levels.py (no audit runs yet)."""
    Entry = apps.get_model("leaderboard", "Entry")
    Flag = apps.get_model("grading", "Flag")
    incomplete = set(
        Flag.objects.filter(
            models.Q(code="unscanned_evidence", key="no_logs") | models.Q(code="registration", key="no_nonce")
        ).values_list("submission_id", flat=True)
    )
    for entry in Entry.objects.select_related("submission").only(
        "pk", "submission__origin", "submission__registration_id"
    ):
        submission = entry.submission
        if submission.origin == "hosted":
            level = "verified"
        elif submission.origin != "import" and submission.registration_id and submission.pk not in incomplete:
            level = "registered"
        else:
            level = "reported"
        Entry.objects.filter(pk=entry.pk).update(evidence_level=level)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0005_board_row_fillfactor"),
        ("grading", "0014_submission_registration"),
    ]

    operations = [
        migrations.AddField(
            model_name="entry",
            name="evidence_level",
            field=models.CharField(
                choices=[
                    ("reported", "reported"),
                    ("registered", "registered"),
                    ("audited", "audited"),
                    ("verified", "verified"),
                ],
                default="reported",
                help_text="How strong the evidence behind its numbers is (leaderboard/levels.py)",
                max_length=10,
            ),
        ),
        migrations.RunPython(levels_fill, migrations.RunPython.noop),
    ]
