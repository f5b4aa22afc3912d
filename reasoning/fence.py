"""The run's fencing token: which run holds a session, checked in the statement of every write it makes.

A claim (and a take-over) bumps the session's `run_epoch`; the run keeps (owner, epoch) as its Fence. A write
carries the fence in its WHERE clause, so a run that was taken over (stalled past its heartbeat, then woke up)
writes nothing: its statement matches no row and it raises RunLost, which the engine takes for "this run is
over" and ends quietly, leaving the session to the run that holds it now.
"""

from dataclasses import dataclass

from django.db.models import Q

from .models import ReasoningSession


class RunLost(Exception):
    """This run no longer holds its session (another run took it over): its writes are refused."""


@dataclass(frozen=True)
class Fence:
    session_id: object
    owner: str
    epoch: int

    def q(self):
        return Q(pk=self.session_id, run_owner=self.owner, run_epoch=self.epoch)

    def rows(self):
        return ReasoningSession.objects.filter(self.q())

    def held(self):
        return self.rows().exists()

    def where(self, connection):
        """The SQL condition and its parameters, for the few hot statements written by hand."""
        quote = connection.ops.quote_name
        pk = ReasoningSession._meta.pk.get_db_prep_value(self.session_id, connection)
        sql = f"{quote('id')} = %s AND {quote('run_owner')} = %s AND {quote('run_epoch')} = %s"
        return sql, [pk, self.owner, self.epoch]

    def lost(self):
        return RunLost(f"session {self.session_id}: run {self.owner} (epoch {self.epoch}) no longer holds it")
