"""The new-session form: it parses types for the browser; SessionIn and the service own the rules."""

from django import forms
from django.conf import settings

from reasoning.models import Mode


class SessionForm(forms.Form):
    problem_text = forms.CharField(
        label="Problem",
        widget=forms.Textarea(
            attrs={"rows": 6, "placeholder": "Describe the client's situation and the question to reason about."}
        ),
    )
    problem_kind = forms.ChoiceField(label="Problem kind")
    mode = forms.ChoiceField(label="Strategy", choices=Mode.choices, initial=Mode.AUTO)
    budget_usd = forms.FloatField(label="Budget (USD)", widget=forms.NumberInput(attrs={"step": "0.01", "min": "0.01"}))
    # Tree of Thoughts params; empty means the strategy's default.
    branching = forms.IntegerField(
        required=False,
        label="Branching",
        help_text="Thoughts per expanded node (default 3).",
        widget=forms.NumberInput(attrs={"min": "1", "placeholder": "3"}),
    )
    depth = forms.IntegerField(
        required=False,
        label="Depth",
        help_text="Levels below the root (default 4).",
        widget=forms.NumberInput(attrs={"min": "1", "placeholder": "4"}),
    )
    keep = forms.IntegerField(
        required=False,
        label="Keep",
        help_text="Best thoughts kept per level (default 2).",
        widget=forms.NumberInput(attrs={"min": "1", "placeholder": "2"}),
    )

    PARAM_FIELDS = ("branching", "depth", "keep")

    def __init__(self, *args, rubrics=(), **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        kinds = [(r.problem_kind, r.name or r.problem_kind) for r in rubrics]
        self.fields["problem_kind"].choices = kinds
        if any(kind == "general" for kind, _ in kinds):
            self.fields["problem_kind"].initial = "general"
        self.fields["budget_usd"].initial = f"{settings.REASONING['DEFAULT_BUDGET_USD']:.2f}"

    def session_payload(self):
        """The cleaned form as the SessionIn dict; empty params are left to the strategy's defaults."""
        data = self.cleaned_data
        return {
            "problem_text": data["problem_text"],
            "problem_kind": data["problem_kind"],
            "mode": data["mode"],
            "budget_usd": data["budget_usd"],
            "params": {name: data[name] for name in self.PARAM_FIELDS if data.get(name) is not None},
        }

    def add_service_error(self, field, message):
        """Put an error from SessionIn or the service on its field ("params.branching" -> branching)."""
        name = field.removeprefix("params.") if field.startswith("params.") else field
        if name in self.fields:
            self.add_error(name, message)
        else:
            self.add_error(None, f"{field}: {message}" if field else message)
