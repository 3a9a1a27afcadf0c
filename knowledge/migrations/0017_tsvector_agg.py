"""kb_tsvector_agg: tsvectors concatenated in order, as `||` does for two (a document's full-text
vector is made of its chunks' vectors, ``knowledge.ingest.store.refresh_document_vectors``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0016_synonym_first_word"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE OR REPLACE AGGREGATE kb_tsvector_agg(tsvector) "
            "(SFUNC = tsvector_concat, STYPE = tsvector, INITCOND = '')",
            "DROP AGGREGATE IF EXISTS kb_tsvector_agg(tsvector)",
        ),
    ]
