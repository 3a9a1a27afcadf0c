"""The admin of users and groups: Django's, audited (``portal.admin_audit``)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from portal.admin_audit import AuditedGroupAdmin, AuditedUserAdmin

for model, model_admin in ((get_user_model(), AuditedUserAdmin), (Group, AuditedGroupAdmin)):
    if admin.site.is_registered(model):
        admin.site.unregister(model)
    admin.site.register(model, model_admin)
