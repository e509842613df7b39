from datetime import datetime, timedelta, timezone

import pytest

T0 = datetime(2025, 1, 15, 9, 0, tzinfo=timezone.utc)


class FakeClock:
    """An injectable clock: returns ``now``; ``advance(hours=…)`` moves it."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw) -> None:
        self.now = self.now + timedelta(**kw)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
