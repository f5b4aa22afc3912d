"""Rubrics are edited here; sessions are read-only records with their nodes."""

from django.contrib import admin

from .models import (
    ApiKey,
    LLMCall,
    Membership,
    OverseerAction,
    ReasoningNode,
    ReasoningSession,
    Rubric,
    RubricCriterion,
    Tenant,
)


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
class TenantAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "tenant", "role"]
    list_filter = ["tenant", "role"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["hint", "name", "tenant", "is_admin", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["tenant"]
    readonly_fields = ["key_hash", "hint", "created_at", "last_used_at"]


class CriterionInline(admin.TabularInline):
    model = RubricCriterion
    extra = 1
    fields = ["position", "name", "weight", "description"]


@admin.register(Rubric)
class RubricAdmin(admin.ModelAdmin):
    list_display = ["problem_kind", "name", "tenant", "is_active", "updated_at"]
    list_filter = ["is_active", "tenant"]
    search_fields = ["problem_kind", "name"]
    inlines = [CriterionInline]


class NodeInline(ReadOnlyInline):
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
        "cost_usd",
        "latency_ms",
    ]
    readonly_fields = fields
    ordering = ["created_at"]


@admin.register(ReasoningSession)
class ReasoningSessionAdmin(ReadOnlyAdmin):
    list_display = ["id", "tenant", "status", "mode", "problem_kind", "budget_used_usd", "budget_usd", "started_at"]
    list_filter = ["status", "mode", "problem_kind", "tenant"]
    search_fields = ["problem_text", "id"]
    inlines = [NodeInline]


@admin.register(LLMCall)
class LLMCallAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "session",
        "purpose",
        "model_used",
        "outcome",
        "tokens_in",
        "tokens_out",
        "cost_usd",
        "latency_ms",
    ]
    list_filter = ["outcome", "purpose", "model_used"]


@admin.register(OverseerAction)
class OverseerActionAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "session", "actor", "action", "node"]
    list_filter = ["action"]
