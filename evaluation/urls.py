from __future__ import annotations

from django.urls import path

from evaluation import views

urlpatterns = [
    path("evaluation/", views.runs_page, name="evaluation"),
    path("evaluation/runs/<int:pk>/", views.run_page, name="evaluation_run"),
    path("evaluation/compare/", views.compare_page, name="evaluation_compare"),
    path("evaluation/cases/", views.cases_page, name="evaluation_cases"),
    path("evaluation/cases/<int:pk>/toggle/", views.toggle_case, name="evaluation_case_toggle"),
    path("evaluation/from-message/<int:pk>/", views.add_message, name="evaluation_add_message"),
]
