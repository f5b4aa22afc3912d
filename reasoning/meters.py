"""What the gateway has seen of each model's server (ModelMeter): whether it streams, and the calls it billed past
their reservation. Shared by every tenant and process: the database holds it, the gateway reads it once a run."""

from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from .models import ModelMeter


def of(names):
    """{model: ModelMeter} for the models named that have a record."""
    return {m.model: m for m in ModelMeter.objects.filter(model__in=[n for n in names if n])}


def overran(model, tokens_in, tokens_out, cost, over):
    """A call billed `over` USD past its reservation: counted, and its tokens and cost kept where they are the most
    yet seen."""
    _opened(model)
    ModelMeter.objects.filter(model=model).update(
        calls_over=F("calls_over") + 1,
        over_usd=F("over_usd") + over,
        worst_tokens_in=Greatest(F("worst_tokens_in"), tokens_in),
        worst_tokens_out=Greatest(F("worst_tokens_out"), tokens_out),
        worst_usd=Greatest(F("worst_usd"), cost),
        last_over_at=timezone.now(),
    )


def cannot_stream(model):
    """Its server answered a stream request in one body: from now on it is called without a stream, and marked."""
    _opened(model)
    ModelMeter.objects.filter(model=model).update(streams=False)


def worst_call(meter, price):
    """The most one call on a marked model has billed, at this price (USD); 0 for a model with nothing marked."""
    if meter is None or not meter.marked:
        return 0.0
    return max(price.cost(meter.worst_tokens_in, meter.worst_tokens_out), 0.0)


def _opened(model):
    ModelMeter.objects.bulk_create([ModelMeter(model=model)], ignore_conflicts=True)
