from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runners", "0002_hosted_task_capabilities")]

    operations = [
        migrations.AddField(
            model_name="gpuworker",
            name="sandbox",
            field=models.CharField(
                blank=True,
                help_text="The process backend's: bwrap or off ('' from workers that do not say)",
                max_length=10,
            ),
        ),
    ]
