"""The emulated clock: wall time scaled by a speed factor, so windows of hours pass in seconds.

Emulated time keeps running while the service is down, like real time does on real hardware; the anchor
(wall time and emulated time at the last speed change) is persisted so a restart continues the same clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_SPEED = 1_000_000.0


@dataclass(slots=True)
class ClockAnchor:
    wall_s: float
    emulated_ms: float
    speed: float


class EmulatedClock:
    def __init__(self, anchor: ClockAnchor | None = None, wall: Callable[[], float] = time.time) -> None:
        self._wall = wall
        now = wall()
        self.anchor = anchor or ClockAnchor(wall_s=now, emulated_ms=now * 1000.0, speed=1.0)

    @property
    def speed(self) -> float:
        return self.anchor.speed

    def now_ms(self) -> int:
        a = self.anchor
        return int(a.emulated_ms + (self._wall() - a.wall_s) * 1000.0 * a.speed)

    def set_speed(self, speed: float) -> ClockAnchor:
        if not 0 < speed <= MAX_SPEED:
            raise ValueError(f"clock speed must be > 0 and <= {MAX_SPEED:g}, got {speed}")
        now_wall = self._wall()
        self.anchor = ClockAnchor(wall_s=now_wall, emulated_ms=float(self.now_ms()), speed=speed)
        return self.anchor

    def advance(self, seconds: float) -> ClockAnchor:
        """Jump emulated time forward (tests and scenarios); never backwards."""
        if seconds < 0:
            raise ValueError("the emulated clock only moves forward")
        self.anchor = ClockAnchor(wall_s=self._wall(), emulated_ms=self.now_ms() + seconds * 1000.0,
                                  speed=self.anchor.speed)
        return self.anchor

    def wall_delay_s(self, emulated_ms: int) -> float:
        """Wall seconds until the emulated clock reaches `emulated_ms` (0 if already past)."""
        return max(0.0, (emulated_ms - self.now_ms()) / 1000.0 / self.anchor.speed)
