from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("reasoning", "0020_model_meter")]

    operations = [
        migrations.AddField(
            model_name="reasoningsession",
            name="answer_figures",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="The figures the model declared with the answer, each with its derivation.",
            ),
        ),
    ]
