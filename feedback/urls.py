from __future__ import annotations

from django.urls import path

from feedback import views

urlpatterns = [
    path("feedback/", views.analytics_page, name="feedback"),
    path("feedback/export/", views.export, name="feedback_export"),
    path("feedback/answers/<int:pk>/rating/", views.rate, name="rate"),
]
