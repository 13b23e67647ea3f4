from django.db import migrations, models


def queued_tasks_need_a_fresh_message(apps, schema_editor):
    """Messages queued before claims carried a capability are refused by the portal: the watchdog sends the
    tasks still queued again, with one."""
    apps.get_model("runners", "HostedTask").objects.filter(status="queued").update(resend=True)


class Migration(migrations.Migration):
    dependencies = [("runners", "0001_hosted_runs")]

    operations = [
        migrations.AddField(
            model_name="hostedtask",
            name="seen_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="hostedtask",
            name="resend",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(queued_tasks_need_a_fresh_message, migrations.RunPython.noop),
    ]
