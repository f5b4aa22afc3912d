# Keys with an owner, scopes, an expiry and the address of their last use; a tenant's monthly cap and its counter;
# who started a session (person and key), for the usage report.

import django.core.validators
import django.db.models.deletion
import reasoning.models
from django.conf import settings
from django.db import migrations, models


def scopes_from_is_admin(apps, schema_editor):
    """The keys made before scopes were the tenant's service keys: they keep what they could do."""
    keys = apps.get_model("reasoning", "ApiKey").objects
    keys.filter(is_admin=True).update(scopes=["read", "run", "oversee", "admin"])
    keys.filter(is_admin=False).update(scopes=["read", "run", "oversee"])


def is_admin_from_scopes(apps, schema_editor):
    for key in apps.get_model("reasoning", "ApiKey").objects.all():
        key.is_admin = "admin" in key.scopes
        key.save(update_fields=["is_admin"])


class Migration(migrations.Migration):

    dependencies = [
        ('reasoning', '0010_mode_choices_from_registry'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='TenantSpend',
            fields=[
                ('tenant', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='spend', serialize=False, to='reasoning.tenant')),
                ('month', models.DateField(help_text='The first day of the month used_usd counts.')),
                ('used_usd', models.FloatField(default=0.0)),
                ('reserved_usd', models.FloatField(default=0.0)),
            ],
        ),
        migrations.AddField(
            model_name='apikey',
            name='expires_at',
            field=models.DateTimeField(blank=True, help_text='Refused from then on; empty: never expires.', null=True),
        ),
        migrations.AddField(
            model_name='apikey',
            name='last_used_ip',
            field=models.GenericIPAddressField(blank=True, help_text='The address it was last used from.', null=True),
        ),
        migrations.AddField(
            model_name='apikey',
            name='scopes',
            field=models.JSONField(default=list, validators=[reasoning.models.validate_scopes]),
        ),
        migrations.AddField(
            model_name='apikey',
            name='user',
            field=models.ForeignKey(blank=True, help_text='The member it acts for (its rights end with their membership); empty: a service key of the tenant.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='api_keys', to=settings.AUTH_USER_MODEL),
        ),
        migrations.RunPython(scopes_from_is_admin, is_admin_from_scopes),
        migrations.RemoveField(
            model_name='apikey',
            name='is_admin',
        ),
        migrations.AddField(
            model_name='reasoningsession',
            name='api_key',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='reasoning.apikey'),
        ),
        migrations.AddField(
            model_name='reasoningsession',
            name='created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='tenant',
            name='monthly_cap_usd',
            field=models.FloatField(blank=True, help_text="The most the tenant's sessions may spend in a calendar month (UTC), in USD; empty: no cap.", null=True, validators=[django.core.validators.MinValueValidator(0.0)]),
        ),
    ]
