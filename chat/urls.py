from __future__ import annotations

from django.urls import path

from chat import api, journal, views

urlpatterns = [
    path("", views.chat_home, name="home"),
    path("chat/new/", views.new_conversation, name="new_conversation"),
    path("chat/<int:pk>/", views.conversation, name="conversation"),
    path("chat/<int:pk>/ask/", views.ask, name="ask"),
    path("chat/messages/<int:pk>/stream/", views.stream, name="chat_stream"),
    path("chat/messages/<int:pk>/tiles/<int:index>/", views.tile, name="chat_tile"),
    path("chat/switch/", views.toggle_chat, name="toggle_chat"),
    path("api/v1/ask", api.ask_api, name="api_ask"),
    path("journal/", journal.journal, name="journal"),
    path("journal/<int:pk>/", journal.journal_entry, name="journal_entry"),
]
