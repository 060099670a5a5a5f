"""The project's own sample corpus (generated PDFs under `data/sample/`) and its labeled QA set."""
