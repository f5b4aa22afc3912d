"""The admin, scoped by tenant: a tenant admin sees and edits only its tenant's rows; only a superuser sees all.

Rubrics and keys are edited here; sessions are read-only records with their nodes.
"""

import csv

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Q
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from . import access, keys, usage
from .models import (
    ApiKey,
    LLMCall,
    Membership,
    OverseerAction,
    ReasoningNode,
    ReasoningSession,
    RememberedJudgement,
    Role,
    Rubric,
    RubricCriterion,
    Scope,
    Tenant,
)
from .money import usd


class MoneyDisplay:
    """The money columns of sessions, nodes and calls, shown as USD instead of raw floats."""

    @admin.display(description="budget used", ordering="budget_used_usd")
    def budget_used(self, obj):
        return usd(obj.budget_used_usd)

    @admin.display(description="budget", ordering="budget_usd")
    def budget(self, obj):
        return usd(obj.budget_usd)

    @admin.display(description="cost", ordering="cost_usd")
    def cost(self, obj):
        return usd(obj.cost_usd)

    @admin.display(description="reserved", ordering="reserved_usd")
    def reserved(self, obj):
        return usd(obj.reserved_usd)


def tenant_admin(request):
    """The principal of a staff user who administers a tenant (not a superuser), else None; looked up once."""
    if not hasattr(request, "_tenant_admin"):
        user = request.user
        principal = access.for_user(user) if user.is_staff and not user.is_superuser else None
        request._tenant_admin = principal if principal is not None and principal.is_admin else None
        if request._tenant_admin is not None:
            access.attach(request, principal)  # its queries behind the database's wall too
    return request._tenant_admin


def rows_of(model, tenant):
    """What a tenant admin may pick in a foreign key: its tenant, its members, its tenant's rows; nothing else."""
    if model is Tenant:
        return Tenant.objects.filter(pk=tenant.pk)
    if model is get_user_model():
        return model._default_manager.filter(membership__tenant=tenant)
    if any(field.name == "tenant" for field in model._meta.fields):
        return model._default_manager.filter(tenant=tenant)
    return model._default_manager.none()


class TenantScopedAdmin:
    """One door for every model of this app: which rows a staff user sees, and what it may do to them.

    A superuser gets Django's own permissions over every row. A tenant admin needs no Django permissions:
    its membership grants `tenant_admin_may` over its tenant's rows (and a view of shared rows, where
    shown); other tenants' rows are simply not there. Any other staff user sees nothing of this app.
    """

    tenant_field = "tenant"  # the row's tenant; a new row a tenant admin adds is put in its tenant
    tenant_admin_may = ("view",)
    shared_rows_visible = False  # rows without a tenant (shared by all) are shown read-only
    tenant_admin_readonly_fields = ()

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        principal = tenant_admin(request)
        if principal is None:
            return qs.none()
        rows = Q(**{self.tenant_field: principal.tenant.pk})
        if self.shared_rows_visible:
            rows |= Q(**{f"{self.tenant_field}__isnull": True})
        return qs.filter(rows)

    def may(self, request, action, obj=None):
        principal = tenant_admin(request)
        if principal is None or action not in self.tenant_admin_may:
            return False
        if obj is None:
            return True
        owner = obj.serializable_value(self.tenant_field)
        return owner == principal.tenant.pk or (action == "view" and owner is None and self.shared_rows_visible)

    def has_module_permission(self, request):
        if request.user.is_superuser:
            return super().has_module_permission(request)
        return tenant_admin(request) is not None

    def has_view_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self.may(request, "view", obj)

    def has_add_permission(self, request):
        if request.user.is_superuser:
            return super().has_add_permission(request)
        return self.may(request, "add")

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self.may(request, "change", obj)

    def has_delete_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return self.may(request, "delete", obj)

    def tenant_is_set_here(self):
        """Whether the tenant is a field of the row (set for new rows), rather than the row itself (Tenant)."""
        return self.opts.get_field(self.tenant_field).is_relation

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if tenant_admin(request) is not None and obj is None:
            return [f for f in fields if f != self.tenant_field]  # a new row joins the admin's tenant
        return fields

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if tenant_admin(request) is not None:
            if self.tenant_is_set_here():
                readonly.append(self.tenant_field)
            readonly.extend(self.tenant_admin_readonly_fields)
        return readonly

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        principal = tenant_admin(request)
        if principal is None or not self.tenant_is_set_here():
            return form
        tenant_field = self.tenant_field

        class TenantForm(form):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if self.instance._state.adding:
                    setattr(self.instance, tenant_field, principal.tenant)

            def _get_validation_exclusions(self):
                # The tenant is not on the form, but per-tenant unique constraints must still be checked with it.
                return super()._get_validation_exclusions() - {tenant_field}

        return TenantForm

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        principal = tenant_admin(request)
        if principal is not None:
            kwargs["queryset"] = rows_of(db_field.related_model, principal.tenant)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        principal = tenant_admin(request)
        if principal is not None and not change and self.tenant_is_set_here():
            setattr(obj, self.tenant_field, principal.tenant)
        super().save_model(request, obj, form, change)


