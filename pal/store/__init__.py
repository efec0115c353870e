"""The Parquet history store (see pal.store.store for the layout and the API)."""

from pal.store.schema import SAMPLES_SCHEMA, SCHEMA_VERSION
from pal.store.store import CommitResult, Store

__all__ = ["Store", "CommitResult", "SAMPLES_SCHEMA", "SCHEMA_VERSION"]
