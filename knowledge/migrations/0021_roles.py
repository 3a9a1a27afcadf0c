"""Documents know their role (requirements, tests, checklist, knowledge, code, other): staff set
it on a source or a document; otherwise it is read from the document when a version is stored.
The documents stored before this are read here, from their current version."""

from django.db import migrations, models


def read_roles(apps, schema_editor):
    from knowledge.roles import read_role

    document = apps.get_model("knowledge", "Document")
    version = apps.get_model("knowledge", "DocumentVersion")
    current = document.objects.filter(current_version__isnull=False).select_related("source")
    for row in current.only("pk", "title", "source__kind", "current_version_id"):
        parsed, fmt = (
            version.objects.filter(pk=row.current_version_id).values_list("parsed", "format").get()
        )
        role = read_role(
            title=row.title,
            source_kind=row.source.kind,
            blocks=(parsed or {}).get("blocks", []),
            fmt=fmt,
        )
        document.objects.filter(pk=row.pk).update(detected_role=role)


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0020_synonyms_read_again"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="detected_role",
            field=models.CharField(
                blank=True,
                choices=[
                    ("requirements", "Requirements (ТЗ, specification, user stories)"),
                    ("tests", "Test programme and methods (ПМИ, test cases)"),
                    ("checklist", "Checklist"),
                    ("knowledge", "Knowledge (wiki)"),
                    ("code", "Code (program text)"),
                    ("other", "Other"),
                ],
                editable=False,
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="document",
            name="role",
            field=models.CharField(
                blank=True,
                choices=[
                    ("requirements", "Requirements (ТЗ, specification, user stories)"),
                    ("tests", "Test programme and methods (ПМИ, test cases)"),
                    ("checklist", "Checklist"),
                    ("knowledge", "Knowledge (wiki)"),
                    ("code", "Code (program text)"),
                    ("other", "Other"),
                ],
                help_text="Set by staff; empty: the source's role, else the role read from the document.",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="source",
            name="role",
            field=models.CharField(
                blank=True,
                choices=[
                    ("requirements", "Requirements (ТЗ, specification, user stories)"),
                    ("tests", "Test programme and methods (ПМИ, test cases)"),
                    ("checklist", "Checklist"),
                    ("knowledge", "Knowledge (wiki)"),
                    ("code", "Code (program text)"),
                    ("other", "Other"),
                ],
                help_text="What its documents are for testing (requirements, tests, wiki...); empty: read from each document.",
                max_length=20,
            ),
        ),
        migrations.RunPython(read_roles, migrations.RunPython.noop),
    ]
