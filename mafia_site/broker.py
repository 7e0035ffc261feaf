"""The broker of a machine without Redis: kombu's filesystem transport, with messages written atomically.

kombu's own filesystem channel creates a message's ``.msg`` file in the queue folder and then writes into it, so a
worker listing the folder at that moment can take the empty file and crash on its JSON. Here a message is written
under a name the queue never matches (``.tmp`` after ``.msg``) and renamed into place with ``os.replace``, which
is atomic on one filesystem: a reader sees a whole message or none.
"""
from __future__ import annotations

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    """A filesystem channel whose ``_put`` publishes a message by an atomic rename."""

    def _put(self, queue, payload, **kwargs):
        """Write ``payload`` (a kombu message dict) as one file of ``queue``; raises ``ChannelError`` on I/O errors."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = f"{final}.tmp"
        try:
            with open(partial, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            try:
                os.remove(partial)
            except OSError:
                pass
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    """kombu's filesystem transport with the atomic channel (``CELERY_BROKER_TRANSPORT`` points here)."""

    Channel = Channel
