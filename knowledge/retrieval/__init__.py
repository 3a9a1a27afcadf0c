"""Retrieval: hybrid search over the knowledge base (see ``search.search``)."""
