"""The Dagster instance the pipeline runs on: its files (dagster.yaml, workspace.yaml), the run
launcher they name (run_launcher.py: the process per run, or Celery), the Celery app a worker
runs (celery_app.py) and the embedded broker (embedded_broker.py).

Imports only config/: Dagster loads the run launcher in every one of its processes."""
