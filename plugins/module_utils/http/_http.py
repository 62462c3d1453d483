# Copyright: ascend.sglang contributors
# Apache License 2.0
"""One HTTP GET for the modules that ask the plan's own endpoints (health URLs, the router's worker list).

The standard library and ansible.module_utils only; runs inside the modules on the managed host."""

from __future__ import annotations

import urllib.error
from typing import NamedTuple, Optional

from ansible.module_utils.urls import open_url


class Answer(NamedTuple):
    """``status`` is None when there was no answer; ``error`` then says why. ``body`` only when asked for."""
    status: Optional[int]
    body: Optional[str]
    error: Optional[str]

    def label(self) -> str:
        """The status as text, else ``no answer (<why>)``: what the status tables show."""
        return str(self.status) if self.status is not None else f"no answer ({self.error})"


def http_get(url: str, timeout: float, read_body: bool = False) -> Answer:
    try:
        # The plan's own addresses: never through a proxy from the host's *_proxy variables.
        with open_url(url, method="GET", timeout=timeout, use_proxy=False, validate_certs=False) as response:
            body = response.read().decode("utf-8", "replace") if read_body else None
            return Answer(response.getcode(), body, None)
    except urllib.error.HTTPError as exc:  # an answer, with its status
        return Answer(exc.code, None, None)
    except Exception as exc:  # refused, reset, timed out, a broken reply: no answer, never a traceback
        return Answer(None, None, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}")
