"""The new-session form: it parses types for the browser; SessionIn and the service own the rules.

Each strategy's parameters become fields named `<mode>-<param>`, with the type, limits, default and
description its Params schema declares: a new strategy appears here without touching this file.
"""

from django import forms
from django.conf import settings

from reasoning.strategies import AUTO, get_strategy, mode_choices, strategy_labels

FIELD_TYPES = {"integer": forms.IntegerField, "number": forms.FloatField}


def param_fields(mode):
    """(form field name, param name, form field) for each of a strategy's params, from its JSON schema."""
    for name, schema in get_strategy(mode).Params.model_json_schema()["properties"].items():
        if "enum" in schema:  # a choice among named values (ToT's value mode)
            yield f"{mode}-{name}", name, choice_field(name, schema)
            continue
        field_class = FIELD_TYPES.get(schema.get("type"))
        if field_class is None:
            continue  # a param the form cannot type (the API still takes it)
        low, high, default = schema.get("minimum"), schema.get("maximum"), schema.get("default")
        attrs = {"placeholder": str(default), "step": "1" if field_class is forms.IntegerField else "any"}
        attrs.update({key: str(value) for key, value in (("min", low), ("max", high)) if value is not None})
        limits = f" ({low}–{high}; default {default})" if low is not None and high is not None else ""
        yield (
            f"{mode}-{name}",
            name,
            field_class(
                required=False,
                label=schema.get("title") or name.replace("_", " ").capitalize(),
                help_text=schema.get("description", "") + limits,
                widget=forms.NumberInput(attrs=attrs),
            ),
        )


def choice_field(name, schema):
    """A select of the schema's values; left on its first option, the strategy's default applies."""
    default = schema.get("default")
    return forms.ChoiceField(
        required=False,
        label=schema.get("title") or name.replace("_", " ").capitalize(),
        help_text=schema.get("description", "") + f" (default {default})",
        choices=[("", f"{default} (default)")] + [(value, value) for value in schema["enum"] if value != default],
    )


class SessionForm(forms.Form):
    case_name = forms.CharField(
        label="Case name",
        required=False,
        max_length=200,
        help_text="Optional; the list, the page and the report show it, and forks keep it.",
        widget=forms.TextInput(attrs={"placeholder": "Meier family – succession"}),
    )
    problem_text = forms.CharField(
        label="Problem",
        widget=forms.Textarea(
            attrs={"rows": 6, "placeholder": "Describe the client's situation and the question to reason about."}
        ),
    )
    problem_kind = forms.ChoiceField(label="Problem kind")
    mode = forms.ChoiceField(label="Strategy", initial=AUTO)
    budget_usd = forms.FloatField(label="Budget (USD)", widget=forms.NumberInput(attrs={"step": "0.01", "min": "0.01"}))
    model_primary = forms.CharField(
        label="Model", required=False, max_length=200, help_text="Any litellm model name; empty for the default."
    )
    model_fallback = forms.CharField(
        label="Fallback model", required=False, max_length=200, help_text="Tried when the model fails; optional."
    )

    def __init__(self, *args, rubrics=(), **kwargs):
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        kinds = [(r.problem_kind, r.name or r.problem_kind) for r in rubrics]
        self.fields["problem_kind"].choices = kinds
        if any(kind == "general" for kind, _ in kinds):
            self.fields["problem_kind"].initial = "general"
        self.fields["mode"].choices = mode_choices()
        self.fields["budget_usd"].initial = f"{settings.REASONING['DEFAULT_BUDGET_USD']:.2f}"
        # The defaults as placeholders: empty fields leave the choice to the settings.
        self.fields["model_primary"].widget.attrs["placeholder"] = settings.REASONING["MODEL_PRIMARY"]
        self.fields["model_fallback"].widget.attrs["placeholder"] = settings.REASONING["MODEL_FALLBACK"] or "none"
        self.param_names = {}  # form field -> (mode, param)
        for mode, _label in strategy_labels():
            for field_name, param, field in param_fields(mode):
                self.fields[field_name] = field
                self.param_names[field_name] = (mode, param)

    def param_groups(self):
        """[(mode, label, [bound fields])]: one fieldset per strategy, shown when it is the chosen mode."""
        return [
            (mode, label, [self[f] for f, (m, _) in self.param_names.items() if m == mode])
            for mode, label in strategy_labels()
        ]

    def mode_with_errors(self):
        """The strategy whose parameters have an error (its fieldset must show), else None."""
        return next((mode for field, (mode, _) in self.param_names.items() if self.errors.get(field)), None)

    def session_payload(self):
        """The cleaned form as the SessionIn dict; only the chosen strategy's params, empty ones left to defaults."""
        data = self.cleaned_data
        params = {
            param: data[field]
            for field, (mode, param) in self.param_names.items()
            if mode == data["mode"] and data.get(field) not in (None, "")
        }
        models = {key: data[key].strip() for key in ("model_primary", "model_fallback") if data.get(key, "").strip()}
        return {
            **models,
            "problem_text": data["problem_text"],
            "case_name": data.get("case_name") or "",
            "problem_kind": data["problem_kind"],
            "mode": data["mode"],
            "budget_usd": data["budget_usd"],
            "params": params,
        }

    def add_service_error(self, field, message):
        """Put an error from SessionIn or the service on its field ("params.branching" -> "tot-branching")."""
        if field.startswith("params."):
            name = f"{self.data.get('mode')}-{field.removeprefix('params.')}"
        else:
            name = field
        if name in self.fields:
            self.add_error(name, message)
        else:
            self.add_error(None, f"{field}: {message}" if field else message)
