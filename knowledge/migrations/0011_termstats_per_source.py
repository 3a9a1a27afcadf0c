"""BM25 statistics per source (summed at query time over the sources a user may read), rebuilt
from the searchable chunks."""

import django.db.models.deletion
from django.db import migrations, models

TERMS = """
    INSERT INTO knowledge_termstat (source_id, lexeme, df)
    SELECT c.source_id, u.lexeme, count(*)
    FROM knowledge_chunk c, unnest(c.search_vector) AS u
    WHERE c.searchable AND c.search_vector IS NOT NULL AND c.block_type <> 'row'
    GROUP BY c.source_id, u.lexeme
"""
TOTALS = """
    INSERT INTO knowledge_corpusstat (source_id, chunks, total_length)
    SELECT c.source_id, count(*), coalesce(sum(c.lexeme_count), 0)
    FROM knowledge_chunk c WHERE c.searchable AND c.block_type <> 'row'
    GROUP BY c.source_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0010_source_sync"),
    ]

    operations = [
        migrations.DeleteModel(name="TermStat"),
        migrations.DeleteModel(name="CorpusStat"),
        migrations.CreateModel(
            name="TermStat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("lexeme", models.TextField()),
                ("df", models.IntegerField(default=0)),
                (
                    "source",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="knowledge.source",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("lexeme", "source"), name="termstat_unique_lexeme"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="CorpusStat",
            fields=[
                (
                    "source",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="knowledge.source",
                    ),
                ),
                ("chunks", models.BigIntegerField(default=0)),
                ("total_length", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunSQL(TERMS, migrations.RunSQL.noop),
        migrations.RunSQL(TOTALS, migrations.RunSQL.noop),
    ]
