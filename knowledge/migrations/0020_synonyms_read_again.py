"""The corpus's synonyms read again from every live document's current chunks: one Russian word
now stands only for one word or abbreviation ("тестирование (A/B testing)" no longer makes
"тестирование" a synonym of "a b testing"), instead of a list of words kept out by hand."""

from django.db import migrations


def read_again(apps, schema_editor):
    from knowledge.synonyms import key, read_pairs

    document = apps.get_model("knowledge", "Document")
    chunk = apps.get_model("knowledge", "Chunk")
    synonym = apps.get_model("knowledge", "Synonym")

    live = document.objects.filter(removed_at__isnull=True, current_version__isnull=False)
    for pk, title, version_id in live.values_list("pk", "title", "current_version_id"):
        texts = [title]
        for text, heading_path in chunk.objects.filter(version_id=version_id).values_list(
            "text", "heading_path"
        ):
            texts += [text, " › ".join(heading_path or [])]
        pairs = set()
        for text in texts:
            pairs |= read_pairs(text)
        rows = [synonym(term=key(a), equivalent=b, document_id=pk) for a, b in pairs]
        rows += [synonym(term=key(b), equivalent=a, document_id=pk) for a, b in pairs]
        synonym.objects.filter(document_id=pk).delete()
        synonym.objects.bulk_create(rows, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0019_version_ocr"),
    ]

    operations = [migrations.RunPython(read_again, migrations.RunPython.noop)]
