"""Failed sign-in throttling: at most N failures per minute per username and per IP."""
from __future__ import annotations

import threading
import time
from collections import defaultdict, deque


class FailureLimiter:
    """A sliding-window counter kept on the app (one server process holds the sessions)."""

    def __init__(self, limit: int = 10, window_seconds: float = 60.0):
        self.limit = limit
        self.window = window_seconds
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _prune(self, key: str, now: float) -> deque[float]:
        stamps = self._failures[key]
        while stamps and now - stamps[0] > self.window:
            stamps.popleft()
        return stamps

    def blocked(self, *keys: str) -> float:
        """Return seconds to wait if any key is over the limit, else 0."""
        now = time.monotonic()
        with self._lock:
            waits = []
            for key in keys:
                stamps = self._prune(key, now)
                if len(stamps) >= self.limit:
                    waits.append(self.window - (now - stamps[0]))
            return max(waits, default=0.0)

    def record_failure(self, *keys: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in keys:
                self._prune(key, now).append(now)

    def reset(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._failures.pop(key, None)
