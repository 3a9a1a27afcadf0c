from __future__ import annotations

from django.db import migrations

# A copy, not an import: a migration must not change when the shipped defaults do.
PROFILES = [
    {
        "name": "Answer from the documents",
        "kind": "answer",
        "position": 1,
        "is_default": True,
        "description": "Answers questions from the documentation, with sources.",
        "temperature": 0.1,
        "system_instruction": (
            "Answer the question from the sources. Prefer exact wording for requirements, numbers "
            "and names. If the sources disagree, say so and cite both."
        ),
    },
    {
        "name": "Draft test cases",
        "kind": "draft_tests",
        "position": 2,
        "description": "Drafts test cases in the format of the existing test cases it finds.",
        "temperature": 0.2,
        "system_instruction": (
            "Draft test cases for the function the user names, using only requirements found in the "
            "sources. Follow the format of the existing test cases in the sources (their columns, "
            "numbering and wording); if none is found, use a table with the columns: ID, Title, "
            "Preconditions, Steps, Expected result. Cite the requirement each test case checks. Do "
            "not invent requirements that are not in the sources."
        ),
    },
    {
        "name": "Coverage check",
        "kind": "coverage",
        "position": 3,
        "description": "Lists the requirements of a named section that no test case covers.",
        "temperature": 0.1,
        "system_instruction": (
            "The user names a section of a specification. List the requirements of that section "
            "found in the sources, and for each say which test case in the sources checks it, or "
            "'no test case found'. End with the list of uncovered requirements. Cite both the "
            "requirement and the test case."
        ),
    },
]


def create(apps, schema_editor):
    Profile = apps.get_model("chat", "AssistantProfile")
    for data in PROFILES:
        Profile.objects.get_or_create(name=data["name"], defaults=data)
    apps.get_model("chat", "ChatSettings").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [("chat", "0001_initial")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
