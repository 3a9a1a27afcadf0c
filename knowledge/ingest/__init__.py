"""Getting documents in: the pipeline stage between the sources and retrieval.

- ``registration``: a file's bytes become a document and a version (deduplicated by content);
- ``batch``: planning many files (a folder, a history of versions in ORDER.txt order);
- ``files``: which files of a folder are documents; ``storage``: the stored original bytes;
- ``pipeline``: parse, chunk, embed and store one version (``ingest_version``), the single
  service behind the upload button, the drop folder and the sources' tasks;
- ``many``: many versions in one process (``manage.py ingest``, ``source sync``, the demo
  loader) through the same stages, around one model thread (``embed_queue``) that fills each
  model call with the chunks of several versions;
- ``store``: chunks and vectors written, the searchable set flipped with the BM25 statistics;
- ``dropfolder``: the drop folder's scan; ``maintenance``: stalled-ingest recovery;
  ``reembed``: switching the knowledge base to another embedding model.

The layout reads as the pipeline: knowledge.sources -> knowledge.parsing -> knowledge.chunking
-> knowledge.ingest -> knowledge.retrieval -> knowledge.versions. Services here never import
the Celery task modules (which import them); they queue work by task name
(``knowledge.queue``).
"""