class TenantScopedInline:
    """An inline's rows belong to its parent: a tenant admin may do to them what it may do to the parent."""

    def parent_admin(self):
        return self.admin_site.get_model_admin(self.parent_model)

    def has_view_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self.parent_admin().has_view_permission(request, obj)

    def has_add_permission(self, request, obj):
        if request.user.is_superuser:
            return super().has_add_permission(request, obj)
        return self.parent_admin().has_change_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self.parent_admin().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return self.parent_admin().has_change_permission(request, obj)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Tenant)
class TenantAdmin(TenantScopedAdmin, admin.ModelAdmin):
    tenant_field = "id"  # a tenant admin sees its own tenant's row, and sets its name, time zone and monthly cap
    tenant_admin_may = ("view", "change")
    tenant_admin_readonly_fields = ["slug", "created_at"]
    list_display = ["slug", "name", "time_zone", "cap", "created_at", "usage_link"]
    search_fields = ["slug", "name"]

    @admin.display(description="monthly cap", ordering="monthly_cap_usd")
    def cap(self, obj):
        return "—" if obj.monthly_cap_usd is None else usd(obj.monthly_cap_usd)

    @admin.display(description="usage")
    def usage_link(self, obj):
        url = reverse("admin:reasoning_tenant_usage")
        return format_html('<a href="{}?tenant={}" data-testid="usage-link">Usage</a>', url, obj.slug)

    def get_urls(self):
        page = self.admin_site.admin_view(self.usage_view)
        return [path("usage/", page, name="reasoning_tenant_usage"), *super().get_urls()]

    def usage_view(self, request):
        tenant = self.usage_tenant(request)
        if tenant is None:
            raise PermissionDenied
        form = UsageForm(request.GET or None)
        start, end, group_by = form.window() if form.is_valid() else (*usage.window(), "day")
        if form.is_valid():  # shown with the days it defaulted to filled in
            form = UsageForm(initial={"start": start, "end": end, "group_by": group_by})
        report = usage.report(tenant, start, end, group_by)
        if request.GET.get("format") == "csv":
            return usage_csv(report, tenant)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Usage of {tenant}",
            "tenant": tenant,
            "form": form,
            "report": report,
            "chart": {"stacks": usage.by_day_and_model(tenant, start, end), "from": start, "to": end},
            "month": month_text(report["month"]),
            "csv_query": {**request.GET.dict(), "format": "csv", "tenant": tenant.slug},
        }
        return TemplateResponse(request, "admin/reasoning/usage.html", context)

    def usage_tenant(self, request):
        """A tenant admin's own tenant; for a superuser, the one named by ?tenant= (or the first)."""
        if request.user.is_superuser:
            tenants = Tenant.objects.order_by("slug")
            return tenants.filter(slug=request.GET.get("tenant", "")).first() or tenants.first()
        principal = tenant_admin(request)
        return principal.tenant if principal is not None else None


