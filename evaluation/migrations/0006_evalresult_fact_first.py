from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0005_evalresult_pair_length"),
    ]

    operations = [
        migrations.AddField(
            model_name="evalresult",
            name="fact_first",
            field=models.BooleanField(
                default=False,
                help_text="A key fact stands in the answer's first 400 characters, below its notice.",
            ),
        ),
    ]
