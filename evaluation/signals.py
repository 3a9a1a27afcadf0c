"""A saved rating keeps its regression case in step (from the thumbs, the form or the admin)."""

from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from evaluation.regression import case_from_rating
from feedback.models import Rating


@receiver(post_save, sender=Rating, dispatch_uid="evaluation.rating_case")
def rating_saved(sender, instance: Rating, raw: bool = False, **kwargs) -> None:
    if raw:
        return

    case_from_rating(instance)