class UsageForm(forms.Form):
    start = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    group_by = forms.ChoiceField(
        label="Table by", choices=[(g, g) for g in ("day", "model", "mode", "user", "key")], required=False
    )

    def clean(self):
        data = super().clean()
        try:
            data["start"], data["end"] = usage.window(data.get("start"), data.get("end"))
        except usage.BadRange as bad:
            self.add_error("start" if bad.field == "from" else "end", str(bad))
        return data

    def window(self):
        data = self.cleaned_data
        return data["start"], data["end"], data.get("group_by") or "day"


def month_text(month):
    """The month's spend against the cap, as the page writes it, with the share the bar fills."""
    cap, spent = month["cap_usd"], month["spent_usd"] + month["reserved_usd"]
    share = min(spent / cap, 1.0) if cap else (1.0 if cap == 0 else None)
    return {
        **month,
        "spent": usd(month["spent_usd"]),
        "reserved": usd(month["reserved_usd"]),
        "written_off": usd(month["written_off_usd"]) if month.get("written_off_usd") else None,
        "cap": usd(cap) if cap is not None else None,
        "left": usd(month["left_usd"]) if cap is not None else None,
        "percent": round(share * 100, 1) if share is not None else None,
    }


CSV_COLUMNS = ["group", "label", "cost_usd", "calls", "tokens_in", "tokens_out", "sessions", "solved", "solved_share"]


def usage_csv(report, tenant):
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"usage-{tenant.slug}-{report['from']}-{report['to']}-by-{report['group_by']}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.DictWriter(response, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows([*report["rows"], report["total"]])
    return response


class NewMemberForm(forms.ModelForm):
    """Add a person: a new login and their role in the tenant (a tenant admin's own tenant)."""

    username = forms.CharField(max_length=150, help_text="The login name they sign in with.")
    password1 = forms.CharField(label="Password", strip=False, widget=forms.PasswordInput)
    password2 = forms.CharField(label="Password (again)", strip=False, widget=forms.PasswordInput)

    class Meta:
        model = Membership
        fields = ["role", "tenant"]
        help_texts = {"role": "Viewer: watches sessions only. Advisor: runs and steers them. Admin: also the admin."}

    def clean_username(self):
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("This login name is taken.")
        return username

    def clean(self):
        data = super().clean()
        if data.get("password1") != data.get("password2"):
            self.add_error("password2", "The two passwords differ.")
        elif data.get("password1"):
            try:
                password_validation.validate_password(data["password1"])
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return data

    def save(self, commit=True):
        user = get_user_model().objects.create_user(
            username=self.cleaned_data["username"], password=self.cleaned_data["password1"]
        )
        self.instance.user = user
        return super().save(commit)


@admin.register(Membership)
class MembershipAdmin(TenantScopedAdmin, admin.ModelAdmin):
    # A tenant admin adds people with their role and changes roles; a login's other details are a superuser's.
    tenant_admin_may = ("view", "add", "change", "delete")
    tenant_admin_readonly_fields = ["user"]
    list_display = ["user", "tenant", "role"]
    list_filter = [("tenant", admin.RelatedOnlyFieldListFilter), "role"]

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = NewMemberForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            fields = ["username", "password1", "password2", "role", "tenant"]
            return [f for f in fields if f != "tenant" or tenant_admin(request) is None]
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else super().get_readonly_fields(request, obj)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        # An admin member opens the admin (staff, never a superuser); a role taken away closes it again.
        user = obj.user
        if not user.is_superuser and user.is_staff != (obj.role == Role.ADMIN):
            user.is_staff = obj.role == Role.ADMIN
            user.save(update_fields=["is_staff"])


