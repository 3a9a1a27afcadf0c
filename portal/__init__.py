"""Knowledge Belt portal: settings, URLs, users and login, the Celery app, embedded services, the LLM client."""
