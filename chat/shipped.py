"""The shipped assistant profiles' names and descriptions, marked for translation.

A profile row keeps the English text it was created with (``chat/migrations/0002``); the pages
show it through ``{% translate profile.name %}``, so the shipped ones appear in the interface's
language while a name staff wrote themselves is shown as written.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop

SHIPPED_PROFILE_TEXTS = (
    gettext_noop("Answer from the documents"),
    gettext_noop("Answers questions from the documentation, with sources."),
    gettext_noop("Draft test cases"),
    gettext_noop("Drafts test cases in the format of the existing test cases it finds."),
    gettext_noop("Coverage check"),
    gettext_noop("Lists the requirements of a named section that no test case covers."),
)
