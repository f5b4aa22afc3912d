"""Create an API key for a tenant (creating the tenant if it is new); the key is printed once, alone on its last line."""

from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from reasoning import rls
from reasoning.fixtures import load_rubrics
from reasoning.models import ApiKey, Tenant


class Command(BaseCommand):
    help = "Create an API key for <tenant> and print it once."

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="the tenant's slug; created if it does not exist")
        parser.add_argument("--name", default="", help="a label for the key")
        parser.add_argument("--admin", action="store_true", help="the key may also write rubrics")

    @rls.all_tenants()  # an operator's command: it works across tenants, as migrations do
    def handle(self, *args, tenant, name, admin, **options):
        slug = slugify(tenant)
        if not slug or slug != tenant:
            raise CommandError(f"'{tenant}' is not a valid tenant slug (letters, digits, hyphens)")
        load_rubrics()
        row, is_new = Tenant.objects.get_or_create(slug=slug, defaults={"name": slug})
        _, plaintext = ApiKey.issue(row, name=name, is_admin=admin)
        self.stdout.write(
            f"{'created tenant' if is_new else 'tenant'} {slug}; store this key now, it is not shown again:"
        )
        self.stdout.write(plaintext)
