"""The store's errors a caller reports as one line (the CLI's user errors), named from here so
the command line need not import the store."""

from curation_pipeline.store.database import DatabaseError
from curation_pipeline.store.locking import NamespaceBusyError
from curation_pipeline.store.migrations import MigrationError
from curation_pipeline.store.nodes_io import ImportConflictError

__all__ = ["DatabaseError", "ImportConflictError", "MigrationError", "NamespaceBusyError"]
