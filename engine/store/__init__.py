"""Storage: connections, migrations, the single writer and global ids."""

from engine.store.chunks import chunked
from engine.store.store import Reader, Snapshot, Store
from engine.store.writer import PendingChange, Tx, Writer

__all__ = ["PendingChange", "Reader", "Snapshot", "Store", "Tx", "Writer", "chunked"]
