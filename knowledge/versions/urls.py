from __future__ import annotations

from django.urls import path

from knowledge.versions import views

urlpatterns = [
    path("versions/", views.versions_index, name="versions"),
    path("documents/<int:pk>/versions/", views.document_versions, name="document_versions"),
    path("documents/<int:pk>/compare/", views.compare_versions, name="compare_versions"),
    path(
        "documents/<int:pk>/versions/<int:vid>/change/",
        views.version_change,
        name="version_change",
    ),
    path("documents/<int:pk>/versions/<int:vid>/edit/", views.edit_version, name="edit_version"),
    path("documents/<int:pk>/versions/<int:vid>/move/", views.move_version, name="move_version"),
    path(
        "documents/<int:pk>/versions/<int:vid>/remove/",
        views.remove_version,
        name="remove_version",
    ),
]
