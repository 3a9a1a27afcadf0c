"""The row labels of existing tables and row units (``meta["labels"]``, ``meta["label_words"]``),
which ingestion now stores: ``knowledge.retrieval.labels`` compares them with a question."""

from django.db import migrations

BATCH = 500


def label_tables(apps, schema_editor):
    # RunPython: the app's code is imported when the migration runs, not when it is loaded.
    from knowledge.chunking import LABELLED_KINDS
    from knowledge.ingest.store import label_lexemes, label_meta

    chunk = apps.get_model("knowledge", "Chunk")
    pending = chunk.objects.filter(block_type__in=LABELLED_KINDS).exclude(meta__has_key="labels")
    last = 0
    while True:
        rows = list(
            pending.filter(pk__gt=last)
            .order_by("pk")
            .values("pk", "language", "text", "meta")[:BATCH]
        )
        if not rows:
            return
        last = rows[-1]["pk"]
        by_language: dict[str, list[dict]] = {}
        for row in rows:
            by_language.setdefault(row["language"], []).append(row)
        for language, group in by_language.items():
            found = label_lexemes(language, [row["text"] for row in group])
            for row, labels in zip(group, found, strict=True):
                if labels:
                    chunk.objects.filter(pk=row["pk"]).update(
                        meta={**row["meta"], **label_meta(labels)}
                    )


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0017_tsvector_agg"),
    ]

    operations = [
        migrations.RunPython(label_tables, migrations.RunPython.noop, elidable=True),
        # The question's words among the labels: an index lookup, not a read of every table
        # chunk of the candidate documents.
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS knowledge_chunk_label_words "
            "ON knowledge_chunk USING gin ((meta->'label_words')) WHERE meta ? 'label_words'",
            "DROP INDEX IF EXISTS knowledge_chunk_label_words",
        ),
    ]
