"""The issue trackers a tracker source reads closed tickets from: one module per API (Yandex
Tracker, Jira, GitLab), each a small ``TrackerApi`` over one ``JsonClient``."""
