# The stored question vectors are a cache: dropping them only means the next analytics page
# view embeds those questions again.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0001_initial"),
    ]

    operations = [
        migrations.RemoveField(model_name="questionvector", name="vector"),
        migrations.AddField(
            model_name="questionvector",
            name="dense",
            field=models.BinaryField(default=b""),
            preserve_default=False,
        ),
    ]
