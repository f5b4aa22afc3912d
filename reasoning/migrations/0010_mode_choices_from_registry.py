# The modes come from the strategies registry (a callable): adding a strategy writes no migration.

from django.db import migrations, models

import reasoning.strategies


class Migration(migrations.Migration):

    dependencies = [
        ('reasoning', '0009_case_name'),
    ]

    operations = [
        migrations.AlterField(
            model_name='reasoningsession',
            name='mode',
            field=models.CharField(choices=reasoning.strategies.mode_choices, default='auto', max_length=16),
        ),
        migrations.AlterField(
            model_name='reasoningsession',
            name='requested_mode',
            field=models.CharField(choices=reasoning.strategies.mode_choices, default='auto', max_length=16),
        ),
    ]
