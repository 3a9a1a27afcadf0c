from __future__ import annotations

from django.urls import path

from scenarios import views

urlpatterns = [
    path("scenarios/", views.scenarios_home, name="scenarios"),
    path("scenarios/coverage/", views.coverage_page, name="coverage"),
    path("scenarios/analyses/<int:pk>/", views.analysis_detail, name="analysis"),
    path("scenarios/analyses/<int:pk>/answer/", views.analysis_answer, name="analysis_answer"),
    path(
        "scenarios/analyses/<int:pk>/export.<str:fmt>",
        views.analysis_export,
        name="analysis_export",
    ),
]
