"""Create an API key for a tenant (creating the tenant if it is new); the key is printed once, alone on its last line.

With --user the key is that member's (their tenant's; never more than their role allows); without, a service key of
the tenant. --scopes lists what it may do, comma-separated: read, run, oversee, review (a member's only), admin."""

from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from reasoning import keys, rls
from reasoning.fixtures import load_rubrics
from reasoning.models import ApiKey, Scope, Tenant


def scope_list(text):
    scopes = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(scopes) - set(Scope.values))
    if not scopes or unknown:
        raise CommandError(f"--scopes: {', '.join(unknown) or 'none given'}; choose from {', '.join(Scope.values)}")
    return scopes


class Command(BaseCommand):
    help = "Create an API key for <tenant> and print it once."

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="the tenant's slug; created if it does not exist")
        parser.add_argument("--name", default="", help="a label for the key")
        parser.add_argument("--user", default=None, help="the member (login) it acts for; none: a service key")
        parser.add_argument(
            "--scopes",
            default=",".join(ApiKey.SERVICE_SCOPES),
            help="comma-separated: read, run (create and fork), oversee (steer), review (sign off answers: a "
            "member's key only), admin (rubrics, keys); "
            "default: read,run,oversee",
        )
        parser.add_argument("--admin", action="store_true", help="add the admin scope (rubrics, keys)")

    @rls.all_tenants()  # an operator's command: it works across tenants, as migrations do
    def handle(self, *args, tenant, name, user, scopes, admin, **options):
        slug = slugify(tenant)
        if not slug or slug != tenant:
            raise CommandError(f"'{tenant}' is not a valid tenant slug (letters, digits, hyphens)")
        scopes = scope_list(scopes) + ([Scope.ADMIN] if admin else [])
        load_rubrics()
        row, is_new = Tenant.objects.get_or_create(slug=slug, defaults={"name": slug})
        try:
            _, plaintext = keys.issue(row, scopes, name=name, username=user)
        except keys.KeyRefused as refused:
            raise CommandError(f"--{refused.field}: {refused.message}") from None
        self.stdout.write(
            f"{'created tenant' if is_new else 'tenant'} {slug}; store this key now, it is not shown again:"
        )
        self.stdout.write(plaintext)
