import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runners", "0004_hostedrun_registration"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="gpuworker",
            name="measured",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="gpuworker",
            name="approved_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="gpuworker",
            name="approved_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="gpuworker",
            name="approved_hardware",
            field=models.JSONField(blank=True, help_text="The declared hardware the last approval was for", null=True),
        ),
        migrations.AddField(
            model_name="gpuworker",
            name="auto_approve",
            field=models.BooleanField(
                default=False, help_text="The one-machine install's own worker (demo_setup): approved as it registers"
            ),
        ),
        migrations.AddField(
            model_name="hostedrun",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
