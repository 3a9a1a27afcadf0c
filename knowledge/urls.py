from __future__ import annotations

from django.urls import include, path

from knowledge import api, views

urlpatterns = [
    path("documents/", views.documents, name="documents"),
    path("documents/upload/", views.upload, name="upload"),
    path("documents/reindex/", views.reindex, {"scope": "all"}, name="reindex_all"),
    path("documents/<int:pk>/", views.document_detail, name="document"),
    path("documents/<int:pk>/role/", views.set_role, name="document_role"),
    path(
        "documents/<int:pk>/reindex/", views.reindex, {"scope": "document"}, name="reindex_document"
    ),
    path("sources/<int:pk>/reindex/", views.reindex, {"scope": "source"}, name="reindex_source"),
    path("sources/<int:pk>/sync/", views.sync_now, name="sync_source"),
    path("versions/<int:pk>/download/", views.download, name="download_version"),
    path("versions/<int:pk>/pages/<int:page>.png", views.version_page, name="version_page"),
    path("api/v1/search", api.search_api, name="api_search"),
    path("", include("knowledge.versions.urls")),
]
