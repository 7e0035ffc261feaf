"""The filesystem broker of a machine without Redis writes each message atomically (mafia_site/broker.py)."""
from __future__ import annotations

import json
import os
from queue import Empty

import pytest
from django.conf import settings
from kombu import Connection

from mafia_site.broker import Transport
from mafia_site.celery import app


def _connection(tmp_path):
    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path),
               "processed_folder": str(tmp_path / "processed"), "store_processed": False}
    (tmp_path / "processed").mkdir()
    return Connection("filesystem://", transport="mafia_site.broker:Transport", transport_options=options)


def test_celery_uses_the_atomic_filesystem_transport_without_redis_and_redis_with_it():
    with app.connection_for_write() as connection:
        if settings.REDIS_URL:
            assert settings.CELERY_BROKER_URL == settings.REDIS_URL
            assert connection.transport_cls == "redis"
        else:
            assert settings.CELERY_BROKER_URL == "filesystem://"
            assert connection.transport_cls == "mafia_site.broker:Transport"
            assert type(connection.transport) is Transport


def test_a_message_is_renamed_into_the_queue_whole_and_leaves_no_partial_file(tmp_path):
    with _connection(tmp_path) as connection:
        channel = connection.channel()
        channel._put("celery", {"body": "x" * 10_000, "n": 1})
        names = sorted(os.listdir(tmp_path))
        messages = [name for name in names if name.endswith(".celery.msg")]
        assert len(messages) == 1
        assert [name for name in names if name.endswith(".tmp")] == []
        assert json.loads((tmp_path / messages[0]).read_text())["body"] == "x" * 10_000
        assert channel._get("celery") == {"body": "x" * 10_000, "n": 1}


def test_a_message_still_being_written_is_never_taken_by_a_worker(tmp_path):
    with _connection(tmp_path) as connection:
        channel = connection.channel()
        (tmp_path / "1_abc.celery.msg.tmp").write_bytes(b"")  # a writer between open() and os.replace()
        channel._put("celery", {"n": 2})
        assert channel._get("celery") == {"n": 2}
        with pytest.raises(Empty):
            channel._get("celery")
        assert (tmp_path / "1_abc.celery.msg.tmp").exists()
