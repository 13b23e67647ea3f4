from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runners", "0001_hosted_runs")]

    operations = [
        migrations.AddField(
            model_name="hostedtask",
            name="seen_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