class ApiKeyForm(forms.ModelForm):
    """Scopes as boxes to tick; a member's key refused scopes their role lacks (keys.check_scopes, as the API)."""

    scopes = forms.MultipleChoiceField(
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=ApiKey.SERVICE_SCOPES,
        help_text="A member's key never holds more than their role allows, whatever is ticked here.",
    )

    class Meta:
        model = ApiKey
        fields = ["tenant", "user", "name", "scopes", "expires_at"]

    def clean(self):
        data = super().clean()
        key = self.instance
        user = data.get("user") or (key.user if key.user_id else None)
        tenant = data.get("tenant") or (key.tenant if key.tenant_id else None)
        try:
            if user is not None and tenant is not None and data.get("scopes"):
                keys.check_scopes(keys.member_of(tenant, user.get_username()), data["scopes"])
            elif user is None and data.get("scopes"):
                keys.check_service_scopes(data["scopes"])
        except keys.KeyRefused as refused:
            self.add_error(refused.field if refused.field in self.fields else None, refused.message)
        expires = data.get("expires_at")
        if expires is not None and expires <= timezone.now() and "expires_at" in self.changed_data:
            self.add_error("expires_at", "Choose a time in the future.")
        return data

    def clean_scopes(self):
        return [s for s in Scope.values if s in self.cleaned_data["scopes"]]


@admin.register(ApiKey)
class ApiKeyAdmin(TenantScopedAdmin, admin.ModelAdmin):
    tenant_admin_may = ("view", "add", "change")  # revoking is a change; a revoked key stays on record
    form = ApiKeyForm
    fields = [  # never key_hash
        "tenant", "user", "name", "scopes", "expires_at", "hint", "created_at", "last_used_at", "last_used_ip",
        "revoked_at",
    ]
    readonly_fields = ["hint", "created_at", "last_used_at", "last_used_ip", "revoked_at"]
    list_display = [
        "hint", "name", "user", "tenant", "scope_list", "expires_at", "last_used_at", "last_used_ip", "revoked_at"
    ]
    list_select_related = ["user", "tenant"]
    list_filter = [("tenant", admin.RelatedOnlyFieldListFilter)]
    actions = ["revoke"]

    @admin.display(description="scopes")
    def scope_list(self, obj):
        return ", ".join(obj.scopes)

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return fields if obj is not None else [f for f in fields if f not in self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        readonly = super().get_readonly_fields(request, obj)
        return [*readonly, "user"] if obj is not None else readonly  # a key never changes hands

    def save_model(self, request, obj, form, change):
        if not change:
            obj.plaintext = obj.set_secret()
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        # The plaintext lives only in this response: shown once, never stored, never put in a message cookie.
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "API key issued",
            "key": obj,
            "plaintext": obj.plaintext,
        }
        return TemplateResponse(request, "admin/reasoning/apikey/issued.html", context)

    @admin.action(description="Revoke the selected keys", permissions=["change"])
    def revoke(self, request, queryset):
        live = queryset.filter(revoked_at=None)
        ids = list(live.values_list("pk", flat=True))
        count = live.filter(pk__in=ids).update(revoked_at=timezone.now())
        keys.rights_changed(ids)  # their open sockets close at once
        self.message_user(request, f"{count} key(s) revoked.")


class CriterionInline(TenantScopedInline, admin.TabularInline):
    model = RubricCriterion
    extra = 1
    fields = ["position", "name", "weight", "description"]
    formfield_overrides = {models.TextField: {"widget": forms.Textarea(attrs={"rows": 3})}}

    class Media:
        css = {"all": ["admin/reasoning/criteria.css"]}  # the description wraps instead of running off the page


