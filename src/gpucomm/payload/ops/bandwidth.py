"""Unidirectional bandwidth between two ranks, as osu_bw measures it: rank 0 sends ``window``
messages back to back (--window, default 64 like osu_bw's -W), rank 1 receives them and answers
with a short acknowledgement; time = the iteration / window, the time per message, so
goodput = size / time (metrics.py, as the ping-pong's records).  Unlike the ping-pong, several messages may be in flight
and no message waits for the one before it to be answered: this is the operation the copy
engine's and osu_bw's figures describe, the ping-pong's adds one hand-over per message."""

from ...constants import BW
from .base import Operation
from .pingpong import PingPong

DEFAULT_WINDOW = 64


class Bandwidth(PingPong):
    name = BW
    windowed = True

    def __init__(self, ctx, method):
        super().__init__(ctx, method)
        self.window = ctx.window or DEFAULT_WINDOW
        self.time_scale = 1.0 / self.window

    def meta(self):
        return {"window": self.window}

    def step(self, size):
        if self.first:
            self.method.send_window(size, self.peer, self.window)
        else:
            self.method.recv_window(size, self.peer, self.window)

    loop = Operation.loop  # a window per iteration (not the ping-pong's loop)

    def validate(self, size):
        # the receiver's buffer holds the last message (they all carry the same data); the
        # sender's holds the acknowledgement only
        return None if self.first else super().validate(size)

    def corrupt(self, size):
        if not self.first:
            super().corrupt(size)
