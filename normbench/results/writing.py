"""The one way into a run for anything that writes it (`run`, `run --resume`, `upgrade`): its lock held for
the whole write, the manifest read again under the lock (another writer may have finished in between), its
parts/ and rejected/ real folders of the run, the temporaries a killed writer left removed, and the run's
one-file table too (results/table.py: it is written again from the parts when the run completes)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from normbench.results.files import RunLock, check_own_folders, check_writable, remove_stale_temporaries
from normbench.results.store import RunStore
from normbench.results.table import remove_table


@contextlib.contextmanager
def writing(
    store: RunStore, say: Callable[[str], None] = print, doing: str = "resuming"
) -> Iterator[RunStore]:
    """The run, opened afresh under its lock; a second writer gets "run X is being written by pid N"."""
    with RunLock(store.path, store.run_id, say=say, doing=doing):
        fresh = RunStore.open(store.path.parent, store.run_id)
        check_own_folders(fresh.path)
        remove_stale_temporaries(fresh.path)
        check_writable(fresh.parts)
        remove_table(fresh.path)
        yield fresh