@admin.register(Rubric)
class RubricAdmin(TenantScopedAdmin, admin.ModelAdmin):
    tenant_admin_may = ("view", "add", "change", "delete")
    shared_rows_visible = True
    list_display = ["problem_kind", "name", "tenant", "is_active", "updated_at"]
    list_filter = ["is_active", ("tenant", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["problem_kind", "name"]
    inlines = [CriterionInline]


class NodeInline(MoneyDisplay, TenantScopedInline, ReadOnlyInline):
    model = ReasoningNode
    fk_name = "session"
    fields = [
        "depth",
        "thought",
        "eval_score",
        "pruned",
        "is_terminal",
        "parse_error",
        "model_used",
        "cost",
        "latency_ms",
    ]
    readonly_fields = fields
    ordering = ["created_at"]


@admin.register(ReasoningSession)
class ReasoningSessionAdmin(MoneyDisplay, TenantScopedAdmin, ReadOnlyAdmin):
    list_display = [
        "id", "case_name", "tenant", "status", "mode", "problem_kind", "budget_used", "budget", "started_at", "active"
    ]
    list_filter = ["status", "mode", "problem_kind", ("tenant", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["case_name", "problem_text", "id", "triggered_by", "final_answer"]
    exclude = ["budget_used_usd", "budget_usd", "budget_reserved_usd", "active_seconds"]  # shown formatted, below
    readonly_fields = ["budget_used", "budget", "budget_reserved", "active"]
    inlines = [NodeInline]

    @admin.display(description="budget reserved")
    def budget_reserved(self, obj):
        return usd(obj.budget_reserved_usd)

    @admin.display(description="active time", ordering="active_seconds")
    def active(self, obj):
        """Time spent running over all its runs, as the pages write it ("18.9 s", "2 min 05 s")."""
        return active_text(obj.active_time())


def active_text(seconds):
    """Seconds to the tenth under a minute, then minutes and seconds: a figure with its unit, never a raw float."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


@admin.register(LLMCall)
class LLMCallAdmin(MoneyDisplay, TenantScopedAdmin, ReadOnlyAdmin):
    # Newest first, in columns that fit a laptop's width: the session by its short id, tokens in one column.
    list_display = [
        "created_at",
        "session_ref",
        "purpose",
        "attempt",
        "model_used",
        "outcome",
        "tokens",
        "cost",
        "latency",
    ]
    list_select_related = ["session"]
    ordering = ["-created_at", "-id"]
    list_filter = ["outcome", "purpose", "model_used"]
    search_fields = ["purpose", "model_used", "model_requested", "error", "session__id", "reply"]
    exclude = ["cost_usd", "reserved_usd"]  # shown formatted
    readonly_fields = ["cost", "reserved"]

    class Media:
        css = {"all": ["admin/reasoning/ledger.css"]}

    @admin.display(description="session", ordering="session")
    def session_ref(self, obj):
        return str(obj.session_id)[:8] if obj.session_id else "—"

    @admin.display(description="tokens in → out")
    def tokens(self, obj):
        return f"{obj.tokens_in:,} → {obj.tokens_out:,}"

    @admin.display(description="latency", ordering="latency_ms")
    def latency(self, obj):
        return f"{obj.latency_ms:,} ms"


@admin.register(RememberedJudgement)
class RememberedJudgementAdmin(TenantScopedAdmin, ReadOnlyAdmin):
    """The firm's judgements of states, served to its later sessions (reasoning/memory.py): read, or deleted to have
    them judged afresh (a model changed its mind, a prompt was improved)."""

    tenant_admin_may = ("view", "delete")
    list_display = ["created_at", "key", "score", "scope", "session"]
    ordering = ["-created_at"]
    search_fields = ["key", "scope"]

    @admin.display(description="score")
    def score(self, obj):
        return obj.fields.get("eval_score")


@admin.register(OverseerAction)
class OverseerActionAdmin(TenantScopedAdmin, ReadOnlyAdmin):
    list_display = ["created_at", "session", "actor", "action", "node"]
    list_filter = ["action"]
